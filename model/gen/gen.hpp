// Gen vtime (CONFIG_VIRT_CPU_ACCOUNTING_GEN): context-tracking-driven per-task accounting on
// nohz_full CPUs, kernel/sched/cputime.c, in its three granularities (docs/models/gen-vtime.md):
//   Snapshot  (<= 4.5)          ns clock read at every transition, every delta flushed at once;
//   Jiffy     (4.6 .. 4.12)     ff9a9b4c4334: the snapshot is a jiffies value, flush only if it moved;
//   Accum     (4.13 ..)         2a42eb9594a1: ns clock, per-task residues flushed at >= TICK_NSEC;
//                               5.5 adds the IDLE/GUEST states, vtime->cpu and kcpustat readers.
// Written once over the value domain D. The vtime state that the kernel branches on (state,
// PF_VCPU, cpu) is concrete (VtimeCtl), like TickCtx: the proofs enumerate it.
#pragma once
#include <cstdint>

#include "model/tick/tick.hpp"
#include "model/mutation.hpp"

namespace kacct::model {

enum class GenVariant : std::uint8_t { Snapshot, Jiffy, Accum };
inline const char* variant_name(GenVariant v) {
  return v == GenVariant::Snapshot ? "snapshot" : v == GenVariant::Jiffy ? "jiffy" : "accum";
}
// enum vtime_state (5.5+ order; readers test state < VTIME_SYS). Before 5.5 only INACTIVE, SYS
// and USER exist (guest = SYS + PF_VCPU, idle = is_idle_task()).
enum VState : std::uint8_t { VT_INACTIVE = 0, VT_IDLE = 1, VT_SYS = 2, VT_USER = 3, VT_GUEST = 4 };
inline const char* vstate_name(VState s) {
  constexpr const char* n[] = {"inactive", "idle", "sys", "user", "guest"};
  return n[s];
}

struct GenCfg {
  GenVariant variant = GenVariant::Accum;
  bool irq_hooks = false;  // <= 4.7: vtime_account_irq_enter/exit on (soft)irq boundaries
  bool other_time = true;  // 4.8+: get_vtime_delta() takes account_other_time() out
  bool states55 = true;    // 5.5+: IDLE/GUEST states, vtime->cpu, one prev section at switch, kcpustat readers
  std::uint64_t jiffy_ns = 4'000'000;           // jiffies_to_cputime(1) / jiffies_to_nsecs(1)
  std::uint64_t switch_gap = 0;                 // ns between prev's flush and next's starttime read (model parameter)
  std::uint64_t nohz_full = ~std::uint64_t{0};  // bit c: CPU c is nohz_full (vtime on); others tick
  // copy_process() leaves the residues dup_task_struct() copied from the parent (every release
  // with residues, 4.13..6.12 at least); false models a kernel that zeroes them (the proposed
  // fix kacct-gen-fork-residues, arch/patches.hpp: never a release's value).
  bool fork_copies_residues = true;
  // idle_thread_get() calls init_idle() -> vtime_init_idle() at every CPU bring-up (until
  // f1a0a376ca0c made init_idle() __init: 5.14, 5.10.50, 5.12.17, 5.13.2; arch/patches.hpp).
  bool idle_init_on_online = false;
  // Where KVM serves an irq that arrives in guest mode relative to its vtime guest exit. false:
  // before it, so the irq runs in vtime guest state (x86 up to 5.8 and from 5.13, Book3E and
  // Book3S PR on powerpc); true: after it, so the irq ends the vtime guest stretch and the
  // vtime guest entry of the next run follows it (x86 5.9 .. 5.12, Book3S-64 HV with vtime on
  // the CPU). docs/models/gen-vtime.md lists what was read.
  bool guest_exit_before_irq = false;
  bool nohz(std::uint32_t cpu) const { return cpu >= 64 || ((nohz_full >> cpu) & 1); }
  bool operator==(const GenCfg&) const = default;
};

// struct vtime (4.13+; before: vtime_snap/vtime_seqcount in task_struct) plus ghost counters
// that only the spec reads (consumed: clock ns taken by get_vtime_delta; flushed: handed to an
// account_*() sink; other: steal/irq taken out of deltas).
template <class D>
struct VtimeTask {
  BOOST_HANA_DEFINE_STRUCT(VtimeTask, (u32<D>, seq), (u64<D>, starttime), (u64<D>, utime), (u64<D>, stime),
                           (u64<D>, gtime), (u64<D>, consumed), (u64<D>, flushed), (u64<D>, other));
};
// Per-CPU ghost: clock ns consumed by vtime on this CPU and ns lost in switch gaps.
template <class D>
struct VtimeCpu {
  BOOST_HANA_DEFINE_STRUCT(VtimeCpu, (u64<D>, consumed), (u64<D>, lost));
};
struct VtimeCtl {  // the concrete part of the vtime state
  VState state = VT_INACTIVE;
  bool pf_vcpu = false;   // tsk->flags & PF_VCPU
  bool is_idle = false;   // is_idle_task()
  bool nice_pos = false;  // task_nice() > 0
  std::int32_t cpu = -1;  // vtime->cpu (5.5+)
  int in_section = 0;     // write_seqcount_begin depth (ghost)
};
// What the CPU looks like at the hook (preempt count, iowait).
struct GenCtx {
  std::uint32_t irq_count = 0;  // irq_count() at the hook
  bool nr_iowait = false;
};
// Work counters of the model's execution (concrete only; the seed benchmark's cost).
struct GenCost {
  std::uint64_t clock_reads = 0, jiffies_loads = 0, seq_sections = 0, account_calls = 0, acct_integrals = 0,
                other_time_calls = 0, unbracketed_writes = 0;
};

template <class D>
VtimeTask<D> zero_vtime(D& d) {
  auto z = d.template lit<64>(0);
  return {d.template lit<32>(0), z, z, z, z, z, z, z};
}
template <class D>
VtimeCpu<D> zero_vtime_cpu(D& d) {
  auto z = d.template lit<64>(0);
  return {z, z};
}

// The per-step arguments: the clock the CPU reads now and the jiffies value it sees now.
template <class D>
struct GenNow {
  u64<D> now;      // sched_clock()
  u64<D> jiffies;  // READ_ONCE(jiffies)
};

template <class D>
struct GenStep {
  D& d;
  const TickCfg& tc;
  const GenCfg& g;
  CpuAcct<D>& c;
  VtimeCpu<D>& vc;
  GenCost& cost;

