// GenBackend: gen vtime (model/gen/gen.hpp) as a machine backend. nohz_full CPUs (GenCfg::nohz_full)
// run vtime from context tracking; the others keep tick accounting (TickBackend). On every CPU
// the rq clock / update_curr, IRQ_TIME_ACCOUNTING boundaries and steal work as in the tick model.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "model/sim/machine_impl.hpp"
#include "model/tick/backend.hpp"
#include "spec/gen_vtime.hpp"

namespace kacct::sim {
namespace {
using model::GenNow;
using model::VState;

class GenBackend {
 public:
  // task_cputime() reports vtime in progress (task_view below).
  static constexpr ReadRules reads{.vtime_in_progress = true};
  using Result = model::GenResult;

  explicit GenBackend(Core& k) : k_(k), tick_(k), g_(k.cfg.gen) {
    auto& d = k_.d;
    const auto n = k_.p.header.ncpus;
    out_.vtime.assign(k_.p.tasks.size(), model::zero_vtime(d));
    out_.ctl.assign(k_.p.tasks.size(), model::VtimeCtl{});
    out_.vcpu.assign(n, model::zero_vtime_cpu(d));
    out_.inherited.assign(k_.p.tasks.size(), 0);
    for (std::size_t t = 0; t < k_.p.tasks.size(); ++t) out_.ctl[t].nice_pos = k_.p.tasks[t].nice > 0;
    for (std::size_t j = 0; j < k_.p.header.tasks.size(); ++j) {  // residues a declared task starts with
      const auto& decl = k_.p.header.tasks[j];
      auto& v = out_.vtime[n + j];
      v.utime = decl.vtime_utime.value_or(0) + KACCT_MUTANT(445, 0, decl.vtime_gtime.value_or(0));
      v.stime = decl.vtime_stime.value_or(0);
      v.gtime = KACCT_MUTANT(445, decl.vtime_gtime.value_or(0), 0);
      v.consumed = v.utime + v.stime + v.gtime;  // ghost: taken before the trace
    }
    last_view_.assign(k_.p.tasks.size(), {0, 0});
    grown_ = k_.p.tasks.size();
    last_stat_.assign(n, {});
    for (std::uint32_t c = 0; c < n; ++c) {
      // vtime_init_idle(): the idle task is running, snapshot at boot (clock 0, jiffies 0).
      auto& s = out_.ctl[c];
      s.is_idle = true;
      s.state = g_.states55 ? model::VT_IDLE : model::VT_SYS;
      s.cpu = std::int32_t(c);
    }
  }
  // A streamed program forked tasks (machine_impl.hpp): they start as the constructor starts them.
  void grow() {
    auto& d = k_.d;
    const auto nt = k_.p.tasks.size();
    out_.vtime.resize(nt, model::zero_vtime(d));
    out_.ctl.resize(nt, model::VtimeCtl{});
    out_.inherited.resize(nt, 0);
    for (auto t = grown_; t < nt; ++t) out_.ctl[t].nice_pos = k_.p.tasks[t].nice > 0;
    last_view_.resize(nt, {0, 0});
    grown_ = nt;
  }

  Result finish() { return std::move(out_); }

  struct Snapshot {
    TickBackend::Snapshot tick;
    model::VtimeTask<C> v;
    model::VtimeCpu<C> vc;
    model::VtimeCtl ctl;
    std::uint64_t sections = 0, unbracketed = 0;
  };
  Snapshot snapshot(std::uint32_t cpu, std::uint32_t task) const {
    return {tick_.snapshot(cpu, task),   out_.vtime[task], out_.vcpu[cpu], out_.ctl[task], out_.cost.seq_sections,
            out_.cost.unbracketed_writes};
  }

  // The clock and jiffies at ts. Only the Jiffy variant reads jiffies (model/gen/gen.hpp): the
  // others skip the division (one a step, a read and a checked event's reader watch).
  GenNow<C> at(std::uint64_t ts) const { return {ts, jiffy_nsec_ != 0 ? ts / jiffy_nsec_ : 0}; }

