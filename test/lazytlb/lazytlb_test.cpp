// Lazy-TLB model: every reachable state of small worlds satisfies the invariants in both modes,
// each mutant is caught (with a counterexample that replays), scripts round-trip, bad scripts
// get line:column errors, and the findings in docs/models/lazy-tlb.md replay.
#include <gtest/gtest.h>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/seed.hpp"

namespace kacct::model::lazytlb {
namespace {

Script header(Arch a, arch::KVersion v, Sizes s = {3, 2, 1}) {
  Script h;
  h.sizes = s;
  h.arch = a;
  h.version = v;
  return h;
}

ExploreResult explore_for(const Script& h, std::size_t max_states = 2'000'000) {
  ExploreOptions o;
  o.header = h;
  o.max_states = max_states;
  return explore(o);
}

TEST(LazyTlbConfig, ModesByArchAndRelease) {
  EXPECT_FALSE(config_for(Arch::PpcRadix, arch::v(6, 3)).shootdown);
  EXPECT_TRUE(config_for(Arch::PpcRadix, arch::v(6, 4)).shootdown);
  EXPECT_TRUE(config_for(Arch::PpcHash, arch::v(6, 12)).shootdown);
  EXPECT_FALSE(config_for(Arch::Generic, arch::v(6, 12)).shootdown);
  EXPECT_FALSE(config_for(Arch::PpcRadix, arch::v(6, 5)).exit_flush_shoots);
  EXPECT_TRUE(config_for(Arch::PpcRadix, arch::v(6, 6)).exit_flush_shoots);
  EXPECT_FALSE(config_for(Arch::Generic, arch::v(6, 1)).use_mm_always_grabs);
  EXPECT_TRUE(config_for(Arch::Generic, arch::v(6, 4)).use_mm_always_grabs);
}

// Exhaustive: 3 CPUs, 2 tasks, 1 mm in each mode/era (2/2/2 for current radix, the CLI goes
// further: docs/models/lazy-tlb.md); no invariant or obligation fails.
struct Era {
  Arch arch;
  arch::KVersion ver;
};
class Exhaustive : public ::testing::TestWithParam<Era> {};
TEST_P(Exhaustive, EveryReachableStateIsSafe) {
  // With one mm slot nothing frees under generic refcounting (a lazy CPU only drops the dead mm
  // when it switches to another mm's task, and there is none), so those eras get two.
  const Sizes s = GetParam().arch == Arch::Generic ? Sizes{2, 2, 2} : Sizes{3, 2, 1};
  auto r = explore_for(header(GetParam().arch, GetParam().ver, s));
  ASSERT_FALSE(r.violation) << r.violation->invariant << ": " << r.violation->detail << "\n"
                            << write_script(*r.counterexample);
  EXPECT_FALSE(r.truncated);
  EXPECT_GT(r.states, 5000u);
  EXPECT_GT(r.frees, 0u);
  const bool sd = config_for(GetParam().arch, GetParam().ver).shootdown;
  // Refcounting lets lazy references pin dead mms; shootdown never does.
  if (sd)
    EXPECT_EQ(r.zombie_states, 0u);
  else
    EXPECT_GT(r.zombie_states, 0u);
  RecordProperty("states", std::to_string(r.states));
  RecordProperty("depth", std::to_string(r.depth));
}
TEST(Exhaustive2x2x2, CurrentRadixShootdown) {
  auto r = explore_for(header(Arch::PpcRadix, arch::v(6, 12), {2, 2, 2}));
  ASSERT_FALSE(r.violation) << r.violation->invariant << ": " << r.violation->detail;
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.zombie_states, 0u);
  EXPECT_GT(r.states, 50000u);
}
INSTANTIATE_TEST_SUITE_P(Eras, Exhaustive,
                         ::testing::Values(Era{Arch::Generic, arch::v(6, 1)}, Era{Arch::Generic, arch::v(6, 12)},
                                           Era{Arch::PpcRadix, arch::v(6, 1)}, Era{Arch::PpcRadix, arch::v(6, 4)},
                                           Era{Arch::PpcRadix, arch::v(6, 12)}, Era{Arch::PpcHash, arch::v(6, 12)}));

// Each mutant is caught by the explorer, and its counterexample replays to the same failure.
struct MutantCase {
  const char* mutant;
  Arch arch;
  const char* invariant;
};
class Mutants : public ::testing::TestWithParam<MutantCase> {};
TEST_P(Mutants, CaughtWithReplayableCounterexample) {
  Script h = header(GetParam().arch, arch::v(6, 12));
  h.mutants = {GetParam().mutant};
  auto r = explore_for(h);
  ASSERT_TRUE(r.violation) << GetParam().mutant << " not caught in " << r.states << " states";
  auto text = write_script(*r.counterexample);
  auto p = parse_script(text);
  ASSERT_TRUE(p) << p.error().str();
  auto run = run_script(p.value());
  ASSERT_TRUE(run.failed_at) << text;
  EXPECT_EQ(*run.failed_at, p.value().events.size() - 1);
  ASSERT_FALSE(run.error) << run.error->str();
  ASSERT_FALSE(run.violations.empty());
  bool named = false;
  for (const auto& v : run.violations) named = named || v.invariant == GetParam().invariant;
  EXPECT_TRUE(named) << run.violations.front().invariant << ": " << run.violations.front().detail << "\n" << text;
  // Without the mutant the same script runs clean.
  p.value().mutants.clear();
  auto clean = run_script(p.value());
  EXPECT_FALSE(clean.failed_at) << text;
}
INSTANTIATE_TEST_SUITE_P(All, Mutants,
                         ::testing::Values(MutantCase{"no-lazy-grab", Arch::Generic, "lazy_tlb.accounting"},
                                           MutantCase{"shoot-skip-cpu", Arch::PpcHash,
                                                      "lazy_tlb.no_dangling_active_mm"},
                                           MutantCase{"clear-wrong-cpu", Arch::PpcRadix, "lazy_tlb.own_bit_only"}));

// The mutants must also be caught by checks other than the one that names them directly.
TEST(Mutants, ClearWrongCpuAlsoBreaksMaskCoverage) {
  // A kthread inside kthread_use_mm on CPU 1 keeps using mm 0 while CPU 0's flush clears its bit.
  const char* text = R"(lazytlb 1
cpus 2
tasks 3
mms 2
arch ppc64-radix
mutant clear-wrong-cpu
version 6.12
events
switch 0 0
finish 0
switch 1 2
finish 1
use 1 0
flush 0 0
)";
  auto p = parse_script(text);
  ASSERT_TRUE(p) << p.error().str();
  auto r = run_script(p.value());
  ASSERT_TRUE(r.failed_at);
  bool coverage = false;
  for (const auto& v : r.violations) coverage = coverage || v.invariant == "lazy_tlb.mask_covers_users";
  EXPECT_TRUE(coverage);
}

