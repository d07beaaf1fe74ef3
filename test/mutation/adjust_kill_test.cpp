// cputime_adjust() per era and the division routines at their large-value paths, on
// hand-computed values and against independent reference implementations written here from
// the routines' definitions (docs/models/cputime-adjust.md): exact 128-bit arithmetic, the
// 32-bit balancing loop, the 2020 generic mul_u64_u64_div_u64. Each test names the mutants
// (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "model/cputime/cputime_adjust.hpp"

namespace {
using namespace kacct;
using namespace kacct::model;
using u128 = unsigned __int128;

struct Pair {
  std::uint64_t utime, stime;
  bool operator==(const Pair&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Pair& p) { return o << "{u " << p.utime << ", s " << p.stime << "}"; }

Pair adjust(AdjustEra era, ScaleDiv div, Pair prev, std::uint64_t u, std::uint64_t s, std::uint64_t rtime,
            bool overflow_max = false) {
  Concrete d;
  AdjustCfg cfg{era, div, overflow_max};
  PrevCputime<Concrete> pv{prev.utime, prev.stime};
  TaskCputime<Concrete> cur{u, s, rtime};
  auto r = cputime_adjust(d, cfg, cur, pv);
  EXPECT_EQ(r.utime, pv.utime);
  EXPECT_EQ(r.stime, pv.stime);
  return {pv.utime, pv.stime};
}

// 701-711, 727: one case per clamp and shortcut, in the era that has it.
TEST(AdjustKill, ClampsAndShortcutsPerEra) {
  const auto E = ScaleDiv::Exact128;
  // Stale (prev sum == rtime): nothing changes, in every era (701).
  for (auto era : {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways, AdjustEra::ClampToRtime})
    EXPECT_EQ(adjust(era, E, {50, 50}, 0, 100, 100), (Pair{50, 50})) << int(era);
  // <= 4.2: per-field max (702), utime rescaled (727).
  EXPECT_EQ(adjust(AdjustEra::PerFieldMax, E, {10, 80}, 50, 50, 120), (Pair{60, 80}));
  EXPECT_EQ(adjust(AdjustEra::PerFieldMax, E, {0, 0}, 30, 70, 200), (Pair{60, 140}));
  // 4.8+: stime may not go backwards (703); utime clamp (704, 705); which field is scaled (707).
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, E, {10, 80}, 50, 50, 120), (Pair{40, 80}));
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, E, {100, 10}, 10, 90, 120), (Pair{100, 20}));
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, E, {0, 0}, 30, 70, 200), (Pair{60, 140}));
  // 4.3-4.7: the scaling path clamps too (710).
  EXPECT_EQ(adjust(AdjustEra::GotoUpdate, E, {10, 80}, 50, 50, 120), (Pair{40, 80}));
  // Shortcuts (708, 709): both zero -> all utime; utime zero -> all stime, exactly, even where
  // the 32-bit loop would round (5.8: rtime above 32 bits).
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, E, {0, 0}, 0, 0, 100), (Pair{100, 0}));
  const std::uint64_t big = (std::uint64_t{1} << 33) + 1;
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, ScaleDiv::Loop32, {0, 0}, 0, 3, big), (Pair{0, big}));
  // 6.11+: stime clamped to rtime when utime + stime wrapped (706).
  EXPECT_EQ(adjust(AdjustEra::ClampToRtime, E, {0, 0}, ~std::uint64_t{0} - 2, 5, 100), (Pair{0, 100}));
  // prev is updated (711): a second call with the same input is stale.
  EXPECT_EQ(adjust(AdjustEra::ClampAlways, E, {60, 140}, 30, 70, 200), (Pair{60, 140}));
}

// ---- references, written from the definitions
std::uint64_t ref_loop32(std::uint64_t stime, std::uint64_t rtime, std::uint64_t total) {
  for (;;) {
    if (stime > rtime) std::swap(stime, rtime);
    if ((total >> 32) == 0 && (rtime >> 32) == 0) break;
    if ((total >> 32) != 0 || (stime >> 31) != 0) {  // drop a bit of precision from both
      rtime >>= 1;
      total >>= 1;
      continue;
    }
    stime <<= 1;  // move a bit from rtime to stime
    rtime >>= 1;
  }
  if (std::uint32_t(total) == 0) return ~std::uint64_t{0};  // the model's obligation result
  return std::uint64_t((u128(std::uint32_t(stime)) * std::uint32_t(rtime)) / std::uint32_t(total));
}
int ilog2(std::uint64_t x) { return int(std::bit_width(x)) - 1; }
std::uint64_t ref_generic2020(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t res = 0;
  if (ilog2(a) + ilog2(b) > 62) {
    res = (b / c) * a;
    b %= c;
    int shift = ilog2(a) + ilog2(b) - 62;
    if (shift > 0) {  // shift 64 (a and b both near 2^64) is the model's shift obligation: 0
      b = shift < 64 ? b >> shift : 0;
      c = shift < 64 ? c >> shift : 0;
      if (!c) return res;
    }
  }
  return res + a * b / c;
}

