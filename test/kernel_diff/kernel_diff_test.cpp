// The kernel's own accounting functions, cut out of Debian's linux-source-6.1 (6.1.192) and
// linux-source-6.12 (6.12.118) at build time and compiled in user space (kdiff_glue.c), against
// the model's public functions on the same inputs: pinned inputs, edge values (0, 1, near 2^32,
// 2^63 and 2^64, equal operands) and random ones. A disagreement fails the test unless it falls
// in a class that docs/kernel-diff.md documents as an input the kernel's callers never pass.
// The comparisons themselves are kdiff_cases.hpp's (shared with the fuzz target fuzz_kerneldiff).
//
// KACCT_KERNEL_DIFF_N=<n> sets the random inputs per function and tree (campaigns:
// tools/kernel-diff/campaign.sh); KACCT_KERNEL_DIFF_SAMPLE=<hex> replays one input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "test/kernel_diff/kdiff_cases.hpp"

namespace {
using namespace kacct::kdiff;
using u64 = std::uint64_t;

// The extracted trees are the ones named here: a Debian package update must be noticed (and
// model_config_for_tree() revisited), not compared under the old name.
TEST(KernelDiff, TreesAreTheNamedReleases) {
  for (const auto& t : trees)
    for (const kd_api* k : {t.x86, t.gen})
      EXPECT_STREQ(k->version, t.name) << "the installed Debian source tree changed: update trees[] and "
                                          "model_config_for_tree() in test/kernel_diff/kdiff_cases.hpp";
}

unsigned env_count(unsigned fallback) {
  const char* s = std::getenv("KACCT_KERNEL_DIFF_N");
  return s ? unsigned(std::strtoul(s, nullptr, 10)) : fallback;
}
std::optional<u64> env_sample() {
  const char* s = std::getenv("KACCT_KERNEL_DIFF_SAMPLE");
  if (!s) return std::nullopt;
  return std::strtoull(s, nullptr, 16);
}

Report report(const std::string& test) {
  Report rep{test};
  rep.replay = [test](u64 seed) {
    return fmt::format("KACCT_KERNEL_DIFF_SAMPLE={:x} {} --gtest_filter={}", seed, ::testing::internal::GetArgvs()[0],
                       test);
  };
  return rep;
}
void finish(const Report& rep, const std::string& what) {
  std::string s =
      fmt::format("{}: {} inputs, {} agree, {} unexplained disagreements", what, rep.runs, rep.agree, rep.unexplained);
  for (const auto& [why, n] : rep.explained) s += fmt::format("\n  {} documented ({})", n, why);
  for (const auto& [c, n] : rep.causes) s += fmt::format("\n  {} unexplained, likely cause: {}", n, c);
  std::printf("%s\n", s.c_str());
  for (const auto& x : rep.shown) std::printf("DISAGREEMENT %s\n%s\n", what.c_str(), x.c_str());
  EXPECT_EQ(rep.unexplained, 0u) << what;
  // A run that compared nothing (no inputs, or every one set aside as documented) proves
  // nothing: fail, except when replaying one chosen input.
  EXPECT_GT(rep.runs, 0u) << what << ": no input was compared";
  if (!env_sample()) { EXPECT_GT(rep.agree, 0u) << what << ": no input agreed (all set aside)"; }
}

// Run `one(seed, rng)` on the pinned seeds (pinned inputs are coded by seed < pinned) and n random ones.
void campaign(unsigned n, unsigned pinned, const std::function<void(u64, Rng&)>& one) {
  auto run = [&](u64 seed) {
    Rng r{seed};
    one(seed, r);
  };
  if (auto s = env_sample()) return run(*s);
  for (u64 i = 0; i < pinned; ++i) run(i);
  const u64 base = 0x6b616363745f6b64ull;  // fixed: the test is deterministic; replay by seed
  for (u64 i = 0; i < n; ++i) run(std::max<u64>(mix(base + i), pinned));
}

const char* flavour(bool x86) { return x86 ? "x86-64" : "generic"; }

TEST(KernelDiff, MulU64U64DivU64) {
  const unsigned n = env_count(1'000'000);
  for (const auto& t : trees)
    for (bool x86 : {true, false}) {
      Report rep = report("KernelDiff.MulU64U64DivU64");
      campaign(n, 0, [&](u64 seed, Rng& r) { diff_mul_u64_u64_div_u64(t, x86, rep, seed, r); });
      finish(rep, fmt::format("mul_u64_u64_div_u64 {} {}", t.name, flavour(x86)));
    }
}

TEST(KernelDiff, CputimeAdjust) {
  const unsigned n = env_count(1'000'000);
  for (const auto& t : trees)
    for (bool x86 : {true, false}) {
      Report rep = report("KernelDiff.CputimeAdjust");
      campaign(n, unsigned(std::size(cputime_adjust_pins)),
               [&](u64 seed, Rng& r) { diff_cputime_adjust(t, x86, rep, seed, r); });
      finish(rep, fmt::format("cputime_adjust {} {}", t.name, flavour(x86)));
    }
}

// One test per comparison with a single flavour (the x86 build: the division is not involved).
void per_tree(const char* test, const char* what, unsigned n, void (*diff)(const Tree&, Report&, u64, Rng&)) {
  for (const auto& t : trees) {
    Report rep = report(test);
    campaign(n, 0, [&](u64 seed, Rng& r) { diff(t, rep, seed, r); });
    finish(rep, fmt::format("{} {}", what, t.name));
  }
}
TEST(KernelDiff, AccountProcessTick) {
  per_tree("KernelDiff.AccountProcessTick", "account_process_tick", env_count(1'000'000), diff_account_process_tick);
}
TEST(KernelDiff, AccountIdleTicks) {
  per_tree("KernelDiff.AccountIdleTicks", "account_idle_ticks", env_count(1'000'000), diff_account_idle_ticks);
}
TEST(KernelDiff, TickHelpers) {
  per_tree("KernelDiff.TickHelpers", "tick helpers", env_count(1'000'000), diff_tick_helpers);
}
TEST(KernelDiff, IrqtimeAccountIrq) {
  per_tree("KernelDiff.IrqtimeAccountIrq", "irqtime_account_irq", env_count(1'000'000), diff_irqtime_account_irq);
}
TEST(KernelDiff, GenVtime) { per_tree("KernelDiff.GenVtime", "gen vtime", env_count(300'000), diff_gen_vtime); }
TEST(KernelDiff, PsiAccountIrqtime) {
  per_tree("KernelDiff.PsiAccountIrqtime", "psi_account_irqtime", env_count(200'000), diff_psi_account_irqtime);
}

}  // namespace
