// Trace-driven machine: turns trace events into the kernel's accounting calls on each CPU,
// in the order the kernel makes them, for one CPU model and one configuration. The trace is
// validated and compiled once (dense task indices, 16-byte events) so that replay is fast.
#pragma once
#include <cstdint>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "arch/config.hpp"
#include "model/cputime/children.hpp"
#include "model/sim/backends.hpp"
#include "model/tick/tick.hpp"
#include "model/trace/ledger.hpp"
#include "model/trace/trace.hpp"
#include "model/trace/tracker.hpp"

namespace kacct::sim {

using model::CpuAcct;
using model::TaskAcct;

struct CEvent {  // compiled event
  std::uint64_t ts;
  std::uint32_t arg;  // dense task index, steal ns index, read index... by kind
  std::uint16_t cpu;
  trace::Kind kind;
  std::uint8_t flags;  // Switch: bit0 prev dead, bit1 iowait, bit2 gap= given (Program::gap)
};
static_assert(sizeof(CEvent) == 16);

struct TaskInfo {
  std::uint64_t tid = 0, pid = 0;
  std::string comm;
  bool kthread = false, ksoftirqd = false;
  int nice = 0;
  std::uint32_t group = 0;  // dense thread-group index
};
struct ReadInfo {
  trace::ReadKind kind;
  std::uint32_t target;  // dense task index
  std::uint64_t id;
  std::uint32_t line;
};

struct Program {
  trace::Header header;
  std::vector<CEvent> events;
  std::vector<std::uint32_t> lines;  // source line per event
  std::vector<std::uint64_t> wide;   // Steal ns and Syscall numbers that need 64 bits
  std::vector<TaskInfo> tasks;       // index 0..ncpus-1: the idle tasks
  std::vector<ReadInfo> reads;
  std::uint32_t ngroups = 0;
  // Hardware counters the trace gave at an event (tb=, purr=, spurr=), by event index; empty
  // when the trace has none. Bit k of `hw_mask[i]` says counter k (0 tb, 1 purr, 2 spurr) is set.
  std::vector<std::array<std::uint64_t, 3>> hw;
  std::vector<std::uint8_t> hw_mask;
  // Switch gap= values by event index (valid where the switch's flags bit 2 is set); empty when
  // the trace gives none.
  std::vector<std::uint64_t> gap;
  // What the trace format has no event for, set by the caller after compile() (the oracle, from
  // the perf conversion), each applied before event `event`, in order:
  // a reap: thread-group leader `child` reaped by a wait of task `reaper` (wait_task_zombie());
  // a wait that returned a child whose group still has live tasks reported a stop or continue
  // (wait_task_stopped(), wait_task_continued()) and reaped nothing: only its rusage is computed
  // (getrusage(RUSAGE_BOTH): cputime_adjust() of the child's group), when the wait asked for one.
  struct Reap {
    std::uint32_t event = 0, reaper = 0, child = 0;  // dense task indices
    std::uint64_t id = 0;                            // the caller's, copied to ReapResult
    bool rusage = true;                              // the wait asked for the child's rusage
    bool may_reap = true;                            // false: the wait could not reap (waitid without WEXITED)
  };
  std::vector<Reap> reaps;
  // a read of the reaped children's times (signal->cutime/cstime) of `task`'s process, e.g.
  // getrusage(RUSAGE_CHILDREN), times()'s tms_cutime/tms_cstime (no side effect: no cputime_adjust).
  struct ChildrenRead {
    std::uint32_t event = 0, task = 0;
    std::uint64_t id = 0;
  };
  std::vector<ChildrenRead> children_reads;
  // a group read of another process (thread_group_cputime_adjusted() of `task`'s group, by a
  // reader outside it: no runtime update first), e.g. /proc/PID/stat of a child.
  std::vector<ChildrenRead> foreign_reads;
  // A streamed run compiles its input in chunks (Compiler): the index in the whole run of
  // events[0]. The per-event vectors above (events, lines, hw, hw_mask, gap) and wide and reads
  // hold the current chunk only; header, tasks and ngroups the whole run so far.
  std::size_t base = 0;
  // Line of event i (an index in the whole run), 0 if it is not in the current chunk.
  std::uint32_t line_at(std::size_t i) const { return i >= base && i - base < lines.size() ? lines[i - base] : 0; }
};

// Validates and compiles events one at a time into a Program (compile() is this over a whole
// trace); a streamed run takes the compiled events out in chunks, so that only the tasks and
// the current chunk stay in memory.
class Compiler {
 public:
  // The header must pass trace::check_header().
  explicit Compiler(const trace::Header&);
  std::optional<trace::Error> add(const trace::Event&);
  // The program with the events added since the last next_chunk().
  Program& program();
  // Drops the compiled events (base moves past them); tasks stay.
  void next_chunk();
  // A batch of events accepted or rejected as a whole (the C API's feed calls): rollback()
  // undoes every add() since begin_batch() (events, forked tasks, the tracker's state);
  // commit() keeps them.
  void begin_batch();
  void commit();
  void rollback();