TEST(Scripts, RoundTripAndErrors) {
  auto seed = seed_scenario(3, 2, Arch::PpcRadix, arch::v(6, 6));
  auto text = write_script(seed.script);
  auto p = parse_script(text);
  ASSERT_TRUE(p) << p.error().str();
  EXPECT_EQ(write_script(p.value()), text);
  EXPECT_EQ(p.value(), seed.script);
  struct Bad {
    const char* text;
    std::uint32_t line, col;
  };
  for (auto b : {Bad{"", 1, 1}, Bad{"lazytlb 2\n", 1, 1}, Bad{"lazytlb 1\ncpus 0\n", 2, 6},
                 Bad{"lazytlb 1\nversion 6.x\n", 2, 9}, Bad{"lazytlb 1\nversion 6.6\nevents\nswitch 5 0\n", 4, 8},
                 Bad{"lazytlb 1\nversion 6.6\nevents\n  frobnicate 0\n", 4, 3},
                 Bad{"lazytlb 1\nversion 6.6\nevents\nuse 0\n", 4, 6}, Bad{"lazytlb 1\nversion 6.6\n", 3, 1},
                 Bad{"lazytlb 1\nmutant nope\n", 2, 8}, Bad{"lazytlb 1\nversion 6.6\nevents\nidle 0 1\n", 4, 8}}) {
    auto q = parse_script(b.text);
    ASSERT_FALSE(q) << b.text;
    EXPECT_EQ(q.error().line, b.line) << b.text << q.error().str();
    EXPECT_EQ(q.error().col, b.col) << b.text << q.error().str();
  }
}

TEST(Scripts, EventNotEnabledIsReported) {
  auto p = parse_script("lazytlb 1\nversion 6.6\nevents\nfinish 0\n");
  ASSERT_TRUE(p);
  auto r = run_script(p.value());
  ASSERT_TRUE(r.failed_at);
  EXPECT_EQ(*r.failed_at, 0u);
  EXPECT_EQ(r.steps, 0u);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->str(), "4:1: event 'finish 0' cannot happen: CPU is not inside a context switch");
}

