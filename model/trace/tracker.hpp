// Per-CPU / per-task context tracker: the single definition of which event
// is legal in which state.  Shared by validate(), the ground-truth ledger and
// the model drivers.
#pragma once

#include <deque>
#include <unordered_map>
#include <vector>

#include "model/trace/trace.hpp"

namespace kacct::trace {

enum class Mode : uint8_t { User, Kernel, Guest };

struct CpuContext {
  uint64_t current = 0;  // tid; 0 = this CPU's idle task
  Mode mode = Mode::Kernel;
  uint32_t irq_depth = 0;
  bool in_softirq = false;
  bool nohz_idle = false;
  uint32_t nr_iowait = 0;  // tasks that blocked in iowait here and are not woken yet
  uint64_t last_ts = 0;    // ts of this CPU's previous event (0 at start)
  HwCounters hw;           // last counter values seen on this CPU
  // The last switch's gap= on this CPU: next's vtime clock read is at gap_end (= its ts + gap);
  // the next event on this CPU must not come before it.
  uint64_t gap_end = 0, gap_switch_ts = 0;
  uint32_t gap_switch_line = 0;
  // A read on another CPU of the task running here may bring this CPU's rq clock up to date
  // (task_sched_runtime()), which takes out the steal seen so far: steal= intervals start
  // at the later of last_ts and this.
  uint64_t remote_sync_ts = 0;
  // Between cpu_offline and cpu_online: no event but cpu_online may name this CPU, and the
  // ground truth charges the interval to no bucket (Ledger::offline).
  bool offline = false;
  uint64_t steal_base() const { return last_ts > remote_sync_ts ? last_ts : remote_sync_ts; }
};

struct TaskState {
  uint64_t tid = 0, pid = 0;
  bool kthread = false;
  int nice = 0;
  std::optional<uint64_t> mm;
  Mode saved_mode = Mode::Kernel;  // mode restored when switched in
  bool running = false;
  int32_t on_cpu = -1;          // CPU it runs on or last ran on (-1: never ran)
  bool exited = false;          // switched out with prev_state=X
  bool exiting = false;         // `exit` seen, not switched out yet
  bool sleeping = false;        // switched out with S/D, needs a wakeup to run
  bool iowait_blocked = false;  // counted in cpu(on_cpu).nr_iowait
  std::string comm;
  // Declaration order, then fork order, from 0 (sim::Compiler's dense task index is ncpus + index).
  uint32_t index = 0;
};

// Deepest hardirq nesting accepted (the kernel's HARDIRQ_BITS = 4).
inline constexpr uint32_t kMaxIrqDepth = 15;

class Tracker {
 public:
  explicit Tracker(const Header&);
  Tracker(const Tracker&);
  Tracker& operator=(const Tracker&);
  Tracker(Tracker&&) noexcept = default;  // the tasks and idle tasks keep their addresses
  Tracker& operator=(Tracker&&) noexcept = default;
  // Checks the event against the current state; on success applies it.
  // On error the state is unchanged.
  std::optional<Error> apply(const Event&);

  uint32_t ncpus() const { return uint32_t(cpus_.size()); }
  const CpuContext& cpu(uint32_t c) const { return cpus_.at(c); }
  // Declared or forked task; nullptr for tid 0 (use idle()) and unknown tids.
  const TaskState* task(uint64_t tid) const;
  const TaskState& idle(uint32_t c) const { return idle_.at(c); }
  // The task currently running on CPU c (its idle task if current == 0).
  const TaskState& current(uint32_t c) const;
  // After apply() succeeded: the task the event named besides its CPU's current one (a switch's
  // next, a wakeup's, fork's child, read's or runtime's tid), nullptr if none or the idle task.
  const TaskState* named() const { return named_; }
  // Every task declared or forked so far, exited ones included, by TaskState::index.
  const std::deque<TaskState>& tasks() const { return tasks_; }
  uint64_t now() const { return now_; }  // ts of the last applied event

  // A batch of events accepted or rejected as a whole (the C API's feed calls): from
  // begin_batch() on, apply() keeps what each event it applies changes; rollback() restores the
  // state at begin_batch(), commit() keeps the batch. Costs the CPUs' state per batch and a
  // task's state per event, not a copy of every task.
  void begin_batch();
  void commit() { batch_ = false; }
  void rollback();

 private:
  struct Undo {
    std::vector<CpuContext> cpus;
    std::vector<TaskState> idle;
    std::vector<uint32_t> cur;
    uint64_t now = 0;
    std::size_t ntasks = 0;                             // forks beyond it are dropped
    std::vector<std::pair<uint32_t, TaskState>> tasks;  // by index, before the batch first changed them
  };
  void keep_for_undo(const Event&);
  Undo undo_;
  bool batch_ = false;
  uint64_t batch_no_ = 0;       // begin_batch() count: kept_[k] == batch_no_ once task k is in undo_
  std::vector<uint64_t> kept_;  // by task index
  TaskState* find(uint64_t tid);
  // The task running on CPU c (no lookup by tid per event).
  TaskState& cur_task(uint32_t c) { return *curp_[c]; }
  const TaskState& cur_task(uint32_t c) const { return *curp_[c]; }
  void repoint();  // curp_ from cur_
  // check() leaves in `named` the index of the task the event names (kIdle: none), for update().
  std::optional<Error> check(const Event&, uint32_t& named) const;
  void update(const Event&);

  static constexpr uint32_t kIdle = UINT32_MAX;
  std::optional<Error> header_error_;
  bool rtime_events_ = false;
  std::vector<CpuContext> cpus_;
  std::vector<TaskState> idle_;
  std::vector<uint32_t> cur_;                   // per CPU: index of its current task, kIdle for idle
  std::vector<TaskState*> curp_;                // per CPU: its current task (idle_[c] or in tasks_)
  std::deque<TaskState> tasks_;                 // by index; exited tasks stay (references stay valid)
  std::unordered_map<uint64_t, uint32_t> ids_;  // tid -> index
  uint64_t now_ = 0;
  TaskState* named_ = nullptr;  // named()
};

}  // namespace kacct::trace
