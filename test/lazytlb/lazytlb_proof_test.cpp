// The lazy_tlb proof model: every Z3 step job holds for the real code, except going offline
// under shootdown before the hotplug fix (6.12), and each mutant of the model makes at least one
// job violated (the jobs are not vacuous).
#include <gtest/gtest.h>

#include "proofs/registry.hpp"

namespace kacct::proofs {
namespace {

TEST(LazyTlbProof, AllStepJobsHoldButTheHotplugRace) {
  auto rs = lazytlb_all_jobs(10000);
  ASSERT_GE(rs.size(), 50u);
  int hotplug = 0;
  for (const auto& r : rs) {
    if (r.name == "lazy_tlb.step[offline,shootdown-6.12]") {
      // The outgoing CPU leaves cpu_online_mask still lazy on a user mm (21641bd9a7a7 fixes it).
      EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
      EXPECT_EQ(r.replay, "concrete step");
      EXPECT_NE(r.detail.find("offline 1"), std::string::npos) << r.detail;
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
    for (const char* op : {"[offline,", "[dead,", "[online,"}) hotplug += r.name.find(op) != std::string::npos;
  }
  EXPECT_EQ(hotplug, 3 * 3 + 2);  // three events in refcount, pre-6.4 and shootdown; dead, online before the fix
  bool fork = false, exec = false;
  for (const auto& r : rs) {
    fork = fork || r.name.find("[forkvm,") != std::string::npos;
    exec = exec || r.name.find("[exec,") != std::string::npos;
  }
  EXPECT_TRUE(fork && exec);
}

TEST(LazyTlbProof, MutantsMakeJobsFail) {
  for (auto [mut, sd] :
       {std::pair{"no-lazy-grab", false}, std::pair{"shoot-skip-cpu", true}, std::pair{"clear-wrong-cpu", true},
        std::pair{"no-force-init-mm", true}, std::pair{"dead-no-drop", false}, std::pair{"offline-clear-all", true}}) {
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
