// The seed scenario of the lazy-TLB model (N CPUs, N threads through idle).
#pragma once
#include <cstdint>

#include "model/lazytlb/script.hpp"

namespace kacct::lazytlb {

// N CPUs, one process with N threads, each thread leaves its CPU for idle and comes back
// `rounds` times, then the process exits. `loop_begin/loop_end` delimit the loop.
struct Seed {
  Script script;
  std::size_t loop_begin = 0, loop_end = 0;
};
Seed seed_scenario(int ncpus, int rounds, Arch arch, arch::KVersion ver);

}  // namespace kacct::lazytlb
