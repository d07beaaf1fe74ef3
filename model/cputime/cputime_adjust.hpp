// cputime_adjust() and scale_stime(), kernel/sched/cputime.c, in every era with a semantic
// change. One template over the value domain D serves the concrete run and the Z3 proofs.
#pragma once
#include <string_view>

#include "arch/patches.hpp"
#include "model/domain/reflect.hpp"
#include "model/mutation.hpp"

namespace kacct::model {  // shared core, not model::cputime: every backend uses these types

// Which cputime_adjust() body a release builds (selected from arch/patches.hpp).
enum class AdjustEra : std::uint8_t {
  PerFieldMax,   // <= 4.2: prev fields advanced independently with max()
  GotoUpdate,    // 9d7fb0427648 (4.3-4.7): sum == rtime, but the shortcuts skip the clamps
  ClampAlways,   // 173be9a14f7b (4.8+): every path goes through the clamps
  ClampToRtime,  // 77baa5bafcbe (6.11+): stime clamped to rtime after the division
};
// How stime * rtime / total is computed.
enum class ScaleDiv : std::uint8_t {
  Loop32,       // scale_stime(): the 32-bit balancing loop (3.10 .. 5.8)
  Exact128,     // mul_u64_u64_div_u64() exact: x86-64 mulq/divq (5.9+), generic C from 6.12
  Generic2020,  // mul_u64_u64_div_u64() generic C (lib/math/div64.c, 5.9 .. 6.11): approximate
  Abstract,     // proofs only: a fresh value constrained by facts of exact division
};

struct AdjustCfg {
  AdjustEra era = AdjustEra::ClampToRtime;
  ScaleDiv div = ScaleDiv::Exact128;
  // Exact128 in the generic C (b29a62d87cc0 without an arch override): a quotient that does
  // not fit in 64 bits returns U64_MAX ("n_hi >= c", lib/math/div64.c, read in 6.12.117). The
  // quotient_fits obligation is still recorded. x86-64's divq would fault instead (false).
  bool overflow_max = false;
  bool operator==(const AdjustCfg&) const = default;
};

inline AdjustCfg adjust_cfg(arch::KVersion ver, bool exact_mul_div_arch) {
  AdjustCfg c;
  if (arch::applied("77baa5bafcbe", KACCT_MUTANT(801, ver, arch::next_mainline(ver))))
    c.era = AdjustEra::ClampToRtime;
  else if (arch::applied("173be9a14f7b", KACCT_MUTANT(802, ver, arch::next_mainline(ver))))
    c.era = AdjustEra::ClampAlways;
  else if (arch::applied("9d7fb0427648", KACCT_MUTANT(803, ver, arch::next_mainline(ver))))
    c.era = AdjustEra::GotoUpdate;
  else
    c.era = AdjustEra::PerFieldMax;
  if (!arch::applied("3dc167ba5729", KACCT_MUTANT(804, ver, arch::next_mainline(ver))))
    c.div = ScaleDiv::Loop32;
  else if (KACCT_MUTANT(729, exact_mul_div_arch || arch::applied("b29a62d87cc0", ver),
                        arch::applied("b29a62d87cc0", ver) && !exact_mul_div_arch))
    c.div = ScaleDiv::Exact128;
  else
    c.div = ScaleDiv::Generic2020;
  c.overflow_max = KACCT_MUTANT(712, c.div == ScaleDiv::Exact128 && !exact_mul_div_arch, false);
  return c;
}

template <class D>
struct PrevCputime {  // struct prev_cputime (lock modelled by the caller)
  BOOST_HANA_DEFINE_STRUCT(PrevCputime, (u64<D>, utime), (u64<D>, stime));
};
template <class D>
struct TaskCputime {  // the (utime, stime, sum_exec_runtime) read of a task or group
  BOOST_HANA_DEFINE_STRUCT(TaskCputime, (u64<D>, utime), (u64<D>, stime), (u64<D>, sum_exec_runtime));
};

// floor(log2(x)) as the kernel's ilog2() on a non-constant: fls64(x) - 1, so -1 for 0.
// Written as a balanced search over the domain so that it has no loop.
// A domain with a native ilog2 (the concrete one: bsr) runs that instead.
template <class D>
u64<D> ilog2_u64(D& d, u64<D> x) {
  const bool strict = KACCT_MUTANT(726, false, true);  // the mutant's "<" acts in every domain
  if constexpr (requires { D::ilog2_u64(x); })
    if (!strict) return D::ilog2_u64(x);
  u64<D> r = d.template lit<64>(0);
  for (unsigned s : {32u, 16u, 8u, 4u, 2u, 1u}) {
    auto big = strict ? d.ult(d.template lit<64>(std::uint64_t{1} << s), x)
                      : d.ule(d.template lit<64>(std::uint64_t{1} << s), x);
    x = d.select(big, d.lshr(x, d.template lit<64>(s), "ilog2.shift"), x);
    r = d.select(big, d.add(r, d.template lit<64>(s)), r);
  }
  // x is now 0 or 1: ilog2(0) = -1 (all ones as u64), ilog2(1) = r
  return d.select(d.eq(x, d.template lit<64>(0)), d.template lit<64>(~std::uint64_t{0}), r);
}

// scale_stime(), 3.10 .. 5.8 (from 55eaa7c1f511): shrink the operands until total fits in
// 32 bits and stime * rtime is a 32x32 product, then one 64/32 division.
template <class D>
u64<D> scale_stime_loop32(D& d, u64<D> stime, u64<D> rtime, u64<D> total) {
  auto lit = [&](std::uint64_t x) { return d.template lit<64>(x); };
  struct S {
    BOOST_HANA_DEFINE_STRUCT(S, (u64<D>, stime), (u64<D>, rtime), (u64<D>, total), (boolean<D>, done));
  } s{stime, rtime, total, d.lit_bool(false)};
  // Each round halves total or rtime, or moves a bit from rtime to stime; 192 rounds bound it.
  for (int round = 0; round < 192; ++round) {
    when(d, d.bnot(s.done), s, [&](S& st) {
      auto swap = KACCT_MUTANT(716, d.ult(st.rtime, st.stime), d.ult(st.stime, st.rtime));
      auto r = d.select(swap, st.stime, st.rtime);
      st.stime = d.select(swap, st.rtime, st.stime);
      st.rtime = r;
      auto total_wide = d.ne(d.lshr(st.total, KACCT_MUTANT(717, lit(32), lit(33)), "scale_stime.shift"), lit(0));
      auto rtime_wide = d.ne(d.lshr(st.rtime, lit(32), "scale_stime.shift"), lit(0));
      auto stime_big = d.ne(d.lshr(st.stime, KACCT_MUTANT(718, lit(31), lit(32)), "scale_stime.shift"), lit(0));
      auto drop = KACCT_MUTANT(719, d.bor(total_wide, d.band(rtime_wide, stime_big)), total_wide);
      auto balance = d.band(d.bnot(total_wide), d.band(rtime_wide, d.bnot(stime_big)));
      st.done = d.band(d.bnot(total_wide), d.bnot(rtime_wide));
      st.rtime = d.select(drop, d.lshr(st.rtime, lit(1), "scale_stime.shift"),
                          d.select(balance, d.lshr(st.rtime, lit(1), "scale_stime.shift"), st.rtime));
      st.total = d.select(drop, d.lshr(st.total, lit(1), "scale_stime.shift"), st.total);
      st.stime = d.select(balance, KACCT_MUTANT(721, d.shl(st.stime, lit(1), "scale_stime.shift"), st.stime), st.stime);
    });
  }
  d.require(s.done, "scale_stime.terminates");
  auto lo32 = [&](u64<D> x) { return d.template zext<64>(d.template trunc<32>(x)); };
  // div_u64(): a 64-bit dividend by a 32-bit divisor
  return d.udiv(KACCT_MUTANT(720, d.mul(lo32(s.stime), lo32(s.rtime)), lo32(d.mul(lo32(s.stime), lo32(s.rtime)))),
                lo32(s.total), "scale_stime.div_nonzero");
}

// mul_u64_u64_div_u64(), generic C version of lib/math/div64.c as added by 3dc167ba5729 (5.9,
// until b29a62d87cc0 in 6.12): exact when ilog2(a) + ilog2(b) <= 62, otherwise splits b by c and
// drops low bits of b and c alike, which can overshoot the exact quotient.
template <class D>
u64<D> mul_u64_u64_div_u64_generic(D& d, u64<D> a, u64<D> b, u64<D> c) {
  auto lit = [&](std::uint64_t x) { return d.template lit<64>(x); };
  // ilog2 values are small signed ints; +1 offsets keep them unsigned (ilog2(0) = -1 -> 0).
  auto la = d.add(ilog2_u64(d, a), lit(1)), lb = d.add(ilog2_u64(d, b), lit(1));
  struct S {
    BOOST_HANA_DEFINE_STRUCT(S, (u64<D>, a), (u64<D>, b), (u64<D>, c), (u64<D>, res), (boolean<D>, early));
  } s{a, b, c, lit(0), d.lit_bool(false)};
  when(d, KACCT_MUTANT(722, d.ult(lit(64), d.add(la, lb)), d.ult(lit(65), d.add(la, lb))), s,
       [&](S& st) {  // ilog2(a) + ilog2(b) > 62
         auto div = d.udiv(st.b, st.c, "mul_u64_u64_div_u64.div_nonzero");
         auto rem = d.urem(st.b, st.c, "mul_u64_u64_div_u64.div_nonzero");
         st.res = KACCT_MUTANT(723, d.mul(div, st.a), div);
         st.b = rem;
         auto la2 = d.add(ilog2_u64(d, st.a), lit(1)), lb2 = d.add(ilog2_u64(d, st.b), lit(1));
         // shift = ilog2(a) + ilog2(b) - 62, applied when positive
         when(d, d.ult(lit(64), d.add(la2, lb2)), st, [&](S& t) {
           auto shift = d.sub(d.add(la2, lb2), KACCT_MUTANT(724, lit(64), lit(63)));
           t.b = d.lshr(t.b, shift, "mul_u64_u64_div_u64.shift");
           t.c = d.lshr(t.c, shift, "mul_u64_u64_div_u64.shift");
           t.early = KACCT_MUTANT(725, d.eq(t.c, lit(0)), d.lit_bool(false));
         });
       });
  branch(
      d, s.early, s, [](S&) {},
      [&](S& st) { st.res = d.add(st.res, d.udiv(d.mul(st.a, st.b), st.c, "mul_u64_u64_div_u64.div_nonzero")); });
  return s.res;
}

// The high 64 bits of a * b, from 32-bit halves (the generic C's own product when the compiler
// has no 128-bit type, lib/math/div64.c 6.12).
template <class D>
u64<D> mul_hi_u64(D& d, u64<D> a, u64<D> b) {
  auto lit = [&](std::uint64_t x) { return d.template lit<64>(x); };
  auto lo32 = [&](u64<D> x) { return d.template zext<64>(d.template trunc<32>(x)); };
  auto hi32 = [&](u64<D> x) { return d.lshr(x, lit(32), "mul_hi.shift"); };
  auto x = d.mul(lo32(a), lo32(b));
  auto y = KACCT_MUTANT(715, d.add(d.mul(lo32(a), hi32(b)), hi32(x)), d.mul(lo32(a), hi32(b)));
  auto z = d.add(d.mul(hi32(a), hi32(b)), hi32(y));
  y = d.add(d.mul(hi32(a), lo32(b)), lo32(y));
  return KACCT_MUTANT(714, d.add(z, hi32(y)), z);
}

// stime * rtime / total by the era's routine. ScaleDiv::Abstract is the proofs' abstraction,
// implemented by the symbolic domain (`Symbolic::abstract_mul_div`); concretely it is exact.
template <class D>
inline KACCT_INLINE u64<D> scale(D& d, ScaleDiv how, u64<D> stime, u64<D> rtime, u64<D> total,
                                 bool overflow_max = false) {
  switch (how) {
    case ScaleDiv::Loop32: return scale_stime_loop32(d, stime, rtime, total);
    case ScaleDiv::Generic2020: return mul_u64_u64_div_u64_generic(d, stime, rtime, total);
    case ScaleDiv::Abstract:
      if constexpr (D::is_symbolic) return d.abstract_mul_div(stime, rtime, total, "cputime_adjust.scale");
      [[fallthrough]];
    case ScaleDiv::Exact128: break;
  }
  auto q = d.mul_u64_u64_div_u64(stime, rtime, total, "cputime_adjust.div_nonzero");
  if (!overflow_max || how != ScaleDiv::Exact128) return q;
  // "if (n_hi >= c) return -1": the quotient does not fit.
  return d.select(
      KACCT_MUTANT(713, d.ule(total, mul_hi_u64(d, stime, rtime)), d.ult(total, mul_hi_u64(d, stime, rtime))),
      d.template lit<64>(~std::uint64_t{0}), q);
}

// cputime_adjust(curr, prev, &ut, &st): returns the (utime, stime) pair userspace sees and
// updates prev. Follows kernel/sched/cputime.c in each AdjustEra (see docs/models/cputime-adjust.md).
template <class D>
PrevCputime<D> cputime_adjust(D& d, const AdjustCfg& cfg, const TaskCputime<D>& curr, PrevCputime<D>& prev) {
  auto zero = d.template lit<64>(0);
  const u64<D> rtime = curr.sum_exec_runtime;
  struct S {
    BOOST_HANA_DEFINE_STRUCT(S, (u64<D>, stime), (u64<D>, utime), (PrevCputime<D>, prev));
  } s{curr.stime, curr.utime, prev};

  // "if (prev->stime + prev->utime >= rtime) goto out": nothing new to hand out.
  auto stale =
      KACCT_MUTANT(701, d.ule(rtime, d.add(prev.stime, prev.utime)), d.ult(rtime, d.add(prev.stime, prev.utime)));
  when(d, d.bnot(stale), s, [&](S& st) KACCT_INLINE {
    if (cfg.era == AdjustEra::PerFieldMax) {
      // <= 4.2: utime == 0 -> all stime; stime == 0 -> all utime; else scale; then each prev
      // field advances to max(prev, new) on its own.
      branch(
          d, d.eq(st.utime, zero), st, [&](S& t) { t.stime = rtime; },
          [&](S& t) {
            branch(
                d, d.eq(t.stime, zero), t, [&](S& u) { u.utime = rtime; },
                [&](S& u) {
                  u.stime = scale(d, cfg.div, u.stime, rtime, d.add(u.stime, u.utime), cfg.overflow_max);
                  u.utime = KACCT_MUTANT(727, d.sub(rtime, u.stime), u.utime);
                });
          });
      st.prev.stime = KACCT_MUTANT(702, d.max(st.prev.stime, st.stime), st.stime);
      st.prev.utime = d.max(st.prev.utime, st.utime);
      return;
    }
    auto clamp = [&](S& t) KACCT_INLINE {  // "make sure stime doesn't go backwards; stime + utime == rtime"
      t.stime = KACCT_MUTANT(703, d.max(t.stime, t.prev.stime), t.stime);
      t.utime = d.sub(rtime, t.stime);
      auto back = KACCT_MUTANT(704, d.ult(t.utime, t.prev.utime), d.ult(t.prev.utime, t.utime));
      t.utime = d.select(back, t.prev.utime, t.utime);
      t.stime = KACCT_MUTANT(705, d.select(back, d.sub(rtime, t.prev.utime), t.stime), t.stime);
    };
    auto scaled = [&](S& t) KACCT_INLINE {
      t.stime = KACCT_MUTANT(707, scale(d, cfg.div, t.stime, rtime, d.add(t.stime, t.utime), cfg.overflow_max),
                             scale(d, cfg.div, t.utime, rtime, d.add(t.stime, t.utime), cfg.overflow_max));
      if (KACCT_MUTANT(706, cfg.era == AdjustEra::ClampToRtime, false)) t.stime = d.min(t.stime, rtime);
    };
    if (cfg.era == AdjustEra::GotoUpdate) {
      // 4.3 .. 4.7: the two shortcuts jump straight to "update", past the clamps.
      branch(
          d, d.eq(st.utime, zero), st, [&](S& t) { t.stime = rtime; },
          [&](S& t) {
            branch(
                d, d.eq(t.stime, zero), t, [&](S& u) { u.utime = rtime; },
                [&](S& u) {
                  scaled(u);
                  KACCT_MUTANT_DROP(710, clamp(u))
                });
          });
    } else {
      // 4.8+: stime == 0 (or both 0) -> all utime; utime == 0 -> all stime; every path clamps.
      branch(
          d, KACCT_MUTANT(708, d.eq(st.stime, zero), d.lit_bool(false)), st, [&](S& t) { t.utime = rtime; },
          [&](S& t) {
            branch(
                d, KACCT_MUTANT(709, d.eq(t.utime, zero), d.lit_bool(false)), t, [&](S& u) { u.stime = rtime; },
                scaled);
          });
      clamp(st);
    }
    KACCT_MUTANT_DROP(711, st.prev.stime = st.stime)
    st.prev.utime = st.utime;
  });
  prev = s.prev;
  return prev;
}

}  // namespace kacct::model
