// The lazy_tlb proof model: every Z3 step job holds for the real code, except going offline
// under shootdown before the hotplug fix (6.12), and each mutant of the model makes at least one
// job violated (the jobs are not vacuous).
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "model/lazytlb/lazytlb.hpp"
#include "proofs/jobs.hpp"
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

// Releases that run the same lazy-TLB code share one exploration (and step jobs), told with the
// release asked for: 6.5 runs 6.4's code on radix, 6.6 adds the exit flush (e43c0a0c3c28).
TEST(LazyTlbProof, SameCodeSharesWorkNamedByRelease) {
  using model::lazytlb::Arch;
  const model::lazytlb::Sizes s{2, 2, 1};
  const auto a = lazytlb_explored("a", Arch::PpcRadix, arch::v(6, 4), s, nullptr);
  const auto b = lazytlb_explored("b", Arch::PpcRadix, arch::v(6, 5), s, nullptr);
  const auto c = lazytlb_explored("c", Arch::PpcRadix, arch::v(6, 6), s, nullptr);
  EXPECT_GT(a.seconds, 0.0);
  EXPECT_EQ(b.seconds, 0.0) << "6.5 explored again";
  EXPECT_GT(c.seconds, 0.0) << "6.6 took 6.4's exploration";
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.verdict, a.verdict);
  const std::string pa = "ppc64-radix 6.4 (", pb = "ppc64-radix 6.5 (";
  ASSERT_EQ(a.detail.rfind(pa, 0), 0u) << a.detail;
  ASSERT_EQ(b.detail.rfind(pb, 0), 0u) << b.detail;
  EXPECT_EQ(a.detail.substr(pa.size()), b.detail.substr(pb.size()));
  // The hotplug race (before 21641bd9a7a7): each counterexample script names its own release.
  ASSERT_EQ(b.verdict, Verdict::Violated) << b.detail;
  ASSERT_TRUE(a.counterexample && b.counterexample);
  EXPECT_NE(a.counterexample->find("version 6.4\n"), std::string::npos) << *a.counterexample;
  EXPECT_NE(b.counterexample->find("version 6.5\n"), std::string::npos) << *b.counterexample;
  EXPECT_EQ(b.replay, a.replay);
}

}  // namespace
}  // namespace kacct::proofs
