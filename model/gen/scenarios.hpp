// Generated traces for the gen vtime tests, the CLI cost command and the benchmark: the seed's
// invalid-syscall loop, Frederic's brk and user loops, and the aligned-tick user loop.
#pragma once
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace kacct::gentraces {

inline std::string header(unsigned ncpus = 1) {
  return fmt::format("kacct-trace 1\ncpu x86-64\nncpus {}\nclock ns\ntask 100 pid=100 comm=loop nice=0 mm=1\nevents\n",
                     ncpus);
}
// A user busy loop on CPU 0 interrupted by the tick every `tick` ns; each interrupt lasts
// 2*half ns around tick*k + phase (phase 0: the interrupt enters just before jiffies moves).
inline std::string user_loop(std::uint64_t tick, std::uint64_t phase, unsigned ticks, std::uint64_t half = 500) {
  std::string s = header();
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n";
  for (unsigned k = 1; k <= ticks; ++k) {
    const std::uint64_t at = k * tick + phase;
    s += fmt::format("{} 0 irq_enter vec=236\n{} 0 tick\n{} 0 irq_exit\n", at - half, at, at + half);
  }
  const std::uint64_t end = (ticks + 1) * tick + phase;
  s += fmt::format("{} 0 syscall_enter nr=39\n{} 0 read kind=task_stat id=1\n{} 0 syscall_exit\n", end, end + 10, end + 20);
  return s;
}
// Back-to-back syscalls (brk, invalid numbers): `in_kernel` ns inside, `in_user` ns between.
inline std::string syscall_loop(std::uint64_t n, std::uint64_t in_kernel, std::uint64_t in_user, unsigned nr = 12) {
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

}  // namespace kacct::gentraces