  TickCtx sink_ctx(const VtimeCtl& s, const GenCtx& x) const {
    TickCtx t;
    t.preempt_count = x.irq_count;
    t.pf_vcpu = s.pf_vcpu;
    t.nice_pos = s.nice_pos;
    t.nr_iowait = x.nr_iowait;
    t.is_idle = s.is_idle;
    return t;
  }
  void begin(VtimeTask<D>& v, VtimeCtl& s) {  // write_seqcount_begin
    v.seq = KACCT_MUTANT(401, d.template trunc<32>(d.add(d.template zext<64>(v.seq), d.template lit<64>(1))), v.seq);
    ++s.in_section;
    ++cost.seq_sections;
  }
  void end(VtimeTask<D>& v, VtimeCtl& s) {  // write_seqcount_end
    v.seq = d.template trunc<32>(d.add(d.template zext<64>(v.seq), d.template lit<64>(1)));
    --s.in_section;
  }

  // vtime_delta(): ns (or jiffies converted) since the snapshot, 0 if the clock is behind it.
  // 6.1 form (sched_clock() < starttime -> 0); 4.6 form (time_before(jiffies, snap) -> 0).
  u64<D> vtime_delta(const VtimeTask<D>& v, const GenNow<D>& n) {
    if (g.variant == GenVariant::Jiffy) {
      ++cost.jiffies_loads;
      auto dj = d.select(KACCT_MUTANT(402, d.ult(n.jiffies, v.starttime), d.lit_bool(false)), d.template lit<64>(0),
                         d.sub(n.jiffies, v.starttime));
      return d.mul(dj, d.template lit<64>(g.jiffy_ns));
    }
    ++cost.clock_reads;
    return d.select(KACCT_MUTANT(403, d.ult(n.now, v.starttime), d.lit_bool(false)), d.template lit<64>(0),
                    d.sub(n.now, v.starttime));
  }
  // get_vtime_delta(): consume the delta, minus other time (4.8+), and move the snapshot.
  u64<D> get_delta(VtimeTask<D>& v, VtimeCtl& s, const GenNow<D>& n) {
    auto delta = vtime_delta(v, n);
    auto other = d.template lit<64>(0);
    if (g.other_time && KACCT_MUTANT(442, true, s.state != VT_USER)) {
      ++cost.other_time_calls;
      other = account_other_time(d, tc, c, KACCT_MUTANT(404, delta, d.template lit<64>(~std::uint64_t{0})));
    }
    if (g.variant == GenVariant::Jiffy)
      v.starttime = KACCT_MUTANT(405, d.select(d.ult(n.jiffies, v.starttime), v.starttime, n.jiffies), n.jiffies);
    else
      v.starttime = KACCT_MUTANT(406, d.add(v.starttime, delta), n.now);
    if (s.in_section == 0) ++cost.unbracketed_writes;
    v.consumed = d.add(v.consumed, delta);
    vc.consumed = d.add(vc.consumed, delta);
    v.other = d.add(v.other, other);
    return KACCT_MUTANT(407, d.sub(delta, other), delta);
  }
  void sunk(VtimeTask<D>& v, const u64<D>& t) {
    ++cost.account_calls;
    ++cost.acct_integrals;  // acct_account_cputime() in every task sink
    v.flushed = d.add(v.flushed, t);
  }
  // account_user_time / account_system_time(irq_count()) / account_guest_time / account_idle_time,
  // fed from vtime.
  void sink_user(VtimeTask<D>& v, TaskAcct<D>& t, const VtimeCtl& s, const GenCtx& x, u64<D> a) {
    sunk(v, a);
    account_user_time(d, c, t, sink_ctx(s, x), a);
  }
  void sink_system(VtimeTask<D>& v, TaskAcct<D>& t, const VtimeCtl& s, const GenCtx& x, u64<D> a, bool pf_vcpu) {
    sunk(v, a);
    auto k = sink_ctx(s, x);
    k.pf_vcpu = pf_vcpu;
    account_system_time(d, c, t, k, x.irq_count, a);
  }
  void sink_guest(VtimeTask<D>& v, TaskAcct<D>& t, const VtimeCtl& s, const GenCtx& x, u64<D> a) {
    sunk(v, a);
    account_guest_time(d, c, t, sink_ctx(s, x), a);
  }
  void sink_idle(VtimeTask<D>& v, const GenCtx& x, u64<D> a) {
    ++cost.account_calls;
    v.flushed = d.add(v.flushed, a);
    TickCtx k;
    k.nr_iowait = KACCT_MUTANT(429, x.nr_iowait, false);
    account_idle_time(d, c, k, a);
  }
  // The residue step of the Accum variant: res += delta; flush it once it reaches TICK_NSEC.
  template <class Sink>
  void accumulate(VtimeTask<D>& v, u64<D> VtimeTask<D>::*res, TaskAcct<D>& t, u64<D> delta, Sink&& sink) {
    v.*res = d.add(v.*res, delta);
    when_each(
        d,
        KACCT_MUTANT(408, d.ule(d.template lit<64>(tc.tick_nsec), v.*res),
                     d.ult(d.template lit<64>(tc.tick_nsec), v.*res)),
        [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st) {
          auto amount = sv.*res;
          sink(sv, sc, st, amount);
          KACCT_MUTANT_DROP(409, sv.*res = d.template lit<64>(0))
        },
        v, c, t);
  }
  // vtime_account_user (<= 4.12) / the user part of vtime_user_exit (4.13+).
  void flush_user(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    auto delta = get_delta(v, s, n);
    if (g.variant != GenVariant::Accum)
      return KACCT_MUTANT(
          443, sink_user(v, t, s, x, delta),
          g.variant == GenVariant::Jiffy ? sink_system(v, t, s, x, delta, false) : sink_user(v, t, s, x, delta));
    accumulate(v, KACCT_MUTANT(410, &VtimeTask<D>::utime, &VtimeTask<D>::stime), t, delta,
               [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st, u64<D> a) {
                 GenStep<D> inner{d, tc, g, sc, vc, cost};
                 inner.sink_user(sv, st, s, x, a);
               });
  }
  // __vtime_account_system / vtime_account_system(tsk, vtime) (4.13+): system, or guest if the
  // task has PF_VCPU when the amount reaches account_system_time(tsk, irq_count()).
  void flush_system(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    const bool pf_vcpu = s.pf_vcpu;
    auto delta = get_delta(v, s, n);
    if (g.variant != GenVariant::Accum) return sink_system(v, t, s, x, delta, pf_vcpu);
    accumulate(v, &VtimeTask<D>::stime, t, delta, [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st, u64<D> a) {
      GenStep<D> inner{d, tc, g, sc, vc, cost};
      inner.sink_system(sv, st, s, x, a, KACCT_MUTANT(412, pf_vcpu, false));
    });
  }
  // vtime_account_guest (4.13+).
  void flush_guest(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    auto delta = get_delta(v, s, n);
    accumulate(v, KACCT_MUTANT(411, &VtimeTask<D>::gtime, &VtimeTask<D>::stime), t, delta,
               [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st, u64<D> a) {
                 GenStep<D> inner{d, tc, g, sc, vc, cost};
                 inner.sink_guest(sv, st, s, x, a);
               });
  }
  // __vtime_account_kernel (5.5+: by state) / the switch flush before 5.5, by PF_VCPU. Before
  // 68e7a4d66b0c (5.4) the switch flush tested current's (next's) PF_VCPU, not prev's: the same
  // here, since no task switches in guest mode (KVM sets and clears PF_VCPU with irqs or
  // preemption off; the trace layer requires guest_exit first), so both are clear.
  void flush_kernel(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    if (g.variant != GenVariant::Accum) return flush_system(v, t, s, x, n);
    const bool guest = g.states55 ? KACCT_MUTANT(413, s.state == VT_GUEST, s.state >= VT_USER) : s.pf_vcpu;
    if (guest)
      flush_guest(v, t, s, x, n);
    else
      flush_system(v, t, s, x, n);
  }
  // Jiffy variant: the expensive part runs only if jiffies moved (vtime_delta() != 0).
  template <class Fn>
  void if_moved(VtimeTask<D>& v, TaskAcct<D>& t, const GenNow<D>& n, Fn&& fn) {
    if (g.variant != GenVariant::Jiffy) return fn(v, c, t);
    when_each(d, d.bnot(d.eq(vtime_delta(v, n), d.template lit<64>(0))), fn, v, c, t);
  }
  GenStep with(CpuAcct<D>& sc) { return GenStep<D>{d, tc, g, sc, vc, cost}; }

