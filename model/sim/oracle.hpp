// kacct as an oracle for a real kernel: from `perf script` text, the values the kernel reported
// at a workload's marked reads (docs/perf.md). Used by `kacct perf-replay`, the conformance
// tests and the C API.
#pragma once
#include <cstdint>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "arch/config.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/perf.hpp"

namespace kacct::sim {

struct PredictedRead {
  std::uint64_t marker = 0;
  trace::ReadKind kind{};
  std::uint64_t tid = 0, ts_ns = 0;          // ts_ns: perf's clock
  const char* unit = "ns";                   // clock_ticks (USER_HZ=100), us, ns
  std::uint64_t utime = 0, stime = 0;        // in `unit` (stat, rusage)
  std::uint64_t utime_ns = 0, stime_ns = 0;  // after cputime_adjust (taskstats: raw task_cputime)
  std::uint64_t value = 0;                   // clock reads, ns
  std::uint64_t rtime_ns = 0;
  std::uint64_t lost_events_before = 0;  // perf lost events before this read: exact only if 0
  // Ticks of the reading thread group before this read whose steal the trace does not give
  // (no tick_steal record for it, or more than fit since the previous tick): exact only if 0.
  std::uint64_t steal_unknown_before = 0;
};
// Gen vtime traces (kprobes): the kernel's task_cputime() at every transition, from the task's
// next probe, against the model's at the same clock (ns).
struct CheckpointScore {
  std::uint64_t total = 0, exact = 0;
  std::vector<std::string> diffs;  // the first few mismatches
};
struct Prediction {
  std::vector<PredictedRead> reads;  // the reads of the process `pid`, in trace order (checkpoints left out)
  CheckpointScore checkpoints;
  std::uint64_t ticks_user = 0, ticks_kernel = 0;
  std::map<std::uint64_t, std::array<std::uint64_t, 2>> ticks_by_tid;
  std::set<std::uint64_t> threads;  // the tids of thread group `pid` in the trace (empty: pid not in it)
  // Reads of the reaped children's times (Options::syscall_reads with `children`), by read id:
  // the reader's signal->cutime/cstime (ns) at its sys_exit, or why they are not known.
  std::map<std::uint64_t, std::array<std::uint64_t, 2>> children;
  std::map<std::uint64_t, std::string> children_unknown;
  std::vector<ReapResult> reaps;  // the reaps the model made, in trace order (id: the wait's seq)
  std::map<std::pair<std::uint64_t, std::uint64_t>, ReapResult> wait4_reaps;  // by (reaper tid, seq)
  std::set<std::uint64_t> tids;  // every task of the trace (declared or forked)
  // Its events only when predict() was given them (a PredictStream holds none).
  trace::perf::Conversion conversion;
};

// Converts, replays on (cpu, cfg) and collects the reads of thread group `pid`. Gen vtime runs
// on the CPUs the trace's vtime probes fired on; without probes on none (a kernel booted without
// nohz_full=: the tick accounts every CPU) unless `tweak` sets ModelCfg::gen.nohz_full.
// `tweak` may change the model configuration first (a what-if: e.g. a kernel with a fix).
trace::Result<Prediction> predict(std::string_view perf_text, const trace::perf::Options&, const arch::CpuFacts&,
                                  const arch::Config&, std::uint64_t pid,
                                  const std::function<void(ModelCfg&)>& tweak = {});
// The same from a conversion already made with those options (trace::perf::convert_stream's,
// its events collected), so that the perf text need not be held.
trace::Result<Prediction> predict(trace::perf::Conversion, const trace::perf::Options&, const arch::CpuFacts&,
                                  const arch::Config&, std::uint64_t pid,
                                  const std::function<void(ModelCfg&)>& tweak = {});

// predict() in bounded memory, fed by trace::perf::convert_stream()'s callbacks: the model runs
// chunk by chunk as the events come, with the reaps and children reads the conversion places as
// it finds them (at the number of events before them, which only grows), so that neither the
// events nor the converted trace are held: the tasks, the reads and the conversion's statistics
// are. predict() of a whole conversion is this, fed at once.
class PredictStream {
 public:
  // chunk: events per run step (tests make it small).
  PredictStream(const trace::perf::Options&, const arch::CpuFacts&, const arch::Config&, std::uint64_t pid,
                std::function<void(ModelCfg&)> tweak = {}, std::size_t chunk = std::size_t{1} << 16);
  ~PredictStream();
  PredictStream(const PredictStream&) = delete;
  PredictStream& operator=(const PredictStream&) = delete;
  // convert_stream()'s on_stats (the statistics as they grow), then on_header, then on_event.
  void stats(const trace::perf::Stats&);
  void header(const trace::Header&);
  void event(const trace::Event&);
  // The conversion convert_stream() returned (its trace without events): the prediction.
  trace::Result<Prediction> finish(trace::perf::Conversion);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// What the kernel returned at one marked read (a line of kacct-workload's output).
struct KernelRead {
  std::uint64_t marker = 0;
  trace::ReadKind kind{};
  std::optional<std::uint64_t> utime, stime, value;  // in the read's unit
};
enum class Agreement : std::uint8_t { Exact, WithinBounds, Off, Unverifiable };
struct ReadComparison {
  std::uint64_t marker = 0;
  trace::ReadKind kind{};
  Agreement agreement = Agreement::Unverifiable;
  std::string how;     // how the kernel's clock at the read is known (vtime traces), else ""
  std::string detail;  // kernel vs kacct values, and any input check that failed
  std::string label;   // recorder-found reads: "tid T: CALL #SEQ"
};
// Compares each kernel read with the prediction. Exact: the same values in the read's unit, and,
// where the kernel's cputime_adjust() inputs were probed, the same rtime and utime inputs.
// WithinBounds: a read whose clock is only bounded (taskstats: no probe sees it) lies between the
// predictions at both bounds. Unverifiable: no prediction (marker lost), perf lost events before,
// or a tick of the group whose steal is not known (a trace with tick_steal records) came before.
std::vector<ReadComparison> compare(const Prediction&, const std::vector<KernelRead>&);
std::string_view name(Agreement);

// What the kernel returned at a read the recorder found in an unmodified program
// (tools/record-reads/): `spec` places it in the trace (Options::syscall_reads).
struct RecordedRead {
  trace::perf::SyscallRead spec;
  std::string read;     // the recorder's name of the read ("rusage_self", "schedstat", ...)
  std::string call;     // as the program made it, e.g. "getrusage(RUSAGE_SELF)"
  bool modeled = true;  // false: kacct does not predict this read (`why`); it is unverifiable
  std::string why;
  bool rtime_only = false;                           // /proc/PID/schedstat: its first field is the stored rtime (ns)
  bool children_only = false;                        // getrusage(RUSAGE_CHILDREN): utime/stime are cutime/cstime
  bool reap_rusage = false;                          // wait4()'s rusage of the child it reaped (spec.target)
  std::optional<std::uint64_t> utime, stime, value;  // in the read's unit
  std::optional<std::uint64_t> cutime, cstime;       // times(): tms_cutime/tms_cstime (clock ticks)
};
// The recorder's name of a read ("rusage_self", "times", "schedstat", "sys_stat", ...): sets
// spec.nr, spec.kind, modeled/why and rtime_only; false for a name it does not know.
bool recorded_kind(std::string_view read, RecordedRead&);
// A "failed" read (after recorded_kind): with the errno the recorder saw, whether the kernel
// still computed the times, as getrusage() and times() do before an EFAULT; then it is placed
// (prev_cputime moves in the model too), though still unverifiable.
void recorded_failure(std::string_view call, std::string_view err, RecordedRead&);
// Compares each recorded read with the prediction at its syscall (same rules as the marked
// reads), the reaped children's times with Prediction::children; unmodeled reads and reads after
// perf lost events are unverifiable, and so are children's times the trace cannot give.
std::vector<ReadComparison> compare(const Prediction&, const std::vector<RecordedRead>&);

}  // namespace kacct::sim
