// libFuzzer target: perf script text -> kacct trace -> tick model with every invariant checked.
// Must never crash; a conversion either fails with a line number or yields a trace that
// validates and replays without a violation (the converter's repairs keep it consistent).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "tick_checked.hpp"
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
  fuzz::run_tick_checked(c.value().trace);
  return 0;
}
