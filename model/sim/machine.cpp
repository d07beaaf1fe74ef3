#include "model/sim/machine.hpp"

#include <map>

#include "arch/registry.hpp"
#include "model/trace/tracker.hpp"
#include "spec/invariants.hpp"

namespace kacct::sim {
using trace::Kind;
using trace::Mode;
using C = Concrete;

ModelCfg model_cfg(const arch::CpuFacts& cpu, const arch::Config& cfg) {
  ModelCfg m;
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

struct CpuCtx {
  std::uint32_t cur;
  Mode mode = Mode::Kernel;
  std::uint32_t irq_depth = 0;
  bool softirq = false;
  bool nohz = false;
  std::uint32_t nr_iowait = 0;
  std::uint64_t idle_jiffies = 0;
};

class Machine {
 public:
  Machine(const Program& p, const ModelCfg& cfg, const RunOptions& o) : p_(p), cfg_(cfg), o_(o) {
    const auto n = p.header.ncpus;
    r_.cpus.assign(n, model::zero_cpu(d_));
    r_.tasks.assign(p.tasks.size(), model::zero_task(d_));
    r_.groups.assign(p.ngroups, GroupAcct{model::zero_task(d_), {0, 0}});
    ctx_.resize(n);
    for (std::uint32_t c = 0; c < n; ++c) ctx_[c].cur = c;
    saved_mode_.assign(p.tasks.size(), Mode::Kernel);
    iowait_cpu_.assign(p.tasks.size(), -1);
    exited_.assign(p.tasks.size(), false);
  }

  RunResult finish() && {
    r_.obligations_failed.assign(d_.failed.begin(), d_.failed.end());
    return std::move(r_);
  }

  void run() {
    const auto n = p_.events.size();
    if (o_.check) {
      for (std::size_t i = 0; i < n; ++i) {
        step<true>(i, p_.events[i]);
        if (r_.violation && o_.stop_at_violation) break;
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) step<false>(i, p_.events[i]);  // the hot loop: no snapshots
    }
    r_.events = n;
  }

 private:
  bool is_idle(std::uint32_t task) const { return task < p_.header.ncpus; }

  model::TickCtx tick_ctx(const CpuCtx& x) const {
    const auto& ti = p_.tasks[x.cur];
    model::TickCtx t;
    t.user_tick = x.mode == Mode::User && x.irq_depth == 0 && !x.softirq;
    t.preempt_count = (x.irq_depth + 1) * model::HARDIRQ_OFFSET + (x.softirq ? model::SOFTIRQ_OFFSET : 0);
    t.is_idle = is_idle(x.cur);
    t.is_ksoftirqd = ti.ksoftirqd;
    t.pf_vcpu = x.mode == Mode::Guest;
    t.nice_pos = ti.nice > 0;
    t.nr_iowait = x.nr_iowait > 0;
    return t;
  }
  model::IrqClass leaving_class(const CpuCtx& x) const {
    if (x.irq_depth > 0) return model::IrqClass::Hardirq;
    if (x.softirq && !p_.tasks[x.cur].ksoftirqd) return model::IrqClass::Softirq;
    return model::IrqClass::None;
  }
  // scheduler side: rq clock then the running task's rtime (idle tasks have none).
  void sched_clock_update(std::uint32_t cpu, std::uint64_t now) {
    auto& c = r_.cpus[cpu];
    model::update_rq_clock(d_, cfg_.tick, c, now);
    const auto cur = ctx_[cpu].cur;
    if (!is_idle(cur)) model::update_curr(d_, c, r_.tasks[cur]);
  }

  void violate(std::size_t i, const char* inv, std::string detail) {
    if (!r_.violation) r_.violation = Violation{i, p_.lines[i], inv, std::move(detail)};
  }

  template <bool Check> void step(std::size_t i, const CEvent& e) {
    auto& x = ctx_[e.cpu];
    auto& c = r_.cpus[e.cpu];
    const std::uint32_t cur = x.cur;
    CpuAcct<C> before_c;
    TaskAcct<C> before_t;
    if constexpr (Check) {
      before_c = c;
      before_t = r_.tasks[cur];
    }
    model::TickCtx tick_x{};
    bool was_tick = false, was_boundary = false;
    std::uint64_t credit = 0;

    switch (e.kind) {
      case Kind::SyscallEnter:
      case Kind::ExcEnter: x.mode = Mode::Kernel; break;
      case Kind::SyscallExit:
      case Kind::ExcExit: x.mode = Mode::User; break;
      case Kind::GuestEnter: x.mode = Mode::Guest; break;
      case Kind::GuestExit: x.mode = Mode::Kernel; break;
      case Kind::IrqEnter:
        model::irqtime_account_irq(d_, cfg_.tick, c, e.ts, leaving_class(x));
        ++x.irq_depth;
        was_boundary = true;
        break;
      case Kind::IrqExit:
        model::irqtime_account_irq(d_, cfg_.tick, c, e.ts, model::IrqClass::Hardirq);
        --x.irq_depth;
        was_boundary = true;
        break;
      case Kind::SoftirqEnter:
        model::irqtime_account_irq(d_, cfg_.tick, c, e.ts, leaving_class(x));
        x.softirq = true;
        was_boundary = true;
        break;
      case Kind::SoftirqExit:
        model::irqtime_account_irq(d_, cfg_.tick, c, e.ts, leaving_class(x));
        x.softirq = false;
        was_boundary = true;
        break;
      case Kind::Tick:
        // update_process_times(): account_process_tick() first, then scheduler_tick().
        tick_x = tick_ctx(x);
        credit = cfg_.tick.tick_nsec;
        model::account_process_tick(d_, cfg_.tick, c, r_.tasks[cur], tick_x);
        sched_clock_update(e.cpu, e.ts);
        was_tick = true;
        break;
      case Kind::IdleEnter:
        x.nohz = true;
        x.idle_jiffies = e.ts / cfg_.tick.tick_nsec;  // jiffies: TICK_NSEC steps from ts 0
        break;
      case Kind::IdleExit: {
        x.nohz = false;
        const std::uint64_t ticks = e.ts / cfg_.tick.tick_nsec - x.idle_jiffies;
        if (ticks > 0) {  // tick_nohz_account_idle_time()
          tick_x = tick_ctx(x);
          tick_x.preempt_count = 0;
          credit = ticks * cfg_.tick.tick_nsec;
          model::account_idle_ticks(d_, cfg_.tick, c, r_.tasks[cur], tick_x, ticks);
          was_tick = true;
        }
        break;
      }
      case Kind::Switch: {
        sched_clock_update(e.cpu, e.ts);
        saved_mode_[cur] = x.mode;
        if (e.flags & 2) {
          iowait_cpu_[cur] = std::int32_t(e.cpu);
          ++x.nr_iowait;
        }
        x.cur = e.arg;
        x.mode = saved_mode_[e.arg];
        if (!is_idle(e.arg)) r_.tasks[e.arg].exec_start = c.rq.clock_task;  // set_next_entity()
        break;
      }
      case Kind::Wakeup:
        if (iowait_cpu_[e.arg] >= 0) {
          --ctx_[std::uint32_t(iowait_cpu_[e.arg])].nr_iowait;
          iowait_cpu_[e.arg] = -1;
        }
        break;
      case Kind::Steal: c.steal_clock = d_.add(c.steal_clock, p_.wide[e.arg]); break;
      case Kind::Fork: break;  // the child's accounting starts at zero
      case Kind::Exit: {
        // __exit_signal(): the thread's counters join the group's dead-thread sums.
        auto& g = r_.groups[p_.tasks[cur].group].dead;
        const auto& t = r_.tasks[cur];
        g.utime += t.utime;
        g.stime += t.stime;
        g.gtime += t.gtime;
        g.sum_exec_runtime += t.sum_exec_runtime;
        exited_[cur] = true;
        break;
      }
      case Kind::Read: read(i, e); break;
      case Kind::MmExit: break;
    }

    if constexpr (Check) check_step(i, cur, c, before_c, before_t, was_tick, was_boundary, credit, tick_x);
  }

  void check_step(std::size_t i, std::uint32_t cur, const CpuAcct<C>& c, const CpuAcct<C>& before_c,
                  const TaskAcct<C>& before_t, bool was_tick, bool was_boundary, std::uint64_t credit,
                  const model::TickCtx& tick_x) {
    const auto& t = r_.tasks[cur];
    if (!spec::steal_accounted(d_, c)) violate(i, "steal_accounted", "steal lost or double counted");
    if (!spec::rq_clock_split(d_, c)) violate(i, "rq_clock_split", "rq clock != clock_task + irq + steal");
    if (!spec::irqtime_pending_bounded(d_, c)) violate(i, "irqtime_pending_bounded", "tick_delta > total");
    if (!spec::monotonic(d_, before_c, c)) violate(i, "monotonic", "a per-CPU counter went backwards");
    if (!spec::monotonic(d_, before_t, t)) violate(i, "monotonic", "a task counter went backwards");
    if (was_tick && !spec::tick_conserves(d_, before_c, c, credit))
      violate(i, "tick_conserves", "tick time not split exactly between buckets and other time");
    if (was_tick && !spec::tick_attributed(d_, before_c, c, tick_x, cfg_.tick.irq_time))
      violate(i, "tick_attributed", std::string("tick charged to a bucket other than ") +
                                        model::usage_names[spec::expected_bucket(tick_x, cfg_.tick.irq_time)]);
    if (was_boundary && !spec::irq_boundary_conserves(d_, before_c, c))
      violate(i, "irq_boundary_conserves", "irq time not in exactly one bucket and pending");
  }

  void read(std::size_t i, const CEvent& e) {
    const auto& ri = p_.reads[e.arg];
    sched_clock_update(e.cpu, e.ts);  // task_sched_runtime(current)
    ReadResult out{ri.id, ri.kind, p_.tasks[ri.target].tid, e.ts, ri.line, 0, 0, 0};
    model::TaskCputime<C> cur{};
    model::PrevCputime<C>* prev = nullptr;
    const bool group = ri.kind == trace::ReadKind::ProcStat || ri.kind == trace::ReadKind::RusageSelf ||
                       ri.kind == trace::ReadKind::ProcessCputime;
    if (group) {  // thread_group_cputime(): dead threads plus every live thread
      const auto g = p_.tasks[ri.target].group;
      const auto& dead = r_.groups[g].dead;
      cur = {dead.utime, dead.stime, dead.sum_exec_runtime};
      for (std::size_t k = p_.header.ncpus; k < p_.tasks.size(); ++k)
        if (p_.tasks[k].group == g && !exited_[k]) {
          cur.utime += r_.tasks[k].utime;
          cur.stime += r_.tasks[k].stime;
          cur.sum_exec_runtime += r_.tasks[k].sum_exec_runtime;
        }
      prev = &r_.groups[g].prev;
    } else {
      const auto& t = r_.tasks[ri.target];
      cur = {t.utime, t.stime, t.sum_exec_runtime};
      prev = &r_.tasks[ri.target].prev_cputime;
    }
    out.rtime = cur.sum_exec_runtime;
    if (ri.kind != trace::ReadKind::ThreadCputime && ri.kind != trace::ReadKind::ProcessCputime) {
      const auto before = *prev;
      const auto res = model::cputime_adjust(d_, cfg_.adjust, cur, *prev);
      out.utime = res.utime;
      out.stime = res.stime;
      if (o_.check) {
        if (!spec::adjust_monotonic(d_, before, res)) violate(i, "cputime_adjust.monotonic", "utime or stime went backwards");
        if (!spec::adjust_sum_is_rtime(d_, before, cur, res)) violate(i, "cputime_adjust.sum_is_rtime", "utime + stime != rtime");
        if (!spec::adjust_stime_le_rtime(d_, before, cur, res)) violate(i, "cputime_adjust.stime_le_rtime", "stime > rtime");
      }
    }
    r_.reads.push_back(out);
  }

  const Program& p_;
  const ModelCfg& cfg_;
  const RunOptions& o_;
  Concrete d_;
  RunResult r_;
  std::vector<CpuCtx> ctx_;
  std::vector<Mode> saved_mode_;
  std::vector<std::int32_t> iowait_cpu_;
  std::vector<bool> exited_;
};

}  // namespace

RunResult run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  Machine m(p, cfg, o);
  m.run();
  return std::move(m).finish();
}

}  // namespace kacct::sim