  // Inlined into the machine's loop: out of line, its call and the per-event setup of
  // gen_event() were a tenth of an unchecked syscall-loop run.
  KACCT_INLINE void event(std::size_t i, const CEvent& e, const CpuCtx& x) {
    delegated_ = boundary_ = false;
    if (e.kind == Kind::Fork) inherit(i, x.cur, e.arg);
    if (!g_.nohz(e.cpu)) {
      delegated_ = true;
      return tick_.event_call(i, e, x);
    }
    const bool pending = offline_pending_any_;  // one flag on the hot path, not the vector
    const std::uint64_t idle_consumed = pending ? out_.vtime[e.cpu].consumed : 0;
    gen_event(i, e, x);
    // since f1a0a376ca0c (5.14, 5.10.50, 5.12.17, 5.13.2): the idle task kept its pre-offline snapshot; its first flush
    // after bring-up consumes the offline period too, as idle time.
    if (pending && offline_pending_[e.cpu] && out_.vtime[e.cpu].consumed != idle_consumed) [[unlikely]] {
      const std::uint64_t ns = offline_pending_[e.cpu];
      offline_pending_[e.cpu] = 0;
      offline_pending_any_ =
          std::any_of(offline_pending_.begin(), offline_pending_.end(), [](auto v) { return v != 0; });
      out_.hotplug_offline_as_idle += ns;
      hotplug_at_ = i;
      hotplug_inv_ = "gen_vtime.hotplug_offline_not_accounted";
      hotplug_fix_ = kNotFixed;
      hotplug_msg_ = fmt::format(
          "cpu {}: the idle task's first vtime flush after cpu_online counts the {} ns the CPU "
          "was offline as idle time (no vtime_init_idle() at bring-up since f1a0a376ca0c)",
          e.cpu, ns);
    }
  }

