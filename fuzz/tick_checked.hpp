// The converted-trace oracle of the perf-script and trace.dat targets: the trace validates,
// compiles and replays on the tick model (x86-64, 6.12 with steal, HZ=250) with every invariant
// checked; anything else aborts (a crash for libFuzzer).
#pragma once
#include <cstdio>
#include <cstdlib>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"

namespace kacct::fuzz {

inline void run_tick_checked(const trace::Trace& t) {
  if (auto e = trace::validate(t)) {
    std::fprintf(stderr, "converted trace invalid: %s\n", e->to_string().c_str());
    std::abort();
  }
  auto p = sim::compile(t);
  if (!p) std::abort();
  static const auto cpu = *arch::find_cpu("x86-64");
  static const auto cfg = *arch::find_config("6.12-tick-steal-hz250");
  const auto r = sim::run(p.value(), sim::model_cfg(cpu, cfg), {.check = true, .tolerate_known_bugs = true});
  if (r.violation) {
    std::fprintf(stderr, "violation %s: %s\n", r.violation->invariant.c_str(), r.violation->detail.c_str());
    std::abort();
  }
}

}  // namespace kacct::fuzz
