// Lazy-TLB model: every reachable state of small worlds satisfies the invariants in both modes,
// each mutant is caught (with a counterexample that replays), scripts round-trip, bad scripts
// get line:column errors, and the findings in docs/models/lazy-tlb.md replay.
#include <gtest/gtest.h>

#include <fstream>
#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/seed.hpp"

namespace kacct::model::lazytlb {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Script header(Arch a, arch::KVersion v, Sizes s = {3, 2, 1}) {
  Script h;
  h.sizes = s;
  h.arch = a;
  h.version = v;
  return h;
}

ExploreResult explore_for(const Script& h, std::size_t max_states = 2'000'000, bool hotplug = true) {
  ExploreOptions o;
  o.header = h;
  o.max_states = max_states;
  o.hotplug = hotplug;
  return explore(o);
}

// One step judged by check() and by an incremental Checker that judged w before it; returns
// check()'s violations and reports where the two differ (or the Checker's view went stale).
std::vector<spec::lazytlb::Violation> step_both(const Cfg& cfg, World<Concrete>& w, spec::lazytlb::Checker& checker,
                                                const Event& e) {
  Concrete d;
  Decider<Concrete> dec;
  Costs cost;
  StepLog log;
  Stepper<Concrete, true>(d, cfg, w, cost, log, dec).run(e);
  auto full = spec::lazytlb::check(w, cfg, log);
  std::vector<spec::lazytlb::Violation> inc;
  checker.check(w, log, inc);
  EXPECT_EQ(inc, full) << event_text(e);
  EXPECT_TRUE(checker.describes(w)) << event_text(e) << ": a record written is not in the log";
  EXPECT_EQ(checker.zombies(), spec::lazytlb::zombies(w)) << event_text(e);
  return full;
}
// A script replayed with both judges at every step; how many steps check() found violated.
std::size_t replay_both(const Script& s) {
  const Cfg cfg = s.cfg();
  World<Concrete> w = initial(s.sizes);
  spec::lazytlb::Checker checker(w, cfg);
  std::size_t bad = 0;
  for (const auto& e : s.events) {
    if (!why_not_enabled(w, cfg, e).empty()) break;
    bad += !step_both(cfg, w, checker, e).empty();
  }
  return bad;
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
  // Hotplug: sched_force_init_mm from 6.14 everywhere; Book3S-64 trims masks at offline.
  EXPECT_FALSE(config_for(Arch::PpcRadix, arch::v(6, 13)).force_init_mm);
  EXPECT_TRUE(config_for(Arch::PpcRadix, arch::v(6, 14)).force_init_mm);
  EXPECT_TRUE(config_for(Arch::Generic, arch::v(6, 14)).force_init_mm);
  EXPECT_TRUE(config_for(Arch::PpcHash, arch::v(6, 1)).offline_trims_masks);
  EXPECT_FALSE(config_for(Arch::Generic, arch::v(6, 12)).offline_trims_masks);
}

// Exhaustive, with CPU hotplug: 3 CPUs, 2 tasks, 1 mm in each mode/era that is safe under it
// (2/2/2 for current radix, the CLI goes further: docs/models/lazy-tlb.md); no invariant or
// obligation fails, and some states have a CPU offline.
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
  EXPECT_GT(r.states, explore_for(header(GetParam().arch, GetParam().ver, s), 2'000'000, false).states);
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
  for (bool hotplug : {true, false}) {
    // 6.12 is safe only without hotplug (HotplugRace below); 6.14 with it too.
    auto r =
        explore_for(header(Arch::PpcRadix, hotplug ? arch::v(6, 14) : arch::v(6, 12), {2, 2, 2}), 2'000'000, hotplug);
    ASSERT_FALSE(r.violation) << r.violation->invariant << ": " << r.violation->detail;
    EXPECT_FALSE(r.truncated);
    EXPECT_EQ(r.zombie_states, 0u);
    EXPECT_GT(r.states, 50000u);
  }
}
INSTANTIATE_TEST_SUITE_P(Eras, Exhaustive,
                         ::testing::Values(Era{Arch::Generic, arch::v(6, 1)}, Era{Arch::Generic, arch::v(6, 12)},
                                           Era{Arch::PpcRadix, arch::v(6, 1)}, Era{Arch::PpcRadix, arch::v(6, 3)},
                                           Era{Arch::PpcRadix, arch::v(6, 14)}, Era{Arch::PpcHash, arch::v(6, 14)}));