  KACCT_INLINE void gen_event(std::size_t i, const CEvent& e, const CpuCtx& x) {
    auto& d = k_.d;
    auto st = step(e.cpu);
    const auto cur = x.cur;
    auto& v = out_.vtime[cur];
    auto& s = out_.ctl[cur];
    auto& t = k_.r.tasks[cur];
    const auto n = at(e.ts);
    model::GenCtx gx;
    gx.nr_iowait = x.nr_iowait > 0;
    const bool from_user = x.mode == Mode::User && x.irq_depth == 0 && !x.softirq;
    const std::uint32_t pc = x.irq_depth * model::HARDIRQ_OFFSET + (x.softirq ? model::SOFTIRQ_OFFSET : 0);
    switch (e.kind) {
      case Kind::SyscallEnter:
      case Kind::ExcEnter:
        if (from_user) st.user_exit(v, t, s, gx, n);
        break;
      case Kind::SyscallExit:
      case Kind::ExcExit:
        if (x.irq_depth == 0 && !x.softirq) st.user_enter(v, t, s, gx, n);
        break;
      case Kind::GuestEnter: st.guest_enter(v, t, s, gx, n); break;
      case Kind::GuestExit: st.guest_exit(v, t, s, gx, n); break;
      case Kind::IrqEnter:
      case Kind::SoftirqEnter: {
        // context tracking: an interrupt from user mode leaves user first (user_exit_irqoff); a
        // softirq the trace shows after irq_exit in user mode ran before the return to user,
        // so it is kernel time too (the trace cannot say more)
        if (from_user) st.user_exit(v, t, s, gx, n);
        // An irq in guest mode is a VM exit; where KVM makes its vtime guest exit before serving
        // irqs, the irq runs in SYS state (GenCfg::guest_exit_before_irq).
        if (KACCT_MUTANT(437, g_.guest_exit_before_irq, false) && x.mode == Mode::Guest && x.irq_depth == 0 &&
            !x.softirq)
          st.guest_exit(v, t, s, gx, n);
        if (k_.o.check) pre_ = k_.r.cpus[e.cpu];
        tick_.event_call(i, e, x);  // irqtime_account_irq()
        boundary_ = true;
        boundary_pc_ = pc;
        if (k_.o.check) mid_ = k_.r.cpus[e.cpu];
        gx.irq_count = pc;
        if (g_.irq_hooks) st.irq_enter_hook(v, t, s, gx, n, x.irq_depth > 0 || x.softirq);
        break;
      }
      case Kind::IrqExit:
      case Kind::SoftirqExit: {
        if (k_.o.check) pre_ = k_.r.cpus[e.cpu];
        tick_.event_call(i, e, x);  // irqtime_account_irq()
        boundary_ = true;
        boundary_pc_ = pc;
        if (k_.o.check) mid_ = k_.r.cpus[e.cpu];
        gx.irq_count = pc;
        if (g_.irq_hooks) st.irq_exit_hook(v, t, s, gx, n);
        gx.irq_count = 0;
        const bool to_user =
            x.mode == Mode::User && (e.kind == Kind::IrqExit ? x.irq_depth == 1 && !x.softirq : x.irq_depth == 0);
        if (to_user) st.user_enter(v, t, s, gx, n);
        // ... and the return to the guest is the next run's vtime guest entry
        const bool to_guest =
            x.mode == Mode::Guest && (e.kind == Kind::IrqExit ? x.irq_depth == 1 && !x.softirq : x.irq_depth == 0);
        if (g_.guest_exit_before_irq && to_guest) st.guest_enter(v, t, s, gx, n);
        break;
      }
      case Kind::Switch: {
        tick_.event_call(i, e, x);  // update_rq_clock, update_curr, set_next_entity
        const auto next = e.arg;
        // next's starttime is read `gap` after prev's flush: the event's gap= if the trace gives
        // one, else the model parameter GenCfg::switch_gap
        const std::uint64_t gap = (e.flags & 4) ? k_.p.gap[i - k_.p.base] : g_.switch_gap;
        // A switch the trace shows in user mode is preemption on the way back to user: the
        // kernel was entered first (an irq: user_exit_irqoff; before the generic entry code,
        // schedule_user()'s exception_enter()), at the switch as far as the trace says, and
        // next, resuming in user mode, returns there (user_enter_irqoff) as it starts.
        if (KACCT_MUTANT(440, x.mode == Mode::User, false)) st.user_exit(v, t, s, gx, n);
        st.task_switch(v, t, s, out_.vtime[next], out_.ctl[next], gx, n, at(e.ts + gap), std::int32_t(e.cpu));
        if (KACCT_MUTANT(441, k_.saved_mode[next] == Mode::User, false))
          st.user_enter(out_.vtime[next], k_.r.tasks[next], out_.ctl[next], gx, at(e.ts + gap));
        ++out_.switches;
        if (e.flags & 1) {  // prev is dead: what its vtime still holds is never flushed
          out_.exit_lost += v.utime + v.stime + v.gtime;
        }
        break;
      }
      case Kind::Exit: {
        // __exit_signal() folds task_cputime() into the group: the pending time of the current
        // state is seen, the residues of the other states are not.
        const auto vw = task_view(cur, e.ts);
        (void)d;
        out_.exit_unseen +=
            (v.utime + v.stime + v.gtime) - ((vw.utime - t.utime) + (vw.stime - t.stime) - pending_delta(cur, e.ts));
        break;
      }
      case Kind::Tick:  // account_process_tick() returns early on a vtime CPU; scheduler_tick() runs
        k_.sched_clock_update(e.cpu, e.ts);
        break;
      case Kind::Steal: tick_.event_call(i, e, x); break;
      case Kind::Read: record_procstat(e.ts); break;
      case Kind::CpuOnline: online(i, e, x); break;
      default: break;  // idle enter/exit: no tick-based idle accounting on a vtime CPU; cpu_offline: no hook
    }
  }