// Findings: how long a lazy reference pins a dead mm. Refcounting: as long as the idle CPU
// stays idle (here 100 events on the other CPU); shootdown: never past the last real drop.
Script pin_script(Arch a, int spins) {
  Script s = header(a, arch::v(6, 12), {2, 2, 2});
  auto ev = [&](Op op, int c, int arg = 0) { s.events.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
  ev(Op::Switch, 1, 0);
  ev(Op::Finish, 1);  // task 0 (mm 0) runs on CPU 1
  ev(Op::Idle, 1);
  ev(Op::Finish, 1);  // CPU 1 idles lazily on mm 0
  ev(Op::Switch, 0, 0);
  ev(Op::Finish, 0);  // task 0 moves to CPU 0
  ev(Op::Exit, 0);
  ev(Op::Switch, 0, 1);
  ev(Op::Finish, 0);  // and exits; kthread 1 runs
  for (int i = 0; i < spins; ++i) {
    ev(Op::Idle, 0);
    ev(Op::Finish, 0);
    ev(Op::Switch, 0, 1);
    ev(Op::Finish, 0);
  }
  return s;
}
TEST(Findings, LazyPinOfDeadMm) {
  auto ref = run_script(pin_script(Arch::Generic, 25));
  ASSERT_FALSE(ref.failed_at);
  EXPECT_EQ(ref.world.mms[0].st, MmState::Live);  // still pinned by CPU 1's idle task
  EXPECT_GE(ref.zombie_steps, 100u);
  auto sd = run_script(pin_script(Arch::PpcRadix, 25));
  ASSERT_FALSE(sd.failed_at);
  EXPECT_EQ(sd.world.mms[0].st, MmState::Freed);
  EXPECT_EQ(sd.zombie_steps, 0u);
  EXPECT_GE(sd.costs.ipis, 1u);  // CPU 1 was shot down
  EXPECT_EQ(ref.costs.ipis, 0u);
}

TEST(Seed, AtomicsPerSwitchByMode) {
  for (Arch a : {Arch::Generic, Arch::PpcRadix}) {
    auto seed = seed_scenario(8, 4, a, arch::v(6, 12));
    Script loop = seed.script;
    auto all = run_script(loop);
    ASSERT_FALSE(all.failed_at) << (all.violations.empty() ? all.error->str() : all.violations[0].detail);
    // Refcounting: the idle CPUs' lazy references keep the dead mm (a zombie) after the exit.
    EXPECT_EQ(all.world.mms[0].st, a == Arch::Generic ? MmState::Live : MmState::Freed);
    loop.events.resize(seed.loop_begin);
    auto before = run_script(loop).costs;
    loop.events = seed.script.events;
    loop.events.resize(seed.loop_end);
    auto after = run_script(loop).costs;
    const auto sw = after.switches - before.switches;
    const auto at = after.count_atomics - before.count_atomics;
    EXPECT_EQ(sw, 8u * 4 * 2);
    if (a == Arch::Generic)
      EXPECT_EQ(at, sw);  // one grab (to idle) and one drop (back) per round trip
    else
      EXPECT_EQ(at, 0u);
  }
}

// The library's seed costs and the throughput model fitted to the seed (what `kacct lazy-tlb
// seed` prints): refcounting pays one mm_count atomic per switch and keeps the mm, shootdown
// none and frees it; the fit reproduces the two measured rates at N = 192.
TEST(Seed, CostsAndThroughputModel) {
  auto ref = seed_costs(8, 2, Arch::Generic, arch::v(6, 12));
  auto sd = seed_costs(8, 2, Arch::PpcRadix, arch::v(6, 12));
  ASSERT_TRUE(ref && sd);
  EXPECT_EQ(ref->loop_switches, 8u * 2 * 2);
  EXPECT_DOUBLE_EQ(ref->count_atomics_per_switch, 1.0);
  EXPECT_FALSE(ref->mm_freed_at_end);
  EXPECT_DOUBLE_EQ(sd->count_atomics_per_switch, 0.0);
  EXPECT_TRUE(sd->mm_freed_at_end);
  EXPECT_GT(sd->exit_ipis, 0u);
  const auto tp = fit_throughput(ref->count_atomics_per_switch);
  EXPECT_DOUBLE_EQ(tp.switches_per_s(kSeedCpus, ref->count_atomics_per_switch), kSeedRefcountPerS);
  EXPECT_DOUBLE_EQ(tp.switches_per_s(kSeedCpus, 0), kSeedShootdownPerS);
  const double n_star = tp.crossover_cpus(ref->count_atomics_per_switch);
  EXPECT_NEAR(n_star, kSeedCpus * kSeedRefcountPerS / kSeedShootdownPerS, 1e-9);
  // Below the crossover both modes are CPU-bound and agree; above it refcounting saturates.
  EXPECT_DOUBLE_EQ(tp.switches_per_s(n_star / 2, 1.0), tp.switches_per_s(n_star / 2, 0));
  EXPECT_LT(tp.switches_per_s(2 * n_star, 1.0), tp.switches_per_s(2 * n_star, 0));
  EXPECT_EQ(tp.crossover_cpus(0), 0.0);
}

}  // namespace
}  // namespace kacct::model::lazytlb