// The shootdown eras before 21641bd9a7a7 (6.4 .. 6.13, radix and hash) are safe without CPU
// hotplug and not with it: the outgoing CPU is still lazy on a user mm when it leaves
// cpu_online_mask, and the mm is freed under it. The counterexample replays, and runs clean
// on 6.14 (the fix) and under refcounting (generic, same release).
class HotplugRace : public ::testing::TestWithParam<Era> {};
TEST_P(HotplugRace, FoundBeforeTheFixOnly) {
  const Script h = header(GetParam().arch, GetParam().ver);
  auto quiet = explore_for(h, 2'000'000, false);
  EXPECT_FALSE(quiet.violation) << quiet.violation->detail;
  auto r = explore_for(h);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "lazy_tlb.no_dangling_active_mm");
  Script cx = *r.counterexample;
  bool offline = false;
  for (const auto& e : cx.events) offline = offline || e.op == Op::Offline;
  EXPECT_TRUE(offline) << write_script(cx);
  auto p = parse_script(write_script(cx));
  ASSERT_TRUE(p) << p.error().str();
  auto run = run_script(p.value());
  ASSERT_TRUE(run.failed_at);
  EXPECT_EQ(*run.failed_at, cx.events.size() - 1);
  ASSERT_FALSE(run.violations.empty());
  EXPECT_EQ(run.violations.front().invariant, "lazy_tlb.no_dangling_active_mm");
  for (auto [a, v] : {std::pair{GetParam().arch, arch::v(6, 14)}, std::pair{Arch::Generic, GetParam().ver}}) {
    Script fixed = p.value();
    fixed.arch = a;
    fixed.version = v;
    auto clean = run_script(fixed);
    EXPECT_FALSE(clean.failed_at) << write_script(fixed);
  }
}
INSTANTIATE_TEST_SUITE_P(Eras, HotplugRace,
                         ::testing::Values(Era{Arch::PpcRadix, arch::v(6, 4)}, Era{Arch::PpcRadix, arch::v(6, 6)},
                                           Era{Arch::PpcRadix, arch::v(6, 12)}, Era{Arch::PpcRadix, arch::v(6, 13)},
                                           Era{Arch::PpcHash, arch::v(6, 12)}));

// Each mutant is caught by the explorer, and its counterexample replays to the same failure.
struct MutantCase {
  const char* mutant;
  Arch arch;
  const char* invariant;
  arch::KVersion ver = arch::v(6, 14);  // safe under hotplug: only the mutant fails
};
class Mutants : public ::testing::TestWithParam<MutantCase> {};
TEST_P(Mutants, CaughtWithReplayableCounterexample) {
  Script h = header(GetParam().arch, GetParam().ver);
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
  // The runner's incremental check and check() agree at every step, the violating one included.
  EXPECT_GE(replay_both(p.value()), 1u) << text;
  // Without the mutant the same script runs clean.
  p.value().mutants.clear();
  auto clean = run_script(p.value());
  EXPECT_FALSE(clean.failed_at) << text;
}
INSTANTIATE_TEST_SUITE_P(
    All, Mutants,
    ::testing::Values(MutantCase{"no-lazy-grab", Arch::Generic, "lazy_tlb.accounting"},
                      MutantCase{"shoot-skip-cpu", Arch::PpcHash, "lazy_tlb.no_dangling_active_mm"},
                      MutantCase{"clear-wrong-cpu", Arch::PpcRadix, "lazy_tlb.own_bit_only"},
                      // finish_cpu's WARN_ON(mm != &init_mm) is the shortest catch;
                      // Mutants.NoForceInitMmFreesUnderTheCpu shows the free.
                      MutantCase{"no-force-init-mm", Arch::PpcRadix, "lazy_tlb.kernel_warn"},
                      // 6.14 drops the lazy mm at offline already.
                      MutantCase{"dead-no-drop", Arch::Generic, "lazy_tlb.accounting", arch::v(6, 12)},
                      MutantCase{"offline-clear-all", Arch::PpcHash, "lazy_tlb.own_bit_only"}));

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

