// Context tracker: which event is legal in which CPU/task state, and how it
// changes that state.  check() never mutates; update() assumes check() passed.
#include "model/trace/tracker.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace kacct::trace {
namespace {

std::optional<Error> fail(const Event& e, std::string field, std::string msg) {
  return Error{e.line, 0, std::move(msg), std::move(field)};
}

std::string_view mode_name(Mode m) {
  return m == Mode::User ? "user mode" : m == Mode::Guest ? "guest mode" : "kernel mode";
}

}  // namespace

std::optional<Error> check_header(const Header& h) {
  auto bad = [](std::string msg) { return Error{0, 0, std::move(msg), "header"}; };
  if (h.version != 1) return bad(fmt::format("unsupported version {}; expected 1", h.version));
  if (h.ncpus < 1 || h.ncpus > 4096) return bad(fmt::format("ncpus {} out of range; expected 1..4096", h.ncpus));
  if (h.cpu_model.empty()) return bad("empty cpu model; expected a name");
  std::set<uint64_t> tids;
  for (const TaskDecl& d : h.tasks) {
    if (d.tid == 0) return bad("task tid 0 is the idle task; expected a non-zero tid");
    if (!tids.insert(d.tid).second) return bad(fmt::format("duplicate tid {}", d.tid));
    if (d.comm.empty() || d.comm.size() > 15)
      return bad(fmt::format("task {}: expected comm of 1..15 characters", d.tid));
    if (d.nice < -20 || d.nice > 19)
      return bad(fmt::format("task {}: nice {} out of range; expected -20..19", d.tid, d.nice));
    if (d.kthread == d.mm.has_value()) return bad(fmt::format("task {}: expected mm= exactly for user tasks", d.tid));
  }
  // The threads of a process share its address space: one mm per pid.
  std::map<uint64_t, const TaskDecl*> first_of;
  for (const TaskDecl& d : h.tasks) {
    auto [it, fresh] = first_of.emplace(d.pid, &d);
    const TaskDecl& o = *it->second;
    if (!fresh && (o.mm != d.mm || o.kthread != d.kthread))
      return bad(fmt::format("task {}: a thread of pid {} with {}, but task {} of that process has {}", d.tid, d.pid,
                             d.mm ? fmt::format("mm={}", *d.mm) : std::string("no mm"), o.tid,
                             o.mm ? fmt::format("mm={}", *o.mm) : std::string("no mm")));
  }
  return std::nullopt;
}

Tracker::Tracker(const Header& h) : header_error_(check_header(h)), rtime_events_(h.rtime_events) {
  if (header_error_) return;
  cpus_.resize(h.ncpus);
  for (uint32_t c = 0; c < h.ncpus; ++c) {
    TaskState idle;
    idle.kthread = true;
    idle.running = true;
    idle.on_cpu = int32_t(c);
    idle.comm = fmt::format("swapper/{}", c);
    idle_.push_back(std::move(idle));
  }
  for (const TaskDecl& d : h.tasks) {
    TaskState t;
    t.tid = d.tid;
    t.pid = d.pid;
    t.kthread = d.kthread;
    t.nice = d.nice;
    t.mm = d.mm;
    t.comm = d.comm;
    t.index = uint32_t(tasks_.size());
    ids_.emplace(d.tid, t.index);
    tasks_.push_back(std::move(t));
  }
  cur_.assign(h.ncpus, kIdle);
  kept_.assign(tasks_.size(), 0);
  repoint();
}

Tracker::Tracker(const Tracker& o)
    : undo_(o.undo_),
      batch_(o.batch_),
      batch_no_(o.batch_no_),
      kept_(o.kept_),
      header_error_(o.header_error_),
      rtime_events_(o.rtime_events_),
      cpus_(o.cpus_),
      idle_(o.idle_),
      cur_(o.cur_),
      tasks_(o.tasks_),
      ids_(o.ids_),
      now_(o.now_),
      named_(o.named_ ? &tasks_[o.named_->index] : nullptr) {
  repoint();
}
Tracker& Tracker::operator=(const Tracker& o) {
  if (this != &o) *this = Tracker(o);
  return *this;
}

