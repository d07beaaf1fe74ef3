// Tick-based CPU time accounting (CONFIG_TICK_CPU_ACCOUNTING), kernel/sched/cputime.c, with
// and without CONFIG_IRQ_TIME_ACCOUNTING, and steal (PARAVIRT_TIME_ACCOUNTING); plus the rq
// clock (update_rq_clock_task, kernel/sched/core.c) that produces rtime.
#pragma once
#include <cstdint>

#include "arch/version.hpp"
#include "model/tick/state.hpp"
#include "model/mutation.hpp"

namespace kacct::model {  // shared core, not model::tick: every backend uses these types

// Preempt-count layout (include/linux/preempt.h).
inline constexpr std::uint32_t SOFTIRQ_OFFSET = 1u << 8;
inline constexpr std::uint32_t HARDIRQ_OFFSET = 1u << 16;
inline constexpr std::uint32_t SOFTIRQ_MASK = 0xffu << 8;
inline constexpr std::uint32_t HARDIRQ_MASK = 0xfu << 16;
inline constexpr std::uint32_t NMI_MASK = 0xfu << 20;  // NMI_BITS 4 (6.1.192, 6.12.117)
// irq_count(): NMI | hardirq | softirq (without PREEMPT_RT; 6.1.192 and 6.12.117 preempt.h).
inline constexpr std::uint32_t irq_count(std::uint32_t preempt_count) {
  return preempt_count & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_MASK);
}

struct TickCfg {
  bool irq_time = false;                // CONFIG_IRQ_TIME_ACCOUNTING with sched_clock_irqtime on
  bool steal = false;                   // paravirt steal accounting enabled
  std::uint64_t tick_nsec = 4'000'000;  // TICK_NSEC for the config's HZ
  // 108ad0999085 (6.14; 6.12.14, 6.1.129): update_rq_clock_task() drops steal beyond the
  // elapsed delta instead of taking it out of later updates.
  bool steal_drop_excess = false;
  bool operator==(const TickCfg&) const = default;
};

// The CPU context at an accounting call, as the kernel sees it (concrete: it comes from the
// trace; proofs enumerate every case).
struct TickCtx {
  bool user_tick = false;           // user_mode(get_irq_regs())
  std::uint32_t preempt_count = 0;  // including the timer interrupt's own HARDIRQ_OFFSET
  bool is_idle = false;             // p == this_rq()->idle
  bool is_ksoftirqd = false;        // p == this_cpu_ksoftirqd()
  bool pf_vcpu = false;             // p->flags & PF_VCPU
  bool nice_pos = false;            // task_nice(p) > 0
  bool nr_iowait = false;           // atomic_read(&rq->nr_iowait) > 0
};

