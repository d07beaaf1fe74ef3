#include "model/sim/machine.hpp"

#include <map>
#include <stdexcept>

#include "arch/registry.hpp"
#include "model/trace/tracker.hpp"
#include "spec/invariants.hpp"

namespace kacct::sim {
using trace::Kind;
using trace::Mode;
using C = Concrete;

ModelCfg model_cfg(const arch::CpuFacts& cpu, const arch::Config& cfg) {
  ModelCfg m;
  m.acct = cfg.acct;
  m.tick.irq_time = cfg.irq_time;
  m.tick.steal = cfg.steal;
  m.tick.tick_nsec = arch::tick_nsec(cfg.hz);
  m.adjust = model::adjust_cfg(cfg.version, cpu.exact_mul_u64_u64_div_u64);
  return m;
}

trace::Result<Program> compile(const trace::Trace& t) {
  if (auto e = trace::check_header(t.header)) return *e;
  Program p;
  p.header = t.header;
  const std::uint32_t ncpus = t.header.ncpus;
  if (ncpus > 0xffff) return trace::Error{0, 0, "ncpus above 65535 is not supported by the simulator", "ncpus"};
  std::map<std::uint64_t, std::uint32_t> index;  // tid -> dense index
  std::map<std::uint64_t, std::uint32_t> groups;  // tgid -> dense group
  auto add_task = [&](std::uint64_t tid, std::uint64_t pid, bool kthread, const std::string& comm, int nice) {
    TaskInfo ti{tid, pid, comm, kthread, kthread && comm.rfind("ksoftirqd/", 0) == 0, nice, 0};
    auto [it, fresh] = groups.emplace(pid, std::uint32_t(groups.size()));
    ti.group = it->second;
    index[tid] = std::uint32_t(p.tasks.size());
    p.tasks.push_back(std::move(ti));
  };
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    TaskInfo idle{0, 0, "swapper/" + std::to_string(c), true, false, 0, 0};
    p.tasks.push_back(idle);
  }
  groups.emplace(0, 0);
  for (const auto& d : t.header.tasks) add_task(d.tid, d.pid, d.kthread, d.comm, d.nice);

  trace::Tracker tr(t.header);
  p.events.reserve(t.events.size());
  p.lines.reserve(t.events.size());
  for (const auto& e : t.events) {
    if (auto err = tr.apply(e)) return *err;
    CEvent ce{e.ts, 0, std::uint16_t(e.cpu), e.kind, 0};
    auto dense = [&](std::uint64_t tid) -> std::uint32_t { return tid == 0 ? e.cpu : index.at(tid); };
    switch (e.kind) {
      case Kind::Switch:
        // prev's index is the CPU's current task; the machine knows it. arg = next.
        ce.arg = dense(e.b);
        ce.flags = std::uint8_t((e.prev_state == trace::PrevState::Dead ? 1 : 0) | (e.iowait ? 2 : 0));
        break;
      case Kind::Wakeup: ce.arg = dense(e.a); break;
      case Kind::Fork: {
        const auto* child = tr.task(e.b);
        add_task(e.b, child->pid, child->kthread, child->comm, child->nice);
        ce.arg = index.at(e.b);
        break;
      }
      case Kind::Steal:
        ce.arg = std::uint32_t(p.wide.size());
        p.wide.push_back(e.a);
        break;
      case Kind::Read: {
        const std::uint64_t tid = e.a != 0 ? e.a : tr.cpu(e.cpu).current;
        ce.arg = std::uint32_t(p.reads.size());
        p.reads.push_back({e.read_kind, dense(tid), e.read_id, e.line});
        break;
      }
      default: break;
    }
    p.events.push_back(ce);
    p.lines.push_back(e.line);
  }
  p.ngroups = std::uint32_t(groups.size());
  return p;
}

namespace {

// The machine: validates nothing (compile() did), tracks each CPU's context (current task,
// mode, irq depth, softirq, nohz idle, iowait) and the readers, and hands every event to the
// accounting backend of the configured mechanism *before* the context changes, so that the
// backend sees what the kernel sees at that hook. Backends: TickBackend below (tick
// accounting); native and gen vtime add theirs (model/<mechanism>/) and a case in run().
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
  }
  bool is_idle(std::uint32_t task) const { return task < p.header.ncpus; }
  void violate(std::size_t i, const char* inv, std::string detail) {
    if (!r.violation) r.violation = Violation{i, p.lines[i], inv, std::move(detail)};
  }
  // scheduler side: rq clock then the running task's rtime (idle tasks have none).
  void sched_clock_update(std::uint32_t cpu, std::uint64_t now) {
    auto& c = r.cpus[cpu];
    model::update_rq_clock(d, cfg.tick, c, now);
    const auto cur = ctx[cpu].cur;
    if (!is_idle(cur)) model::update_curr(d, c, r.tasks[cur]);
  }
};

// Tick accounting (CONFIG_TICK_CPU_ACCOUNTING, with/without IRQ_TIME_ACCOUNTING): model/tick/.
class TickBackend {
 public:
  explicit TickBackend(Core& k) : k_(k) {}