void Tracker::repoint() {
  curp_.resize(cur_.size());
  for (size_t c = 0; c < cur_.size(); ++c) curp_[c] = cur_[c] == kIdle ? &idle_[c] : &tasks_[cur_[c]];
}

const TaskState* Tracker::task(uint64_t tid) const {
  auto it = ids_.find(tid);
  return it == ids_.end() ? nullptr : &tasks_[it->second];
}

TaskState* Tracker::find(uint64_t tid) {
  auto it = ids_.find(tid);
  return it == ids_.end() ? nullptr : &tasks_[it->second];
}

const TaskState& Tracker::current(uint32_t c) const {
  (void)cpus_.at(c);
  return cur_task(c);
}

std::optional<Error> Tracker::apply(const Event& e) {
  uint32_t named = kIdle;
  if (auto err = check(e, named)) return err;
  named_ = named == kIdle ? nullptr : &tasks_[named];
  if (batch_) [[unlikely]]
    keep_for_undo(e);
  update(e);
  return std::nullopt;
}

void Tracker::begin_batch() {
  undo_.cpus = cpus_;
  undo_.idle = idle_;
  undo_.cur = cur_;
  undo_.now = now_;
  undo_.ntasks = tasks_.size();
  undo_.tasks.clear();
  ++batch_no_;
  batch_ = true;
}

// The tasks update() can change, each kept once per batch as it was before the batch changed it
// (the CPU's current task, a switch's next, a woken task; a forked child did not exist: dropped
// at rollback): the CPUs' and idle tasks' state is kept whole at begin_batch().
void Tracker::keep_for_undo(const Event& e) {
  auto keep = [&](uint32_t k) {
    if (k == kIdle || k >= undo_.ntasks || kept_[k] == batch_no_) return;
    kept_[k] = batch_no_;
    undo_.tasks.emplace_back(k, tasks_[k]);
  };
  keep(cur_[e.cpu]);
  if ((e.kind == Kind::Switch || e.kind == Kind::Wakeup) && named_) keep(named_->index);
}

void Tracker::rollback() {
  if (!batch_) return;
  batch_ = false;
  cpus_ = undo_.cpus;
  idle_ = undo_.idle;
  cur_ = undo_.cur;
  now_ = undo_.now;
  for (auto& [k, t] : undo_.tasks) tasks_[k] = std::move(t);
  while (tasks_.size() > undo_.ntasks) {  // forked in the batch
    ids_.erase(tasks_.back().tid);
    tasks_.pop_back();
    kept_.pop_back();
  }
  undo_.tasks.clear();
  named_ = nullptr;
  repoint();
}