// Without sched_force_init_mm, 6.14 has the race of 6.13 again.
TEST(Mutants, NoForceInitMmFreesUnderTheCpu) {
  auto p = parse_script(read_file(std::string(KACCT_LAZYTLB_DIR) + "/scripts/hotplug-race.lts"));
  ASSERT_TRUE(p);
  Script s = p.value();
  s.version = arch::v(6, 14);
  EXPECT_FALSE(run_script(s).failed_at);
  s.mutants = {"no-force-init-mm"};
  auto r = run_script(s);
  ASSERT_TRUE(r.failed_at);
  EXPECT_EQ(*r.failed_at, s.events.size() - 1);
  EXPECT_EQ(r.violations.front().invariant, "lazy_tlb.no_dangling_active_mm");
}

// Symmetry reduction: the reduced explorer reaches exactly the classes of the states the full
// one reaches (so it misses no state up to renaming), with the same first-violation verdict,
// in every era and with every mutant; renamed states share a key, different ones do not.
// w with CPUs 1.. (when rename_cpus), ordinary tasks and mms renamed by a permutation from seed.
// w renamed: CPU c becomes pc[c], ordinary task t pt[t], mm m pm[m].
World<Concrete> renamed_by(const World<Concrete>& w, const std::vector<int>& pc, const std::vector<int>& pt,
                           const std::vector<int>& pm) {
  const int nc = int(w.cpus.size()), nt = w.ntasks;
  auto task_ref = [&](Ref t) -> Ref { return t < 0 ? t : t < nt ? Ref(pt[t]) : Ref(nt + pc[t - nt]); };
  auto mm_ref = [&](Ref m) -> Ref { return m < 0 ? m : Ref(pm[m]); };
  World<Concrete> v = w;
  for (int c = 0; c < nc; ++c) {
    Cpu cpu = w.cpus[c];
    cpu.curr = task_ref(cpu.curr);
    cpu.prev_mm = mm_ref(cpu.prev_mm);
    v.cpus[pc[c]] = cpu;
  }
  for (int t = 0; t < int(w.tasks.size()); ++t) {
    Task k = w.tasks[t];
    k.mm = mm_ref(k.mm);
    k.active_mm = mm_ref(k.active_mm);
    v.tasks[task_ref(t)] = k;
  }
  for (int m = 0; m < int(w.mms.size()); ++m) {
    Mm mm = w.mms[m];
    mm.mask = {};
    for (int c = 0; c < nc; ++c)
      if (w.mms[m].mask.test(c)) mm.mask.set(pc[c]);
    v.mms[pm[m]] = mm;
    v.cnt[pm[m]] = w.cnt[m];
  }
  return v;
}
// w with CPUs 1.. (when rename_cpus), ordinary tasks and mms renamed by a permutation from seed.
World<Concrete> renamed(const World<Concrete>& w, std::uint64_t seed, bool rename_cpus) {
  std::mt19937_64 rng(seed);
  auto perm = [&](int n, int first) {
    std::vector<int> p(n);
    for (int i = 0; i < n; ++i) p[i] = i;
    std::shuffle(p.begin() + std::min(first, n), p.end(), rng);
    return p;  // new index of old i
  };
  const int nc = int(w.cpus.size()), nt = w.ntasks;
  return renamed_by(w, rename_cpus ? perm(nc, 1) : perm(nc, nc), perm(nt, 0), perm(int(w.mms.size()), 0));
}

