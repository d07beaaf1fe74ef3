// Large valid traces for the benchmarks, built by a direct loop (no parser, no builder state):
// one user task per CPU cycling through syscalls, hardirqs, softirqs, steal and ticks.
#pragma once
#include <cstdint>
#include <string>

#include "model/trace/trace.hpp"

namespace kacct::bench {

// ~30% ticks, ~20% syscall entry/exit, ~20% irq, ~20% softirq, ~10% steal. Every event
// advances time by 100 ns on its CPU, so a tick every ~330 ns of simulated time: the trace
// stresses the accounting calls, not realism.
inline trace::Trace tick_heavy_trace(std::uint32_t ncpus, std::size_t n_events, std::string cpu = "x86-64") {
  using trace::Kind;
  trace::Trace t;
  t.header.cpu_model = std::move(cpu);
  t.header.ncpus = ncpus;
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    trace::TaskDecl d;
    d.tid = d.pid = 100 + c;
    d.comm = "spin" + std::to_string(c);
    d.mm = 1 + c;
    t.header.tasks.push_back(d);
  }
  t.events.reserve(n_events + 2 * ncpus);
  auto ev = [&](std::uint64_t ts, std::uint32_t c, Kind k) -> trace::Event& {
    trace::Event e;
    e.ts = ts;
    e.cpu = c;
    e.kind = k;
    t.events.push_back(std::move(e));
    return t.events.back();
  };
  std::uint64_t ts = 0;
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    auto& s = ev(ts, c, Kind::Switch);
    s.a = 0;
    s.b = 100 + c;
    ev(ts, c, Kind::SyscallExit);  // into user mode
  }
  // The cycle starts and ends in user mode, process context.
  static constexpr Kind cycle[] = {Kind::Tick,         Kind::SyscallEnter, Kind::Tick,    Kind::SyscallExit,
                                   Kind::IrqEnter,     Kind::Tick,         Kind::IrqExit, Kind::SoftirqEnter,
                                   Kind::SoftirqExit,  Kind::Steal};
  constexpr std::size_t L = sizeof(cycle) / sizeof(cycle[0]);
  std::size_t i = 0;
  while (t.events.size() < n_events) {
    const std::uint32_t c = std::uint32_t((i / L) % ncpus);
    const Kind k = cycle[i % L];
    ts += 100 / ncpus + 1;  // each CPU's gap between its events stays >= 100 ns
    auto& e = ev(ts, c, k);
    if (k == Kind::SyscallEnter) e.a = 39;
    if (k == Kind::Steal) e.a = 10;  // <= the gap since this CPU's previous event
    if (k == Kind::IrqEnter) e.a = 3;
    if (k == Kind::SoftirqEnter) e.a = 1;
    ++i;
    // Finish the cycle before stopping so the trace ends in a clean state.
    if (t.events.size() >= n_events && i % L != 0) n_events = t.events.size() + 1;
  }
  return t;
}

}  // namespace kacct::bench
