// Versions as people name them (mainline, stable point releases, distro builds), the backport
// table behind applied(), the configs by those names, and the deviations of the model from
// Debian's 6.1.192 and 6.12.117 that the point releases fixed (each a regression test).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "arch/registry.hpp"
#include "model/cputime/cputime_adjust.hpp"
#include "model/native/result.hpp"
#include "model/sim/machine.hpp"
#include "model/tick/tick.hpp"
#include "model/trace/trace.hpp"

namespace kacct {
namespace {
using arch::v;
using C = Concrete;

TEST(Versions, ParseAndName) {
  EXPECT_EQ(arch::parse_version("6.1"), v(6, 1));
  EXPECT_EQ(arch::parse_version("6.1.192"), v(6, 1, 192));
  EXPECT_EQ(arch::parse_version("6.1.0"), v(6, 1));
  for (std::string_view n : {"6.1.192-3", "6.12.117-1~deb12u1"}) {
    auto k = arch::parse_version(n);
    ASSERT_TRUE(k) << n;
    EXPECT_EQ(k->str(), n);
  }
  EXPECT_EQ(arch::parse_version("6.1.192-3")->upstream(), v(6, 1, 192));
  EXPECT_EQ(v(6, 12, 117).str(), "6.12.117");
  EXPECT_EQ(v(6, 12).str(), "6.12");
  for (std::string_view bad : {"6", "6.", "6.1.2.3", "x.1", "6.1-3", "6.1.192-9", "300.1"})
    EXPECT_FALSE(arch::parse_version(bad)) << bad;
}

TEST(Versions, OrderedAsReleased) {
  const auto deb61 = *arch::parse_version("6.1.192-3");
  const auto deb612 = *arch::parse_version("6.12.117-1~deb12u1");
  EXPECT_LT(v(6, 1), v(6, 1, 1));
  EXPECT_LT(v(6, 1, 9), v(6, 1, 10));  // numeric, not by spelling
  EXPECT_LT(v(6, 1, 192), deb61);      // the distro build after its base
  EXPECT_LT(deb61, v(6, 1, 193));
  EXPECT_LT(deb61, v(6, 2));
  EXPECT_LT(v(6, 9, 200), v(6, 10));
  EXPECT_LT(v(6, 12, 116), deb612);
  EXPECT_LT(deb612, v(6, 13));
  EXPECT_LT(v(6, 6, 80), v(6, 12));
}

TEST(Versions, AppliedAnswersForPointReleases) {
  using arch::applied;
  // 77baa5bafcbe (6.11): 6.1.105 and 6.10.5 from the Debian changelogs.
  EXPECT_FALSE(applied("77baa5bafcbe", v(6, 1)));
  EXPECT_FALSE(applied("77baa5bafcbe", v(6, 1, 104)));
  EXPECT_TRUE(applied("77baa5bafcbe", v(6, 1, 105)));
  EXPECT_TRUE(applied("77baa5bafcbe", *arch::parse_version("6.1.192-3")));
  EXPECT_FALSE(applied("77baa5bafcbe", v(6, 2, 16)));  // another series: not backported there
  EXPECT_FALSE(applied("77baa5bafcbe", v(6, 10, 4)));
  EXPECT_TRUE(applied("77baa5bafcbe", v(6, 10, 5)));
  EXPECT_TRUE(applied("77baa5bafcbe", v(6, 11)));
  EXPECT_TRUE(applied("77baa5bafcbe", v(6, 12, 117)));
  // ddae0ca2a8fe (6.10): 6.1.100.
  EXPECT_FALSE(applied("ddae0ca2a8fe", v(6, 1, 99)));
  EXPECT_TRUE(applied("ddae0ca2a8fe", v(6, 1, 100)));
  EXPECT_FALSE(applied("ddae0ca2a8fe", v(6, 9, 12)));
  // 570c8efd5eb7 (6.17): 6.12.42.
  EXPECT_FALSE(applied("570c8efd5eb7", v(6, 12, 41)));
  EXPECT_TRUE(applied("570c8efd5eb7", v(6, 12, 42)));
  // Every backport row names a patch of the table, in a series before the patch's release.
  for (const auto& b : arch::backports) {
    auto p = arch::find_patch(b.id);
    ASSERT_TRUE(p) << b.id;
    EXPECT_LT(b.first.series(), p->after) << b.id;
    EXPECT_GT(b.first.point, 0) << b.id;
    EXPECT_FALSE(b.source.empty());
    EXPECT_TRUE(arch::applied(b.id, b.first));
    EXPECT_FALSE(arch::applied(b.id, arch::v(b.first.major, b.first.minor, b.first.point - 1)));
  }
}

TEST(Versions, DebianConfigsListedAndInTheMatrix) {
  const auto& all = arch::all_configs();
  const auto& props = arch::configs();
  for (const auto& k : props) EXPECT_NE(std::find(all.begin(), all.end(), k), all.end()) << k.name();
  for (const char* n :
       {"6.1.192-tick-hz250", "6.1.192-tick-irqtime-steal-hz250", "6.1.192-gen-hz250", "6.1.192-gen-irqtime-hz250",
        "6.1.192-native-hz250", "6.1.192-native-steal-hz250", "6.12.117-tick-hz250", "6.12.117-tick-irqtime-hz250",
        "6.12.117-gen-hz250", "6.12.117-gen-steal-hz250", "6.12.117-native-hz250", "6.12.117-native-steal-hz250"}) {
    auto k = arch::find_config(n);
    ASSERT_TRUE(k) << n;
    EXPECT_NE(std::find(props.begin(), props.end(), *k), props.end()) << n;
  }
  // Every accepted name is listed: what find_config used to accept unlisted is in all_configs.
  for (const char* n :
       {"6.1-gen-hz250", "6.11-tick-hz1000", "4.13-gen-hz250", "6.1.104-tick-hz1000", "6.1.105-gen-hz250"}) {
    auto k = arch::find_config(n);
    ASSERT_TRUE(k) << n;
    EXPECT_NE(std::find(all.begin(), all.end(), *k), all.end()) << n;
  }
  for (const auto& k : all) EXPECT_EQ(arch::find_config(k.name()), k) << k.name();
  EXPECT_FALSE(arch::find_config("6.6.50-tick-hz250"));  // no backport of ours opens it
}

}  // namespace
}  // namespace kacct