// account_user_time(), account_guest_time(), account_system_index_time(), account_idle_time(),
// account_steal_time(): the sinks (6.1; unchanged in substance since 4.11).
template <class D>
void account_user_time(D& d, CpuAcct<D>& c, TaskAcct<D>& p, const TickCtx& x, u64<D> t) {
  p.utime = KACCT_MUTANT(102, d.add(p.utime, t), p.utime);
  auto& b = c.cpustat[KACCT_MUTANT(101, x.nice_pos ? NICE : USER, x.nice_pos ? USER : NICE)];
  b = d.add(b, t);
}
template <class D>
void account_guest_time(D& d, CpuAcct<D>& c, TaskAcct<D>& p, const TickCtx& x, u64<D> t) {
  p.utime = d.add(p.utime, t);
  p.gtime = KACCT_MUTANT(104, d.add(p.gtime, t), p.gtime);
  auto& u = c.cpustat[x.nice_pos ? NICE : USER];
  auto& g = c.cpustat[KACCT_MUTANT(103, x.nice_pos ? GUEST_NICE : GUEST, GUEST)];
  u = KACCT_MUTANT(105, d.add(u, t), u);
  g = d.add(g, t);
}
template <class D>
void account_system_index_time(D& d, CpuAcct<D>& c, TaskAcct<D>& p, u64<D> t, Usage idx) {
  p.stime = KACCT_MUTANT(106, d.add(p.stime, t), p.stime);
  c.cpustat[idx] = d.add(c.cpustat[idx], t);
}
template <class D>
void account_idle_time(D& d, CpuAcct<D>& c, const TickCtx& x, u64<D> t) {
  auto& b = c.cpustat[KACCT_MUTANT(107, x.nr_iowait ? IOWAIT : IDLE, IDLE)];
  b = d.add(b, t);
}
// account_system_time(p, hardirq_offset, cputime): guest if PF_VCPU outside any irq, else IRQ /
// SOFTIRQ / SYSTEM from the preempt count minus the caller's own hardirq offset.
template <class D>
void account_system_time(D& d, CpuAcct<D>& c, TaskAcct<D>& p, const TickCtx& x, std::uint32_t hardirq_offset,
                         u64<D> t) {
  if (x.pf_vcpu && KACCT_MUTANT(108, irq_count(x.preempt_count) - hardirq_offset == 0, irq_count(x.preempt_count) == 0))
    return account_guest_time(d, c, p, x, t);
  Usage idx = SYSTEM;
  if (KACCT_MUTANT(109, (x.preempt_count & HARDIRQ_MASK) - hardirq_offset, (x.preempt_count & HARDIRQ_MASK)))
    idx = KACCT_MUTANT(110, IRQ, SOFTIRQ);
  else if (KACCT_MUTANT(111, x.preempt_count & SOFTIRQ_OFFSET, x.preempt_count & SOFTIRQ_MASK))
    idx = SOFTIRQ;
  account_system_index_time(d, c, p, t, idx);
}

// steal_account_process_time(maxtime) (4.8+): all pending steal up to maxtime; the rest stays
// pending in paravirt_steal_clock - prev_steal_time.
template <class D>
u64<D> steal_account_process_time(D& d, const TickCfg& cfg, CpuAcct<D>& c, u64<D> maxtime) {
  if (!cfg.steal) return d.template lit<64>(0);
  auto steal = KACCT_MUTANT(112, d.min(d.sub(c.steal_clock, c.prev_steal_time), maxtime),
                            d.sub(c.steal_clock, c.prev_steal_time));
  c.cpustat[STEAL] = KACCT_MUTANT(114, d.add(c.cpustat[STEAL], steal), c.cpustat[STEAL]);
  c.prev_steal_time = KACCT_MUTANT(113, d.add(c.prev_steal_time, steal), c.steal_clock);
  return steal;
}
// irqtime_tick_accounted(maxtime) (4.11+): irq time already in cpustat, taken out of tick time.
template <class D>
u64<D> irqtime_tick_accounted(D& d, CpuAcct<D>& c, u64<D> maxtime) {
  auto delta = KACCT_MUTANT(115, d.min(c.irqtime.tick_delta, maxtime), c.irqtime.tick_delta);
  c.irqtime.tick_delta = KACCT_MUTANT(116, d.sub(c.irqtime.tick_delta, delta), c.irqtime.tick_delta);
  return delta;
}
// account_other_time(max) (4.11+): steal first, then pending irq time, at most max in all.
// (The kernel skips the irq part when steal already reached max; then max - steal == 0 and the
// call below takes nothing, so the guard needs no branch here.)
template <class D>
u64<D> account_other_time(D& d, const TickCfg& cfg, CpuAcct<D>& c, u64<D> max) {
  auto acc = steal_account_process_time(d, cfg, c, max);
  if (KACCT_MUTANT(118, !cfg.irq_time, true)) return acc;
  return d.add(acc, irqtime_tick_accounted(d, c, KACCT_MUTANT(117, d.sub(max, acc), max)));
}