std::optional<Error> Tracker::check(const Event& e, uint32_t& named) const {
  if (header_error_) return header_error_;
  if (e.cpu >= cpus_.size())
    return fail(e, "cpu", fmt::format("cpu {} out of range; expected 0..{}", e.cpu, cpus_.size() - 1));
  if (e.ts < now_)
    return fail(e, "ts",
                fmt::format("time goes backwards: ts {} is before the previous event's ts {};"
                            " expected non-decreasing timestamps",
                            e.ts, now_));
  const CpuContext& c = cpus_[e.cpu];
  if (c.offline && e.kind != Kind::CpuOnline)
    return fail(e, "event",
                fmt::format("{} on cpu {}, which is offline; expected cpu_online first", name(e.kind), e.cpu));
  if (e.ts < c.gap_end)
    return fail(
        e, "ts",
        fmt::format("ts {} is inside the gap of the switch at ts {}{} on cpu {} (gap ends at {});"
                    " expected ts >= {}",
                    e.ts, c.gap_switch_ts, c.gap_switch_line ? fmt::format(" (line {})", c.gap_switch_line) : "", e.cpu,
                    c.gap_end, c.gap_end));
  if (e.hw.tb || e.hw.purr || e.hw.spurr) [[unlikely]] {  // most events carry no counter
    const struct {
      const char* key;
      const std::optional<uint64_t>& now;
      const std::optional<uint64_t>& prev;
    } counters[] = {{"tb", e.hw.tb, c.hw.tb}, {"purr", e.hw.purr, c.hw.purr}, {"spurr", e.hw.spurr, c.hw.spurr}};
    for (const auto& k : counters)
      if (k.now && k.prev && *k.now < *k.prev)
        return fail(e, k.key,
                    fmt::format("{} decreased on cpu {}: {} < previous {}; expected non-decreasing", k.key, e.cpu,
                                *k.now, *k.prev));
  }

  const TaskState& cur = cur_task(e.cpu);
  // The task a tid names: its index in `named`, nullptr if unknown.
  auto lookup = [&](uint64_t tid) -> const TaskState* {
    auto it = ids_.find(tid);
    if (it == ids_.end()) return nullptr;
    named = it->second;
    return &tasks_[it->second];
  };
  auto need_process = [&]() -> std::optional<Error> {  // no irq/softirq active
    if (c.irq_depth > 0)
      return fail(e, "event",
                  fmt::format("{} inside irq (depth {}); expected process context", name(e.kind), c.irq_depth));
    if (c.in_softirq) return fail(e, "event", fmt::format("{} inside softirq; expected process context", name(e.kind)));
    return std::nullopt;
  };
  auto need_task = [&](Mode m) -> std::optional<Error> {  // a live non-idle task in mode m
    if (auto err = need_process()) return err;
    if (c.current == 0) return fail(e, "event", fmt::format("{} by the idle task; expected a task", name(e.kind)));
    if (cur.exiting)
      return fail(
          e, "event",
          fmt::format("{} by exiting task {}; expected kernel time until switch prev_state=X", name(e.kind), cur.tid));
    if (c.mode != m)
      return fail(e, "event", fmt::format("{} in {}; expected {}", name(e.kind), mode_name(c.mode), mode_name(m)));
    return std::nullopt;
  };

  switch (e.kind) {
    case Kind::SyscallEnter:
    case Kind::ExcEnter: return need_task(Mode::User);
    case Kind::SyscallExit:
    case Kind::ExcExit:
      if (auto err = need_task(Mode::Kernel)) return err;
      if (cur.kthread)
        return fail(e, "event", fmt::format("{} by kthread {}; kthreads never enter user mode", name(e.kind), cur.tid));
      return std::nullopt;
    case Kind::IrqEnter:
      if (c.irq_depth >= kMaxIrqDepth)
        return fail(e, "event", fmt::format("irq nesting deeper than {}; expected irq_exit", kMaxIrqDepth));
      return std::nullopt;
    case Kind::IrqExit:
      if (c.irq_depth == 0) return fail(e, "event", "irq_exit without irq_enter; expected an active irq");
      return std::nullopt;
    case Kind::SoftirqEnter:
      if (c.irq_depth > 0) return fail(e, "event", "softirq_enter inside irq; expected irq_exit first");
      if (c.in_softirq) return fail(e, "event", "softirq_enter inside softirq; softirqs do not nest");
      return std::nullopt;
    case Kind::SoftirqExit:
      if (!c.in_softirq) return fail(e, "event", "softirq_exit without softirq_enter; expected an active softirq");
      if (c.irq_depth > 0) return fail(e, "event", "softirq_exit inside irq; expected irq_exit first");
      return std::nullopt;
    case Kind::GuestEnter:
      if (auto err = need_task(Mode::Kernel)) return err;
      if (cur.kthread)
        return fail(e, "event", fmt::format("guest_enter by kthread {}; expected a vcpu user task", cur.tid));
      return std::nullopt;
    case Kind::GuestExit: return need_task(Mode::Guest);
    case Kind::Switch: {
      if (auto err = need_process()) return err;
      if (c.mode == Mode::Guest) return fail(e, "event", "switch in guest mode; expected guest_exit first");
      if (e.a != c.current)
        return fail(e, "prev",
                    fmt::format("prev={} is not the current task on cpu {} (current is {})", e.a, e.cpu, c.current));
      bool dead = e.prev_state == PrevState::Dead;
      if (c.current == 0 && e.prev_state != PrevState::Runnable)
        return fail(e, "prev_state", "the idle task cannot sleep or exit; expected prev_state=R");
      if (c.current == 0 && c.nohz_idle) return fail(e, "event", "switch from nohz idle; expected idle_exit first");
      // preempted in do_exit() after release_task() (seen on ppc64le 6.1/6.12): runs again later
      if (cur.exiting && !dead && e.prev_state != PrevState::Runnable)
        return fail(e, "prev_state", fmt::format("task {} has exited; expected prev_state=X or R", e.a));
      if (dead && !cur.exiting)
        return fail(e, "prev_state",
                    fmt::format("prev_state=X but task {} did not exit; expected an exit event first", e.a));
      if (e.iowait && e.prev_state != PrevState::Sleeping && e.prev_state != PrevState::DiskSleep)
        return fail(e, "iowait", "iowait=1 needs a blocking prev_state; expected prev_state=S or D");
      if (e.switch_gap && *e.switch_gap > UINT64_MAX - e.ts)
        return fail(e, "gap",
                    fmt::format("gap={} puts next's clock read past 2^64-1 ns; expected gap <= {}", *e.switch_gap,
                                UINT64_MAX - e.ts));
      if (e.b == e.a) return fail(e, "next", fmt::format("next={} is already current; expected another task", e.b));
      if (e.b == 0) return std::nullopt;  // this CPU's idle task, not current here
      const TaskState* n = lookup(e.b);
      if (!n) return fail(e, "next", fmt::format("next={} is an unknown task; expected a declared or forked tid", e.b));
      if (n->exited) return fail(e, "next", fmt::format("next={} has exited; expected a runnable task", e.b));
      if (n->running)
        return fail(e, "next",
                    fmt::format("next={} is already running on cpu {}; expected a runnable task", e.b, n->on_cpu));
      if (n->sleeping) return fail(e, "next", fmt::format("next={} is sleeping; expected a wakeup first", e.b));
      return std::nullopt;
    }
    case Kind::Wakeup: {
      if (e.a == 0) return fail(e, "tid", "the idle task is never woken; expected a task tid");
      const TaskState* t = lookup(e.a);
      if (!t) return fail(e, "tid", fmt::format("tid={} is an unknown task; expected a declared or forked tid", e.a));
      if (t->exited) return fail(e, "tid", fmt::format("tid={} has exited; expected a live task", e.a));
      return std::nullopt;
    }
    case Kind::IdleEnter:
    case Kind::IdleExit:
      if (auto err = need_process()) return err;
      if (c.current != 0)
        return fail(e, "event",
                    fmt::format("{} while task {} is current; expected the idle task", name(e.kind), c.current));
      if (c.nohz_idle == (e.kind == Kind::IdleEnter))
        return fail(e, "event",
                    c.nohz_idle ? "idle_enter while already in nohz idle; expected idle_exit"
                                : "idle_exit without idle_enter; expected nohz idle");
      return std::nullopt;
    case Kind::Tick:
      if (c.nohz_idle) return fail(e, "event", "tick in nohz idle (ticks are stopped); expected idle_exit first");
      return std::nullopt;
    case Kind::Steal:
      if (e.a > e.ts - c.steal_base())
        return fail(e, "ns",
                    fmt::format("steal ns={} exceeds the interval {} since cpu {}'s previous event or "
                                "remote read of its task",
                                e.a, e.ts - c.steal_base(), e.cpu));
      return std::nullopt;
    case Kind::Fork: {
      if (auto err = need_process()) return err;
      if (e.a != c.current)
        return fail(e, "parent",
                    fmt::format("parent={} is not the current task on cpu {} (current is {})", e.a, e.cpu, c.current));
      if (cur.exiting) return fail(e, "event", fmt::format("fork by exiting task {}", cur.tid));
      if (c.mode != Mode::Kernel)
        return fail(e, "event", fmt::format("fork in {}; expected kernel mode", mode_name(c.mode)));
      if (e.b == 0 || task(e.b))
        return fail(e, "child", fmt::format("child={} already exists; expected a new tid", e.b));
      uint64_t pid = e.fork_pid.value_or(e.b);
      if (pid != e.b && (pid != cur.pid || c.current == 0 || e.fork_kthread))
        return fail(e, "pid",
                    fmt::format("pid={} must be the child's tid or, for a user thread, the parent's thread group {}",
                                pid, cur.pid));
      if (e.fork_kthread && e.fork_mm) return fail(e, "mm", "kthreads have no mm; expected no mm=");
      if (e.fork_comm.size() > 15) return fail(e, "comm", "expected comm of at most 15 characters");
      if (!e.fork_kthread && pid != e.b) {  // a thread shares its parent's mm
        if (!cur.mm) return fail(e, "pid", fmt::format("parent {} has no mm to share with a thread", cur.tid));
        if (e.fork_mm && e.fork_mm != cur.mm)
          return fail(e, "mm", fmt::format("a thread shares its parent's mm; expected mm={}", *cur.mm));
      }
      if (!e.fork_kthread && pid == e.b && !e.fork_mm)
        return fail(e, "mm", "missing mm= for a new user process; expected mm=<id> or kthread");
      return std::nullopt;
    }
    case Kind::Exit: return need_task(Mode::Kernel);
    case Kind::MmExit: return std::nullopt;
    case Kind::Runtime:
      if (!rtime_events_) return fail(e, "event", "runtime event without the header line 'rtime events'");
      if (e.a == 0 || !lookup(e.a))
        return fail(e, "tid",
                    fmt::format("tid={} is not a known task; expected a declared or forked non-idle tid", e.a));
      return std::nullopt;
    case Kind::CpuOffline: {
      // The CPU dies in its idle loop (do_idle -> cpuhp_report_idle_dead) after the hotplug
      // code moved every task away; the tick still runs there (can_stop_idle_tick() is false
      // on an offline CPU), so the trace shows no nohz idle at that point.
      if (auto err = need_process()) return err;
      if (c.current != 0)
        return fail(e, "event", fmt::format("cpu_offline while task {} is current; expected the idle task", c.current));
      if (c.nohz_idle) return fail(e, "event", "cpu_offline in nohz idle; expected idle_exit first");
      uint32_t online = 0;
      for (const CpuContext& o : cpus_) online += o.offline ? 0 : 1;
      if (online < 2) return fail(e, "event", "cpu_offline of the last online cpu; expected another cpu online");
      return std::nullopt;
    }
    case Kind::CpuOnline:
      if (!c.offline)
        return fail(e, "event",
                    fmt::format("cpu_online of cpu {}, which is online; expected cpu_offline first", e.cpu));
      return std::nullopt;
    case Kind::Read: {
      if (auto err = need_task(Mode::Kernel)) return err;
      if (e.a == 0) return std::nullopt;
      if (e.read_kind == ReadKind::ProcStat) return fail(e, "tid", "proc_stat is system-wide; expected no tid=");
      if ((e.read_kind == ReadKind::RusageSelf || e.read_kind == ReadKind::RusageThread) && e.a != c.current)
        return fail(e, "tid",
                    fmt::format("{} reads the current task; expected no tid= or tid={}", name(e.read_kind), c.current));
      if (!lookup(e.a))
        return fail(e, "tid", fmt::format("tid={} is an unknown task; expected a declared or forked tid", e.a));
      return std::nullopt;
    }
  }
  return fail(e, "event", "unknown event kind");
}