std::vector<std::array<std::uint64_t, 3>> large_cases() {
  std::vector<std::array<std::uint64_t, 3>> v;
  std::mt19937_64 g(20261202);
  const std::uint64_t edges[] = {1,
                                 2,
                                 3,
                                 0x7fff'ffffu,
                                 0x8000'0000u,
                                 0xffff'ffffu,
                                 0x1'0000'0000,
                                 0x1'0000'0001,
                                 0x7fff'ffff'ffff'ffff,
                                 0x8000'0000'0000'0000,
                                 ~std::uint64_t{0}};
  for (auto s : edges)
    for (auto u : edges)
      for (auto r : edges)
        if (s + u >= s && s + u != 0) v.push_back({s, r, s + u});
  for (int i = 0; i < 20000; ++i) {
    auto pick = [&] { return g() >> (g() % 64); };  // every magnitude
    std::uint64_t s = pick(), u = pick(), r = pick();
    if (s + u >= s && s + u != 0) v.push_back({s, r, s + u});  // the kernel's stime <= total
  }
  return v;
}

// 716-721: scale_stime() (3.10-5.8) at every magnitude, including 32-bit boundaries.
TEST(AdjustKill, Loop32MatchesReference) {
  for (auto [s, r, t] : large_cases()) {
    Concrete d;
    ASSERT_EQ(scale_stime_loop32(d, s, r, t), ref_loop32(s, r, t)) << s << " " << r << " " << t;
  }
}
// 722-726: the 2020 generic mul_u64_u64_div_u64 (5.9-6.11) and ilog2.
TEST(AdjustKill, Generic2020MatchesReference) {
  for (auto [a, b, c] : large_cases()) {
    Concrete d;
    if (c == 0) continue;
    ASSERT_EQ(ilog2_u64(d, a), std::uint64_t(std::int64_t(ilog2(a)))) << a;
    std::uint64_t want = ref_generic2020(a, b, c);
    std::uint64_t got = mul_u64_u64_div_u64_generic(d, a, b, c);
    ASSERT_EQ(got, want) << a << " " << b << " " << c;
  }
  Concrete d;
  for (unsigned k = 0; k < 64; ++k) ASSERT_EQ(ilog2_u64(d, std::uint64_t{1} << k), k);
}
// 712-715: mul_hi_u64 and the generic C's U64_MAX on a quotient that does not fit (6.12+).
TEST(AdjustKill, MulHiAndOverflowMax) {
  for (auto [a, b, c] : large_cases()) {
    Concrete d;
    ASSERT_EQ(mul_hi_u64(d, a, b), std::uint64_t((u128(a) * b) >> 64)) << a << " " << b;
  }
  Concrete d;
  const std::uint64_t s = std::uint64_t{1} << 63;
  // s * 4 = 2^65, high word 2 == total: the quotient 2^64 does not fit -> U64_MAX.
  EXPECT_EQ(scale(d, ScaleDiv::Exact128, s, 4, 2, true), ~std::uint64_t{0});
  EXPECT_EQ(scale(d, ScaleDiv::Exact128, s, 4, 3, true), std::uint64_t((u128(s) * 4) / 3));
  EXPECT_TRUE(adjust_cfg(arch::v(6, 12), false).overflow_max);
  EXPECT_FALSE(adjust_cfg(arch::v(6, 12), true).overflow_max);
}

// 728-729, 801-804: which body and which division routine each release (and arch) builds.
TEST(AdjustKill, EraAndDivisionPerRelease) {
  using arch::v;
  struct Row {
    arch::KVersion ver;
    bool exact_arch;
    AdjustEra era;
    ScaleDiv div;
  };
  const Row rows[] = {
      {v(4, 2), false, AdjustEra::PerFieldMax, ScaleDiv::Loop32},
      {v(4, 3), false, AdjustEra::GotoUpdate, ScaleDiv::Loop32},
      {v(4, 6), false, AdjustEra::GotoUpdate, ScaleDiv::Loop32},
      {v(4, 7), false, AdjustEra::ClampAlways, ScaleDiv::Loop32},
      {v(5, 8), true, AdjustEra::ClampAlways, ScaleDiv::Loop32},
      {v(5, 9), false, AdjustEra::ClampAlways, ScaleDiv::Generic2020},
      {v(5, 10), true, AdjustEra::ClampAlways, ScaleDiv::Exact128},  // x86-64 mulq/divq
      {v(6, 1), true, AdjustEra::ClampAlways, ScaleDiv::Exact128},
      {v(6, 1), false, AdjustEra::ClampAlways, ScaleDiv::Generic2020},
      {v(6, 1, 104), false, AdjustEra::ClampAlways, ScaleDiv::Generic2020},
      {v(6, 1, 105), false, AdjustEra::ClampToRtime, ScaleDiv::Generic2020},  // backport
      {v(6, 6), true, AdjustEra::ClampAlways, ScaleDiv::Exact128},
      {v(6, 10), false, AdjustEra::ClampAlways, ScaleDiv::Generic2020},
      {v(6, 11), false, AdjustEra::ClampToRtime, ScaleDiv::Generic2020},
      {v(6, 12), false, AdjustEra::ClampToRtime, ScaleDiv::Exact128},
  };
  for (const auto& r : rows) {
    const auto c = adjust_cfg(r.ver, r.exact_arch);
    EXPECT_EQ(c.era, r.era) << r.ver.str() << " exact " << r.exact_arch;
    EXPECT_EQ(c.div, r.div) << r.ver.str() << " exact " << r.exact_arch;
  }
}

}  // namespace
