// Invariants, written once as templates over the value domain. Each returns a domain boolean;
// the concrete run evaluates it after every event (`kacct check`, props, fuzz), the prover asks
// Z3 for a state and input that make it false. Names are stable: they appear in verdicts.
#pragma once
#include <string_view>

#include "model/tick/tick.hpp"

namespace kacct::spec::tick {

// ---- per-CPU state invariants (hold in every reachable state) ----

// Steal is accounted, never lost: all of it is in cpustat[STEAL] or still pending.
// (Both counters start at 0 on a fresh CPU.)
template <class D>
boolean<D> steal_accounted(D& d, const model::CpuAcct<D>& c) {
  return d.band(d.eq(c.cpustat[model::STEAL], c.prev_steal_time), d.ule(c.prev_steal_time, c.steal_clock));
}
// The rq clock is split exactly: clock == clock_task + irq time taken out + steal taken out
// (prev_steal_time_rq less the steal 108ad0999085 dropped), and neither taken-out part runs
// ahead of its source.
template <class D>
boolean<D> rq_clock_split(D& d, const model::CpuAcct<D>& c) {
  auto sum = d.add(c.rq.clock_task, d.add(c.rq.prev_irq_time, d.sub(c.rq.prev_steal_time_rq, c.rq.steal_dropped)));
  return d.band(d.eq(c.rq.clock, sum),
                d.band(d.ule(c.rq.prev_irq_time, c.irqtime.total), d.ule(c.rq.prev_steal_time_rq, c.steal_clock)));
}
// IRQ time (IRQ_TIME_ACCOUNTING): what is pending for the tick never exceeds what was measured.
template <class D>
boolean<D> irqtime_pending_bounded(D& d, const model::CpuAcct<D>& c) {
  return d.ule(c.irqtime.tick_delta, c.irqtime.total);
}

// ---- per-step invariants (relations between the state before and after one event) ----

// Every counter only grows (no wrap, no decrement).
template <class D>
boolean<D> monotonic(D& d, const model::CpuAcct<D>& a, const model::CpuAcct<D>& b) {
  auto r = d.lit_bool(true);
  for (unsigned k = 0; k < model::NR_STATS; ++k) r = d.band(r, d.ule(a.cpustat[k], b.cpustat[k]));
  r = d.band(r, d.ule(a.irqtime.total, b.irqtime.total));
  r = d.band(r, d.ule(a.rq.clock, b.rq.clock));
  return d.band(r, d.ule(a.rq.clock_task, b.rq.clock_task));
}
template <class D>
boolean<D> monotonic(D& d, const model::TaskAcct<D>& a, const model::TaskAcct<D>& b) {
  auto r = d.band(d.ule(a.utime, b.utime), d.ule(a.stime, b.stime));
  r = d.band(r, d.ule(a.gtime, b.gtime));
  return d.band(r, d.ule(a.sum_exec_runtime, b.sum_exec_runtime));
}

// Sum of the buckets that partition CPU time (GUEST and GUEST_NICE repeat USER and NICE).
template <class D>
u64<D> time_buckets(D& d, const model::CpuAcct<D>& c) {
  auto s = d.template lit<64>(0);
  for (unsigned k : {model::USER, model::NICE, model::SYSTEM, model::SOFTIRQ, model::IRQ, model::IDLE, model::IOWAIT})
    s = d.add(s, c.cpustat[k]);
  return s;
}

// Tick conservation: a tick worth `credit` ns is split exactly between the time buckets and
// "other" time (steal accounted now plus irq time taken from tick_delta); other time beyond the
// tick is not taken out of anything else. So: d(buckets) + min(other, credit) == credit.
// (Irq time accounted at irq boundaries is excluded: at a tick cpustat[IRQ/SOFTIRQ] grows only
// through the dispatch, and the relation reads the deltas of this step alone.)
template <class D>
boolean<D> tick_conserves(D& d, const model::CpuAcct<D>& a, const model::CpuAcct<D>& b, u64<D> credit) {
  auto buckets = d.sub(time_buckets(d, b), time_buckets(d, a));
  auto steal = d.sub(b.cpustat[model::STEAL], a.cpustat[model::STEAL]);
  auto irq_taken = d.sub(a.irqtime.tick_delta, b.irqtime.tick_delta);
  auto other = d.add(steal, irq_taken);
  return d.eq(d.add(buckets, d.min(other, credit)), credit);
}

// Tick attribution: when the tick is not eaten by other time, the bucket that grows is the one
// the CPU context names (Documentation/filesystems/proc.rst semantics, as a table; the model
// gets there through preempt-count arithmetic). With IRQ_TIME_ACCOUNTING irq time is measured
// at the boundaries, so the tick goes to the interrupted task's own context.
inline model::Usage expected_bucket(const model::TickCtx& x, bool irq_time) {
  const bool in_hardirq = (x.preempt_count & model::HARDIRQ_MASK) > model::HARDIRQ_OFFSET;  // besides the tick's own
  const bool in_softirq = (x.preempt_count & model::SOFTIRQ_OFFSET) != 0;
  if (irq_time) {
    if (x.is_ksoftirqd) return model::SOFTIRQ;
    if (x.user_tick) return x.nice_pos ? model::NICE : model::USER;
    if (x.is_idle) return x.nr_iowait ? model::IOWAIT : model::IDLE;
    if (x.pf_vcpu) return x.nice_pos ? model::NICE : model::USER;  // and GUEST/GUEST_NICE
    return model::SYSTEM;
  }
  if (x.user_tick) return x.nice_pos ? model::NICE : model::USER;
  if (x.pf_vcpu && !in_hardirq && !in_softirq) return x.nice_pos ? model::NICE : model::USER;
  if (in_hardirq) return model::IRQ;
  if (in_softirq) return model::SOFTIRQ;
  if (x.is_idle) return x.nr_iowait ? model::IOWAIT : model::IDLE;
  return model::SYSTEM;
}
// Only the expected time bucket (and, for guest time, its GUEST twin) may change at the tick.
template <class D>
boolean<D> tick_attributed(D& d, const model::CpuAcct<D>& a, const model::CpuAcct<D>& b, const model::TickCtx& x,
                           bool irq_time) {
  const model::Usage want = expected_bucket(x, irq_time);
  const bool guest = x.pf_vcpu && !x.user_tick && (want == model::USER || want == model::NICE);
  auto r = d.lit_bool(true);
  for (unsigned k = 0; k < model::NR_STATS; ++k) {
    if (k == want || k == model::STEAL) continue;
    if (guest && k == (x.nice_pos ? model::GUEST_NICE : model::GUEST)) {
      // guest time is counted twice: in USER/NICE and in GUEST/GUEST_NICE, by the same amount
      r = d.band(r, d.eq(d.sub(b.cpustat[k], a.cpustat[k]), d.sub(b.cpustat[want], a.cpustat[want])));
      continue;
    }
    r = d.band(r, d.eq(a.cpustat[k], b.cpustat[k]));
  }
  return r;
}

// Irq boundary conservation (IRQ_TIME_ACCOUNTING): the elapsed irq time goes to exactly one of
// cpustat[IRQ]/[SOFTIRQ], and the same amount to irqtime.total and to tick_delta.
template <class D>
boolean<D> irq_boundary_conserves(D& d, const model::CpuAcct<D>& a, const model::CpuAcct<D>& b) {
  auto got = d.sub(d.add(b.cpustat[model::IRQ], b.cpustat[model::SOFTIRQ]),
                   d.add(a.cpustat[model::IRQ], a.cpustat[model::SOFTIRQ]));
  auto total = d.sub(b.irqtime.total, a.irqtime.total);
  auto pend = d.sub(b.irqtime.tick_delta, a.irqtime.tick_delta);
  return d.band(d.eq(got, total), d.eq(total, pend));
}

// The bucket of the irq time that ends at a boundary (irqtime_account_irq(): the context being
// left, `pc` its preempt count): IRQ inside any hardirq level, else SOFTIRQ inside a softirq
// not run by ksoftirqd (that time stays the task's), else none (NR_STATS).
constexpr model::Usage irq_bucket_left(std::uint32_t pc, bool ksoftirqd) {
  if (pc & model::HARDIRQ_MASK) return model::IRQ;
  if ((pc & model::SOFTIRQ_OFFSET) && !ksoftirqd) return model::SOFTIRQ;
  return model::NR_STATS;
}
// Irq boundary attribution, per category: hardirq time lands in cpustat[IRQ] alone and softirq
// time in cpustat[SOFTIRQ] alone, each by the irq time elapsed; leaving task context adds none
// (irq_boundary_conserves compares only their sum).
template <class D>
boolean<D> irq_boundary_attributed(D& d, const model::CpuAcct<D>& a, const model::CpuAcct<D>& b, std::uint32_t pc,
                                   bool ksoftirqd) {
  const model::Usage want = irq_bucket_left(pc, ksoftirqd);
  const auto total = d.sub(b.irqtime.total, a.irqtime.total);
  auto r = want == model::NR_STATS ? d.eq(total, d.template lit<64>(0)) : d.lit_bool(true);
  for (model::Usage k : {model::IRQ, model::SOFTIRQ}) {
    const auto got = d.sub(b.cpustat[k], a.cpustat[k]);
    r = d.band(r, k == want ? d.eq(got, total) : d.eq(got, d.template lit<64>(0)));
  }
  return r;
}

// ---- cputime_adjust (G1..G3 of docs/models/cputime-adjust.md) ----

// G1: what userspace sees never goes backwards.
template <class D>
boolean<D> adjust_monotonic(D& d, const model::PrevCputime<D>& before, const model::PrevCputime<D>& out) {
  return d.band(d.ule(before.utime, out.utime), d.ule(before.stime, out.stime));
}
// G2: when there is new runtime, utime + stime == rtime; otherwise the previous values return.
template <class D>
boolean<D> adjust_sum_is_rtime(D& d, const model::PrevCputime<D>& before, const model::TaskCputime<D>& in,
                               const model::PrevCputime<D>& out) {
  auto fresh = d.ult(d.add(before.utime, before.stime), in.sum_exec_runtime);
  return d.select(fresh, d.eq(d.add(out.utime, out.stime), in.sum_exec_runtime),
                  d.band(d.eq(out.utime, before.utime), d.eq(out.stime, before.stime)));
}
// G3: stime never exceeds rtime when it is recomputed (else utime = rtime - stime wraps).
template <class D>
boolean<D> adjust_stime_le_rtime(D& d, const model::PrevCputime<D>& before, const model::TaskCputime<D>& in,
                                 const model::PrevCputime<D>& out) {
  auto fresh = d.ult(d.add(before.utime, before.stime), in.sum_exec_runtime);
  return d.implies(fresh, d.band(d.ule(out.stime, in.sum_exec_runtime), d.ule(out.utime, in.sum_exec_runtime)));
}

// The fix of a cputime_adjust() invariant that this era and division still break, or "" if
// they keep it. Proved both ways per era (`kacct validate`, docs/models/cputime-adjust.md); the
// concrete checks use it to tell the kernel's own bug from a fault of the model.
constexpr std::string_view adjust_fixed_by(const model::AdjustCfg& c, std::string_view invariant) {
  using model::AdjustEra;
  using model::ScaleDiv;
  if (invariant == "cputime_adjust.sum_is_rtime" && c.era == AdjustEra::PerFieldMax) return "9d7fb0427648";
  if (invariant == "cputime_adjust.monotonic" && c.era == AdjustEra::GotoUpdate) return "173be9a14f7b";
  // scale_stime()'s loop and the 2020 generic mul_u64_u64_div_u64() can return more than rtime.
  if (invariant == "cputime_adjust.stime_le_rtime" && c.era != AdjustEra::ClampToRtime &&
      (c.div == ScaleDiv::Loop32 || c.div == ScaleDiv::Generic2020))
    return "77baa5bafcbe";
  return "";
}

}  // namespace kacct::spec::tick