TEST(Symmetry, ReducedExplorationCoversEveryClass) {
  struct Case {
    Arch arch;
    arch::KVersion ver;
    Sizes sizes;
    const char* mutant;
  };
  std::vector<Case> cases;
  for (Sizes s : {Sizes{3, 1, 1}, Sizes{1, 3, 2}, Sizes{2, 3, 1}}) {
    for (auto [a, v] : {std::pair{Arch::Generic, arch::v(6, 1)}, std::pair{Arch::Generic, arch::v(6, 12)},
                        std::pair{Arch::PpcRadix, arch::v(6, 3)}, std::pair{Arch::PpcRadix, arch::v(6, 12)},
                        std::pair{Arch::PpcRadix, arch::v(6, 14)}, std::pair{Arch::PpcHash, arch::v(6, 12)}})
      cases.push_back({a, v, s, nullptr});
    if (s.tasks == 1)
      for (auto m : kMutants) cases.push_back({Arch::PpcRadix, arch::v(6, 14), s, m.data()});
  }
  std::size_t reduced_total = 0, full_total = 0;
  for (const Case& c : cases) {
    ExploreOptions o;
    o.header = header(c.arch, c.ver, c.sizes);
    if (c.mutant) o.header.mutants = {c.mutant};
    o.hotplug = true;
    o.stop_at_violation = false;
    const bool rename_cpus = cpus_symmetric(o.header.cfg());
    const auto full = explore(o, true);
    o.symmetry = true;
    const auto reduced = explore(o, true);
    const std::string what = std::string(arch_name(c.arch)) + " " + std::to_string(c.ver.major) + "." +
                             std::to_string(c.ver.minor) + " " + std::to_string(c.sizes.cpus) + "/" +
                             std::to_string(c.sizes.tasks) + "/" + std::to_string(c.sizes.mms) + " " +
                             (c.mutant ? c.mutant : "");
    ASSERT_FALSE(full.truncated) << what;
    std::set<std::string> want, got;
    for (std::size_t i = 0; i < full.sample.size(); ++i) {
      const auto& w = full.sample[i];
      want.insert(canonical_key(w, rename_cpus));
      if (i % 5 == 0) {  // a renamed state has the same canonical key
        const auto v = renamed(w, i, rename_cpus);
        ASSERT_EQ(canonical_key(v, rename_cpus), canonical_key(w, rename_cpus)) << what << " state " << i;
      }
    }
    for (const auto& w : reduced.sample) got.insert(canonical_key(w, rename_cpus));
    EXPECT_EQ(got.size(), reduced.states) << what << ": two kept states are renamings of each other";
    EXPECT_TRUE(got == want) << what << ": " << want.size() << " classes reached in full, " << got.size() << " reduced";
    EXPECT_EQ(bool(full.violation), bool(reduced.violation)) << what;
    if (full.violation && reduced.violation) {
      EXPECT_EQ(full.violation->invariant, reduced.violation->invariant) << what;
      const auto p = parse_script(write_script(*reduced.counterexample));
      ASSERT_TRUE(p) << p.error().str();
      const auto replay = run_script(p.value());
      EXPECT_TRUE(replay.failed_at) << what << ": the reduced counterexample does not replay";
      // The report names the replay's CPUs, tasks and mms, not a representative's renaming.
      ASSERT_FALSE(replay.violations.empty()) << what;
      EXPECT_EQ(replay.violations.front().detail, reduced.violation->detail) << what;
      EXPECT_EQ(replay.failed_at, reduced.counterexample->events.size() - 1) << what;  // at its last event
    }
    reduced_total += reduced.states, full_total += full.states;
  }
  EXPECT_LT(reduced_total * 3, full_total * 2) << "the reduction saves less than a third";
  RecordProperty("states", std::to_string(full_total) + " -> " + std::to_string(reduced_total));
}

// The classes counted without the explorer's signatures: each state of the full exploration keyed
// by the least plain key over every renaming (all permutations of CPUs 1.., tasks, mms). The
// reduced exploration keeps exactly one state per such class, and canonical_key() splits the
// states as the brute force does. Worlds with a CPU in two mm_cpumasks (3 CPUs, 2 mms) included.
TEST(Symmetry, ClassesAgreeWithBruteForce) {
  for (const auto& [sizes, hotplug] :
       {std::pair{Sizes{3, 1, 2}, false}, std::pair{Sizes{3, 2, 1}, true}, std::pair{Sizes{2, 3, 1}, true}}) {
    ExploreOptions o;
    o.header = header(Arch::PpcRadix, arch::v(6, 14), sizes);
    o.hotplug = hotplug;
    o.stop_at_violation = false;
    const auto full = explore(o, true);
    o.symmetry = true;
    const auto reduced = explore(o, true);
    const std::string what = std::to_string(sizes.cpus) + "/" + std::to_string(sizes.tasks) + "/" +
                             std::to_string(sizes.mms) + (hotplug ? " hotplug" : "");
    ASSERT_FALSE(full.truncated || reduced.truncated) << what;
    auto identity = [](int n) {
      std::vector<int> p(n);
      for (int i = 0; i < n; ++i) p[i] = i;
      return p;
    };
    std::map<std::string, std::string> class_of_canonical;  // canonical key -> brute-force key
    std::set<std::string> classes;
    for (const auto& w : full.sample) {
      std::string least;
      auto pc = identity(sizes.cpus);  // CPU 0 stays
      do {
        auto pt = identity(sizes.tasks);
        do {
          auto pm = identity(sizes.mms);
          do {
            const auto k = state_key(renamed_by(w, pc, pt, pm));
            if (least.empty() || k < least) least = k;
          } while (std::next_permutation(pm.begin(), pm.end()));
        } while (std::next_permutation(pt.begin(), pt.end()));
      } while (std::next_permutation(pc.begin() + 1, pc.end()));
      classes.insert(least);
      const auto [it, added] = class_of_canonical.emplace(canonical_key(w), least);
      EXPECT_EQ(it->second, least) << what << ": two classes share a canonical key";
    }
    EXPECT_EQ(class_of_canonical.size(), classes.size()) << what << ": a class has two canonical keys";
    EXPECT_EQ(reduced.states, classes.size()) << what;
    EXPECT_GT(full.states, reduced.states) << what;
    RecordProperty(what, std::to_string(full.states) + " states, " + std::to_string(classes.size()) + " classes");
  }
}

