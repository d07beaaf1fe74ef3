// The prover's verdicts on the models, and on deliberately broken variants that it must catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "arch/patches.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"
#include "spec/invariants.hpp"

namespace kacct::proofs {
namespace {
using namespace kacct::model;

Result claim(const char* c, AdjustEra e, ScaleDiv d) { return adjust_claim(c, {e, d}, 30000); }

// Every violated verdict carries a counterexample that was replayed concretely, and says how.
void expect_replayed(const std::vector<Result>& rs) {
  for (const auto& r : rs)
    if (r.verdict == Verdict::Violated) {
      EXPECT_FALSE(r.replay.empty()) << r.name << ": " << r.detail;
      EXPECT_TRUE(r.counterexample || !r.inputs.is_null()) << r.name;
      EXPECT_EQ(r.json().value("replay", ""), r.replay) << r.name;
    }
}

TEST(ProofsHarness, ViolatedWithoutReplayIsAnError) {
  Result r;
  r.name = "x";
  r.verdict = Verdict::Violated;
  r.inputs = {{"a", 1}};
  Result bare = r;
  require_replay(bare);
  EXPECT_EQ(bare.verdict, Verdict::Error);
  r.replay = "concrete step";
  require_replay(r);
  EXPECT_EQ(r.verdict, Verdict::Violated);
  EXPECT_EQ(r.json()["replay"], "concrete step");
  Result no_cex;
  no_cex.verdict = Verdict::Violated;
  no_cex.replay = "concrete step";
  require_replay(no_cex);
  EXPECT_EQ(no_cex.verdict, Verdict::Error);
}

// The shortcuts of solve(): a satisfiable assumption set is checked once per context (SatSets),
// a different one (contradictory) is still checked; the quick incremental solver decides holds
// and vacuous, and leaves a violation to the usual path, which returns its model.
TEST(ProofsHarness, SolveShortcutsKeepVerdicts) {
  z3::context ctx;
  const z3::expr x = ctx.bv_const("x", 32), y = ctx.bv_const("y", 32);
  const std::vector<z3::expr> sat_as = {z3::ule(x, y)}, contra = {z3::ult(x, y), z3::ult(y, x)};
  const unsigned h0 = proved_query_hits();
  for (const bool quick : {false, true}) {
    SolveHint h;
    SatSets sets;
    h.sat = &sets;
    h.quick_only = true;
    if (quick) h.quick.emplace(ctx);
    EXPECT_EQ(solve(ctx, sat_as, z3::ugt(x, y), 1000, &h).verdict, Verdict::Holds) << quick;
    EXPECT_EQ(solve(ctx, sat_as, z3::ugt(x, y), 1000, &h).verdict, Verdict::Holds) << quick;
    const auto v = solve(ctx, contra, z3::ugt(x, y), 1000, &h);
    EXPECT_EQ(v.verdict, Verdict::Error) << quick;
    EXPECT_TRUE(v.vacuous) << quick;
    const auto bad = solve(ctx, sat_as, x == y, 1000, &h);
    EXPECT_EQ(bad.verdict, Verdict::Violated) << quick;
    ASSERT_TRUE(bad.model) << quick;
    EXPECT_TRUE(bad.model->eval(x == y, true).is_true()) << quick;
    // without the quick solver the second query is the first one, proved before (no check),
    // and the violated one reuses the first's check; with it, the usual path (and its check)
    // runs for the violated one alone
    EXPECT_EQ(sets.hits, quick ? 0u : 1u) << quick;
    EXPECT_EQ(proved_query_hits(), h0 + 1) << quick;
    EXPECT_EQ(h.quick_decided, quick ? 3u : 0u) << quick;
  }
}

// A query proved once is not solved again, in any context, when its simplified text and its
// tries are the same: it holds again. A violated or vacuous query is solved each time (its
// model belongs to its context), and a query under another budget is a different one.
TEST(ProofsHarness, SameQueryProvedOnce) {
  auto query = [](z3::context& ctx, bool padded) {
    const z3::expr x = ctx.bv_const("x", 32), y = ctx.bv_const("y", 32);
    // padded: the same formula once simplified
    return std::pair{std::vector<z3::expr>{padded ? z3::ule(x, y) && ctx.bool_val(true) : z3::ule(x, y)},
                     padded ? z3::ugt(x + 0, y) : z3::ugt(x, y)};
  };
  const unsigned h0 = proved_query_hits();
  z3::context c1, c2, c3;
  const auto [a1, v1] = query(c1, false);
  EXPECT_EQ(solve(c1, a1, v1, 1234).verdict, Verdict::Holds);
  EXPECT_EQ(proved_query_hits(), h0);
  const auto [a2, v2] = query(c2, true);
  const auto again = solve(c2, a2, v2, 1234);
  EXPECT_EQ(again.verdict, Verdict::Holds);
  EXPECT_EQ(proved_query_hits(), h0 + 1);
  EXPECT_EQ(solve(c2, a2, v2, 1235).verdict, Verdict::Holds);  // another budget: solved
  EXPECT_EQ(proved_query_hits(), h0 + 1);
  const z3::expr x = c3.bv_const("x", 32), y = c3.bv_const("y", 32);
  for (int i = 0; i < 2; ++i) {
    const auto bad = solve(c3, {z3::ule(x, y)}, x == y, 1234);
    EXPECT_EQ(bad.verdict, Verdict::Violated);
    ASSERT_TRUE(bad.model);
    EXPECT_TRUE(bad.model->eval(x == y, true).is_true());
    const auto vac = solve(c3, {z3::ult(x, y), z3::ult(y, x)}, z3::ugt(x, y), 1234);
    EXPECT_EQ(vac.verdict, Verdict::Error);
    EXPECT_TRUE(vac.vacuous);
  }
  EXPECT_EQ(proved_query_hits(), h0 + 1);
}

// A mutant whose counterexample replays concretely is violated; one that exists only in the
// symbolic domain (the concrete step is the faithful one) is a replay mismatch: an error.
TEST(ProofsHarness, ReplayMismatchIsAnError) {
  CpuMutation sym_only;
  sym_only.sym = [](Symbolic& d, CpuAcct<Symbolic>& c) { c.prev_steal_time = d.add(c.prev_steal_time, d.lit<64>(1)); };
  sym_only.con = [](Concrete&, CpuAcct<Concrete>&) {};
  auto rs = tick_jobs(30000, sym_only, {}, "account_process_tick", "steal_accounted");
  ASSERT_FALSE(rs.empty());
  bool error = false;
  for (const auto& r : rs) {
    // Decided both ways: a job the mutation does not reach holds, the others are replay errors.
    const bool mismatch = r.verdict == Verdict::Error && r.detail.find("does not replay") != std::string::npos;
    EXPECT_TRUE(r.verdict == Verdict::Holds || mismatch) << r.name << ": " << name(r.verdict) << " " << r.detail;
    error = error || mismatch;
  }
  EXPECT_TRUE(error);
}

// Every cputime_adjust claim of `kacct prove --model cputime_adjust`, by era (one ctest entry
// each): violated exactly where spec::tick::adjust_fixed_by names the era's own bug (the table
// the concrete checks waive by), with a replayed counterexample; every other claim holds (12
// violated, 24 holding in all; the 4 obligation jobs: ProofsCputime.ObligationsHold).
struct AdjustEraCase {
  const char* name;  // the job name's era: the patch that opens it
  AdjustEra era;
  unsigned violated;
};
void PrintTo(const AdjustEraCase& e, std::ostream* os) { *os << e.name; }
class ProofsCputimeEra : public ::testing::TestWithParam<AdjustEraCase> {};
TEST_P(ProofsCputimeEra, ExactVerdicts) {
  const auto& e = GetParam();
  unsigned violated = 0;
  for (ScaleDiv d : {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020})
    for (const char* c : {"cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", "cputime_adjust.stime_le_rtime"}) {
      const auto r = claim(c, e.era, d);
      const bool bug = !spec::tick::adjust_fixed_by({e.era, d}, c).empty();
      EXPECT_EQ(r.verdict, bug ? Verdict::Violated : Verdict::Holds) << c << " " << e.name << ": " << r.detail;
      violated += r.verdict == Verdict::Violated;
      expect_replayed({r});
      // 9d7fb0427648's goto: the monotonicity failure is the one the kernel's own check trips.
      if (e.era == AdjustEra::GotoUpdate && std::string(c) == "cputime_adjust.monotonic" && d == ScaleDiv::Loop32) {
        EXPECT_NE(r.detail.find("trips the same check"), std::string::npos) << r.detail;
        EXPECT_EQ(r.replay, "trace via sim::run");
      }
    }
  EXPECT_EQ(violated, e.violated) << e.name;
}
INSTANTIATE_TEST_SUITE_P(Eras, ProofsCputimeEra,
                         ::testing::Values(AdjustEraCase{"before_9d7fb0427648", AdjustEra::PerFieldMax, 5},
                                           AdjustEraCase{"9d7fb0427648", AdjustEra::GotoUpdate, 5},
                                           AdjustEraCase{"173be9a14f7b", AdjustEra::ClampAlways, 2},
                                           AdjustEraCase{"77baa5bafcbe", AdjustEra::ClampToRtime, 0}),
                         [](const ::testing::TestParamInfo<AdjustEraCase>& i) { return std::string(i.param.name); });
TEST(ProofsCputime, ObligationsHold) {
  const auto rs = cputime_obligation_jobs(30000);
  ASSERT_EQ(rs.size(), 4u);
  for (const auto& r : rs) EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
}
TEST(ProofsCputime, BrokenVariantIsCaught) {
  // A cputime_adjust that hands out one nanosecond less stime than it stored.
  auto mut = [](auto& d, auto& out) { out.stime = d.sub(out.stime, d.template lit<64>(1)); };
  auto r = adjust_claim("cputime_adjust.monotonic", {AdjustEra::ClampToRtime, ScaleDiv::Exact128}, 30000, mut);
  EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
  expect_replayed({r});
}
// Every job of `kacct prove --model division`: 3 hold, 2 are the overshoots of the 32-bit loop
// and of the 2020 generic division (replayed concretely).
TEST(ProofsDivision, FactsAndOvershoots) {
  const std::map<std::string, Verdict> expected = {
      {"division.exact_facts[8-bit, exhaustive]", Verdict::Holds},
      {"division.exact_facts[64-bit, z3]", Verdict::Holds},
      {"division.quotient_le_rtime[scale_stime 32-bit loop]", Verdict::Violated},
      {"division.quotient_le_rtime[generic mul_u64_u64_div_u64 (3dc167ba5729 until b29a62d87cc0)]", Verdict::Violated},
      {"division.quotient_le_rtime[exact 128-bit mul_u64_u64_div_u64]", Verdict::Holds}};
  const auto rs = division_jobs(20000);
  std::map<std::string, Verdict> got;
  for (const auto& r : rs) got[r.name] = r.verdict;
  EXPECT_EQ(rs.size(), expected.size());
  for (const auto& [n, v] : expected) {
    ASSERT_TRUE(got.count(n)) << "no job " << n;
    EXPECT_EQ(got[n], v) << n;
  }
  expect_replayed(rs);
}
// A wrong fact (off by one) must be refuted, with q from exact 128-bit division.
TEST(ProofsDivision, BrokenFactIsCaught) {
  auto broken = [](const z3::expr& a, const z3::expr& b, const z3::expr& c, const z3::expr& q) {
    auto f = exact_div_facts_int(a, b, c, q);
    f.emplace_back("a <= c -> q < b", z3::implies(a <= c, q < b));
    return f;
  };
  const auto r = exact_facts_64(20000, broken);
  EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
  EXPECT_NE(r.detail.find("a <= c -> q < b"), std::string::npos) << r.detail;
  expect_replayed({r});
}
// The integer facts proved at 64 bits are the bit-vector facts the symbolic domain assumes
// (Symbolic::exact_div_facts): both evaluated at the same values, over random and edge inputs.
TEST(ProofsDivision, IntegerFactsAreTheDomainsFacts) {
  z3::context ctx;
  std::mt19937_64 rng(7);
  const std::uint64_t edges[] = {0, 1, 2, 3, 255, 256, ~0ull, ~0ull - 1, 1ull << 63, (1ull << 63) - 1, 1ull << 32};
  auto pick = [&](std::uint64_t around) -> std::uint64_t {
    switch (rng() % 5) {
      case 0: return edges[rng() % std::size(edges)];
      case 1: return around;
      case 2: return around + 1;
      case 3: return around - 1;
      default: return rng() >> (rng() % 64);
    }
  };
  int disagree = 0, compared = 0, held = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::uint64_t a = pick(rng() % 1000), c = pick(a), b = pick(c), q = pick(b);
    if (c == 0) continue;
    const auto bv =
        Symbolic::exact_div_facts(ctx.bv_val(a, 64), ctx.bv_val(b, 64), ctx.bv_val(c, 64), ctx.bv_val(q, 64))
            .simplify();
    z3::expr ints = ctx.bool_val(true);
    const auto num = [&](std::uint64_t v) { return ctx.int_val(std::to_string(v).c_str()); };
    for (const auto& [what, f] : exact_div_facts_int(num(a), num(b), num(c), num(q)))
      if (what.find("2^64") == std::string::npos) ints = ints && f;  // the fit is the domain's obligation
    ints = ints.simplify();
    ASSERT_TRUE(bv.is_true() || bv.is_false());
    ASSERT_TRUE(ints.is_true() || ints.is_false());
    ++compared;
    held += bv.is_true();
    if (bv.is_true() != ints.is_true()) {
      ++disagree;
      ADD_FAILURE() << "a=" << a << " b=" << b << " c=" << c << " q=" << q;
    }
  }
  EXPECT_EQ(disagree, 0);
  EXPECT_GT(compared, 3000);
  EXPECT_GT(held, 100);  // both outcomes are compared
  EXPECT_GT(compared - held, 100);
}

// CI runs one HZ value (300: TICK_NSEC = 3333333 is the one with rounding); `kacct prove`
// runs them all. Every job must hold (an unknown fails), with the full budget; the jobs are
// split over several tests (one ctest entry each) so that `ctest -j` spreads them over the
// cores. Each test also runs a broken variant of its step that the prover must catch (one
// family and HZ value, proofs/jobs_tick.cpp), so that a test that passes is not one that
// cannot fail.
constexpr unsigned kMs = 30000;

void expect_holds(const char* step, const char* inv) {
  const auto rs = tick_jobs(kMs, {}, {300}, step, inv);
  EXPECT_FALSE(rs.empty()) << "no job for " << step << " " << inv;
  for (const auto& r : rs) EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
}
// The broken variant `mutate` of `step` is caught: some job of `inv` is violated, naming it,
// with a replayed counterexample; none is an error.
template <class F>
void expect_caught(F mutate, const char* step, const char* inv) {
  const auto rs = tick_jobs(kMs, mutate, {}, step, inv);
  ASSERT_FALSE(rs.empty()) << "no job for " << step << " " << inv;
  bool caught = false;
  for (const auto& r : rs) {
    EXPECT_NE(r.verdict, Verdict::Error) << r.name << ": " << r.detail;
    caught |= r.verdict == Verdict::Violated && r.detail.find(inv) != std::string::npos;
  }
  EXPECT_TRUE(caught) << step << " " << inv;
  expect_replayed(rs);
}
// Broken variants: a tick that also charges one ns to SOFTIRQ on top of the right bucket; steal
// taken from prev_steal_time without reaching cpustat[STEAL]; irq time that goes backwards;
// irq time charged to cpustat[IRQ] twice; the task clock one ns ahead of the split.
const auto twice = [](auto& d, auto& c) { c.cpustat[SOFTIRQ] = d.add(c.cpustat[SOFTIRQ], d.template lit<64>(1)); };
const auto lost = [](auto& d, auto& c) { c.prev_steal_time = d.add(c.prev_steal_time, d.template lit<64>(1)); };
const auto back = [](auto& d, auto& c) { c.irqtime.total = d.sub(c.irqtime.total, d.template lit<64>(1)); };
const auto irq_twice = [](auto& d, auto& c) { c.cpustat[IRQ] = d.add(c.cpustat[IRQ], d.template lit<64>(1)); };
const auto ahead = [](auto& d, auto& c) { c.rq.clock_task = d.add(c.rq.clock_task, d.template lit<64>(1)); };

// tick_conserves and tick_attributed apart: together they were the label's longest entry (211 s
// wall at a load average of 9), which kept `ctest -L proof -j2` from packing.
TEST(ProofsTick, TickConserves) {
  expect_holds("account_process_tick", "tick_conserves");
  expect_caught(twice, "account_process_tick", "tick_conserves");
}
TEST(ProofsTick, TickAttributed) {
  expect_holds("account_process_tick", "tick_attributed");
  expect_caught(twice, "account_process_tick", "tick_attributed");
}
TEST(ProofsTick, TickStealAndPendingHold) {
  expect_holds("account_process_tick", "steal_accounted");
  expect_holds("account_process_tick", "irqtime_pending_bounded");
  expect_caught(lost, "account_process_tick", "steal_accounted");
}
TEST(ProofsTick, TickMonotonic) {
  expect_holds("account_process_tick", "monotonic");
  expect_caught(back, "account_process_tick", "monotonic");
}
TEST(ProofsTick, IdleTicks) {
  for (const char* inv : {"tick_conserves", "steal_accounted", "irqtime_pending_bounded", "monotonic"})
    expect_holds("account_idle_ticks", inv);
  expect_caught(back, "account_idle_ticks", "monotonic");
  expect_caught(lost, "account_idle_ticks", "steal_accounted");
}
TEST(ProofsTick, IrqBoundary) {
  for (const char* inv : {"irq_boundary_conserves", "irqtime_pending_bounded", "monotonic"})
    expect_holds("irqtime_account_irq", inv);
  expect_caught(irq_twice, "irqtime_account_irq", "irq_boundary_conserves");
  expect_caught(back, "irqtime_account_irq", "monotonic");
}
TEST(ProofsTick, RqClock) {
  for (const char* inv : {"rq_clock_split", "monotonic"}) expect_holds("update_rq_clock", inv);
  expect_caught(ahead, "update_rq_clock", "rq_clock_split");
  expect_caught(back, "update_rq_clock", "monotonic");
}

}  // namespace
}  // namespace kacct::proofs
