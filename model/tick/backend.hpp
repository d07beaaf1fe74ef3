// TickBackend: tick accounting (model/tick/) as a machine backend (model/sim/machine_impl.hpp);
// its runner is in backend.cpp. In a header so that other backends can keep tick accounting on
// the CPUs they do not cover (gen vtime: housekeeping CPUs).
#pragma once
#include "model/sim/machine_impl.hpp"

namespace kacct::sim {

// Tick accounting (CONFIG_TICK_CPU_ACCOUNTING, with/without IRQ_TIME_ACCOUNTING): model/tick/.
class TickBackend {
 public:
  explicit TickBackend(Core& k) : k_(k) {}
  static constexpr ReadRules reads{};
  using Result = std::monostate;
  Result finish() { return {}; }

  struct Snapshot {
    CpuAcct<C> cpu;
    TaskAcct<C> task;
  };
  Snapshot snapshot(std::uint32_t cpu, std::uint32_t task) const { return {k_.r.cpus[cpu], k_.r.tasks[task]}; }

  // The accounting calls the kernel makes at event e, from the context before e. Inlined into
  // the machine's step; a tick and a switch each make one call (tick(), switch_to()) with the
  // model's steps inlined into it. Out of line, with the steps' own calls, this cost ~25
  // instructions more an event on the builder mix (bench_tick, callgrind).
  KACCT_INLINE void event(std::size_t i, const CEvent& e, const CpuCtx& x) {
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
        boundary_pc_ = left_pc(x);
        break;
      case Kind::IrqExit:
        model::irqtime_account_irq(d, cfg, c, e.ts, model::IrqClass::Hardirq);
        was_boundary_ = true;
        boundary_pc_ = left_pc(x);
        break;
      case Kind::Tick: tick(e, x); break;
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
      case Kind::Switch: switch_to(e); break;
      case Kind::Steal: c.steal_clock = d.add(c.steal_clock, k_.p.wide[e.arg]); break;
      default: break;
    }
  }
  // event() as one out-of-line call, for a backend that delegates some events to this one (gen
  // vtime's housekeeping CPUs): inlined at each of its call sites, event() pushed that
  // backend's own check out of line (+2% instructions, gen 4.4 checked).
  [[gnu::noinline]] void event_call(std::size_t i, const CEvent& e, const CpuCtx& x) { event(i, e, x); }
  // Before a read of task times: task_sched_runtime(current).
  void sync(std::uint32_t cpu, std::uint64_t now) { k_.sched_clock_update(cpu, now); }

  void check(std::size_t i, std::uint32_t cpu, std::uint32_t cur, const Snapshot& before) {
    auto& d = k_.d;
    const auto& c = k_.r.cpus[cpu];
    const auto& t = k_.r.tasks[cur];
    const bool irq_time = k_.cfg.tick.irq_time;
    if (!spec::tick::steal_accounted(d, c)) k_.violate(i, "steal_accounted", "steal lost or double counted");
    if (!spec::tick::rq_clock_split(d, c)) k_.violate(i, "rq_clock_split", "rq clock != clock_task + irq + steal");
    if (!spec::tick::irqtime_pending_bounded(d, c)) k_.violate(i, "irqtime_pending_bounded", "tick_delta > total");
    if (!spec::tick::monotonic(d, before.cpu, c)) k_.violate(i, "monotonic", "a per-CPU counter went backwards");
    if (!spec::tick::monotonic(d, before.task, t)) k_.violate(i, "monotonic", "a task counter went backwards");
    if (was_tick_ && !spec::tick::tick_conserves(d, before.cpu, c, credit_))
      k_.violate(i, "tick_conserves", "tick time not split exactly between buckets and other time");
    if (was_tick_ && !spec::tick::tick_attributed(d, before.cpu, c, tick_x_, irq_time))
      k_.violate(i, "tick_attributed",
                 std::string("tick charged to a bucket other than ") +
                     model::usage_names[spec::tick::expected_bucket(tick_x_, irq_time)]);
    if (was_boundary_ && !spec::tick::irq_boundary_conserves(d, before.cpu, c))
      k_.violate(i, "irq_boundary_conserves", "irq time not in exactly one bucket and pending");
    if (was_boundary_ &&
        !spec::tick::irq_boundary_attributed(d, before.cpu, c, boundary_pc_, k_.p.tasks[cur].ksoftirqd))
      k_.violate(i, "irq_boundary_attributed", "irq time not in the bucket of the context left (hardirq/softirq)");
  }
  // The preempt count of the context a boundary event leaves (for the spec, apart from
  // leaving_class): every hardirq level and the softirq bit.
  static std::uint32_t left_pc(const CpuCtx& x) {
    return x.irq_depth * model::HARDIRQ_OFFSET + (x.softirq ? model::SOFTIRQ_OFFSET : 0);
  }

 private:
  // update_process_times(): account_process_tick() first, then scheduler_tick().
  [[gnu::noinline, gnu::flatten]] void tick(const CEvent& e, const CpuCtx& x) {
    const auto& cfg = k_.cfg.tick;
    tick_x_ = tick_ctx(x);
    credit_ = cfg.tick_nsec;
    model::account_process_tick(k_.d, cfg, k_.r.cpus[e.cpu], k_.r.tasks[x.cur], tick_x_);
    k_.sched_clock_update(e.cpu, e.ts);
    was_tick_ = true;
  }
  // __schedule(): the rq clock (update_rq_clock, put_prev_task's update_curr), then next's
  // set_next_entity().
  [[gnu::noinline, gnu::flatten]] void switch_to(const CEvent& e) {
    k_.sched_clock_update(e.cpu, e.ts);
    if (!k_.is_idle(e.arg)) k_.r.tasks[e.arg].exec_start = k_.r.cpus[e.cpu].rq.clock_task;
  }
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
  std::uint32_t boundary_pc_ = 0;
  std::uint64_t credit_ = 0;
};

}  // namespace kacct::sim
