// Internal to the simulator (model/sim and the backends in model/<mechanism>/backend.*): the
// shared machine state (Core), what a backend provides (the MachineBackend concept below) and the
// event loop (Machine<B>), which a backend's runner calls through run_with<B>(). Backends are
// registered by accounting mode in model/sim/backends.hpp.
#pragma once
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/sim/machine.hpp"
#include "spec/invariants.hpp"

namespace kacct::sim {
using trace::Kind;
using trace::Mode;
using C = Concrete;

// The machine: validates nothing (compile() did), tracks each CPU's context (current task,
// mode, irq depth, softirq, nohz idle, iowait) and the readers, and hands every event to the
// accounting backend of the configured mechanism *before* the context changes, so that the
// backend sees what the kernel sees at that hook. Core is the state every backend shares.
struct Core {
  const Program& p;
  const ModelCfg& cfg;
  const RunOptions& o;
  Concrete d;
  RunResult r;
  std::vector<CpuCtx> ctx;
  std::vector<Mode> saved_mode;
  std::vector<std::int32_t> iowait_cpu;
  std::vector<bool> exited;
  // The live (not exited) tasks of each thread group, idle tasks aside, in index order: a
  // process-wide read sums them without walking every task the trace ever had.
  std::vector<std::vector<std::uint32_t>> members;
  std::vector<model::TaskCputime<C>> exit_counted;  // what a task's exit added to its group's dead sums