  // vtime_user_exit(): kernel entry from user (syscall, exception, irq from user).
  void user_exit(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    begin(v, s);
    if (g.variant == GenVariant::Accum) {
      flush_user(v, t, s, x, n);
    } else {
      s.state = VT_SYS;  // whence := SYS before the flush (4.5/4.6 order)
      if_moved(v, t, n,
               [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st) { with(sc).flush_user(sv, st, s, x, n); });
    }
    s.state = VT_SYS;
    end(v, s);
  }
  // vtime_user_enter(): return to user.
  void user_enter(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    begin(v, s);
    if_moved(v, t, n,
             [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st) { with(sc).flush_system(sv, st, s, x, n); });
    s.state = KACCT_MUTANT(414, VT_USER, VT_SYS);
    end(v, s);
  }
  // vtime_guest_enter().
  void guest_enter(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    begin(v, s);
    if_moved(v, t, n,
             [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st) { with(sc).flush_system(sv, st, s, x, n); });
    KACCT_MUTANT_DROP(415, s.pf_vcpu = true)
    if (g.states55) s.state = VT_GUEST;
    end(v, s);
  }
  // vtime_guest_exit() (the flush is unconditional in every variant).
  void guest_exit(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    begin(v, s);
    if (g.variant == GenVariant::Accum)
      KACCT_MUTANT(416, flush_guest(v, t, s, x, n), flush_system(v, t, s, x, n));
    else
      flush_system(v, t, s, x, n);  // PF_VCPU still set: guest
    s.pf_vcpu = false;
    if (g.states55) s.state = VT_SYS;
    end(v, s);
  }
  // vtime_account_idle(): idle time goes straight to cpustat (no residue).
  void account_idle(VtimeTask<D>& v, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    sink_idle(v, x, get_delta(v, s, n));
  }
  // vtime_account_system(tsk) / vtime_account_kernel(tsk) as a standalone call: skipped without a
  // section if nothing elapsed (4.6+ jiffies; 4.13+ ns), else one section.
  void account_kernel(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    if (g.variant == GenVariant::Snapshot) {
      KACCT_MUTANT_DROP(417, begin(v, s))
      flush_kernel(v, t, s, x, n);
      end(v, s);
      return;
    }
    // The skip test reads the clock once more (vtime_delta), the flush reads it again.
    auto dl = vtime_delta(v, n);
    when_each(
        d, d.bnot(d.eq(dl, d.template lit<64>(0))),
        [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st, VtimeCpu<D>& svc) {
          GenStep<D> inner{d, tc, g, sc, svc, cost};
          inner.begin(sv, s);
          inner.flush_kernel(sv, st, s, x, n);
          inner.end(sv, s);
        },
        v, c, t, vc);
  }
  // The prev half of vtime_task_switch(): 5.5+ vtime_task_switch_generic (one section); before,
  // vtime_common_task_switch (idle flush outside any section, or vtime_account_system) then
  // arch_vtime_task_switch's INACTIVE section.
  void switch_prev(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    const bool idle = g.states55 ? s.state == VT_IDLE : s.is_idle;
    if (g.states55) {
      begin(v, s);
      if (idle)
        account_idle(v, s, x, n);
      else
        flush_kernel(v, t, s, x, n);
    } else {
      if (idle)
        account_idle(v, s, x, n);
      else
        account_kernel(v, t, s, x, n);
      begin(v, s);
    }
    s.state = VT_INACTIVE;
    KACCT_MUTANT_DROP(418, s.cpu = -1)
    end(v, s);
  }
  // The next half: state by task kind, a fresh snapshot (a second clock read, `n2`).
  void switch_next(VtimeTask<D>& v, VtimeCtl& s, const GenNow<D>& n2, std::int32_t cpu) {
    begin(v, s);
    if (g.states55)
      s.state = KACCT_MUTANT(419, s.is_idle ? VT_IDLE : s.pf_vcpu ? VT_GUEST : VT_SYS, s.is_idle ? VT_IDLE : VT_SYS);
    else
      s.state = VT_SYS;
    if (g.variant == GenVariant::Jiffy) {
      ++cost.jiffies_loads;
      v.starttime = KACCT_MUTANT(420, n2.jiffies, n2.now);
    } else {
      ++cost.clock_reads;
      v.starttime = n2.now;
    }
    s.cpu = cpu;
    end(v, s);
  }
  // Whole switch on one CPU: prev flushed at n, next snapshotted at n2; the gap is lost.
  void task_switch(VtimeTask<D>& pv, TaskAcct<D>& pt, VtimeCtl& ps, VtimeTask<D>& nv, VtimeCtl& ns, const GenCtx& x,
                   const GenNow<D>& n, const GenNow<D>& n2, std::int32_t cpu) {
    switch_prev(pv, pt, ps, x, n);
    // lost: the CPU's vtime clock jumps from prev's snapshot to next's (the gap between the
    // two clock reads; in jiffies, the jiffies that changed inside it).
    vc.lost = d.add(vc.lost, KACCT_MUTANT(421, d.sub(snap_ns(n2.now, n2.jiffies), snap_ns(pv.starttime, pv.starttime)),
                                          d.template lit<64>(0)));
    switch_next(nv, ns, n2, cpu);
  }
  // vtime_init_idle(idle, cpu) at CPU bring-up (before 5.14): one section; the idle task's state
  // as at boot, a fresh snapshot, vtime->cpu. Residues stay. What elapsed since the old snapshot
  // (the idle time before the CPU died, then the offline period) is consumed by no one: the
  // ghost counts it as lost, like a switch gap.
  void init_idle(VtimeTask<D>& v, VtimeCtl& s, const GenNow<D>& n, std::int32_t cpu) {
    begin(v, s);
    s.state = g.states55 ? VT_IDLE : VT_SYS;
    const auto old = snap_ns(v.starttime, v.starttime);
    if (g.variant == GenVariant::Jiffy) {
      ++cost.jiffies_loads;
      v.starttime = n.jiffies;
    } else {
      ++cost.clock_reads;
      v.starttime = KACCT_MUTANT(422, n.now, v.starttime);
    }
    vc.lost = d.add(vc.lost, d.sub(snap_ns(n.now, n.jiffies), old));
    s.cpu = cpu;
    end(v, s);
  }
  // A snapshot value in ns (Jiffy: jiffies * jiffy_ns).
  u64<D> snap_ns(const u64<D>& ns, const u64<D>& jif) const {
    return g.variant == GenVariant::Jiffy ? d.mul(jif, d.template lit<64>(g.jiffy_ns)) : ns;
  }
  // vtime_account_irq_enter (<= 4.7): outermost entry from idle flushes idle time, else system.
  void irq_enter_hook(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n,
                      bool in_interrupt) {
    if (KACCT_MUTANT(423, !in_interrupt && s.is_idle, s.is_idle)) {
      if (g.variant == GenVariant::Jiffy) {  // 4.6: only if jiffies moved
        when_each(
            d, d.bnot(d.eq(vtime_delta(v, n), d.template lit<64>(0))),
            [&](VtimeTask<D>& sv, CpuAcct<D>& sc, VtimeCpu<D>& svc) {
              GenStep<D> inner{d, tc, g, sc, svc, cost};
              inner.account_idle(sv, s, x, n);
            },
            v, c, vc);
        return;
      }
      return account_idle(v, s, x, n);
    }
    account_kernel(v, t, s, x, n);
  }
  // vtime_gen_account_irq_exit (<= 4.7): system flush (index from the irq count), in one section.
  void irq_exit_hook(VtimeTask<D>& v, TaskAcct<D>& t, VtimeCtl& s, const GenCtx& x, const GenNow<D>& n) {
    KACCT_MUTANT_DROP(424, begin(v, s))
    if_moved(v, t, n,
             [&](VtimeTask<D>& sv, CpuAcct<D>& sc, TaskAcct<D>& st) { with(sc).flush_system(sv, st, s, x, n); });
    end(v, s);
  }
};

// ---- readers ----

struct TaskTimes {
  std::uint64_t utime = 0, stime = 0;
  bool pending = false;
};
// task_cputime(t) (5.5+: by state; before: skip INACTIVE and idle tasks, USER or PF_VCPU -> utime,
// SYS -> stime). The pending residue of the *current* state only is added (concrete reader).
inline TaskTimes task_cputime(const GenCfg& g, const VtimeTask<Concrete>& v, const VtimeCtl& s,
                              const TaskAcct<Concrete>& t, std::uint64_t now, std::uint64_t jiffies) {
  TaskTimes out{t.utime, t.stime, false};
  const std::uint64_t delta = g.variant == GenVariant::Jiffy
                                  ? (jiffies < v.starttime ? 0 : (jiffies - v.starttime) * g.jiffy_ns)
                                  : (now < v.starttime ? 0 : now - v.starttime);
  const bool acc = g.variant == GenVariant::Accum;
  if (g.states55) {
    if (KACCT_MUTANT(425, s.state < VT_SYS, s.state <= VT_SYS)) return out;
    out.pending = true;
    if (s.state == VT_SYS)
      out.stime += KACCT_MUTANT(426, (acc ? v.stime : 0) + delta, delta);
    else
      out.utime += (acc ? v.utime : 0) + delta;
    return out;
  }
  if (s.state == VT_INACTIVE || s.is_idle) return out;
  out.pending = true;
  if (s.state == VT_USER || s.pf_vcpu)
    out.utime += (acc ? v.utime : 0) + delta;
  else if (s.state == VT_SYS)
    out.stime += (acc ? v.stime : 0) + delta;
  return out;
}
// kcpustat_cpu_fetch(cpu) (5.5+) for a nohz_full CPU whose rq->curr has vtime (v, s): the raw
// cpustat plus the pending time of the running task, by state; before 5.5 the raw cpustat.
// Returns false for -EAGAIN (vtime->cpu elsewhere, or INACTIVE): the kernel retries.
inline bool kcpustat_cpu_fetch(const GenCfg& g, const CpuAcct<Concrete>& c, const VtimeTask<Concrete>& v,
                               const VtimeCtl& s, std::int32_t cpu, std::uint64_t now,
                               std::array<std::uint64_t, NR_STATS>& out) {
  out = c.cpustat;
  if (!g.states55 || g.variant != GenVariant::Accum) return true;
  if (KACCT_MUTANT(430, s.cpu != cpu && s.cpu != -1, false)) return false;
  if (s.state == VT_INACTIVE) return false;
  if (s.state < VT_SYS) return true;
  const std::uint64_t delta = now < v.starttime ? 0 : now - v.starttime;
  if (s.state == VT_SYS)
    out[SYSTEM] += v.stime + delta;
  else if (s.state == VT_USER)
    out[s.nice_pos ? NICE : USER] += v.utime + delta;
  else {
    out[KACCT_MUTANT(427, s.nice_pos ? GUEST_NICE : GUEST, GUEST)] += v.gtime + delta;
    out[s.nice_pos ? NICE : USER] += KACCT_MUTANT(428, v.gtime + delta, delta);
  }
  return true;
}

}  // namespace kacct::model