  // copy_process() (4.13+ up to 6.12 at least, kernel/fork.c) resets vtime.starttime and .state
  // but not the residues dup_task_struct() copied: the child starts with the parent's unflushed
  // utime/stime/gtime, which parent and child both go on to account. Found by the QEMU oracle
  // (docs/conformance.md). The ghost `consumed` takes the copy too, so gen_vtime.task_conserves keeps
  // meaning "nothing lost within the task"; the created time is the finding `fork_inherited`.
  void inherit(std::size_t i, std::uint32_t parent, std::uint32_t child) {
    if (!g_.fork_copies_residues) return;
    auto& c = out_.vtime[child];
    const auto& p = out_.vtime[parent];
    c.utime = KACCT_MUTANT(444, p.utime, p.stime);
    c.stime = KACCT_MUTANT(444, p.stime, p.utime);
    c.gtime = p.gtime;
    c.consumed = c.utime + c.stime + c.gtime;
    out_.inherited[child] = c.consumed;
    out_.fork_inherited += c.consumed;
    if (c.consumed && out_.fork_finding.empty()) {  // the first one, for `kacct check` (not a violation)
      out_.fork_line = k_.p.line_at(i);
      out_.fork_finding = fmt::format(
          "copy_process(): task {} starts with {} ns of task {}'s unflushed vtime (utime {}, stime {}, gtime {}), "
          "which both go on to account",
          k_.p.tasks[child].tid, c.consumed, k_.p.tasks[parent].tid, c.utime, c.stime, c.gtime);
    }
  }

  // Bring-up of a nohz_full CPU (the idle task is current, x.offline_ts is when it died). Rare:
  // out of line, so that its GenStep does not join gen_event()'s per-event setup.
  [[gnu::cold, gnu::noinline]] void online(std::size_t i, const CEvent& e, const CpuCtx& x) {
    const auto idle = e.cpu;
    auto& v = out_.vtime[idle];
    if (!g_.idle_init_on_online) {
      offline_pending_[idle] += e.ts - x.offline_ts;
      offline_pending_any_ = offline_pending_any_ || offline_pending_[idle] != 0;
      return;
    }
    // Idle time between the idle task's last snapshot and the CPU's death, dropped with the
    // offline period by the fresh snapshot (Jiffy: in whole jiffies).
    const auto off = at(x.offline_ts);
    const std::uint64_t old = g_.variant == model::GenVariant::Jiffy ? v.starttime * g_.jiffy_ns : v.starttime;
    const std::uint64_t died = g_.variant == model::GenVariant::Jiffy ? off.jiffies * g_.jiffy_ns : off.now;
    step(idle).init_idle(v, out_.ctl[idle], at(e.ts), std::int32_t(idle));
    if (died > old) {
      out_.hotplug_online_dropped += died - old;
      hotplug_at_ = i;
      hotplug_inv_ = "gen_vtime.hotplug_online_time_kept";
      hotplug_fix_ = "f1a0a376ca0c";  // no vtime_init_idle() at bring-up (the idle time is kept)
      hotplug_msg_ = fmt::format(
          "cpu {}: vtime_init_idle() at cpu_online drops the {} ns of idle time between the idle "
          "task's last vtime snapshot and cpu_offline",
          idle, died - old);
    }
  }

  void sync(std::uint32_t cpu, std::uint64_t now) { k_.sched_clock_update(cpu, now); }

  // task_cputime(t) on a kernel with vtime enabled somewhere.
  model::TaskCputime<C> task_view(std::uint32_t task, std::uint64_t now) const {
    const auto& t = k_.r.tasks[task];
    const auto n = at(now);
    const auto tt = model::task_cputime(g_, out_.vtime[task], out_.ctl[task], t, n.now, n.jiffies);
    return {tt.utime, tt.stime, t.sum_exec_runtime};
  }

