// powerpc native virtual CPU time accounting (CONFIG_VIRT_CPU_ACCOUNTING_NATIVE) with the
// optional scaled cputime split (CONFIG_ARCH_HAS_SCALED_CPUTIME, SPURR/PURR): the per-context
// accounting data (struct cpu_accounting_data) and every step the kernel takes on it, written
// once over the value domain D and the arch's word width W (`unsigned long`: 32 on PPC32 with
// wrap-around, 64 on PPC64). Epoch differences are config values (NativeCfg), never copies.
// Kernel sources read: arch/powerpc/kernel/time.c and include/asm/{cputime,accounting}.h in
// 4.9 (williamfdevine/PrettyLinux), 6.1.192 and 6.12.117; kernel/sched/cputime.c vtime_*.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "model/tick/tick.hpp"
#include "model/mutation.hpp"

namespace kacct::model::native {

// Where read_spurr() gets its value (arch/powerpc/kernel/time.c read_spurr()).
enum class ScaledSource : std::uint8_t { Timebase, Purr, Spurr };

struct NativeCfg {
  unsigned word_bits = 64;  // sizeof(unsigned long) * 8
  bool per_task = false;    // PPC32: accounting in thread_info, handed over at switch
  bool scaled = true;       // ARCH_HAS_SCALED_CPUTIME compiled in (before 4.10: always)
  ScaledSource source = ScaledSource::Timebase;
  bool source_folded = true;     // cpu_has_feature() is compile-time false (not in CPU_FTRS_POSSIBLE)
  bool flush_epoch = true;       // 4.11+ (a19ff1a2cc92): accumulate in TB, convert at flush
  bool copy_startspurr = false;  // PPC32 4.11..4.19: the switch also hands over startspurr
  bool zero_on_switch = false;   // PPC32 4.7..4.10: arch_vtime_task_switch zeroes the incoming user/system time
  bool splpar = false;           // shared-processor LPAR: steal from the dispatch trace log
  bool starttime_init = false;   // vtime_reset() at boot and CPU bring-up (6.12.101+), else 0
  // kacct-local proposed fixes (arch/patches.hpp, never a release's value):
  bool idle_steal_out = false;      // kacct-ppc-idle-steal: idle gets s - steal, steal_time the steal
  bool split_at_user_exit = false;  // kacct-ppc-user-exit-split: the return to user splits its interval
  std::uint64_t tb_hz = 512'000'000;
  std::uint64_t tb_scale = 0;                  // tb_to_ns_scale (time_init)
  unsigned tb_shift = 0;                       // tb_to_ns_shift
  std::uint32_t spurr_num = 1, spurr_den = 1;  // synthetic SPURR/PURR rate vs TB when the trace has none
  bool operator==(const NativeCfg&) const = default;
};

// time_init() (all versions): scale = 1e9 * 2^64 / tb_hz as a 64.64 fixed-point number
// (div128_by_32), shifted right until its integer part is 0; shift counts the steps.
struct TbScale {
  std::uint64_t scale;
  unsigned shift;
};
constexpr TbScale tb_scale_of(std::uint64_t tb_hz) {
  // div128_by_32 divides by a 32-bit divisor: tb_ticks_per_sec must fit (all listed CPUs do).
  unsigned __int128 num = (unsigned __int128)1'000'000'000u << 64;
  unsigned __int128 r = num / std::uint32_t(tb_hz);
  std::uint64_t hi = std::uint64_t(r >> 64), lo = std::uint64_t(r);
  unsigned shift = 0;
  for (; hi != 0; ++shift) {
    lo = (lo >> 1) | (hi << 63);
    hi >>= 1;
  }
  return {lo, shift};
}

// Operation counts of the kernel code on the accounting path (the seed benchmark's cost model):
// counted by the concrete execution of the steps below (symbolic runs ignore them).
struct Cost {
  std::uint64_t tb_reads = 0, spurr_reads = 0, purr_reads = 0;
  std::uint64_t muls = 0, divs = 0, conversions = 0;  // conversions: tb_to_ns (mulhdu + shift)
  std::uint64_t loads = 0, stores = 0;                // of accounting fields (cpu_accounting_data, task)
  std::uint64_t branches = 0;                         // data-dependent tests on the path
  std::uint64_t sink_calls = 0;                       // account_*_time() calls into generic code
  std::uint64_t hooks = 0;                            // accounting entry points run
  // Check mode: every scaled split's (dS, s, u, s_sc, u_sc), for the spec (not an operation count).
  std::vector<std::array<std::uint64_t, 5>>* split_log = nullptr;
  Cost& operator+=(const Cost& o) {
    tb_reads += o.tb_reads;
    spurr_reads += o.spurr_reads;
    purr_reads += o.purr_reads;
    muls += o.muls;
    divs += o.divs;
    conversions += o.conversions;
    loads += o.loads;
    stores += o.stores;
    branches += o.branches;
    sink_calls += o.sink_calls;
    hooks += o.hooks;
    return *this;
  }
};

// struct cpu_accounting_data (arch/powerpc/include/asm/accounting.h). 4.11+ names; before
// 4.11 utime/stime/utime_scaled are user_time/system_time/user_time_scaled and steal_time is
// paca->stolen_time. All fields are `unsigned long` (W bits), in TB ticks (scaled: SPURR ticks).
template <class D, unsigned W>
struct Acct {
  using UL = ulong_t<D, W>;
  BOOST_HANA_DEFINE_STRUCT(Acct, (UL, utime), (UL, stime), (UL, utime_scaled), (UL, stime_scaled), (UL, gtime),
                           (UL, hardirq_time), (UL, softirq_time), (UL, steal_time), (UL, idle_time), (UL, starttime),
                           (UL, starttime_user), (UL, startspurr), (UL, utime_sspurr));
};
template <class D, unsigned W>
Acct<D, W> zero_acct(D& d) {
  auto z = d.template lit<W>(0);
  return {z, z, z, z, z, z, z, z, z, z, z, z, z};
}

// Task-side scaled times (task_struct utimescaled/stimescaled, u64 ns; TB ticks before 4.11).
template <class D>
struct Scaled {
  BOOST_HANA_DEFINE_STRUCT(Scaled, (u64<D>, utimescaled), (u64<D>, stimescaled));
};

// Which accumulator a kernel-side interval belongs to (vtime_account_irq()'s classification,
// 5.11+; account_system_time()'s preempt-count test before: the same outcome).
enum class Kctx : std::uint8_t { Kernel, Guest, Hardirq, Softirq, Idle };

// tb_to_ns() (cputime_to_nsecs, 4.11+): mulhdu(ticks, scale) << shift.
template <class D>
u64<D> tb_to_ns(D& d, const NativeCfg& cfg, const u64<D>& ticks, Cost& k) {
  ++k.conversions;
  ++k.muls;
  auto wide = d.mul(d.template zext<128>(ticks), d.template zext<128>(d.template lit<64>(cfg.tb_scale)));
  auto hi = d.template trunc<64>(
      d.lshr(wide, KACCT_MUTANT(302, d.template lit<128>(64), d.template lit<128>(63)), "tb_to_ns.mulhdu"));
  return d.shl(hi, KACCT_MUTANT(301, d.template lit<64>(cfg.tb_shift), d.template lit<64>(0)), "tb_to_ns.shift");
}

// read_spurr(tb) (cf9efce0ce31, 2.6.37 .. 6.12): SPURR, else PURR, else the TB value passed in.
template <class D, unsigned W>
ulong_t<D, W> read_spurr(const NativeCfg& cfg, const ulong_t<D, W>& tb, const ulong_t<D, W>& purr,
                         const ulong_t<D, W>& spurr, Cost& k) {
  if (!cfg.source_folded) k.branches += 2;  // the patched feature tests
  switch (cfg.source) {
    case ScaledSource::Spurr: ++k.spurr_reads; return KACCT_MUTANT(333, spurr, purr);
    case ScaledSource::Purr: ++k.purr_reads; return purr;
    case ScaledSource::Timebase: break;
  }
  return tb;
}

// The scaled split: vtime_delta_scaled() (4.20+, abcff86df2d2's sibling) and the same
// arithmetic inline in vtime_delta() before: the SPURR delta since the last sample is shared
// between the system interval `s` and the user time since the last sample in the TB ratio.
// Returns stime_scaled; adds the user share to utime_scaled. Nothing when not compiled in.
template <class D, unsigned W>
ulong_t<D, W> delta_scaled(D& d, const NativeCfg& cfg, Acct<D, W>& a, const ulong_t<D, W>& spurr_now,
                           const ulong_t<D, W>& s, Cost& k) {
  using UL = ulong_t<D, W>;
  if (!cfg.scaled) return d.template lit<W>(0);
  k.loads += 3;
  k.stores += 2;
  UL ds = d.sub(spurr_now, a.startspurr);
  KACCT_MUTANT_DROP(307, a.startspurr = spurr_now)
  UL u = d.sub(a.utime, a.utime_sspurr);
  KACCT_MUTANT_DROP(306, a.utime_sspurr = a.utime)
  struct Split {
    BOOST_HANA_DEFINE_STRUCT(Split, (UL, s_sc), (UL, u_sc));
  } sp{s, u};
  ++k.branches;
  when(d, KACCT_MUTANT(303, d.bnot(d.eq(ds, d.add(s, u))), d.lit_bool(false)), sp, [&](Split& x) {
    ++k.branches;
    branch(
        d, d.bnot(d.eq(u, d.template lit<W>(0))), x,
        [&](Split& y) {
          ++k.muls;
          ++k.divs;
          y.s_sc = d.udiv(KACCT_MUTANT(304, d.mul(ds, s), d.mul(ds, u)), d.add(s, u), "vtime_delta_scaled.div");
          y.u_sc = KACCT_MUTANT(305, d.sub(ds, y.s_sc), u);
        },
        [&](Split& y) {
          y.s_sc = ds;  // u == 0: everything to system; the user share stays u (== 0)
        });
  });
  if constexpr (!D::is_symbolic)
    if (k.split_log) k.split_log->push_back({ds, s, u, sp.s_sc, sp.u_sc});
  ++k.loads;
  ++k.stores;
  a.utime_scaled = d.add(a.utime_scaled, sp.u_sc);
  return sp.s_sc;
}

// What one vtime_delta() measured.
template <class D, unsigned W>
struct Delta {
  ulong_t<D, W> s, s_sc, steal;
};

// vtime_delta() (4.11+ form): the TB interval since starttime, and its scaled share. Before
// 4.11 (immediate epoch) the interval is first added to system_time, the DTL steal of the
// interval is subtracted from it (calculate_stolen_time, unclamped) and the whole system_time
// since the previous vtime_delta is the interval (then zeroed).
template <class D, unsigned W>
Delta<D, W> vtime_delta(D& d, const NativeCfg& cfg, Acct<D, W>& a, const ulong_t<D, W>& now, const ulong_t<D, W>& spurr,
                        const ulong_t<D, W>& steal, Cost& k) {
  ++k.tb_reads;
  k.loads += 1;
  k.stores += 1;
  if (cfg.flush_epoch) {
    auto s = d.sub(now, a.starttime);
    KACCT_MUTANT_DROP(308, a.starttime = now)
    auto sc = delta_scaled(d, cfg, a, spurr, s, k);
    return {s, sc, steal};
  }
  a.stime = d.add(a.stime, d.sub(now, a.starttime));
  a.starttime = now;
  auto st = steal;
  if (cfg.splpar) {  // calculate_stolen_time(): scanned steal off system_time (no clamp), plus paca->stolen_time
    KACCT_MUTANT_DROP(309, a.stime = d.sub(a.stime, steal))
    st = KACCT_MUTANT(310, d.add(steal, a.steal_time), steal);
    a.steal_time = d.template lit<W>(0);
    k.loads += 2;
    k.stores += 2;
  }
  k.loads += 1;
  k.stores += 2;
  auto s = a.stime;
  a.stime = d.template lit<W>(0);
  auto sc = delta_scaled(d, cfg, a, spurr, s, k);
  return {s, sc, st};
}

// The kernel-side accounting hooks at a boundary (4.11+): vtime_account_kernel(),
// vtime_account_hardirq/softirq() (vtime_account_irq_field, 5.11+; vtime_account_system's
// preempt-count dispatch before), vtime_account_idle(). `steal` is the DTL steal scanned up to
// now (0 unless SPLPAR). In the immediate epoch (<= 4.10) the same classification lands in the
// same fields, and the caller hands them to the generic code at once (flush_immediate).
template <class D, unsigned W>
void account_kernel_side(D& d, const NativeCfg& cfg, Acct<D, W>& a, Kctx where, const ulong_t<D, W>& now,
                         const ulong_t<D, W>& spurr, const ulong_t<D, W>& steal, Cost& k) {
  ++k.hooks;
  auto dl = vtime_delta(d, cfg, a, now, spurr, steal, k);
  auto add = [&](ulong_t<D, W>& f, const ulong_t<D, W>& v) {
    ++k.loads;
    ++k.stores;
    f = d.add(f, v);
  };
  if (where == Kctx::Idle) {  // vtime_account_idle(): idle += s + steal; the scaled share is dropped
    if (cfg.idle_steal_out && cfg.flush_epoch && cfg.splpar) {  // proposed fix: as vtime_delta_kernel()
      add(a.idle_time, d.sub(dl.s, d.min(dl.s, steal)));
      add(a.steal_time, steal);
      return;
    }
    add(a.idle_time, KACCT_MUTANT(311, d.add(dl.s, dl.steal), dl.s));
    return;
  }
  auto s = dl.s;
  if (cfg.flush_epoch) {  // vtime_delta_kernel(): steal clamped off s, added in full
    if (cfg.splpar) {
      s = d.sub(s, KACCT_MUTANT(312, d.min(s, steal), steal));
      KACCT_MUTANT_DROP(313, add(a.steal_time, steal))
    }
  } else if (cfg.splpar) {
    add(a.steal_time, dl.steal);  // account_steal_time(stolen) right away (immediate epoch)
  }
  k.branches += 1;
  switch (where) {
    case Kctx::Guest:
      add(a.gtime, s);
      if (cfg.scaled) add(KACCT_MUTANT(315, a.utime_scaled, a.stime_scaled), dl.s_sc);
      break;
    case Kctx::Hardirq:
      add(KACCT_MUTANT(314, a.hardirq_time, a.softirq_time), s);
      if (cfg.scaled) add(a.stime_scaled, dl.s_sc);
      break;
    case Kctx::Softirq:
      add(KACCT_MUTANT(316, a.softirq_time, a.stime), s);
      if (cfg.scaled) add(a.stime_scaled, dl.s_sc);
      break;
    case Kctx::Kernel:
    case Kctx::Idle:
      add(a.stime, s);
      if (cfg.scaled) add(a.stime_scaled, dl.s_sc);
      break;
  }
}

// account_cpu_user_entry() (5.7+ C; ACCOUNT_CPU_USER_ENTRY asm before, same arithmetic):
// the user interval since starttime_user joins utime; starttime restarts. With SPLPAR,
// account_stolen_time() then takes the DTL steal logged up to starttime_user (`sst`) out of
// stime and the rest up to now (`ust`) out of utime, unclamped.
template <class D, unsigned W>
void user_entry(D& d, const NativeCfg& cfg, Acct<D, W>& a, const ulong_t<D, W>& now, const ulong_t<D, W>& sst,
                const ulong_t<D, W>& ust, Cost& k) {
  ++k.hooks;
  ++k.tb_reads;
  k.loads += 2;
  k.stores += 2;
  a.utime = d.add(a.utime, KACCT_MUTANT(317, d.sub(now, a.starttime_user), d.sub(now, a.starttime)));
  a.starttime = now;
  if (cfg.splpar) {
    k.loads += 3;
    k.stores += 3;
    a.stime = d.sub(a.stime, sst);
    a.utime = KACCT_MUTANT(318, d.sub(a.utime, ust), a.utime);
    a.steal_time = d.add(a.steal_time, KACCT_MUTANT(319, d.add(sst, ust), ust));
  }
}
// account_cpu_user_exit(): the kernel interval since starttime joins stime.
template <class D, unsigned W>
void user_exit(D& d, Acct<D, W>& a, const ulong_t<D, W>& now, Cost& k) {
  ++k.hooks;
  ++k.tb_reads;
  k.loads += 2;
  k.stores += 2;
  a.stime = d.add(a.stime, d.sub(now, a.starttime));
  KACCT_MUTANT_DROP(320, a.starttime_user = now)
}

// Proposed fix kacct-ppc-user-exit-split: account_cpu_user_exit() also reads the SPURR and
// sends its kernel interval through vtime_delta_scaled(), so the next split's SPURR delta spans
// only time the split is told about (with SPURR == TB, scaled == unscaled exactly).
template <class D, unsigned W>
void user_exit_split(D& d, const NativeCfg& cfg, Acct<D, W>& a, const ulong_t<D, W>& now, const ulong_t<D, W>& spurr,
                     Cost& k) {
  const auto s = d.sub(now, a.starttime);
  user_exit(d, a, now, k);
  if (!cfg.scaled) return;
  ++k.loads;
  ++k.stores;
  a.stime_scaled = d.add(a.stime_scaled, delta_scaled(d, cfg, a, spurr, s, k));
}

// The generic sinks vtime_flush() calls, with the task's context (nice, iowait).
struct FlushCtx {
  bool nice_pos = false;
  bool nr_iowait = false;
};

// vtime_flush() (4.11+, a19ff1a2cc92; 4.20+ with vtime_flush_scaled): every nonzero bucket is
// converted with tb_to_ns and handed to the generic accounting; then the buckets are zeroed.
template <class D, unsigned W>
void vtime_flush(D& d, const NativeCfg& cfg, Acct<D, W>& a, CpuAcct<D>& c, TaskAcct<D>& p, Scaled<D>& sp,
                 const FlushCtx& fx, Cost& k) {
  ++k.hooks;
  TickCtx x;
  x.nice_pos = fx.nice_pos;
  x.nr_iowait = fx.nr_iowait;
  auto z = d.template lit<W>(0);
  // Each bucket: the kernel tests it for zero and converts only a nonzero one; converting 0
  // gives 0, so the symbolic domain may convert unconditionally.
  auto conv = [&](const ulong_t<D, W>& v) {
    ++k.loads;
    ++k.branches;
    if constexpr (!D::is_symbolic) {
      if (v == 0) return d.template lit<64>(0);
      ++k.sink_calls;
    }
    return tb_to_ns(d, cfg, d.template zext<64>(v), k);
  };
  account_user_time(d, c, p, x, conv(a.utime));
  KACCT_MUTANT(321, account_guest_time(d, c, p, x, conv(a.gtime)), account_user_time(d, c, p, x, conv(a.gtime)));
  if (cfg.splpar) {  // account_steal_time(): CPU only
    c.cpustat[STEAL] = d.add(c.cpustat[STEAL], conv(a.steal_time));
    KACCT_MUTANT_DROP(322, a.steal_time = z)
    ++k.stores;
  }
  account_idle_time(d, c, x, conv(a.idle_time));
  account_system_index_time(d, c, p, conv(a.stime), SYSTEM);
  account_system_index_time(d, c, p, conv(a.hardirq_time), KACCT_MUTANT(323, IRQ, SOFTIRQ));
  account_system_index_time(d, c, p, conv(a.softirq_time), SOFTIRQ);
  if (cfg.scaled) {  // vtime_flush_scaled()
    sp.utimescaled = d.add(sp.utimescaled, conv(a.utime_scaled));
    sp.stimescaled = d.add(sp.stimescaled, KACCT_MUTANT(324, conv(a.stime_scaled), conv(a.utime_scaled)));
    KACCT_MUTANT_DROP(325, a.utime_scaled = a.utime_sspurr = a.stime_scaled = z)
    k.stores += 3;
  }
  a.utime = a.gtime = a.idle_time = a.stime = a.hardirq_time = a.softirq_time = z;
  k.stores += 6;
}

// The pre-4.11 hand-off (immediate epoch): account_system_time()/account_idle_time()/
// account_steal_time() get TB ticks (cputime_t) right after each kernel-side delta, and
// vtime_account_user() hands over user_time at tick and switch. The sinks here keep TB ticks;
// the caller converts totals to ns at read time (4.9 converted cputime at read time too).
template <class D, unsigned W>
struct TbSinks {
  BOOST_HANA_DEFINE_STRUCT(TbSinks, (std::array<u64<D>, NR_STATS>, cpustat), (u64<D>, utime), (u64<D>, stime),
                           (u64<D>, gtime));
};
template <class D, unsigned W>
void flush_immediate(D& d, const NativeCfg& cfg, Acct<D, W>& a, TbSinks<D, W>& cpu, TbSinks<D, W>& task, Scaled<D>& sp,
                     const FlushCtx& fx, bool user_too, Cost& k) {
  auto z = d.template lit<W>(0);
  auto take = [&](ulong_t<D, W>& f) {
    ++k.loads;
    ++k.stores;
    auto v = d.template zext<64>(f);
    f = z;
    return v;
  };
  auto put = [&](unsigned idx, const u64<D>& v, u64<D>* t) {
    if constexpr (!D::is_symbolic)
      if (v != 0) ++k.sink_calls;
    cpu.cpustat[idx] = d.add(cpu.cpustat[idx], v);
    if (t) *t = d.add(*t, v);
  };
  const unsigned ui = fx.nice_pos ? NICE : USER;
  auto g = take(a.gtime);
  put(ui, g, &task.utime);
  put(KACCT_MUTANT(326, fx.nice_pos ? GUEST_NICE : GUEST, GUEST), g, &task.gtime);
  put(SYSTEM, take(a.stime), &task.stime);
  put(IRQ, take(a.hardirq_time), KACCT_MUTANT(327, &task.stime, nullptr));
  put(SOFTIRQ, take(a.softirq_time), &task.stime);
  put(fx.nr_iowait ? IOWAIT : IDLE, take(a.idle_time), nullptr);
  put(STEAL, take(a.steal_time), KACCT_MUTANT(328, nullptr, &task.stime));
  if (cfg.scaled) { sp.stimescaled = d.add(sp.stimescaled, take(a.stime_scaled)); }
  if (user_too) {  // vtime_account_user(): user_time, user_time_scaled, utime_sspurr zeroed
    put(ui, take(a.utime), &task.utime);
    if (cfg.scaled) {
      sp.utimescaled = d.add(sp.utimescaled, take(a.utime_scaled));
      a.utime_sspurr = z;
      ++k.stores;
    }
  }
}

// vtime_reset() (6.12.101+: at boot, and from secondary_cpu_time_init() at every CPU bring-up):
// the kernel-side clock jumps to now (startspurr to read_spurr(now) if scaled); the TB since
// starttime goes to no bucket. Returns those skipped TB ticks (the caller's ghost).
template <class D, unsigned W>
ulong_t<D, W> vtime_reset(D& d, const NativeCfg& cfg, Acct<D, W>& a, const ulong_t<D, W>& now,
                          const ulong_t<D, W>& spurr, Cost& k) {
  ++k.hooks;
  ++k.tb_reads;
  ++k.stores;
  auto skipped = d.sub(now, a.starttime);
  a.starttime = now;
  if (cfg.scaled) {
    ++k.stores;
    KACCT_MUTANT_DROP(332, a.startspurr = spurr)
  }
  return skipped;
}

// PPC32 hand-over at context switch (arch_vtime_task_switch <= 5.x, vtime_task_switch 6.10+):
// the incoming task's clock continues from the outgoing one's starttime (and 4.11..4.19 its
// startspurr); 4.7..4.10 also zero the incoming task's pending user/system time.
template <class D, unsigned W>
void hand_over(D& d, const NativeCfg& cfg, const Acct<D, W>& prev, Acct<D, W>& next, Cost& k) {
  ++k.loads;
  ++k.stores;
  KACCT_MUTANT_DROP(329, next.starttime = prev.starttime)
  if (KACCT_MUTANT(330, cfg.copy_startspurr, false)) {
    ++k.loads;
    ++k.stores;
    next.startspurr = prev.startspurr;
  }
  if (cfg.zero_on_switch) {
    k.stores += 2;
    KACCT_MUTANT_DROP(331, next.stime = next.utime = d.template lit<W>(0))
  }
}

}  // namespace kacct::model::native