// A CPU in two mm_cpumasks: its signature must not depend on the mms' numbers (a sequence of the
// masks' signatures in mm order did, which counted 3/3/2 classes twice: 6,003,976 classes
// instead of 5,993,636).
TEST(Symmetry, CpuInTwoMasksKeyIgnoresMmNumbers) {
  World<Concrete> a = initial({3, 2, 2});
  a.mms[1].st = MmState::Live;
  a.cnt[1] = a.cnt[0];
  a.mms[0].mask.set(1), a.mms[0].mask.set(2);  // CPUs 1 and 2 alike but for their masks
  a.mms[1].mask.set(1);
  for (const auto& pm : {std::vector<int>{1, 0}, std::vector<int>{0, 1}}) {
    const auto b = renamed_by(a, {0, 1, 2}, {0, 1}, pm);
    EXPECT_EQ(canonical_key(b), canonical_key(a));
    EXPECT_EQ(canonical_key(renamed_by(a, {0, 2, 1}, {0, 1}, pm)), canonical_key(a));
  }
}

// The runner's incremental check (spec::lazytlb::Checker) against check(), the oracle: from each
// of the first reachable states of a 3-CPU, 3-task, 2-mm world with hotplug, every enabled event
// and one more after it, in six eras, without and with each mutant: the same violations in the
// same order, the same zombies, and a log that lists every record the step wrote.
TEST(IncrementalCheck, SameAsFullCheckOnEveryStep) {
  const std::pair<Arch, arch::KVersion> eras[] = {{Arch::Generic, arch::v(6, 1)},   {Arch::Generic, arch::v(6, 12)},
                                                  {Arch::PpcRadix, arch::v(6, 3)},  {Arch::PpcRadix, arch::v(6, 12)},
                                                  {Arch::PpcRadix, arch::v(6, 14)}, {Arch::PpcHash, arch::v(6, 14)}};
  std::vector<std::string> muts{""};
  for (auto m : kMutants) muts.emplace_back(m);
  std::size_t steps = 0, violated = 0;
  for (const auto& [a, ver] : eras)
    for (const auto& mut : muts) {
      ExploreOptions o;
      o.header = header(a, ver, {3, 3, 2});
      if (!mut.empty()) o.header.mutants = {mut};
      o.hotplug = true;
      o.max_states = 400;
      o.stop_when_full = true;
      o.stop_at_violation = false;
      const auto r = explore(o, true);
      const Cfg cfg = o.header.cfg();
      for (const auto& w0 : r.sample)
        for (const auto& e : candidate_events(w0, cfg, true)) {
          if (!why_not_enabled(w0, cfg, e).empty()) continue;
          World<Concrete> w = w0;
          spec::lazytlb::Checker checker(w, cfg);
          ++steps;
          if (!step_both(cfg, w, checker, e).empty()) {
            ++violated;
            continue;
          }
          for (const auto& e2 : candidate_events(w, cfg, true))
            if (why_not_enabled(w, cfg, e2).empty()) {
              ++steps;
              violated += !step_both(cfg, w, checker, e2).empty();
              break;
            }
        }
      if (HasFailure()) return;  // one era's first differences are enough to read
    }
  EXPECT_GT(steps, 50000u);
  EXPECT_GT(violated, 100u);  // the violating steps are compared too
  RecordProperty("steps", std::to_string(steps));
  RecordProperty("violated", std::to_string(violated));
}