  Core(const Program& p_, const ModelCfg& cfg_, const RunOptions& o_) : p(p_), cfg(cfg_), o(o_) {
    const auto n = p.header.ncpus;
    r.cpus.assign(n, model::zero_cpu(d));
    r.tasks.assign(p.tasks.size(), model::zero_task(d));
    r.groups.assign(p.ngroups, GroupAcct{model::zero_task(d), {0, 0}});
    ctx.resize(n);
    for (std::uint32_t c = 0; c < n; ++c) ctx[c].cur = c;
    saved_mode.assign(p.tasks.size(), Mode::Kernel);
    iowait_cpu.assign(p.tasks.size(), -1);
    exited.assign(p.tasks.size(), false);
    members.resize(p.ngroups);
    for (std::size_t k = n; k < p.tasks.size(); ++k) members[p.tasks[k].group].push_back(std::uint32_t(k));
    exit_counted.assign(p.tasks.size(), {0, 0, 0});
    for (std::size_t j = 0; j < p.header.tasks.size(); ++j) {  // counters the task had at the start
      auto& t = r.tasks[n + j];
      t.utime = p.header.tasks[j].utime.value_or(0);
      t.stime = p.header.tasks[j].stime.value_or(0);
    }
  }
  // A streamed program's chunk forked tasks: they start at zero, as a compiled trace's do.
  void grow() {
    const auto nt = p.tasks.size();
    members.resize(p.ngroups);
    for (std::size_t k = r.tasks.size(); k < nt; ++k) members[p.tasks[k].group].push_back(std::uint32_t(k));
    r.tasks.resize(nt, model::zero_task(d));
    r.groups.resize(p.ngroups, GroupAcct{model::zero_task(d), {0, 0}});
    saved_mode.resize(nt, Mode::Kernel);
    iowait_cpu.resize(nt, -1);
    exited.resize(nt, false);
    exit_counted.resize(nt, {0, 0, 0});
  }
  bool is_idle(std::uint32_t task) const { return task < p.header.ncpus; }
  void violate(std::size_t i, const char* inv, std::string detail, std::string_view fixed_by = {}) {
    Violation v{i, p.line_at(i), inv, std::move(detail), fixed_by};
    if (!fixed_by.empty() && o.tolerate_known_bugs) {
      for (const auto& k : r.known_bugs)
        if (k.invariant == v.invariant) return;
      r.known_bugs.push_back(std::move(v));
    } else if (!r.violation) {
      r.violation = std::move(v);
    }
  }
  // scheduler side: rq clock then the running task's rtime (idle tasks have none). With
  // `rtime events` the trace's runtime events carry sum_exec_runtime instead. Inlined: out of
  // line, the call reloaded the run's state on every tick and switch (+22 instructions a tick).
  KACCT_INLINE void sched_clock_update(std::uint32_t cpu, std::uint64_t now) {
    auto& c = r.cpus[cpu];
    model::update_rq_clock(d, cfg.tick, c, now);
    const auto cur = ctx[cpu].cur;
    if (!is_idle(cur) && !p.header.rtime_events) model::update_curr(d, c, r.tasks[cur]);
  }
  // The CPU the task is running on, if any.
  std::optional<std::uint32_t> running_on(std::uint32_t task) const {
    for (std::uint32_t c = 0; c < ctx.size(); ++c)
      if (ctx[c].cur == task) return c;
    return std::nullopt;
  }
};

// How the readers behave under a backend's configuration (kernel/sched/cputime.c).
struct ReadRules {
  // task_cputime_adjusted() / thread_group_cputime_adjusted() run cputime_adjust() (under
  // VIRT_CPU_ACCOUNTING_NATIVE they are the identity).
  bool cputime_adjust = true;
  // task_cputime() can report vtime in progress, so task_cputime_adjusted() takes
  // task_sched_runtime(p) as rtime: per-thread readers of a running task sync it first.
  bool vtime_in_progress = false;
};

// What a backend provides:
//   B(Core&);
//   static constexpr ReadRules reads;                              // reader semantics
//   struct Snapshot;  Snapshot snapshot(cpu, task) const;          // state compared by check()
//   void event(i, const CEvent&, const CpuCtx& before);            // kernel hooks of the event
//   void sync(cpu, now);                                            // before a read of task times
//   void check(i, cpu, task, const Snapshot& before);               // spec invariants (check mode)
//   using Result; Result finish();                                  // outputs beyond the common ones
// and optionally
//   model::TaskCputime<C> task_view(task, now);  // the task's times as task_cputime() returns
//                                                // them (gen vtime adds the pending delta); used
//                                                // by readers and by __exit_signal()
//   void grow();  // a streamed program's tasks grew (forks): size per-task state to p.tasks
template <class B>
concept MachineBackend = std::constructible_from<B, Core&> &&
    requires(B b, const B cb, std::size_t i, std::uint32_t u, std::uint64_t t, const CEvent& e, const CpuCtx& x,
             const typename B::Snapshot& before) {
  typename B::Result;
  { B::reads } -> std::convertible_to<ReadRules>;
  { cb.snapshot(u, u) } -> std::same_as<typename B::Snapshot>;
  b.event(i, e, x);
  b.sync(u, t);
  b.check(i, u, u, before);
  { b.finish() } -> std::same_as<typename B::Result>;
};

template <MachineBackend B>
class Machine {
 public:
  Machine(const Program& p, const ModelCfg& cfg, const RunOptions& o) : k_(p, cfg, o), acct_(k_) {}

  RunResult finish() && {
    k_.r.backend = acct_.finish();
    k_.r.obligations_failed.assign(k_.d.failed.begin(), k_.d.failed.end());
    return std::move(k_.r);
  }

  // Every event of the program, chunk after chunk when it is streamed (RunOptions::refill).
  void run() {
    for (;;) {
      const bool stop = run_chunk();
      if (stop || !k_.o.refill || !k_.o.refill(k_.r)) break;
      k_.grow();
      if constexpr (requires { acct_.grow(); }) acct_.grow();
    }
    children_before(k_.r.events);  // those placed after the last event
  }

  // LiveRun: one chunk pushed by the caller; the tasks may have grown since the last one.
  bool advance() {
    if (stopped_) return false;
    k_.grow();
    if constexpr (requires { acct_.grow(); }) acct_.grow();
    stopped_ = run_chunk();
    return !stopped_;
  }
  bool stopped() const { return stopped_; }
  void end_input() { children_before(k_.r.events); }
  RunResult& partial() { return k_.r; }
  const RunResult& partial() const { return k_.r; }
  // The backend's outputs as finish() would give them now, from a copy of its state.
  BackendResult backend_now() const {
    B copy(acct_);
    return BackendResult(copy.finish());
  }
  std::vector<std::string> obligations_now() const { return {k_.d.failed.begin(), k_.d.failed.end()}; }

