// Fixed-shape traces for tests, proofs, CLI cost tables and benchmarks (the random traces come
// from builder.hpp). Pure: the same arguments give the same trace.
#pragma once
#include <cstdint>
#include <string>

#include "model/trace/trace.hpp"

namespace kacct::trace::scenarios {

// The text header of these traces: one user task (tid 100) on `ncpus` CPUs, through `events`.
std::string header(unsigned ncpus = 1);
// A user busy loop on CPU 0 interrupted by the tick every `tick` ns; each interrupt lasts
// 2*half ns around tick*k + phase (phase 0: the interrupt enters just before jiffies moves).
// The gen vtime seed's aligned-tick user loop.
std::string user_loop(std::uint64_t tick, std::uint64_t phase, unsigned ticks, std::uint64_t half = 500);
// Back-to-back syscalls (brk, invalid numbers): `in_kernel` ns inside, `in_user` ns between.
// The gen vtime seed's invalid-syscall loop and Frederic's brk loop.
std::string syscall_loop(std::uint64_t n, std::uint64_t in_kernel, std::uint64_t in_user, unsigned nr = 12);

// A large valid trace built by a direct loop (no parser, no builder state): one user task per
// CPU cycling through syscalls, hardirqs, softirqs, steal and ticks: ~30% ticks, ~20% syscall
// entry/exit, ~20% irq, ~20% softirq, ~10% steal. Every event advances time by 100 ns on its
// CPU, so a tick every ~330 ns of simulated time: it stresses the accounting calls, not realism.
Trace tick_heavy_trace(std::uint32_t ncpus, std::size_t n_events, std::string cpu = "x86-64");

// The native vtime seed (linuxppc/issues#171) on one CPU: two threads of one process
// ping-pong with sched_yield(), N iterations of user 10 us, syscall entry, 10 us in the kernel,
// switch, 13 us until the other thread returns to user; a tick every `tick` ns wherever it falls.
Trace yield_pingpong(std::uint32_t iterations, std::uint64_t tick, const char* cpu = "MPC8xx");

}  // namespace kacct::trace::scenarios