// irqtime_account_process_tick(p, user_tick, ticks) (4.11+): the tick minus other time goes to
// the task's base context; the preempt count is not consulted (irq time is measured exactly).
template <class D>
void irqtime_account_process_tick(D& d, const TickCfg& cfg, CpuAcct<D>& c, TaskAcct<D>& p, const TickCtx& x,
                                  u64<D> ticks) {
  auto cputime = d.mul(d.template lit<64>(cfg.tick_nsec), ticks);
  auto other = account_other_time(d, cfg, c, d.template lit<64>(~std::uint64_t{0}));
  when_each(
      d, KACCT_MUTANT(119, d.ult(other, cputime), d.ule(other, cputime)),
      [&](CpuAcct<D>& sc, TaskAcct<D>& sp) {
        auto t = d.sub(cputime, other);
        if (x.is_ksoftirqd)
          account_system_index_time(d, sc, sp, t, KACCT_MUTANT(120, SOFTIRQ, SYSTEM));
        else if (x.user_tick)
          account_user_time(d, sc, sp, x, t);
        else if (x.is_idle)
          account_idle_time(d, sc, x, t);
        else if (KACCT_MUTANT(121, x.pf_vcpu, false))
          account_guest_time(d, sc, sp, x, t);
        else
          account_system_index_time(d, sc, sp, t, SYSTEM);
      },
      c, p);
}

// account_process_tick(p, user_tick) (4.11+): one TICK_NSEC, minus pending steal.
template <class D>
void account_process_tick(D& d, const TickCfg& cfg, CpuAcct<D>& c, TaskAcct<D>& p, const TickCtx& x) {
  if (cfg.irq_time) return irqtime_account_process_tick(d, cfg, c, p, x, d.template lit<64>(1));
  auto cputime = d.template lit<64>(cfg.tick_nsec);
  auto steal = steal_account_process_time(d, cfg, c, d.template lit<64>(~std::uint64_t{0}));
  when_each(
      d, d.ult(steal, cputime),
      [&](CpuAcct<D>& sc, TaskAcct<D>& sp) {
        auto t = KACCT_MUTANT(123, d.sub(cputime, steal), cputime);
        if (x.user_tick)
          account_user_time(d, sc, sp, x, t);
        else if (!x.is_idle ||
                 KACCT_MUTANT(122, irq_count(x.preempt_count) != HARDIRQ_OFFSET, irq_count(x.preempt_count) != 0))
          account_system_time(d, sc, sp, x, HARDIRQ_OFFSET, t);
        else
          account_idle_time(d, sc, x, t);
      },
      c, p);
}