 private:
  // The events of the current chunk (i: index in the whole run); true if the run stops here.
  bool run_chunk() {
    next_side();  // the caller may have placed reaps and reads since the last chunk
    const auto& ev = k_.p.events;
    const auto n = ev.size();
    const auto base = k_.p.base;
    bool stop = false;
    if (k_.o.check) {
      for (std::size_t j = 0; j < n; ++j) {
        step<true>(base + j, ev[j]);
        if (k_.o.observe) k_.o.observe(base + j, k_.r);
        if (k_.r.violation && k_.o.stop_at_violation) {
          k_.r.events = base + n;
          return true;
        }
      }
    } else if (k_.o.observe) {
      for (std::size_t j = 0; j < n; ++j) {
        step<false>(base + j, ev[j]);
        k_.o.observe(base + j, k_.r);
      }
    } else {
      for (std::size_t j = 0; j < n; ++j) step<false>(base + j, ev[j]);  // the hot loop: no snapshots
    }
    k_.r.events = base + n;
    return stop;
  }

  template <bool Check>
  KACCT_INLINE void step(std::size_t i, const CEvent& e) {
    if (i >= side_at_) [[unlikely]]
      children_before(i);
    auto& x = k_.ctx[e.cpu];
    const std::uint32_t cur = x.cur;
    typename B::Snapshot before{};
    if constexpr (Check) before = acct_.snapshot(e.cpu, cur);

    acct_.event(i, e, x);

    switch (e.kind) {  // the context after the event
      case Kind::SyscallEnter:
      case Kind::ExcEnter: x.mode = Mode::Kernel; break;
      case Kind::SyscallExit:
      case Kind::ExcExit: x.mode = Mode::User; break;
      case Kind::GuestEnter: x.mode = Mode::Guest; break;
      case Kind::GuestExit: x.mode = Mode::Kernel; break;
      case Kind::IrqEnter: ++x.irq_depth; break;
      case Kind::IrqExit: --x.irq_depth; break;
      case Kind::SoftirqEnter: x.softirq = true; break;
      case Kind::SoftirqExit: x.softirq = false; break;
      case Kind::IdleEnter:
        x.nohz = true;
        x.idle_jiffies = e.ts / k_.cfg.tick.tick_nsec;  // jiffies: TICK_NSEC steps from ts 0
        break;
      case Kind::IdleExit: x.nohz = false; break;
      case Kind::CpuOffline:
        x.offline = true;
        x.offline_ts = e.ts;
        break;
      case Kind::CpuOnline: x.offline = false; break;
      case Kind::Switch:
        k_.saved_mode[cur] = x.mode;
        if (e.flags & 2) {
          k_.iowait_cpu[cur] = std::int32_t(e.cpu);
          ++x.nr_iowait;
        }
        x.cur = e.arg;
        x.mode = k_.saved_mode[e.arg];
        break;
      case Kind::Wakeup:
        if (k_.iowait_cpu[e.arg] >= 0) {
          --k_.ctx[std::uint32_t(k_.iowait_cpu[e.arg])].nr_iowait;
          k_.iowait_cpu[e.arg] = -1;
        }
        break;
      case Kind::Exit: {
        // __exit_signal(): the thread's counters (as task_cputime() reads them) join the group's
        // dead-thread sums.
        auto& g = k_.r.groups[k_.p.tasks[cur].group].dead;
        const auto& t = k_.r.tasks[cur];
        const auto v = view(cur, e.ts);
        g.utime += v.utime;
        g.stime += v.stime;
        g.gtime += t.gtime;
        g.sum_exec_runtime += t.sum_exec_runtime;
        k_.exited[cur] = true;
        std::erase(k_.members[k_.p.tasks[cur].group], cur);
        k_.exit_counted[cur] = {v.utime, v.stime, t.sum_exec_runtime};
        break;
      }
      case Kind::Read: read(i, e); break;
      case Kind::Runtime: {  // observed sum_exec_runtime increment (sched_stat_runtime)
        auto& t = k_.r.tasks[k_.p.wide[e.arg]];
        t.sum_exec_runtime = k_.d.add(t.sum_exec_runtime, k_.p.wide[e.arg + 1]);
        break;
      }
      case Kind::Tick:
      case Kind::Steal:
      case Kind::Fork:  // the child's accounting starts at zero
      case Kind::MmExit: break;
    }

    if constexpr (Check) acct_.check(i, e.cpu, cur, before);
  }

