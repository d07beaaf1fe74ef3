#include "model/trace/scenarios.hpp"

#include <fmt/format.h>

namespace kacct::trace::scenarios {

std::string header(unsigned ncpus) {
  return fmt::format("kacct-trace 1\ncpu x86-64\nncpus {}\nclock ns\ntask 100 pid=100 comm=loop nice=0 mm=1\nevents\n",
                     ncpus);
}

std::string user_loop(std::uint64_t tick, std::uint64_t phase, unsigned ticks, std::uint64_t half) {
  std::string s = header();
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n";
  for (unsigned k = 1; k <= ticks; ++k) {
    const std::uint64_t at = k * tick + phase;
    s += fmt::format("{} 0 irq_enter vec=236\n{} 0 tick\n{} 0 irq_exit\n", at - half, at, at + half);
  }
  const std::uint64_t end = (ticks + 1) * tick + phase;
  s += fmt::format("{} 0 syscall_enter nr=39\n{} 0 read kind=task_stat id=1\n{} 0 syscall_exit\n", end, end + 10,
                   end + 20);
  return s;
}

std::string syscall_loop(std::uint64_t n, std::uint64_t in_kernel, std::uint64_t in_user, unsigned nr) {
  std::string s = header();
  s.reserve(s.size() + n * 64);
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n";
  std::uint64_t t = 2000 + in_user;
  for (std::uint64_t k = 0; k < n; ++k) {
    s += fmt::format("{} 0 syscall_enter nr={}\n{} 0 syscall_exit\n", t, nr, t + in_kernel);
    t += in_kernel + in_user;
  }
  s += fmt::format("{} 0 syscall_enter nr=39\n{} 0 read kind=task_stat id=1\n{} 0 syscall_exit\n", t, t + 10, t + 20);
  return s;
}

Trace tick_heavy_trace(std::uint32_t ncpus, std::size_t n_events, std::string cpu) {
  Trace t;
  t.header.cpu_model = std::move(cpu);
  t.header.ncpus = ncpus;
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    TaskDecl d;
    d.tid = d.pid = 100 + c;
    d.comm = "spin" + std::to_string(c);
    d.mm = 1 + c;
    t.header.tasks.push_back(d);
  }
  t.events.reserve(n_events + 2 * ncpus);
  auto ev = [&](std::uint64_t ts, std::uint32_t c, Kind k) -> Event& {
    Event e;
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
  static constexpr Kind cycle[] = {Kind::Tick,        Kind::SyscallEnter, Kind::Tick,    Kind::SyscallExit,
                                   Kind::IrqEnter,    Kind::Tick,         Kind::IrqExit, Kind::SoftirqEnter,
                                   Kind::SoftirqExit, Kind::Steal};
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

Trace yield_pingpong(std::uint32_t iterations, std::uint64_t tick, const char* cpu) {
  Trace t;
  t.header.cpu_model = cpu;
  t.header.ncpus = 1;
  for (std::uint64_t tid : {100u, 101u}) t.header.tasks.push_back(task_decl(tid, 100, false, "sched", 0, 1));
  std::uint64_t next_tick = tick;
  auto push = [&](std::uint64_t ts, Kind k, std::uint64_t a = 0, std::uint64_t b = 0) {
    while (next_tick <= ts) {  // the tick interrupts whatever runs
      Event e;
      e.ts = next_tick;
      e.kind = Kind::Tick;
      t.events.push_back(e);
      next_tick += tick;
    }
    Event e;
    e.ts = ts;
    e.kind = k;
    e.a = a;
    e.b = b;
    t.events.push_back(e);
  };
  push(0, Kind::Switch, 0, 100);
  push(1000, Kind::SyscallExit);
  std::uint64_t ts = 1000, cur = 100;
  for (std::uint32_t i = 0; i < iterations; ++i) {
    ts += 10'000;
    Event e;
    push(ts, Kind::SyscallEnter, 158);  // sched_yield
    ts += 10'000;
    const std::uint64_t next = cur == 100 ? 101 : 100;
    push(ts, Kind::Switch, cur, next);
    ts += 13'000;
    push(ts, Kind::SyscallExit);  // the other thread returns from its sched_yield
    cur = next;
  }
  return t;
}

}  // namespace kacct::trace::scenarios
