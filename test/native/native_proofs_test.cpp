// The prover's verdicts on native vtime: what must hold, the hazards it must find (with
// counterexamples that replay), and the two Kconfig patches' claims.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "proofs/jobs.hpp"
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
  // Broken by the split's division alone: s + u wraps to 0 at W bits (PPC32: 2^32 TB ticks,
  // 8.4 s at 512 MHz, since the last sample), the finding of no_division_by_zero, which every job
  // through the split reports since the obligations are part of each goal. Where the division is
  // defined, the invariant itself must hold (decided: no unknown).
  auto by_division = [&](const std::string& n) {
    EXPECT_EQ(verdict(n), Verdict::Violated) << n << ": " << by[n].detail;
    EXPECT_NE(by[n].detail.find("breaks obligation vtime_delta_scaled.div;"), std::string::npos)
        << n << ": " << by[n].detail;
    EXPECT_NE(by[n].detail.find("where every obligation holds, the invariants: hold (unsat)"), std::string::npos)
        << n << ": " << by[n].detail;
  };
  for (const char* w : {"PPC32", "PPC64"}) {
    const std::string s = std::string("[") + w + "]";
    for (const char* j : {"split_sum", "split_bounds", "split_identity"})
      by_division(std::string("native_vtime.vtime_delta_scaled.") + j + s);
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_no_overflow" + s), Verdict::Violated);
    EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.no_division_by_zero" + s), Verdict::Violated);
    for (const char* h : {"account_cpu_user_entry", "account_cpu_user_exit", "vtime_flush"})
      EXPECT_EQ(verdict(std::string("native_vtime.") + h + ".tb_conserved" + s), Verdict::Holds) << h << s;
    for (const char* h :
         {"vtime_account_kernel", "vtime_account_hardirq", "vtime_account_softirq", "vtime_account_idle"})
      by_division(std::string("native_vtime.") + h + ".tb_conserved" + s);
  }
  // The split jobs' fact, and tb_to_ns's bound at every rate of the table, at full width.
  EXPECT_EQ(verdict("native_vtime.lemma.udiv_product_le[every width]"), Verdict::Holds);
  unsigned rates = 0;
  for (const auto& [n, r] : by)
    if (n.rfind("native_vtime.tb_to_ns.bounded[", 0) == 0) {
      ++rates;
      EXPECT_EQ(r.verdict, Verdict::Holds) << n << ": " << r.detail;
    }
  EXPECT_EQ(rates, 7u);
  EXPECT_EQ(verdict("native_vtime.vtime_delta_scaled.split_bounds[8-bit, exhaustive]"), Verdict::Holds);
  EXPECT_EQ(verdict("native_vtime.vtime_task_switch(PPC32 hand-over).tb_conserved[PPC32]"), Verdict::Holds);
  // Exactly these 23 of the 42 jobs are violated (the findings above, plus the kernel-side
  // hooks' variants through the split: PF_VCPU, <= 4.10 and SPLPAR); every other job holds.
  std::set<std::string> violated;
  for (const char* w : {"PPC32", "PPC64"}) {
    for (const char* j : {"split_sum", "split_bounds", "split_identity", "split_no_overflow", "no_division_by_zero"})
      violated.insert(std::string("native_vtime.vtime_delta_scaled.") + j + "[" + w + "]");
    for (const char* h : {"vtime_account_kernel", "vtime_account_kernel(PF_VCPU)", "vtime_account_hardirq",
                          "vtime_account_softirq", "vtime_account_idle"}) {
      violated.insert(std::string("native_vtime.") + h + ".tb_conserved[" + w + "]");
      by_division(std::string("native_vtime.") + h + ".tb_conserved[" + w + "]");
    }
    by_division(std::string("native_vtime.vtime_account_kernel.tb_conserved[") + w + ",<=4.10]");
    violated.insert(std::string("native_vtime.vtime_account_kernel.tb_conserved[") + w + ",<=4.10]");
  }
  violated.insert("native_vtime.vtime_account_kernel.tb_conserved[PPC64,splpar]");
  by_division("native_vtime.vtime_account_kernel.tb_conserved[PPC64,splpar]");
  EXPECT_EQ(violated.size(), 23u);
  EXPECT_EQ(by.size(), 42u);
  for (const auto& [n, r] : by) {
    EXPECT_EQ(r.verdict, violated.count(n) ? Verdict::Violated : Verdict::Holds) << n << ": " << r.detail;
    EXPECT_EQ(r.detail.find("unknown"), std::string::npos) << n << ": " << r.detail;
    if (r.verdict == Verdict::Violated) {
      EXPECT_NE(r.detail.find("replayed concretely"), std::string::npos) << n;
      EXPECT_EQ(r.replay, "concrete step") << n;
      EXPECT_FALSE(r.inputs.is_null()) << n;
    }
  }
}

// The integer statement of tb_to_ns is tight: one ns less slack than 2^shift is violated, with
// a t that replays concretely (82.5 MHz: shift 4; tb_to_ns(33) = 384, exact 400).
TEST(ProofsNative, TbToNsBoundIsTight) {
  for (std::uint64_t hz : {82'500'000u, 8'312'500u}) {
    const auto shift = model::native::tb_scale_of(hz).shift;
    const auto ok = native_tb_to_ns_job(hz, 20000, std::uint64_t{1} << shift);
    EXPECT_EQ(ok.verdict, Verdict::Holds) << ok.detail;
    const auto r = native_tb_to_ns_job(hz, 20000, (std::uint64_t{1} << shift) - 1);
    EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
    EXPECT_EQ(r.replay, "concrete step");
    EXPECT_NE(r.detail.find("replayed concretely"), std::string::npos) << r.detail;
  }
}

// The split's invariants through the abstracted division still see a broken split: a system
// share one too high breaks split_sum and split_bounds, found with a replayed counterexample.
TEST(ProofsNative, BrokenSplitIsCaught) {
  for (unsigned w : {32u, 64u})
    for (const char* inv : {"split_sum", "split_bounds"}) {
      const auto ok = native_split_job(inv, w, 20000);
      EXPECT_NE(ok.detail.find("the invariants: hold (unsat)"), std::string::npos) << ok.detail;
      const auto r = native_split_job(inv, w, 20000, true);
      EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
      EXPECT_NE(r.detail.find("the invariants: violated"), std::string::npos) << inv << w << ": " << r.detail;
    }
}

TEST(ProofsNative, PatchClaims) {
  for (const char* id : {"abcff86df2d2", "b4645ffc49cf"}) {
    auto p = *arch::find_patch(id);
    auto rs = native_vtime_claims(p, 20000);
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[0].name, "native_vtime.unscaled_unchanged");
    EXPECT_EQ(rs[0].verdict, Verdict::Holds) << rs[0].detail;
    EXPECT_EQ(rs[1].verdict, Verdict::Violated) << rs[1].detail;  // per call, scaled != unscaled
    ASSERT_TRUE(rs[1].counterexample.has_value());
    EXPECT_EQ(rs[2].verdict, Verdict::Violated) << rs[2].detail;  // the removed split could overflow
    ASSERT_TRUE(rs[2].counterexample.has_value());
    EXPECT_NE(rs[2].detail.find("replayed"), std::string::npos);
    for (const auto& r : rs)
      if (r.verdict == Verdict::Violated) { EXPECT_EQ(r.replay, "trace via sim::run") << r.name; }
  }
}

}  // namespace
}  // namespace kacct::proofs