  // task_cputime(): the backend's view if it has one, else the task's counters.
  model::TaskCputime<C> view(std::uint32_t task, std::uint64_t now) {
    if constexpr (requires { acct_.task_view(task, now); })
      return acct_.task_view(task, now);
    else {
      const auto& t = k_.r.tasks[task];
      return {t.utime, t.stime, t.sum_exec_runtime};
    }
  }

  void read(std::size_t i, const CEvent& e) {
    const auto& p = k_.p;
    auto& r = k_.r;
    auto& d = k_.d;
    const auto& ri = p.reads[e.arg];
    const std::uint32_t reader = k_.ctx[e.cpu].cur;
    using RK = trace::ReadKind;
    // Which reads bring a running task's sum_exec_runtime up to date first (6.12 cputime.c):
    // thread_group_cputime() calls task_sched_runtime(current) when the reader is in the target's
    // thread group; CLOCK_THREAD_CPUTIME_ID calls task_sched_runtime(target) wherever it runs;
    // task_cputime_adjusted() (per-thread stat, RUSAGE_THREAD) uses the stored value.
    if (ri.kind == RK::ProcStat || ri.kind == RK::RusageSelf || ri.kind == RK::ProcessCputime) {
      if (p.tasks[reader].group == p.tasks[ri.target].group) acct_.sync(e.cpu, e.ts);
    } else if (ri.kind == RK::ThreadCputime) {
      if (auto c = k_.running_on(ri.target)) acct_.sync(*c, e.ts);
    } else if (ri.kind == RK::Taskstats) {
      // bacct_add_tsk() (6.1 kernel/tsacct.c) ignores task_cputime()'s "vtime in progress" result
      // and never calls task_sched_runtime(); delayacct_add_tsk() reads the stored
      // se.sum_exec_runtime. Nothing is brought up to date.
    } else if constexpr (B::reads.vtime_in_progress) {  // the per-thread readers take task_sched_runtime()
      if (auto c = k_.running_on(ri.target)) acct_.sync(*c, e.ts);
    }
    ReadResult out{ri.id, ri.kind, p.tasks[ri.target].tid, e.ts, ri.line, 0, 0, 0};
    model::TaskCputime<C> cur{};
    model::PrevCputime<C>* prev = nullptr;
    const bool group = ri.kind == trace::ReadKind::ProcStat || ri.kind == trace::ReadKind::RusageSelf ||
                       ri.kind == trace::ReadKind::ProcessCputime;
    if (group) {  // thread_group_cputime(): dead threads plus every live thread
      const auto g = p.tasks[ri.target].group;
      const auto& dead = r.groups[g].dead;
      cur = {dead.utime, dead.stime, dead.sum_exec_runtime};
      for (const std::uint32_t k : k_.members[g]) {
        const auto v = view(k, e.ts);
        cur.utime += v.utime;
        cur.stime += v.stime;
        cur.sum_exec_runtime += r.tasks[k].sum_exec_runtime;
      }
      prev = &r.groups[g].prev;
    } else {
      const auto v = view(ri.target, e.ts);
      cur = {v.utime, v.stime, r.tasks[ri.target].sum_exec_runtime};
      prev = &r.tasks[ri.target].prev_cputime;
    }
    out.rtime = cur.sum_exec_runtime;
    if (ri.kind == RK::Taskstats) {
      // The taskstats reply reports task_cputime() as it is (ac_utime/ac_stime = ns / 1000): no
      // cputime_adjust(), prev_cputime untouched.
      out.utime = cur.utime;
      out.stime = cur.stime;
    } else if constexpr (!B::reads.cputime_adjust) {  // the adjusted readers are the identity
      out.utime = cur.utime;
      out.stime = cur.stime;
    } else if (ri.kind != trace::ReadKind::ThreadCputime && ri.kind != trace::ReadKind::ProcessCputime) {
      const auto before = *prev;
      const auto res = model::cputime_adjust(d, k_.cfg.adjust, cur, *prev);
      out.utime = res.utime;
      out.stime = res.stime;
      if (k_.o.check) {
        const auto fail = [&](const char* inv, const char* detail) {
          k_.violate(i, inv, detail, spec::tick::adjust_fixed_by(k_.cfg.adjust, inv));
        };
        if (!spec::tick::adjust_monotonic(d, before, res))
          fail("cputime_adjust.monotonic", "utime or stime went backwards");
        if (!spec::tick::adjust_sum_is_rtime(d, before, cur, res))
          fail("cputime_adjust.sum_is_rtime", "utime + stime != rtime");
        if (!spec::tick::adjust_stime_le_rtime(d, before, cur, res))
          fail("cputime_adjust.stime_le_rtime", "stime > rtime");
      }
    }
    r.reads.push_back(out);
  }