#include "arch/cpus.hpp"
#include "arch/patches.hpp"
namespace kacct::model {
// The gen vtime settings of a release (arch/patches.hpp rows; the <= 4.7 irq hooks and the 4.8
// other-time subtraction are era facts of docs/models/gen-vtime.md, not rows) on a platform.
inline GenCfg gen_cfg(arch::KVersion ver, unsigned hz, arch::Platform platform = arch::Platform::X86) {
  GenCfg g;
  g.variant =
      !KACCT_MUTANT(431, arch::applied("ff9a9b4c4334", ver), arch::applied("ff9a9b4c4334", arch::next_mainline(ver)))
          ? GenVariant::Snapshot
      : !KACCT_MUTANT(432, arch::applied("2a42eb9594a1", ver), arch::applied("2a42eb9594a1", arch::next_mainline(ver)))
          ? GenVariant::Jiffy
          : GenVariant::Accum;
  g.irq_hooks = ver < KACCT_MUTANT(434, arch::v(4, 8), arch::v(4, 7));
  g.other_time = ver >= KACCT_MUTANT(435, arch::v(4, 8), arch::v(4, 7));
  g.states55 = arch::applied("8d495477d62e", KACCT_MUTANT(433, ver, arch::next_mainline(ver)));
  // f1a0a376ca0c (5.14; 5.10.50, 5.12.17, 5.13.2): idle_thread_get() no longer calls init_idle()
  g.idle_init_on_online = !arch::applied("f1a0a376ca0c", KACCT_MUTANT(436, ver, arch::next_mainline(ver)));
  // jiffies_to_cputime(1) = NSEC_PER_SEC / HZ before 4.11; jiffies_to_nsecs(1) after.
  g.jiffy_ns = ver < arch::v(4, 11) ? 1'000'000'000ull / hz : (1'000'000ull / hz) * 1000;
  // x86: 87fa7f3e98a1 (5.9) moved guest_exit_irqoff() to right after VM exit, before KVM's irq
  // window; 160457140187 (5.13; 5.10.41, 5.12.8) deferred the vtime part past it again.
  // powerpc Book3S-64 (KVM HV): kvmppc_run_core()/kvmhv_run_single() enable irqs only after
  // guest_timing_exit_irqoff() when vtime accounting is on (6.1.192, 6.12.117).
  g.guest_exit_before_irq = platform == arch::Platform::PPC_BOOK3S_64 ||
                            (platform == arch::Platform::X86 &&
                             arch::applied("87fa7f3e98a1", KACCT_MUTANT(438, ver, arch::next_mainline(ver))) &&
                             !arch::applied("160457140187", KACCT_MUTANT(439, ver, arch::next_mainline(ver))));
  return g;
}
}  // namespace kacct::model