// The log is what the incremental check relies on: a step whose writes are left out of it
// leaves the Checker's view stale, and it misses what check() sees.
TEST(IncrementalCheck, UnlistedWritesAreNoticed) {
  Script h = header(Arch::Generic, arch::v(6, 12), {2, 3, 2});
  h.mutants = {"no-lazy-grab"};  // user -> kthread switch without the lazy reference
  const Cfg cfg = h.cfg();
  World<Concrete> w = initial(h.sizes);
  spec::lazytlb::Checker checker(w, cfg);
  for (Event e : {Event{Op::Switch, 0, 0}, Event{Op::Finish, 0, 0}}) ASSERT_TRUE(step_both(cfg, w, checker, e).empty());
  Concrete d;
  Decider<Concrete> dec;
  Costs cost;
  StepLog log;
  Stepper<Concrete, true>(d, cfg, w, cost, log, dec).run(Event{Op::Switch, 0, 2});  // to the kthread
  ASSERT_FALSE(log.tasks.empty());
  const auto full = spec::lazytlb::check(w, cfg, log);
  ASSERT_FALSE(full.empty());
  EXPECT_EQ(full.front().invariant, "lazy_tlb.accounting");
  spec::lazytlb::Checker listed = checker, unlisted = checker;
  std::vector<spec::lazytlb::Violation> got;
  listed.check(w, log, got);
  EXPECT_EQ(got, full);
  EXPECT_TRUE(listed.describes(w));
  log.tasks.clear();
  log.cpus.clear();
  got.clear();
  unlisted.check(w, log, got);
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(unlisted.describes(w));
}

