// The lazy_tlb proof model: every Z3 step job holds for the real code, except going offline
// under shootdown before the hotplug fix (6.12), and each mutant of the model makes at least one
// job violated (the jobs are not vacuous).
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "proofs/registry.hpp"

namespace kacct::proofs {
namespace {

std::string test_name(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// One ctest entry per mode and per mutant (gtest_discover_tests), so that ctest -j spreads them.
class LazyTlbMode : public ::testing::TestWithParam<std::string> {};

TEST_P(LazyTlbMode, AllStepJobsHoldButTheHotplugRace) {
  const std::string mode = GetParam();
  auto rs = lazytlb_mode_jobs(mode, 10000);
  ASSERT_GE(rs.size(), mode == "shootdown-6.12" ? 3u : 10u);
  int hotplug = 0;
  bool fork = false, exec = false;
  for (const auto& r : rs) {
    EXPECT_NE(r.name.find("," + mode + "]"), std::string::npos) << r.name;
    if (r.name == "lazy_tlb.step[offline,shootdown-6.12]") {
      // The outgoing CPU leaves cpu_online_mask still lazy on a user mm (21641bd9a7a7 fixes it).
      EXPECT_EQ(r.verdict, Verdict::Violated) << r.detail;
      EXPECT_EQ(r.replay, "concrete step");
      EXPECT_NE(r.detail.find("offline 1"), std::string::npos) << r.detail;
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::Holds) << r.name << ": " << r.detail;
    for (const char* op : {"[offline,", "[dead,", "[online,"}) hotplug += r.name.find(op) != std::string::npos;
    fork = fork || r.name.find("[forkvm,") != std::string::npos;
    exec = exec || r.name.find("[exec,") != std::string::npos;
  }
  // Three hotplug events in refcount, pre-6.4 and shootdown; dead and online before the fix
  // (hotplug events only there).
  if (mode == "shootdown-6.12") {
    EXPECT_EQ(hotplug, 2);
  } else {
    EXPECT_EQ(hotplug, 3);
    EXPECT_TRUE(fork && exec);
  }
}
INSTANTIATE_TEST_SUITE_P(Modes, LazyTlbMode, ::testing::ValuesIn(lazytlb_modes()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return test_name(i.param); });
TEST(LazyTlbProof, FourModes) { EXPECT_EQ(lazytlb_modes().size(), 4u); }

class LazyTlbMutant : public ::testing::TestWithParam<std::pair<const char*, bool>> {};

TEST_P(LazyTlbMutant, MakesJobsFail) {
  const auto [mut, sd] = GetParam();
  auto rs = lazytlb_mutant_jobs(mut, sd, 10000);
  int violated = 0;
  for (const auto& r : rs) {
    violated += r.verdict == Verdict::Violated;
    EXPECT_NE(r.verdict, Verdict::Error) << mut << ": " << r.name << ": " << r.detail;
    if (r.verdict == Verdict::Violated) { EXPECT_EQ(r.replay, "concrete step") << r.name; }
  }
  EXPECT_GT(violated, 0) << mut;
}
INSTANTIATE_TEST_SUITE_P(Mutants, LazyTlbMutant,
                         ::testing::Values(std::pair{"no-lazy-grab", false}, std::pair{"shoot-skip-cpu", true},
                                           std::pair{"clear-wrong-cpu", true}, std::pair{"no-force-init-mm", true},
                                           std::pair{"dead-no-drop", false}, std::pair{"offline-clear-all", true}),
                         [](const ::testing::TestParamInfo<std::pair<const char*, bool>>& i) {
                           return test_name(i.param.first);
                         });

}  // namespace
}  // namespace kacct::proofs