void Tracker::update(const Event& e) {
  CpuContext& c = cpus_[e.cpu];
  now_ = c.last_ts = e.ts;
  if (e.hw.tb) c.hw.tb = e.hw.tb;
  if (e.hw.purr) c.hw.purr = e.hw.purr;
  if (e.hw.spurr) c.hw.spurr = e.hw.spurr;
  TaskState& cur = cur_task(e.cpu);
  switch (e.kind) {
    case Kind::SyscallEnter:
    case Kind::ExcEnter:
    case Kind::GuestExit: c.mode = Mode::Kernel; break;
    case Kind::SyscallExit:
    case Kind::ExcExit: c.mode = Mode::User; break;
    case Kind::GuestEnter: c.mode = Mode::Guest; break;
    case Kind::IrqEnter: ++c.irq_depth; break;
    case Kind::IrqExit: --c.irq_depth; break;
    case Kind::SoftirqEnter: c.in_softirq = true; break;
    case Kind::SoftirqExit: c.in_softirq = false; break;
    case Kind::IdleEnter: c.nohz_idle = true; break;
    case Kind::IdleExit: c.nohz_idle = false; break;
    case Kind::CpuOffline: c.offline = true; break;
    case Kind::CpuOnline: c.offline = false; break;
    case Kind::Exit: cur.exiting = true; break;
    case Kind::Switch: {
      if (e.switch_gap) {
        c.gap_end = e.ts + *e.switch_gap;
        c.gap_switch_ts = e.ts;
        c.gap_switch_line = e.line;
      }
      cur.saved_mode = c.mode;
      cur.running = false;
      if (e.prev_state == PrevState::Dead) {
        cur.exited = true;
        cur.exiting = false;
      } else if (e.prev_state != PrevState::Runnable) {
        cur.sleeping = true;
      }
      if (e.iowait) {
        cur.iowait_blocked = true;
        ++c.nr_iowait;
      }
      cur_[e.cpu] = e.b == 0 ? kIdle : named_->index;
      curp_[e.cpu] = e.b == 0 ? &idle_[e.cpu] : named_;
      TaskState& next = cur_task(e.cpu);
      next.running = true;
      next.on_cpu = int32_t(e.cpu);
      c.current = e.b;
      c.mode = next.saved_mode;
      break;
    }
    case Kind::Wakeup: {
      TaskState& t = *named_;
      t.sleeping = false;
      if (t.iowait_blocked) {  // the kernel decrements the rq the task slept on
        t.iowait_blocked = false;
        --cpus_.at(size_t(t.on_cpu)).nr_iowait;
      }
      break;
    }
    case Kind::Fork: {
      TaskState t;
      t.tid = e.b;
      t.pid = e.fork_pid.value_or(e.b);
      t.kthread = e.fork_kthread;
      t.nice = cur.nice;  // inherited
      t.mm = e.fork_kthread ? std::nullopt : e.fork_mm ? e.fork_mm : cur.mm;
      t.comm = e.fork_comm.empty() ? cur.comm : e.fork_comm;
      t.index = uint32_t(tasks_.size());
      ids_.emplace(t.tid, t.index);
      named_ = &tasks_.emplace_back(std::move(t));
      kept_.push_back(0);
      break;
    }
    case Kind::Read:
      if (e.a != 0 && e.a != c.current)
        if (const TaskState& t = *named_; t.running && t.on_cpu >= 0 && uint32_t(t.on_cpu) != e.cpu)
          cpus_[uint32_t(t.on_cpu)].remote_sync_ts = e.ts;
      break;
    default: break;
  }
}

std::optional<Error> validate(const Trace& t) {
  Tracker tr(t.header);
  if (auto err = check_header(t.header)) return err;
  for (const Event& e : t.events)
    if (auto err = tr.apply(e)) return err;
  return std::nullopt;
}

}  // namespace kacct::trace
