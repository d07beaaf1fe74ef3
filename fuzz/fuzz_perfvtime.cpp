// libFuzzer target for the perf oracle on gen vtime traces (kprobes on vtime_user_exit /
// vtime_user_enter / vtime_task_switch, model/trace/perf_vtime.hpp): perf script text ->
// sim::predict on a nohz_full gen configuration -> compare with no kernel values.
//
// Input: byte 0 = selector (bit 0: 6.1 or 6.12; bit 1: a marked read of each kind for the
// first sample's thread group), the rest is perf script text. predict() must never crash: a
// failure names its perf line; a prediction's checkpoint score is consistent (exact <= total)
// and each predicted read belongs to the thread group asked for.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "model/sim/oracle.hpp"
#include "model/trace/perf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  trace::perf::Options o;
  o.ncpus = 4;  // bounded: a sample on a higher CPU is a FILE:LINE:COL error
  auto recs = trace::perf::parse_script(text);
  if (!recs) {
    if (recs.error().line == 0) std::abort();
    return 0;
  }
  std::uint64_t pid = 1;
  for (const auto& r : recs.value())
    if (r.tid_known && r.tid) {
      pid = r.pid.value_or(r.tid);
      break;
    }
  if (data[0] & 2)
    o.reads = {
        {trace::ReadKind::ProcStat, 0, 1}, {trace::ReadKind::TaskStat, 0, 2}, {trace::ReadKind::Taskstats, 0, 3}};
  static const auto cpu = *arch::find_cpu("x86-64");
  static const auto cfg61 = *arch::find_config("6.1-gen-hz250");
  static const auto cfg612 = *arch::find_config("6.12-gen-hz250");
  // sim::predict(text, ...) is trace::perf::convert(text) and the prediction of that conversion;
  // convert(text) is parse_script, the --ncpus bound and convert(records): done here from the
  // records already parsed, so that each input is parsed once (it was 14% of the plain build's
  // time, twice). fuzz_perf fuzzes convert(text) itself.
  trace::Result<sim::Prediction> p = [&]() -> trace::Result<sim::Prediction> {
    for (const auto& r : recs.value())
      if (r.cpu >= o.ncpus) return trace::Error{r.line, r.cpu_col, "sample beyond --ncpus", "perf"};
    auto c = trace::perf::convert(recs.value(), o);
    if (!c) return c.error();
    c.value().stats.lines = std::uint64_t(std::count(text.begin(), text.end(), '\n'));
    return sim::predict(std::move(c).value(), o, cpu, (data[0] & 1) ? cfg612 : cfg61, pid);
  }();
  if (!p) {
    if (p.error().line == 0 && p.error().message.empty()) std::abort();
    return 0;
  }
  const auto& P = p.value();
  if (P.checkpoints.exact > P.checkpoints.total) {
    std::fprintf(stderr, "checkpoints: %llu exact of %llu\n", (unsigned long long)P.checkpoints.exact,
                 (unsigned long long)P.checkpoints.total);
    std::abort();
  }
  for (const auto& r : P.reads)
    if (!P.threads.count(r.tid)) {
      std::fprintf(stderr, "read of tid %llu, not in thread group %llu\n", (unsigned long long)r.tid,
                   (unsigned long long)pid);
      std::abort();
    }
  (void)sim::compare(P, std::vector<sim::KernelRead>{});
  return 0;
}