  struct Snapshot {
    CpuAcct<C> cpu;
    TaskAcct<C> task;
  };
  Snapshot snapshot(std::uint32_t cpu, std::uint32_t task) const { return {k_.r.cpus[cpu], k_.r.tasks[task]}; }

  // The accounting calls the kernel makes at event e, from the context before e.
  void event(std::size_t i, const CEvent& e, const CpuCtx& x) {
    auto& d = k_.d;
    const auto& cfg = k_.cfg.tick;
    auto& c = k_.r.cpus[e.cpu];
    was_tick_ = was_boundary_ = false;
    credit_ = 0;
    switch (e.kind) {
      case Kind::IrqEnter:
      case Kind::SoftirqEnter:
      case Kind::SoftirqExit:
        model::irqtime_account_irq(d, cfg, c, e.ts, leaving_class(x));
        was_boundary_ = true;
        break;
      case Kind::IrqExit:
        model::irqtime_account_irq(d, cfg, c, e.ts, model::IrqClass::Hardirq);
        was_boundary_ = true;
        break;
      case Kind::Tick:
        // update_process_times(): account_process_tick() first, then scheduler_tick().
        tick_x_ = tick_ctx(x);
        credit_ = cfg.tick_nsec;
        model::account_process_tick(d, cfg, c, k_.r.tasks[x.cur], tick_x_);
        k_.sched_clock_update(e.cpu, e.ts);
        was_tick_ = true;
        break;
      case Kind::IdleExit: {
        const std::uint64_t ticks = e.ts / cfg.tick_nsec - x.idle_jiffies;
        if (ticks > 0) {  // tick_nohz_account_idle_time()
          tick_x_ = tick_ctx(x);
          tick_x_.preempt_count = 0;
          credit_ = ticks * cfg.tick_nsec;
          model::account_idle_ticks(d, cfg, c, k_.r.tasks[x.cur], tick_x_, ticks);
          was_tick_ = true;
        }
        break;
      }
      case Kind::Switch:
        k_.sched_clock_update(e.cpu, e.ts);
        if (!k_.is_idle(e.arg)) k_.r.tasks[e.arg].exec_start = c.rq.clock_task;  // set_next_entity()
        break;
      case Kind::Steal: c.steal_clock = d.add(c.steal_clock, k_.p.wide[e.arg]); break;
      default: break;
    }
  }
  // Before a read of task times: task_sched_runtime(current).
  void sync(std::uint32_t cpu, std::uint64_t now) { k_.sched_clock_update(cpu, now); }

  void check(std::size_t i, std::uint32_t cpu, std::uint32_t cur, const Snapshot& before) {
    auto& d = k_.d;
    const auto& c = k_.r.cpus[cpu];
    const auto& t = k_.r.tasks[cur];
    const bool irq_time = k_.cfg.tick.irq_time;
    if (!spec::steal_accounted(d, c)) k_.violate(i, "steal_accounted", "steal lost or double counted");
    if (!spec::rq_clock_split(d, c)) k_.violate(i, "rq_clock_split", "rq clock != clock_task + irq + steal");
    if (!spec::irqtime_pending_bounded(d, c)) k_.violate(i, "irqtime_pending_bounded", "tick_delta > total");
    if (!spec::monotonic(d, before.cpu, c)) k_.violate(i, "monotonic", "a per-CPU counter went backwards");
    if (!spec::monotonic(d, before.task, t)) k_.violate(i, "monotonic", "a task counter went backwards");
    if (was_tick_ && !spec::tick_conserves(d, before.cpu, c, credit_))
      k_.violate(i, "tick_conserves", "tick time not split exactly between buckets and other time");
    if (was_tick_ && !spec::tick_attributed(d, before.cpu, c, tick_x_, irq_time))
      k_.violate(i, "tick_attributed", std::string("tick charged to a bucket other than ") +
                                           model::usage_names[spec::expected_bucket(tick_x_, irq_time)]);
    if (was_boundary_ && !spec::irq_boundary_conserves(d, before.cpu, c))
      k_.violate(i, "irq_boundary_conserves", "irq time not in exactly one bucket and pending");
  }

 private:
  model::TickCtx tick_ctx(const CpuCtx& x) const {
    const auto& ti = k_.p.tasks[x.cur];
    model::TickCtx t;
    t.user_tick = x.mode == Mode::User && x.irq_depth == 0 && !x.softirq;
    t.preempt_count = (x.irq_depth + 1) * model::HARDIRQ_OFFSET + (x.softirq ? model::SOFTIRQ_OFFSET : 0);
    t.is_idle = k_.is_idle(x.cur);
    t.is_ksoftirqd = ti.ksoftirqd;
    t.pf_vcpu = x.mode == Mode::Guest;
    t.nice_pos = ti.nice > 0;
    t.nr_iowait = x.nr_iowait > 0;
    return t;
  }
  model::IrqClass leaving_class(const CpuCtx& x) const {
    if (x.irq_depth > 0) return model::IrqClass::Hardirq;
    if (x.softirq && !k_.p.tasks[x.cur].ksoftirqd) return model::IrqClass::Softirq;
    return model::IrqClass::None;
  }

