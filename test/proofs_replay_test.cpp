// The resolver behind the replay commands of cputime_adjust counterexamples: for every era x
// division the proof jobs use, the (CPU, config, override) it names gives exactly that
// cputime_adjust at 1 ms ticks, is accepted by `kacct check`, and says when no release shipped it.
#include <gtest/gtest.h>

#include "model/sim/machine.hpp"
#include "proofs/replay.hpp"

using namespace kacct;
using model::AdjustEra;
using model::ScaleDiv;

namespace {
constexpr AdjustEra kEras[] = {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways,
                               AdjustEra::ClampToRtime};
constexpr ScaleDiv kDivs[] = {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020};
}  // namespace

TEST(ReplayResolver, EveryEraAndDivision) {
  for (auto era : kEras)
    for (auto div : kDivs) {
      const model::AdjustCfg a{era, div};
      SCOPED_TRACE(proofs::adjust_key(a));
      const auto r = proofs::resolve_adjust(a);
      const auto m = proofs::replay_model_cfg(r);
      EXPECT_EQ(m.adjust.era, era);
      EXPECT_EQ(m.adjust.div, div);
      EXPECT_EQ(m.tick.tick_nsec, 1'000'000u);
      EXPECT_EQ(m.acct, arch::Accounting::Tick);
      EXPECT_TRUE(arch::legal(r.cpu, r.cfg));
      // The command names a config `kacct check` accepts, and an override it parses.
      ASSERT_TRUE(arch::find_config(r.cfg.name()));
      EXPECT_EQ(*arch::find_config(r.cfg.name()), r.cfg);
      auto parsed = proofs::parse_adjust(proofs::adjust_key(a));
      ASSERT_TRUE(parsed);
      EXPECT_EQ(parsed->era, era);
      EXPECT_EQ(parsed->div, div);
      // The override only where no config has it; "no release shipped" exactly where none did.
      const auto rel = proofs::shipped(a);
      if (r.override_adjust) {
        EXPECT_EQ(r.note.find("no release shipped") != std::string::npos, !rel) << r.note;
        EXPECT_NE(r.args().find("--cputime-adjust " + proofs::adjust_key(a)), std::string::npos);
        for (const auto& c : arch::combos()) {
          const auto cm = sim::model_cfg(c.cpu, c.cfg);
          if (c.cfg.acct == arch::Accounting::Tick && c.cfg.hz == 1000) {
            EXPECT_FALSE(cm.adjust.era == era && cm.adjust.div == div) << c.cpu.name << " " << c.cfg.name();
          }
        }
      } else {
        EXPECT_TRUE(rel) << "a config without override has a release";
        EXPECT_EQ(r.args().find("--cputime-adjust"), std::string::npos);
      }
    }
}

TEST(ReplayResolver, KnownCases) {
  // <= 4.2: shipped (3.10..4.2 with scale_stime), but the tick model starts at 4.11.
  auto r = proofs::resolve_adjust({AdjustEra::PerFieldMax, ScaleDiv::Loop32});
  ASSERT_TRUE(r.override_adjust);
  EXPECT_EQ(proofs::shipped({AdjustEra::PerFieldMax, ScaleDiv::Loop32})->last, arch::v(4, 2));
  // 4.3..4.6 with the exact division: never shipped (x86-64 got mulq/divq in 5.9).
  r = proofs::resolve_adjust({AdjustEra::GotoUpdate, ScaleDiv::Exact128});
  ASSERT_TRUE(r.override_adjust);
  EXPECT_NE(r.note.find("no release shipped"), std::string::npos);
  EXPECT_EQ(r.args(), "kacct check --cpu x86-64 --config 4.11-tick-hz1000 --cputime-adjust 9d7fb0427648:exact128");
  // 6.11 on a CPU with the generic division: a real release, named though not listed.
  r = proofs::resolve_adjust({AdjustEra::ClampToRtime, ScaleDiv::Generic2020});
  EXPECT_FALSE(r.override_adjust);
  EXPECT_EQ(r.cfg.name(), "6.11-tick-hz1000");
  EXPECT_FALSE(r.cpu.exact_mul_u64_u64_div_u64);
  // 4.7..5.8: listed.
  r = proofs::resolve_adjust({AdjustEra::ClampAlways, ScaleDiv::Loop32});
  EXPECT_FALSE(r.override_adjust);
  EXPECT_EQ(r.note, "");
  // Patch releases are accepted by name but not listed: the props matrix stays as it is.
  EXPECT_TRUE(arch::find_config("4.13-gen-hz250"));
  EXPECT_FALSE(arch::find_config("6.11-native-hz250"));
  EXPECT_FALSE(arch::find_config("4.2-tick-hz1000"));  // before the tick model's range
  for (const auto& c : arch::configs()) EXPECT_NE(c.version, arch::v(6, 11)) << c.name();
  EXPECT_FALSE(proofs::parse_adjust("9d7fb0427648:abstract"));
  EXPECT_FALSE(proofs::parse_adjust("4.4:exact128"));
}