TEST(Symmetry, KeysOfRenamedStatesAgree) {
  World<Concrete> a = initial({3, 3, 2});
  // CPU 1 runs task 0 on mm 0, CPU 2 idles lazily on mm 0; task 1 is a second user of mm 1.
  a.mms[1].st = MmState::Live;
  a.cnt[1] = {1, 1};
  a.tasks[1].st = TaskState::Runnable;
  a.tasks[1].mm = a.tasks[1].active_mm = 1;
  a.tasks[0].st = TaskState::Running;
  a.cpus[1].curr = 0;
  a.tasks[a.idle_of(1)].st = TaskState::Runnable;
  a.tasks[a.idle_of(2)].active_mm = 0;
  a.mms[0].mask.set(1), a.mms[0].mask.set(2);
  a.cnt[0].mm_count = 2;
  // b: the same with CPUs 1 and 2, tasks 0 and 1, mms 0 and 1 renamed.
  World<Concrete> b = initial({3, 3, 2});
  b.mms[0].st = MmState::Live;
  b.mms[1].st = MmState::Live;
  b.cnt[0] = {1, 1};
  b.cnt[1] = {1, 2};
  b.tasks[0].st = TaskState::Runnable;
  b.tasks[0].mm = b.tasks[0].active_mm = 0;
  b.tasks[1].st = TaskState::Running;
  b.tasks[1].mm = b.tasks[1].active_mm = 1;
  b.cpus[2].curr = 1;
  b.tasks[b.idle_of(2)].st = TaskState::Runnable;
  b.tasks[b.idle_of(1)].active_mm = 1;
  b.mms[1].mask.set(1), b.mms[1].mask.set(2);
  EXPECT_NE(state_key(a), state_key(b));
  EXPECT_EQ(canonical_key(a), canonical_key(b));
  EXPECT_NE(canonical_key(a, false), canonical_key(b, false));  // CPUs kept: not the same state
  // One field apart is another class.
  World<Concrete> c = b;
  c.mms[1].ext_grabs = 1;
  EXPECT_NE(canonical_key(a), canonical_key(c));
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

// Hotplug events out of order are parse errors at the CPU operand; events on an offline CPU
// cannot happen.
TEST(Scripts, HotplugErrors) {
  struct Bad {
    const char* events;
    std::uint32_t line, col;
    const char* message;
  };
  const std::string head = "lazytlb 1\ncpus 3\nversion 6.12\nevents\n";
  for (auto b : {Bad{"offline 0\n", 5, 9, "CPU 0 is the boot CPU: it does not go offline"},
                 Bad{"offline 2\n  offline   2\n", 6, 13, "CPU 2 is already offline (line 5)"},
                 Bad{"repeat 2\n offline 1\n dead 1\nend\n", 6, 10, "CPU 1 is already offline (line 7)"},
                 Bad{"dead 1\n", 5, 6, "CPU 1 is not going offline (no 'offline 1' before)"},
                 Bad{"offline 1\ndead 1\ndead 1\n", 7, 6, "CPU 1 is already dead (line 6)"},
                 Bad{"online 2\n", 5, 8, "CPU 2 is online"},
                 Bad{"offline 2\nonline 2\n", 6, 8, "CPU 2 has not died yet ('dead 2' first)"},
                 Bad{"offline 3\n", 5, 9, "CPU must be in 0..2"}}) {
    auto q = parse_script(head + b.events);
    ASSERT_FALSE(q) << b.events;
    EXPECT_EQ(q.error().line, b.line) << b.events << q.error().str();
    EXPECT_EQ(q.error().col, b.col) << b.events << q.error().str();
    EXPECT_EQ(q.error().message, b.message) << b.events;
  }
  // Parsed, but impossible in the state reached: a CPU running a task, or an event on a CPU
  // that is offline.
  for (auto [events, why] :
       {std::pair{"switch 1 0\nfinish 1\noffline 1\n", "CPU is not idle (its tasks must be switched away first)"},
        std::pair{"switch 1 2\noffline 1\n", "CPU has not finished its last context switch"},
        std::pair{"offline 1\nswitch 1 0\n", "CPU is offline"},
        std::pair{"offline 1\ndead 1\nidle 1\n", "CPU is offline"}}) {
    auto p = parse_script(head + events);
    ASSERT_TRUE(p) << p.error().str();
    auto r = run_script(p.value());
    ASSERT_TRUE(r.error) << events;
    EXPECT_NE(r.error->message.find(why), std::string::npos) << r.error->str() << " / " << why;
  }
}

// A CPU that dies lazily on an mm gives its reference back (refcount) or was never counted
// (shootdown); it comes back on init_mm, and the committed hotplug scripts do what they say.
TEST(Scripts, HotplugScripts) {
  auto load = [](const char* name) {
    auto text = read_file(std::string(KACCT_LAZYTLB_DIR) + "/scripts/" + name);
    auto p = parse_script(text);
    EXPECT_TRUE(p) << name << ": " << p.error().str();
    EXPECT_EQ(write_script(parse_script(write_script(p.value())).value()), write_script(p.value()));
    return p.value();
  };
  auto cycle = load("hotplug-cycle.lts");
  auto r = run_script(cycle);
  ASSERT_FALSE(r.failed_at) << (r.error ? r.error->str() : r.violations.front().detail);
  EXPECT_EQ(r.world.mms[0].st, MmState::Freed);  // by finish_cpu's drop
  EXPECT_EQ(r.costs.frees, 1u);
  EXPECT_EQ(r.world.cpus[1].hp, Hp::Online);
  // Without the offline/dead/online the zombie stays pinned.
  Script no_hp = cycle;
  no_hp.events.erase(no_hp.events.begin() + 7, no_hp.events.begin() + 10);
  EXPECT_EQ(run_script(no_hp).world.mms[0].st, MmState::Live);

  auto race = load("hotplug-race.lts");
  auto bad = run_script(race);
  ASSERT_TRUE(bad.failed_at);
  EXPECT_EQ(*bad.failed_at, race.events.size() - 1);
  EXPECT_EQ(bad.line, 20u);
  EXPECT_EQ(bad.violations.front().invariant, "lazy_tlb.no_dangling_active_mm");
  for (auto v : {arch::v(6, 4), arch::v(6, 13)}) {
    race.version = v;
    EXPECT_TRUE(run_script(race).failed_at) << v.str();
  }
  race.version = arch::v(6, 14);
  race.events.push_back({Op::Dead, 1, 0});
  race.events.push_back({Op::Online, 1, 0});
  auto fixed = run_script(race);
  EXPECT_FALSE(fixed.failed_at);
  EXPECT_EQ(fixed.world.mms[0].st, MmState::Freed);
  EXPECT_EQ(fixed.world.tasks[fixed.world.idle_of(1)].active_mm, kInitMm);
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