  // The reaps and children reads placed before event i (Program::reaps, children_reads).
  void children_before(std::size_t i) {
    const auto& p = k_.p;
    auto& r = k_.r;
    const std::size_t j = i - p.base;  // the reaps' event indices are whole-run ones
    const std::uint64_t now = j < p.events.size() ? p.events[j].ts : p.events.empty() ? 0 : p.events.back().ts;
    // thread_group_cputime_adjusted() of a group seen from outside: the threads that exited
    // before the leader joined the dead sums at their __exit_signal(); a zombie leader's own
    // counters are read as they are now (its release_task() comes at the reap), with the slice
    // of its final schedule.
    const auto adjusted = [&](std::uint32_t leader, model::TaskCputime<C>& cur) {
      const auto g = p.tasks[leader].group;
      const auto& dead = r.groups[g].dead;
      cur = {dead.utime, dead.stime, dead.sum_exec_runtime};
      for (std::size_t k = p.header.ncpus; k < p.tasks.size(); ++k) {
        if (p.tasks[k].group != g) continue;
        if (k_.exited[k] && k != leader) continue;
        if (k_.exited[k]) {
          const auto& was = k_.exit_counted[k];
          cur.utime -= was.utime;
          cur.stime -= was.stime;
          cur.sum_exec_runtime -= was.sum_exec_runtime;
        }
        const auto v = view(std::uint32_t(k), now);
        cur.utime += v.utime;
        cur.stime += v.stime;
        cur.sum_exec_runtime += r.tasks[k].sum_exec_runtime;
      }
      model::PrevCputime<C> adj{cur.utime, cur.stime};
      if constexpr (B::reads.cputime_adjust) adj = model::cputime_adjust(k_.d, k_.cfg.adjust, cur, r.groups[g].prev);
      return adj;
    };
    // In trace order: a foreign read and a reap before the same event come in the order placed.
    for (; foreign_next_ < p.foreign_reads.size() && p.foreign_reads[foreign_next_].event <= i; ++foreign_next_) {
      const auto& q = p.foreign_reads[foreign_next_];
      if (reap_next_ < p.reaps.size() && p.reaps[reap_next_].event < q.event) break;
      model::TaskCputime<C> cur{};
      const auto adj = adjusted(q.task, cur);
      r.foreign_reads.push_back(
          {q.id, trace::ReadKind::ProcStat, p.tasks[q.task].tid, now, 0, adj.utime, adj.stime, cur.sum_exec_runtime});
    }
    for (; reap_next_ < p.reaps.size() && p.reaps[reap_next_].event <= i; ++reap_next_) {
      const auto& q = p.reaps[reap_next_];
      const auto g = p.tasks[q.child].group;
      // a live group is not reaped (wait_consider_task(): only an EXIT_ZOMBIE leader without
      // live threads; 6.1, 6.12 kernel/exit.c): the wait reported a stop or continue
      const bool reaped = q.may_reap && k_.members[g].empty();
      if (!reaped && !q.rusage) continue;
      model::TaskCputime<C> cur{};
      const auto adj = adjusted(q.child, cur);
      const auto theirs = r.groups[g].children;
      if (reaped) model::reap_child(k_.d, r.groups[p.tasks[q.reaper].group].children, adj, theirs);
      r.reaps.push_back({p.tasks[q.reaper].tid, p.tasks[q.child].tid, adj.utime, adj.stime, theirs.utime, theirs.stime,
                         cur.sum_exec_runtime, q.id, reaped});
    }
    for (; children_next_ < p.children_reads.size() && p.children_reads[children_next_].event <= i; ++children_next_) {
      const auto& q = p.children_reads[children_next_];
      const auto& c = r.groups[p.tasks[q.task].group].children;
      r.children_reads.push_back({q.id, p.tasks[q.task].tid, c.utime, c.stime});
    }
    if (foreign_next_ < p.foreign_reads.size() && p.foreign_reads[foreign_next_].event <= i) children_before(i);
    next_side();
  }
  // side_at_: the first event index at which children_before() has something to do (the
  // smallest event of the next reap, children read and foreign read; SIZE_MAX: none), so that
  // step() tests one number per event instead of three vectors.
  void next_side() {
    const auto& p = k_.p;
    std::size_t at = SIZE_MAX;
    if (reap_next_ < p.reaps.size()) at = std::min<std::size_t>(at, p.reaps[reap_next_].event);
    if (children_next_ < p.children_reads.size())
      at = std::min<std::size_t>(at, p.children_reads[children_next_].event);
    if (foreign_next_ < p.foreign_reads.size()) at = std::min<std::size_t>(at, p.foreign_reads[foreign_next_].event);
    side_at_ = at;
  }

