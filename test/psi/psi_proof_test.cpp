// Z3 per-step obligations of the PSI irq model (proof model "psi_irq"): the faithful model
// holds every obligation except the u32 width finding, and each mutant is caught.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

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
// ValidateSeedPatches (the claims of 52b1364ba0b1 and ddae0ca2a8fe); the rest here, one ctest
// entry per part (gtest_discover_tests), so that ctest -j spreads them: every obligation of 6.12
// and of 6.17, 6.10's lag_zero / neg_guard / delta_fits_u32, 6.1's delta_fits_u32.
struct Part {
  const char* ver;
  std::vector<std::string> obs;  // empty: all
  std::size_t jobs;
};
void PrintTo(const Part& p, std::ostream* os) { *os << p.ver << (p.obs.empty() ? " all" : " rest"); }
class PsiFaithful : public ::testing::TestWithParam<Part> {};

TEST_P(PsiFaithful, HoldsExceptTheWidthFinding) {
  const auto& part = GetParam();
  std::vector<Result> rs;
  if (part.obs.empty()) rs = psi_jobs(kTimeout, Variant::Faithful, part.ver, "");
  for (const auto& ob : part.obs)
    for (auto& r : psi_jobs(kTimeout, Variant::Faithful, part.ver, ob)) rs.push_back(std::move(r));
  ASSERT_EQ(rs.size(), part.jobs);
  for (const auto& r : rs) {
    EXPECT_NE(r.name.find(std::string("[") + part.ver + "]"), std::string::npos) << r.name;
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
INSTANTIATE_TEST_SUITE_P(Parts, PsiFaithful,
                         ::testing::Values(Part{"6.12", {}, 8}, Part{"6.17", {}, 8},
                                           Part{"6.10", {"lag_zero", "neg_guard", "delta_fits_u32"}, 3},
                                           Part{"6.1", {"delta_fits_u32"}, 1}),
                         [](const ::testing::TestParamInfo<Part>& i) {
                           std::string s = std::string("v") + i.param.ver + (i.param.obs.empty() ? "_all" : "_rest");
                           for (auto& c : s)
                             if (c == '.') c = '_';
                           return s;
                         });

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
  // Its four claims on mainline, then the same four on the 6.1.y backport (6.1.100), alike.
  ASSERT_EQ(reps[1].claims.size(), 8u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(reps[1].claims[i + 4].name, reps[1].claims[i].name + "@6.1.100");
    EXPECT_EQ(reps[1].claims[i + 4].verdict, reps[1].claims[i].verdict) << reps[1].claims[i + 4].name;
  }
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
