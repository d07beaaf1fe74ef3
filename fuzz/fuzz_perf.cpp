// libFuzzer target: perf script text -> kacct trace -> tick model with every invariant checked.
// Must never crash; a conversion either fails with a line number or yields a trace that
// validates and replays without a violation (the converter's repairs keep it consistent).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/perf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trace::perf::Options o;
  o.ncpus = 4;  // bounded: a sample on a higher CPU is a FILE:LINE:COL error
  o.reads = {{trace::ReadKind::ProcStat, 0, 1}, {trace::ReadKind::TaskStat, 0, 2}, {trace::ReadKind::RusageSelf, 0, 3}};
  auto c = trace::perf::convert(text, o);
  if (!c) {
    if (c.error().line == 0) std::abort();  // every parse error names its line
    return 0;
  }
  if (auto e = trace::validate(c.value().trace)) {
    std::fprintf(stderr, "converted trace invalid: %s\n", e->to_string().c_str());
    std::abort();
  }
  auto p = sim::compile(c.value().trace);
  if (!p) std::abort();
  static const auto cpu = *arch::find_cpu("x86-64");
  static const auto cfg = *arch::find_config("6.12-tick-steal-hz250");
  const auto r = sim::run(p.value(), sim::model_cfg(cpu, cfg), {.check = true, .tolerate_known_bugs = true});
  if (r.violation) {
    std::fprintf(stderr, "violation %s: %s\n", r.violation->invariant.c_str(), r.violation->detail.c_str());
    std::abort();
  }
  return 0;
}