// account_idle_ticks(unsigned long ticks) (4.11+): idle ticks credited on exit from nohz idle.
// With irq time it calls irqtime_account_idle_ticks(int ticks): the count is truncated to int
// and TICK_NSEC (a long) times a negative int sign-extends (6.1.192, 6.12.117 cputime.c).
template <class D>
void account_idle_ticks(D& d, const TickCfg& cfg, CpuAcct<D>& c, TaskAcct<D>& idle, const TickCtx& x, u64<D> ticks) {
  if (cfg.irq_time) {
    auto t32 = KACCT_MUTANT(125, d.template zext<64>(d.template trunc<32>(ticks)), ticks);
    auto neg = d.ule(d.template lit<64>(0x8000'0000u), t32);
    auto as_int = KACCT_MUTANT(124, d.select(neg, d.add(t32, d.template lit<64>(0xffff'ffff'0000'0000ull)), t32), t32);
    return irqtime_account_process_tick(d, cfg, c, idle, x, as_int);
  }
  auto cputime = KACCT_MUTANT(126, d.mul(d.template lit<64>(cfg.tick_nsec), ticks), d.template lit<64>(cfg.tick_nsec));
  auto steal = steal_account_process_time(d, cfg, c, d.template lit<64>(~std::uint64_t{0}));
  when_each(
      d, d.ult(steal, cputime), [&](CpuAcct<D>& st) { account_idle_time(d, st, x, d.sub(cputime, steal)); }, c);
}

// Which side of an irq boundary the elapsed time belongs to (irqtime_account_irq's pc test).
enum class IrqClass : std::uint8_t { None, Hardirq, Softirq };
// irqtime_account_irq(curr, offset) (5.11+ form; same result before): the time since the last
// boundary is irq time if the context being left was a hardirq, softirq time if it was a softirq
// outside ksoftirqd, else task time (nothing to do here).
template <class D>
void irqtime_account_irq(D& d, const TickCfg& cfg, CpuAcct<D>& c, u64<D> now, IrqClass cls) {
  if (!cfg.irq_time) return;
  auto delta = d.sub(now, c.irqtime.irq_start_time);
  c.irqtime.irq_start_time = KACCT_MUTANT(131, d.add(c.irqtime.irq_start_time, delta), c.irqtime.irq_start_time);
  if (KACCT_MUTANT(130, cls == IrqClass::None, false)) return;
  auto& b = c.cpustat[KACCT_MUTANT(127, cls == IrqClass::Hardirq ? IRQ : SOFTIRQ,
                                   cls == IrqClass::Hardirq ? SOFTIRQ : IRQ)];  // irqtime_account_delta()
  b = d.add(b, delta);
  c.irqtime.total = KACCT_MUTANT(129, d.add(c.irqtime.total, delta), c.irqtime.total);
  c.irqtime.tick_delta = KACCT_MUTANT(128, d.add(c.irqtime.tick_delta, delta), c.irqtime.tick_delta);
}

// update_rq_clock(rq) + update_rq_clock_task(rq, delta) (6.1): clock_task advances by the
// elapsed time minus irq time and steal, each clamped to what is left; steal beyond that stays
// pending, or with 108ad0999085 is dropped (counted in the model's rq.steal_dropped).
template <class D>
void update_rq_clock(D& d, const TickCfg& cfg, CpuAcct<D>& c, u64<D> now) {
  auto delta = d.sub(now, c.rq.clock);
  // "(s64)delta < 0: return" -- the clock never goes backwards.
  when_each(
      d, KACCT_MUTANT(132, d.ult(delta, d.template lit<64>(std::uint64_t{1} << 63)), d.lit_bool(true)),
      [&](CpuAcct<D>& s) {
        s.rq.clock = d.add(s.rq.clock, delta);
        auto left = delta;
        if (cfg.irq_time) {
          // 140: the clamp bound only with steal accounting (the clamp inside the steal block)
          auto irq = KACCT_MUTANT(
              133,
              d.min(d.sub(s.irqtime.total, s.rq.prev_irq_time),
                    KACCT_MUTANT(140, left, cfg.steal ? left : d.sub(s.irqtime.total, s.rq.prev_irq_time))),
              d.sub(s.irqtime.total, s.rq.prev_irq_time));
          s.rq.prev_irq_time = d.add(s.rq.prev_irq_time, irq);
          left = KACCT_MUTANT(137, d.sub(left, irq), left);
        }
        if (cfg.steal) {
          auto st = KACCT_MUTANT(134, d.min(d.sub(s.steal_clock, s.rq.prev_steal_time_rq), left),
                                 d.sub(s.steal_clock, s.rq.prev_steal_time_rq));
          if (cfg.steal_drop_excess) {  // 108ad0999085: prev_steal_time_rq = the steal clock read
            s.rq.steal_dropped = d.add(s.rq.steal_dropped, d.sub(d.sub(s.steal_clock, s.rq.prev_steal_time_rq), st));
            s.rq.prev_steal_time_rq = s.steal_clock;
          } else {
            s.rq.prev_steal_time_rq = KACCT_MUTANT(136, d.add(s.rq.prev_steal_time_rq, st), s.steal_clock);
          }
          left = KACCT_MUTANT(135, d.sub(left, st), left);
        }
        s.rq.clock_task = d.add(s.rq.clock_task, left);
      },
      c);
}
// update_curr() (fair.c): the running task's rtime advances by clock_task - exec_start.
template <class D>
void update_curr(D& d, const CpuAcct<D>& c, TaskAcct<D>& p) {
  auto delta = d.sub(c.rq.clock_task, p.exec_start);
  when_each(
      d,
      d.band(d.ult(d.template lit<64>(0), delta),
             KACCT_MUTANT(138, d.ult(delta, d.template lit<64>(std::uint64_t{1} << 63)), d.lit_bool(true))),
      [&](TaskAcct<D>& t) {
        t.exec_start = KACCT_MUTANT(139, c.rq.clock_task, t.exec_start);
        t.sum_exec_runtime = d.add(t.sum_exec_runtime, delta);
      },
      p);
}

}  // namespace kacct::model