  void check(std::size_t i, std::uint32_t cpu, std::uint32_t cur, const Snapshot& before) {
    auto& d = k_.d;
    if (delegated_) tick_.check(i, cpu, cur, before.tick);
    if (!g_.nohz(cpu)) return;
    const auto& c = k_.r.cpus[cpu];
    const auto& t = k_.r.tasks[cur];
    // The tick model's invariants on a vtime CPU (the boundary relation on the irqtime part of
    // the event only: the vtime flushes that follow it in the same event move buckets too).
    if (boundary_ && !spec::tick::irq_boundary_conserves(d, pre_, mid_))
      k_.violate(i, "irq_boundary_conserves", "irq time not in exactly one bucket and pending");
    if (boundary_ && !spec::tick::irq_boundary_attributed(d, pre_, mid_, boundary_pc_, k_.p.tasks[cur].ksoftirqd))
      k_.violate(i, "irq_boundary_attributed", "irq time not in the bucket of the context left (hardirq/softirq)");
    {
      if (!spec::tick::steal_accounted(d, c)) k_.violate(i, "steal_accounted", "steal lost or double counted");
      if (!spec::tick::rq_clock_split(d, c)) k_.violate(i, "rq_clock_split", "rq clock != clock_task + irq + steal");
      if (!spec::tick::irqtime_pending_bounded(d, c)) k_.violate(i, "irqtime_pending_bounded", "tick_delta > total");
      if (!spec::tick::monotonic(d, before.tick.cpu, c)) k_.violate(i, "monotonic", "a per-CPU counter went backwards");
      if (!spec::tick::monotonic(d, before.tick.task, t)) k_.violate(i, "monotonic", "a task counter went backwards");
    }
    const auto& v = out_.vtime[cur];
    const auto& s = out_.ctl[cur];
    const auto now_cur = k_.ctx[cpu].cur;  // next, after a switch
    for (auto k : {cur, now_cur}) {
      if (!spec::gen::gen_task_conserves(d, out_.vtime[k]))
        k_.violate(i, "gen_vtime.task_conserves", "vtime consumed != flushed + other + residues");
      if (!spec::gen::gen_residues_bounded(d, g_, k_.cfg.tick, out_.vtime[k]))
        k_.violate(i, "gen_vtime.residues_bounded", "a vtime residue reached TICK_NSEC without being flushed");
    }
    if (!spec::gen::gen_cpu_conserves(d, g_, out_.vcpu[cpu], out_.vtime[now_cur]))
      k_.violate(i, "gen_vtime.cpu_conserves", "CPU vtime consumed + lost != current snapshot");
    if (!spec::gen::gen_seq_even(d, v) || s.in_section != 0)
      k_.violate(i, "gen_vtime.seq_even", "a write section left open");
    (void)t;
    const std::uint32_t adv = v.seq - before.v.seq;
    // Before 5.5 the idle task's vtime is written outside any section (vtime_account_idle at a
    // switch or irq entry); readers skip idle tasks then, so only the counter records it.
    const bool reader_visible = g_.states55 || !s.is_idle;
    if ((reader_visible && !spec::gen::gen_seq_brackets(d, before.v, v)) ||
        (cur == k_.ctx[cpu].cur && adv != 2 * (out_.cost.seq_sections - before.sections) &&
         k_.p.events[i - k_.p.base].kind != Kind::Switch))
      k_.violate(i, "gen_vtime.seq_brackets", "vtime changed without a write section, or seq != 2 x sections");
    if (!spec::gen::gen_vtime_monotonic(d, before.v, v))
      k_.violate(i, "gen_vtime.ghost_monotonic", "a vtime ghost went backwards");
    if (hotplug_at_ == i) k_.violate(i, hotplug_inv_, hotplug_msg_, hotplug_fix_);
    // Reader monotonicity: a finding, not a violation (the kernel's readers drop residues).
    if (k_.o.check) watch_readers(i, cpu, cur, k_.p.events[i - k_.p.base].ts);
  }