 private:
  void add_task(std::uint64_t tid, std::uint64_t pid, bool kthread, const std::string& comm, int nice);
  Program p_;
  trace::Tracker tr_;
  std::unordered_map<std::uint64_t, std::uint32_t> groups_;  // tgid -> dense group
  struct Mark {
    std::size_t events = 0, wide = 0, reads = 0, tasks = 0;
    std::uint32_t ngroups = 0;
  } mark_;
};

// Validate and compile. Errors carry the trace line.
trace::Result<Program> compile(const trace::Trace&);

struct ReadResult {
  std::uint64_t id = 0;
  trace::ReadKind kind{};
  std::uint64_t tid = 0, ts = 0;
  std::uint32_t line = 0;
  std::uint64_t utime = 0, stime = 0;  // ns, after cputime_adjust (0 for the clock reads; raw
                                       // task_cputime() for taskstats)
  std::uint64_t rtime = 0;             // ns of sum_exec_runtime seen by the read
};
struct Violation {
  std::size_t event = 0;
  std::uint32_t line = 0;
  std::string invariant;
  std::string detail;
  std::string_view fixed_by;  // the kernel's own bug in this era: the patch that fixed it; "" = none
};
// Violation::fixed_by of a kernel behaviour the model reports as a violation that no release of
// the table has fixed (CPU hotplug: docs/models/gen-vtime.md, native-vtime.md).
inline constexpr std::string_view kNotFixed = "nothing yet (6.12.117 still has it)";
// An invariant the checker stopped judging on a CPU because a kernel finding ended its premise
// (e.g. native_vtime.ns_bounded after a bucket wrap): "holds" never covers it from `line` on.
struct Unjudged {
  std::string invariant;
  std::uint32_t cpu = 0;
  std::size_t event = 0;
  std::uint32_t line = 0;
  std::string cause;  // the finding that ended the premise
};
struct GroupAcct {
  TaskAcct<Concrete> dead;  // signal_struct sums of exited threads
  model::PrevCputime<Concrete> prev;
  model::ChildTimes<Concrete> children{0, 0};  // signal->cutime/cstime: reaped children (ns)
};
struct ChildrenResult {  // a Program::ChildrenRead: the process's signal->cutime/cstime (ns)
  std::uint64_t id = 0, tid = 0;
  std::uint64_t utime = 0, stime = 0;
};
struct ReapResult {  // a Program::Reap: what the reaper's process gained (ns)
  std::uint64_t reaper_tid = 0, child_tid = 0;
  std::uint64_t utime = 0, stime = 0;                    // thread_group_cputime_adjusted() of the reaped group
  std::uint64_t children_utime = 0, children_stime = 0;  // its own reaped children
  std::uint64_t rtime = 0;                               // the reaped group's sum_exec_runtime
  std::uint64_t id = 0;                                  // Program::Reap::id
  bool reaped = true;  // false: a stop/continue report (nothing joined the reaper's children)
};
struct RunResult {
  std::vector<CpuAcct<Concrete>> cpus;
  std::vector<TaskAcct<Concrete>> tasks;  // same indices as Program::tasks
  std::vector<GroupAcct> groups;
  std::vector<ReadResult> reads;
  std::vector<ChildrenResult> children_reads;
  std::vector<ReapResult> reaps;
  std::vector<ReadResult> foreign_reads;        // Program::foreign_reads (kind ProcStat)
  std::optional<Violation> violation;           // first one, when checking
  std::vector<Violation> known_bugs;            // with RunOptions::tolerate_known_bugs: first one per invariant
  std::vector<std::string> obligations_failed;  // domain obligations (division by zero...)
  std::vector<Unjudged> unjudged;               // invariants not judged past a point, one entry per CPU
  std::uint64_t events = 0;
  BackendResult backend;  // what the backend of the run's accounting mode adds (model/sim/backends.hpp)
  // That result if the run's backend leaves a T (e.g. model::GenResult), else nullptr.
  template <class T>
  const T* backend_result() const {
    return std::get_if<T>(&backend);
  }
  template <class T>
  T* backend_result() {
    return std::get_if<T>(&backend);
  }
};

struct RunOptions {
  bool check = false;  // evaluate every spec invariant after every event
  bool stop_at_violation = true;
  // Known kernel bugs of the configured era (Violation::fixed_by) go to known_bugs instead of
  // ending the run, so that fuzzers and props keep checking everything else on old eras.
  bool tolerate_known_bugs = false;
  // Called after every event with its index and the run's state so far (kcpustat, task times,
  // reads), so that a caller can see where each charge went without re-deriving it. Not set:
  // not called (the hot loop stays as it is).
  std::function<void(std::size_t, const RunResult&)> observe = nullptr;
  // Streaming: called when the program's events have run, with the run so far (a caller may
  // take RunResult::reads out: the machine only appends to them). It refills the program given
  // to run() with the next chunk (Compiler::next_chunk(), then add(); tasks only grow) and says
  // whether there is one. Not set: the program is the whole trace.
  std::function<bool(RunResult&)> refill = nullptr;
};

// The model settings (ModelCfg: model/sim/backends.hpp) a configuration selects on a CPU.
ModelCfg model_cfg(const arch::CpuFacts&, const arch::Config&);
// Selects a kacct-local proposed fix (arch/patches.hpp rows with `local`) on top of a
// configuration's settings; throws std::invalid_argument if it is not one or does not apply.
void apply_fix(ModelCfg&, std::string_view id);

// Replays the program with the backend of cfg.acct (model/sim/backends.hpp).
RunResult run(const Program&, const ModelCfg&, const RunOptions& = {});

// A run kept alive while its input arrives (pushed, where RunOptions::refill pulls): the C API's
// feeds, perf-replay's converter. The caller compiles each piece into the program (Compiler, as
// for refill: next_chunk() after advance()) and calls advance(); the outputs so far can be read
// between pieces without ending the run. Same machine, same loop as run().
class LiveRun {
 public:
  // p (the Compiler's program), cfg and o are kept by reference: they must outlive the run.
  LiveRun(const Program& p, const ModelCfg& cfg, const RunOptions& o);
  ~LiveRun();
  LiveRun(LiveRun&&) noexcept;
  LiveRun& operator=(LiveRun&&) noexcept;
  // Runs the program's current chunk (the tasks may have grown). False once the run has
  // stopped (a violation with stop_at_violation): later chunks are not run.
  bool advance();
  bool stopped() const;
  // The outputs so far (kcpustat, task times, reads, violation, ...), without `backend` and
  // `obligations_failed` (below). A caller may take `reads` out: the machine only appends.
  const RunResult& partial() const;
  RunResult& partial();
  // What the backend would leave if the input ended here (computed on a copy of its state), and
  // the obligations failed so far (run()'s RunResult::obligations_failed).
  BackendResult backend_now() const;
  std::vector<std::string> obligations_now() const;
  // The end of the input: the reaps and reads placed after the last event, then run()'s result.
  RunResult finish() &&;

 private:
  std::unique_ptr<LiveMachine> m_;
};

// Per-CPU context the machine tracks from the trace (shared by every accounting backend).
struct CpuCtx {
  std::uint32_t cur;  // dense index of the current task
  trace::Mode mode = trace::Mode::Kernel;
  std::uint32_t irq_depth = 0;
  bool softirq = false;
  bool nohz = false;
  std::uint32_t nr_iowait = 0;
  std::uint64_t idle_jiffies = 0;  // jiffies at idle_enter (TICK_NSEC steps from ts 0)
  bool offline = false;            // between cpu_offline and cpu_online
  std::uint64_t offline_ts = 0;    // ts of the last cpu_offline
};

}  // namespace kacct::sim
