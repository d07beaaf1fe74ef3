// The seed scenario of the lazy-TLB model (N CPUs, N threads through idle), its costs per
// context switch, and the throughput model fitted to the seed's two measurements.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/lazytlb/script.hpp"

namespace kacct::model::lazytlb {

// N CPUs, one process with N threads, each thread leaves its CPU for idle and comes back
// `rounds` times, then the process exits. `loop_begin/loop_end` delimit the loop.
struct Seed {
  Script script;
  std::size_t loop_begin = 0, loop_end = 0;
};
Seed seed_scenario(int ncpus, int rounds, Arch arch, arch::KVersion ver);

// The seed's costs in one arch/release: the loop (in and out of idle) per switch, and the exit.
struct SeedCosts {
  Cfg cfg;
  arch::KVersion version;
  std::uint64_t loop_switches = 0;
  double count_atomics_per_switch = 0, ipis_per_switch = 0, mask_updates_per_switch = 0;
  std::uint64_t exit_ipis = 0;
  bool mm_freed_at_end = false;
  double ipis_per_switch_including_exit = 0;
};
// Empty (with `failed` set to the event index) if the scenario does not run clean: a model bug.
std::optional<SeedCosts> seed_costs(int ncpus, int rounds, Arch arch, arch::KVersion ver,
                                    std::size_t* failed = nullptr);

// Throughput: each CPU needs c seconds of local work per switch; the mm_count line moves
// between CPUs once per atomic, serialised, L seconds each: X(N) = min(N/c, 1/(a*L)), a =
// mm_count atomics per switch from the model. c and L are fitted to the seed's two numbers at
// N = 192 (118M/s shootdown, 1M/s refcount), so N = 192 reproduces them by construction; the
// content is the shape in N and the crossover N* = c/(a*L).
struct Throughput {
  double c = 0;  // seconds of local work per switch per CPU
  double L = 0;  // seconds per cache-line transfer
  double switches_per_s(double ncpus, double a) const;
  double crossover_cpus(double a) const;  // N* (0 when a = 0)
};
// Fitted with a = the refcount mode's atomics per switch.
Throughput fit_throughput(double refcount_atomics_per_switch);
inline constexpr double kSeedCpus = 192, kSeedShootdownPerS = 118e6, kSeedRefcountPerS = 1e6;

}  // namespace kacct::model::lazytlb