  Core& k_;
  model::TickCtx tick_x_{};
  bool was_tick_ = false, was_boundary_ = false;
  std::uint64_t credit_ = 0;
};

template <class Backend> class Machine {
 public:
  Machine(const Program& p, const ModelCfg& cfg, const RunOptions& o) : k_(p, cfg, o), acct_(k_) {}

  RunResult finish() && {
    k_.r.obligations_failed.assign(k_.d.failed.begin(), k_.d.failed.end());
    return std::move(k_.r);
  }

  void run() {
    const auto& ev = k_.p.events;
    const auto n = ev.size();
    if (k_.o.check) {
      for (std::size_t i = 0; i < n; ++i) {
        step<true>(i, ev[i]);
        if (k_.r.violation && k_.o.stop_at_violation) break;
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) step<false>(i, ev[i]);  // the hot loop: no snapshots
    }
    k_.r.events = n;
  }

 private:
  template <bool Check> void step(std::size_t i, const CEvent& e) {
    auto& x = k_.ctx[e.cpu];
    const std::uint32_t cur = x.cur;
    typename Backend::Snapshot before{};
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
        // __exit_signal(): the thread's counters join the group's dead-thread sums.
        auto& g = k_.r.groups[k_.p.tasks[cur].group].dead;
        const auto& t = k_.r.tasks[cur];
        g.utime += t.utime;
        g.stime += t.stime;
        g.gtime += t.gtime;
        g.sum_exec_runtime += t.sum_exec_runtime;
        k_.exited[cur] = true;
        break;
      }
      case Kind::Read: read(i, e); break;
      case Kind::Tick:
      case Kind::Steal:
      case Kind::Fork:  // the child's accounting starts at zero
      case Kind::MmExit: break;
    }

    if constexpr (Check) acct_.check(i, e.cpu, cur, before);
  }

  void read(std::size_t i, const CEvent& e) {
    const auto& p = k_.p;
    auto& r = k_.r;
    auto& d = k_.d;
    const auto& ri = p.reads[e.arg];
    acct_.sync(e.cpu, e.ts);
    ReadResult out{ri.id, ri.kind, p.tasks[ri.target].tid, e.ts, ri.line, 0, 0, 0};
    model::TaskCputime<C> cur{};
    model::PrevCputime<C>* prev = nullptr;
    const bool group = ri.kind == trace::ReadKind::ProcStat || ri.kind == trace::ReadKind::RusageSelf ||
                       ri.kind == trace::ReadKind::ProcessCputime;
    if (group) {  // thread_group_cputime(): dead threads plus every live thread
      const auto g = p.tasks[ri.target].group;
      const auto& dead = r.groups[g].dead;
      cur = {dead.utime, dead.stime, dead.sum_exec_runtime};
      for (std::size_t k = p.header.ncpus; k < p.tasks.size(); ++k)
        if (p.tasks[k].group == g && !k_.exited[k]) {
          cur.utime += r.tasks[k].utime;
          cur.stime += r.tasks[k].stime;
          cur.sum_exec_runtime += r.tasks[k].sum_exec_runtime;
        }
      prev = &r.groups[g].prev;
    } else {
      const auto& t = r.tasks[ri.target];
      cur = {t.utime, t.stime, t.sum_exec_runtime};
      prev = &r.tasks[ri.target].prev_cputime;
    }
    out.rtime = cur.sum_exec_runtime;
    if (ri.kind != trace::ReadKind::ThreadCputime && ri.kind != trace::ReadKind::ProcessCputime) {
      const auto before = *prev;
      const auto res = model::cputime_adjust(d, k_.cfg.adjust, cur, *prev);
      out.utime = res.utime;
      out.stime = res.stime;
      if (k_.o.check) {
        if (!spec::adjust_monotonic(d, before, res)) k_.violate(i, "cputime_adjust.monotonic", "utime or stime went backwards");
        if (!spec::adjust_sum_is_rtime(d, before, cur, res)) k_.violate(i, "cputime_adjust.sum_is_rtime", "utime + stime != rtime");
        if (!spec::adjust_stime_le_rtime(d, before, cur, res)) k_.violate(i, "cputime_adjust.stime_le_rtime", "stime > rtime");
      }
    }
    r.reads.push_back(out);
  }

  Core k_;
  Backend acct_;
};

template <class Backend> RunResult run_with(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  Machine<Backend> m(p, cfg, o);
  m.run();
  return std::move(m).finish();
}

}  // namespace

RunResult run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  switch (cfg.acct) {
    case arch::Accounting::Tick: return run_with<TickBackend>(p, cfg, o);
    case arch::Accounting::Native:
    case arch::Accounting::Gen: break;
  }
  throw std::logic_error("kacct: no simulator backend for this accounting mode yet");
}

}  // namespace kacct::sim
