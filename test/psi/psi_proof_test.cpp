// Z3 per-step obligations of the PSI irq model (proof model "psi_irq"): the faithful model
// holds every obligation except the u32 width finding, and each mutant is caught.
#include <gtest/gtest.h>

#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"

using namespace kacct;
using namespace kacct::proofs;
using kacct::model::psi::Variant;

namespace {
constexpr unsigned kTimeout = 20000;
const Result* find(const std::vector<Result>& rs, const std::string& name) {
  for (const auto& r : rs)
    if (r.name == name) return &r;
  return nullptr;
}
}  // namespace

// 6.1 and 6.10's seq_even / base_le_total / monotonic / charge_exact / lock_held run in
// ValidateSeedPatches (the claims of 52b1364ba0b1 and ddae0ca2a8fe); the rest here.
TEST(PsiProof, FaithfulHoldsExceptTheWidthFinding) {
  std::vector<Result> rs;
  for (const char* v : {"6.12", "6.17"})
    for (auto& r : psi_jobs(kTimeout, Variant::Faithful, v, "")) rs.push_back(std::move(r));
  for (const char* ob : {"lag_zero", "neg_guard", "delta_fits_u32"})
    for (auto& r : psi_jobs(kTimeout, Variant::Faithful, "6.10", ob)) rs.push_back(std::move(r));
  for (auto& r : psi_jobs(kTimeout, Variant::Faithful, "6.1", "delta_fits_u32")) rs.push_back(std::move(r));
  ASSERT_EQ(rs.size(), 2 * 8u + 3 + 1);
  for (const auto& r : rs) {
    if (r.name.rfind("psi_irq.delta_fits_u32", 0) == 0) {
      // Finding: no call site bounds the delta below 2^32 (pre-fix: the clock delta, post-fix:
      // the time since the last charge point).
      EXPECT_EQ(r.verdict, Verdict::Violated) << r.name;
      EXPECT_TRUE(r.counterexample) << r.name;
      EXPECT_EQ(r.replay, "concrete step") << r.name;
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
  }
}

TEST(PsiProof, MutantsAreCaught) {
  auto v = [](Variant var, const std::string& job) {
    auto ob = job.substr(8, job.find('[') - 8);
    auto rs = psi_jobs(kTimeout, var, "6.10", ob);
    auto* r = find(rs, job);
    EXPECT_NE(r, nullptr) << job;
    if (r && r->verdict == Verdict::Violated) { EXPECT_FALSE(r->replay.empty()) << job; }
    return r ? r->verdict : Verdict::Error;
  };
  EXPECT_EQ(v(Variant::NoLock, "psi_irq.lock_held[6.10]"), Verdict::Violated);
  EXPECT_EQ(v(Variant::DoubleCount, "psi_irq.charge_exact[6.10]"), Verdict::Violated);
  EXPECT_EQ(v(Variant::LostDelta, "psi_irq.charge_exact[6.10]"), Verdict::Violated);
  EXPECT_EQ(v(Variant::NoNegGuard, "psi_irq.neg_guard[6.10]"), Verdict::Violated);
}

TEST(PsiProof, ValidateSeedPatches) {
  ValidateOptions o;
  o.patches = {"52b1364ba0b1", "ddae0ca2a8fe"};
  o.timeout_ms = kTimeout;
  auto reps = validate(o);
  ASSERT_EQ(reps.size(), 2u);
  for (const auto& c : reps[0].claims) EXPECT_EQ(c.verdict, Verdict::Holds) << c.name << ": " << c.detail;
  ASSERT_EQ(reps[1].claims.size(), 4u);
  EXPECT_EQ(reps[1].claims[0].name, "psi_irq.same_charge");
  EXPECT_EQ(reps[1].claims[0].verdict, Verdict::Violated);  // it differs, and says how
  EXPECT_TRUE(reps[1].claims[0].counterexample);
  EXPECT_EQ(reps[1].claims[0].replay, "script run");
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(reps[1].claims[i].verdict, Verdict::Holds) << reps[1].claims[i].name;
  // validate() gives every claim its scope (the table itself: test/proofs_scope_test.cpp).
  for (const auto& r : reps)
    for (const auto& c : r.claims) {
      EXPECT_FALSE(c.scope.covers.empty()) << c.name;
      EXPECT_FALSE(c.scope.omits.empty()) << c.name;
      EXPECT_TRUE(c.json().contains("scope")) << c.name;
    }
}