  Core k_;
  B acct_;
  std::size_t reap_next_ = 0, children_next_ = 0, foreign_next_ = 0;
  std::size_t side_at_ = 0;  // next_side()
  bool stopped_ = false;
};

// The machine behind a LiveRun (machine.hpp), whatever its backend.
struct LiveMachine {
  virtual ~LiveMachine() = default;
  virtual bool advance() = 0;
  virtual bool stopped() const = 0;
  virtual RunResult& partial() = 0;
  virtual BackendResult backend_now() const = 0;
  virtual std::vector<std::string> obligations_now() const = 0;
  virtual RunResult finish() = 0;
};
template <MachineBackend B>
struct LiveMachineOf final : LiveMachine {
  LiveMachineOf(const Program& p, const ModelCfg& cfg, const RunOptions& o) : m(p, cfg, o) {}
  bool advance() override { return m.advance(); }
  bool stopped() const override { return m.stopped(); }
  RunResult& partial() override { return m.partial(); }
  BackendResult backend_now() const override { return m.backend_now(); }
  std::vector<std::string> obligations_now() const override { return m.obligations_now(); }
  RunResult finish() override {
    m.end_input();
    return std::move(m).finish();
  }
  Machine<B> m;
};
// A backend's Backend<mode>::live().
template <MachineBackend B>
std::unique_ptr<LiveMachine> live_with(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  return std::make_unique<LiveMachineOf<B>>(p, cfg, o);
}

template <MachineBackend B>
RunResult run_with(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  Machine<B> m(p, cfg, o);
  m.run();
  return std::move(m).finish();
}

}  // namespace kacct::sim