 private:
  model::GenStep<C> step(std::uint32_t cpu) {
    return model::GenStep<C>{k_.d, k_.cfg.tick, g_, k_.r.cpus[cpu], out_.vcpu[cpu], out_.cost};
  }
  std::uint64_t pending_delta(std::uint32_t task, std::uint64_t now) const {
    const auto& v = out_.vtime[task];
    const auto& s = out_.ctl[task];
    if (s.state < model::VT_SYS && g_.states55) return 0;
    if (!g_.states55 && (s.state == model::VT_INACTIVE || s.is_idle)) return 0;
    const auto n = at(now);
    if (g_.variant == model::GenVariant::Jiffy)
      return n.jiffies < v.starttime ? 0 : (n.jiffies - v.starttime) * g_.jiffy_ns;
    return n.now < v.starttime ? 0 : n.now - v.starttime;
  }
  bool fetch(std::uint32_t cpu, std::uint64_t now, std::array<std::uint64_t, model::NR_STATS>& a) const {
    const auto cur = k_.ctx[cpu].cur;
    if (!g_.nohz(cpu)) {
      a = k_.r.cpus[cpu].cpustat;
      return true;
    }
    return model::kcpustat_cpu_fetch(g_, k_.r.cpus[cpu], out_.vtime[cur], out_.ctl[cur], std::int32_t(cpu), now, a);
  }
  void record_procstat(std::uint64_t ts) {
    model::GenResult::ProcStat ps;
    ps.ts = ts;
    ps.cpus.resize(k_.p.header.ncpus);
    for (std::uint32_t c = 0; c < k_.p.header.ncpus; ++c) fetch(c, ts, ps.cpus[c]);
    out_.procstat.push_back(std::move(ps));
  }
  void watch_readers(std::size_t i, std::uint32_t cpu, std::uint32_t cur, std::uint64_t ts) {
    const auto vw = task_view(cur, ts);
    auto& lv = last_view_[cur];
    // what() names the reader only for the first drop: readers go backwards on most events of
    // some eras, and formatting each was a fifth of a checked run.
    auto note = [&](std::uint64_t& count, std::uint64_t& maxdrop, std::uint64_t drop, auto&& what) {
      ++count;
      maxdrop = std::max(maxdrop, drop);
      if (out_.first_backwards.empty())
        out_.first_backwards = fmt::format("line {}: {} dropped by {} ns", k_.p.line_at(i), what(), drop);
    };
    if (vw.utime < lv[0])
      note(out_.task_view_backwards, out_.max_task_view_drop, lv[0] - vw.utime,
           [&] { return fmt::format("task_cputime utime of task {}", cur); });
    if (vw.stime < lv[1])
      note(out_.task_view_backwards, out_.max_task_view_drop, lv[1] - vw.stime,
           [&] { return fmt::format("task_cputime stime of task {}", cur); });
    lv = {vw.utime, vw.stime};
    std::array<std::uint64_t, model::NR_STATS> a{};
    if (!fetch(cpu, ts, a)) return;
    auto& ls = last_stat_[cpu];
    // Unrolled: the loop's counter and test were half of its ~70 instructions a checked event
    // (some eras drop a bucket on most events, so a branch-free pre-test did not pay).
#pragma GCC unroll 16
    for (unsigned k = 0; k < model::NR_STATS; ++k) {
      if (a[k] < ls[k])
        note(out_.kcpustat_backwards, out_.max_kcpustat_drop, ls[k] - a[k],
             [&] { return fmt::format("kcpustat {} of CPU {}", model::usage_names[k], cpu); });
    }
    ls = a;
  }

  Core& k_;
  TickBackend tick_;
  const model::GenCfg& g_;
  model::GenResult out_;
  bool delegated_ = false, boundary_ = false;
  std::uint32_t boundary_pc_ = 0;  // preempt count of the context the boundary left
  model::CpuAcct<C> pre_{}, mid_{};
  std::vector<std::array<std::uint64_t, 2>> last_view_;
  std::size_t grown_ = 0;  // tasks the per-task vectors cover
  std::vector<std::array<std::uint64_t, model::NR_STATS>> last_stat_;
  std::vector<std::uint64_t> offline_pending_ = std::vector<std::uint64_t>(k_.p.header.ncpus, 0);  // ns, 5.14+
  bool offline_pending_any_ = false;  // an offline_pending_ entry is not 0 (checked once per event)
  // The event whose hotplug finding hotplug_inv_/fix_/msg_ hold (set there, not cleared at every event).
  std::size_t hotplug_at_ = SIZE_MAX;
  const char* hotplug_inv_ = "";
  std::string_view hotplug_fix_;
  std::string hotplug_msg_;
  // TICK_NSEC for the Jiffy variant (at() divides by it), 0 for the others (no division).
  const std::uint64_t jiffy_nsec_ = g_.variant == model::GenVariant::Jiffy ? k_.cfg.tick.tick_nsec : 0;
};

}  // namespace

RunResult Backend<arch::Accounting::Gen>::run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  return run_with<GenBackend>(p, cfg, o);
}
std::unique_ptr<LiveMachine> Backend<arch::Accounting::Gen>::live(const Program& p, const ModelCfg& cfg,
                                                                  const RunOptions& o) {
  return live_with<GenBackend>(p, cfg, o);
}

}  // namespace kacct::sim
