// The prover's verdicts on native vtime: what must hold, the hazards it must find (with
// counterexamples that replay), and the two Kconfig patches' claims.
#include <gtest/gtest.h>

#include <map>

#include "proofs/registry.hpp"

namespace kacct::proofs {
namespace {

TEST(ProofsNative, JobsAtFullWidth) {
  std::map<std::string, Result> by;
  for (auto& r : native_all_jobs(20000)) by[r.name] = r;
  auto verdict = [&](const std::string& n) {
    EXPECT_TRUE(by.count(n)) << n;
    return by[n].verdict;
  };
  for (const char* w : {"PPC32", "PPC64"}) {
    const std::string s = std::string("[") + w + "]";
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_sum" + s), Verdict::Holds);
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_identity" + s), Verdict::Holds);
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_no_overflow" + s), Verdict::Violated);
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.no_division_by_zero" + s), Verdict::Violated);
    EXPECT_NE(verdict("native_vtime.vtime_delta_scaled.split_bounds" + s), Verdict::Violated);
    EXPECT_NE(verdict("native_vtime.vtime_delta_scaled.split_bounds" + s), Verdict::Error);
    for (const char* h : {"account_cpu_user_entry", "account_cpu_user_exit", "vtime_account_kernel", "vtime_account_hardirq",
                          "vtime_account_softirq", "vtime_account_idle", "vtime_flush"})
      EXPECT_EQ(verdict(std::string("native_vtime.") + h + ".tb_conserved" + s), Verdict::Holds) << h << s;
  }
  EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_bounds[8-bit, exhaustive]"), Verdict::Holds);
  EXPECT_EQ(verdict("native_vtime.vtime_task_switch(PPC32 hand-over).tb_conserved[PPC32]"), Verdict::Holds);
  for (const auto& [n, r] : by) {
    EXPECT_NE(r.verdict, Verdict::Error) << n << ": " << r.detail;
    if (r.verdict == Verdict::Violated) {
      EXPECT_NE(r.detail.find("replayed concretely"), std::string::npos) << n;
    }
  }
}

TEST(ProofsNative, PatchClaims) {
  for (const char* id : {"abcff86df2d2", "b4645ffc49cf"}) {
    auto p = *arch::find_patch(id);
    auto rs = native_vtime_claims(p, 20000);
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[0].name, "native.unscaled_unchanged");
    EXPECT_EQ(rs[0].verdict, Verdict::Holds) << rs[0].detail;
    EXPECT_EQ(rs[1].verdict, Verdict::Violated) << rs[1].detail;  // per call, scaled != unscaled
    ASSERT_TRUE(rs[1].counterexample.has_value());
    EXPECT_EQ(rs[2].verdict, Verdict::Violated) << rs[2].detail;  // the removed split could overflow
    ASSERT_TRUE(rs[2].counterexample.has_value());
    EXPECT_NE(rs[2].detail.find("replayed"), std::string::npos);
  }
}

}  // namespace
}  // namespace kacct::proofs
