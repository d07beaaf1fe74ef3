// The prover's verdicts on the models, and on deliberately broken variants that it must catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "arch/patches.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"

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
    EXPECT_NE(r.verdict, Verdict::Violated) << r.name << ": " << r.detail;
    error = error || (r.verdict == Verdict::Error && r.detail.find("does not replay") != std::string::npos);
  }
  EXPECT_TRUE(error);
}

TEST(ProofsCputime, ClampedEraHoldsForEveryDivision) {
  for (ScaleDiv d : {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020})
    for (const char* c : {"cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", "cputime_adjust.stime_le_rtime"}) {
      auto r = claim(c, AdjustEra::ClampToRtime, d);
      EXPECT_EQ(r.verdict, Verdict::Holds) << c << ": " << r.detail;
    }
}
TEST(ProofsCputime, GotoUpdateEraLosesMonotonicityWithAReplayableTrace) {
  auto r = claim("cputime_adjust.monotonic", AdjustEra::GotoUpdate, ScaleDiv::Loop32);
  ASSERT_EQ(r.verdict, Verdict::Violated) << r.detail;
  expect_replayed({r});
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_NE(r.detail.find("trips the same check"), std::string::npos) << r.detail;
  EXPECT_EQ(r.replay, "trace via sim::run");
}
TEST(ProofsCputime, PerFieldMaxEraBreaksTheSum) {
  auto r = claim("cputime_adjust.sum_is_rtime", AdjustEra::PerFieldMax, ScaleDiv::Loop32);
  ASSERT_EQ(r.verdict, Verdict::Violated) << r.detail;
  expect_replayed({r});
  EXPECT_TRUE(r.counterexample.has_value());
}
TEST(ProofsCputime, GenericDivisionBeforeTheClampOvershoots) {
  auto r = claim("cputime_adjust.stime_le_rtime", AdjustEra::ClampAlways, ScaleDiv::Generic2020);
  ASSERT_EQ(r.verdict, Verdict::Violated) << r.detail;
  expect_replayed({r});
  auto e = claim("cputime_adjust.stime_le_rtime", AdjustEra::ClampAlways, ScaleDiv::Exact128);
  EXPECT_EQ(e.verdict, Verdict::Holds) << e.detail;
}
TEST(ProofsCputime, BrokenVariantIsCaught) {
  // A cputime_adjust that hands out one nanosecond less stime than it stored.
  auto mut = [](auto& d, auto& out) { out.stime = d.sub(out.stime, d.template lit<64>(1)); };
  auto r = adjust_claim("cputime_adjust.monotonic", {AdjustEra::ClampToRtime, ScaleDiv::Exact128}, 30000, mut);
  EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
  expect_replayed({r});
}
TEST(ProofsDivision, FactsAndOvershoots) {
  auto rs = division_jobs(20000);
  auto find = [&](const std::string& n) {
    for (const auto& r : rs)
      if (r.name == n) return r;
    ADD_FAILURE() << "no job " << n;
    return Result{};
  };
  EXPECT_EQ(find("division.exact_facts[8-bit, exhaustive]").verdict, Verdict::Holds);
  EXPECT_EQ(find("division.exact_facts[64-bit, z3]").verdict, Verdict::Holds);
  EXPECT_EQ(find("division.quotient_le_rtime[generic mul_u64_u64_div_u64 (3dc167ba5729 until b29a62d87cc0)]").verdict,
            Verdict::Violated);
  EXPECT_EQ(find("division.quotient_le_rtime[exact 128-bit mul_u64_u64_div_u64]").verdict, Verdict::Holds);
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

TEST(ProofsTick, TickConservesAndAttributed) {
  expect_holds("account_process_tick", "tick_conserves");
  expect_holds("account_process_tick", "tick_attributed");
  expect_caught(twice, "account_process_tick", "tick_conserves");
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
