// kacct as an oracle for a real kernel: from `perf script` text, the values the kernel reported
// at a workload's marked reads (docs/perf.md). Used by `kacct perf-replay`, the conformance
// tests and the C API.
#pragma once
#include <cstdint>
#include <array>
#include <map>
#include <string_view>
#include <vector>

#include "arch/config.hpp"
#include "model/trace/perf.hpp"

namespace kacct::sim {

struct PredictedRead {
  std::uint64_t marker = 0;
  trace::ReadKind kind{};
  std::uint64_t tid = 0, ts_ns = 0;  // ts_ns: perf's clock
  const char* unit = "ns";           // clock_ticks (USER_HZ=100), us, ns
  std::uint64_t utime = 0, stime = 0;        // in `unit` (stat, rusage)
  std::uint64_t utime_ns = 0, stime_ns = 0;  // after cputime_adjust (taskstats: raw task_cputime)
  std::uint64_t value = 0;                   // clock reads, ns
  std::uint64_t rtime_ns = 0;
  std::uint64_t lost_events_before = 0;  // perf lost events before this read: exact only if 0
};
struct Prediction {
  std::vector<PredictedRead> reads;  // the reads of the process `pid`, in trace order
  std::uint64_t ticks_user = 0, ticks_kernel = 0;
  std::map<std::uint64_t, std::array<std::uint64_t, 2>> ticks_by_tid;
  trace::perf::Conversion conversion;
};

// Converts, replays on (cpu, cfg) and collects the reads of thread group `pid`.
trace::Result<Prediction> predict(std::string_view perf_text, const trace::perf::Options&, const arch::CpuFacts&,
                                  const arch::Config&, std::uint64_t pid);

}  // namespace kacct::sim
