// The seed scenario of the native vtime issue (linuxppc/issues#171): on an MPC8xx, two threads
// of one process ping-pong with sched_yield() (`chrt -f 98`, strict alternation), and the
// operation counts per iteration that the model's execution gives for TICK, NATIVE with scaled
// cputime (4.19) and NATIVE without (4.20, abcff86df2d2), beside the measured task-clock.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

namespace kacct::model::native {

// Run trace::scenarios::yield_pingpong on `cpu` for TICK (4.19), NATIVE 4.19 (scaled) and
// NATIVE 4.20 (unscaled) and report the counts per iteration with the measured times and the ratios they imply.
nlohmann::ordered_json seed_cost_report(std::uint32_t iterations, const char* cpu = "MPC8xx");

}  // namespace kacct::model::native
