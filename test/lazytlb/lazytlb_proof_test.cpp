// The lazy_tlb proof model: every Z3 step job holds for the real code, and each mutant of the
// model makes at least one job violated (the jobs are not vacuous).
#include <gtest/gtest.h>

#include "proofs/registry.hpp"

namespace kacct::proofs {
namespace {

TEST(LazyTlbProof, AllStepJobsHold) {
  auto rs = lazytlb_all_jobs(10000);
  ASSERT_GE(rs.size(), 30u);
  for (const auto& r : rs) EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
  bool fork = false, exec = false;
  for (const auto& r : rs) {
    fork = fork || r.name.find("[forkvm,") != std::string::npos;
    exec = exec || r.name.find("[exec,") != std::string::npos;
  }
  EXPECT_TRUE(fork && exec);
}

TEST(LazyTlbProof, MutantsMakeJobsFail) {
  for (auto [mut, sd] :
       {std::pair{"no-lazy-grab", false}, std::pair{"shoot-skip-cpu", true}, std::pair{"clear-wrong-cpu", true}}) {
    auto rs = lazytlb_mutant_jobs(mut, sd, 10000);
    int violated = 0;
    for (const auto& r : rs) {
      violated += r.verdict == Verdict::Violated;
      EXPECT_NE(r.verdict, Verdict::Error) << mut << ": " << r.name << ": " << r.detail;
      if (r.verdict == Verdict::Violated) { EXPECT_EQ(r.replay, "concrete step") << r.name; }
    }
    EXPECT_GT(violated, 0) << mut;
  }
}

}  // namespace
}  // namespace kacct::proofs
