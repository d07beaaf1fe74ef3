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

// Every mainline release in order: a closed major's last minor is followed by the next major.
TEST(Versions, NextMainlineCrossesMajors) {
  EXPECT_EQ(arch::next_mainline(arch::v(3, 18)), arch::v(3, 19));
  EXPECT_EQ(arch::next_mainline(arch::v(3, 19)), arch::v(4, 0));
  EXPECT_EQ(arch::next_mainline(arch::v(4, 19)), arch::v(4, 20));
  EXPECT_EQ(arch::next_mainline(arch::v(4, 20)), arch::v(5, 0));
  EXPECT_EQ(arch::next_mainline(arch::v(5, 19)), arch::v(6, 0));
  EXPECT_EQ(arch::next_mainline(arch::v(6, 1)), arch::v(6, 2));
  unsigned n = 0;  // 3.10 .. 6.12: 10 + 21 + 20 + 13 releases
  for (auto k = arch::v(3, 10); k <= arch::v(6, 12); k = arch::next_mainline(k)) ++n;
  EXPECT_EQ(n, 64u);
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
  // f1a0a376ca0c (5.14): 5.10.50, 5.12.17, 5.13.2 from the July 2021 stable pushes; never 5.4.y.
  EXPECT_FALSE(applied("f1a0a376ca0c", v(5, 10, 49)));
  EXPECT_TRUE(applied("f1a0a376ca0c", v(5, 10, 50)));
  EXPECT_FALSE(applied("f1a0a376ca0c", v(5, 12, 16)));
  EXPECT_TRUE(applied("f1a0a376ca0c", v(5, 12, 17)));
  EXPECT_FALSE(applied("f1a0a376ca0c", v(5, 13, 1)));
  EXPECT_TRUE(applied("f1a0a376ca0c", v(5, 13, 2)));
  EXPECT_FALSE(applied("f1a0a376ca0c", v(5, 4, 290)));
  EXPECT_FALSE(applied("f1a0a376ca0c", v(5, 11, 22)));
  // 160457140187 (5.13): 5.10.41 and 5.12.8; 87fa7f3e98a1 (5.9) has no backport.
  EXPECT_FALSE(applied("160457140187", v(5, 10, 40)));
  EXPECT_TRUE(applied("160457140187", v(5, 10, 41)));
  EXPECT_FALSE(applied("160457140187", v(5, 12, 7)));
  EXPECT_TRUE(applied("160457140187", v(5, 12, 8)));
  EXPECT_FALSE(applied("160457140187", v(5, 11, 22)));
  EXPECT_FALSE(applied("87fa7f3e98a1", v(5, 8, 18)));
  EXPECT_TRUE(applied("87fa7f3e98a1", v(5, 9)));
  // ddae0ca2a8fe (6.10): 6.1.100.
  EXPECT_FALSE(applied("ddae0ca2a8fe", v(6, 1, 99)));
  EXPECT_TRUE(applied("ddae0ca2a8fe", v(6, 1, 100)));
  EXPECT_FALSE(applied("ddae0ca2a8fe", v(6, 9, 12)));
  // 108ad0999085 (6.14): 6.1.129 and 6.12.14.
  EXPECT_FALSE(applied("108ad0999085", v(6, 1, 128)));
  EXPECT_TRUE(applied("108ad0999085", v(6, 1, 129)));
  EXPECT_FALSE(applied("108ad0999085", v(6, 12, 13)));
  EXPECT_TRUE(applied("108ad0999085", v(6, 12, 14)));
  EXPECT_FALSE(applied("108ad0999085", v(6, 13)));
  EXPECT_TRUE(applied("108ad0999085", v(6, 14)));
  // 570c8efd5eb7 (6.17): 6.12.42. powerpc boot starttime: 6.12.101.
  EXPECT_FALSE(applied("570c8efd5eb7", v(6, 12, 41)));
  EXPECT_TRUE(applied("570c8efd5eb7", v(6, 12, 42)));
  EXPECT_FALSE(applied("ppc-vtime-boot-starttime", v(6, 12, 100)));
  EXPECT_TRUE(applied("ppc-vtime-boot-starttime", v(6, 12, 101)));
  EXPECT_TRUE(applied("ppc-vtime-boot-starttime", *arch::parse_version("6.12.117-1~deb12u1")));
  EXPECT_FALSE(applied("ppc-vtime-boot-starttime", v(6, 1, 192)));
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
  for (const char* n : {"6.1-gen-hz250", "6.11-tick-hz1000", "4.13-gen-hz250", "6.1.104-tick-hz1000",
                        "6.1.105-gen-hz250", "6.12.100-native-hz250", "6.12.101-native-hz250"}) {
    auto k = arch::find_config(n);
    ASSERT_TRUE(k) << n;
    EXPECT_NE(std::find(all.begin(), all.end(), *k), all.end()) << n;
  }
  for (const auto& k : all) EXPECT_EQ(arch::find_config(k.name()), k) << k.name();
  EXPECT_FALSE(arch::find_config("6.6.50-tick-hz250"));  // no backport of ours opens it
}

// 77baa5bafcbe in 6.1.105: the 2024 arm64 report's input on a generic-division CPU.
TEST(Deviations, CputimeAdjustClampIn61192) {
  auto adjust = [](arch::KVersion ver) {
    C d;
    model::TaskCputime<C> curr{1416780000ull, 175136586720000ull, 135989749728000ull};
    model::PrevCputime<C> prev{0, 0};
    return model::cputime_adjust(d, model::adjust_cfg(ver, false), curr, prev);
  };
  auto fixed = adjust(v(6, 1, 192));
  EXPECT_EQ(fixed.utime, 0u);
  EXPECT_EQ(fixed.stime, 135989749728000ull);
  auto debian = adjust(*arch::parse_version("6.1.192-3"));
  EXPECT_EQ(debian.stime, fixed.stime);
  auto old = adjust(v(6, 1));  // mainline 6.1: the wrapped utime of the report
  EXPECT_EQ(old.utime, 18446744073509626086ull);
  EXPECT_EQ(old.stime, 135989949653530ull);
}

// b29a62d87cc0's generic mul_u64_u64_div_u64 returns U64_MAX when the quotient does not fit.
TEST(Deviations, GenericDivisionSaturatesFrom612) {
  EXPECT_TRUE(model::adjust_cfg(v(6, 12), false).overflow_max);
  EXPECT_TRUE(model::adjust_cfg(v(6, 12, 117), false).overflow_max);
  EXPECT_FALSE(model::adjust_cfg(v(6, 12), true).overflow_max);   // x86-64 divq: #DE, obligation only
  EXPECT_FALSE(model::adjust_cfg(v(6, 11), false).overflow_max);  // the 2020 routine
  const std::uint64_t a = std::uint64_t{1} << 63, b = 8, c = 3;   // a*b/c = 2^66/3 > 2^64
  C d;
  EXPECT_EQ(model::scale(d, model::ScaleDiv::Exact128, a, b, c, true), std::numeric_limits<std::uint64_t>::max());
  EXPECT_NE(std::find(d.failed.begin(), d.failed.end(), "mul_u64_u64_div_u64.quotient_fits"), d.failed.end());
  C e;
  EXPECT_EQ(model::scale(e, model::ScaleDiv::Exact128, a, b, c, false),
            std::uint64_t((unsigned __int128)a * b / c));  // truncated (the obligation is the finding)
  // On the edge: a*b/c == 2^64 - 1 fits.
  C f;
  EXPECT_EQ(model::scale(f, model::ScaleDiv::Exact128, ~std::uint64_t{0}, 3, 3, true), ~std::uint64_t{0});
  EXPECT_TRUE(f.failed.empty());
  // mul_hi against the 128-bit product.
  for (auto [x, y] :
       {std::pair{~0ull, ~0ull}, {0x1234'5678'9abc'def0ull, 0xfedc'ba98'7654'3210ull}, {1ull << 32, 1ull << 32}})
    EXPECT_EQ(model::mul_hi_u64(d, x, y), std::uint64_t(((unsigned __int128)x * y) >> 64));
}

model::TickCtx idle_ctx(std::uint32_t pc) {
  model::TickCtx x;
  x.is_idle = true;
  x.preempt_count = pc;
  return x;
}

// irq_count() includes NMI_MASK: a tick on the idle task with an NMI count is not idle time.
TEST(Deviations, IrqCountIncludesNmi) {
  C d;
  model::TickCfg cfg;
  auto c = model::zero_cpu(d);
  auto p = model::zero_task(d);
  model::account_process_tick(d, cfg, c, p, idle_ctx(model::HARDIRQ_OFFSET | (1u << 20)));
  EXPECT_EQ(c.cpustat[model::IDLE], 0u);
  EXPECT_EQ(c.cpustat[model::SYSTEM], cfg.tick_nsec);
  auto c2 = model::zero_cpu(d);
  model::account_process_tick(d, cfg, c2, p, idle_ctx(model::HARDIRQ_OFFSET));
  EXPECT_EQ(c2.cpustat[model::IDLE], cfg.tick_nsec);
}

// irqtime_account_idle_ticks(int ticks): the unsigned long count is truncated to int.
TEST(Deviations, IdleTicksTruncatedToInt) {
  C d;
  model::TickCfg cfg;
  cfg.irq_time = true;
  auto c = model::zero_cpu(d);
  auto idle = model::zero_task(d);
  model::account_idle_ticks(d, cfg, c, idle, idle_ctx(0), (std::uint64_t{1} << 32) + 3);
  EXPECT_EQ(c.cpustat[model::IDLE], 3 * cfg.tick_nsec);
  auto c2 = model::zero_cpu(d);
  model::account_idle_ticks(d, cfg, c2, idle, idle_ctx(0), std::uint64_t{1} << 31);  // (int) -2^31
  EXPECT_EQ(c2.cpustat[model::IDLE], std::uint64_t(std::int64_t(cfg.tick_nsec) * -(std::int64_t{1} << 31)));
  cfg.irq_time = false;  // account_idle_ticks' own path keeps the unsigned long
  auto c3 = model::zero_cpu(d);
  model::account_idle_ticks(d, cfg, c3, idle, idle_ctx(0), (std::uint64_t{1} << 32) + 3);
  EXPECT_EQ(c3.cpustat[model::IDLE], ((std::uint64_t{1} << 32) + 3) * cfg.tick_nsec);
}

// 108ad0999085 (6.1.129, 6.12.14): steal beyond the elapsed delta is dropped, not caught up.
TEST(Deviations, ExcessStealDroppedFrom61129) {
  for (bool drop : {false, true}) {
    C d;
    model::TickCfg cfg;
    cfg.steal = true;
    cfg.steal_drop_excess = drop;
    auto c = model::zero_cpu(d);
    c.steal_clock = 10'000'000;                    // 10 ms of steal pending
    model::update_rq_clock(d, cfg, c, 4'000'000);  // 4 ms elapsed: all of it steal
    EXPECT_EQ(c.rq.clock_task, 0u);
    model::update_rq_clock(d, cfg, c, 8'000'000);  // 4 ms more, no new steal
    EXPECT_EQ(c.rq.clock_task, drop ? 4'000'000u : 0u) << drop;
    EXPECT_EQ(c.rq.steal_dropped, drop ? 6'000'000u : 0u);
  }
  const auto ver = [](const char* n) { return sim::model_cfg(*arch::find_cpu("x86-64"), *arch::find_config(n)); };
  EXPECT_FALSE(ver("6.1-tick-steal-hz250").tick.steal_drop_excess);
  EXPECT_TRUE(ver("6.1.192-tick-steal-hz250").tick.steal_drop_excess);
  EXPECT_FALSE(ver("6.12-tick-steal-hz250").tick.steal_drop_excess);
  EXPECT_TRUE(ver("6.12.117-tick-steal-hz250").tick.steal_drop_excess);
}

// The powerpc boot-starttime patch (6.12.101): a 1000 ns idle trace whose TB starts at
// 5120000 (10 ms at 512 MHz) reports 1000 ns of idle on 6.12.117, 10,001,000 ns on 6.12.
TEST(Deviations, NativeStarttimeAtBootIn612117) {
  const std::string text = R"(kacct-trace 1
cpu POWER9
ncpus 1
clock ns
events
0 0 tick tb=5120000
1000 0 tick tb=5120512
)";
  auto idle_of = [&](const char* config, bool* boot_finding) {
    auto t = trace::load(text);
    EXPECT_TRUE(t.ok()) << t.error().to_string();
    auto p = sim::compile(t.value());
    EXPECT_TRUE(p.ok());
    auto r =
        sim::run(p.value(), sim::model_cfg(*arch::find_cpu("POWER9"), *arch::find_config(config)), {.check = true});
    *boot_finding = false;
    for (const auto& f : r.backend_result<model::native::NativeResult>()->findings)
      *boot_finding = *boot_finding || f.invariant == "native_vtime.boot_starttime";
    return r.cpus[0].cpustat[model::IDLE];
  };
  bool found = false;
  EXPECT_EQ(idle_of("6.12.117-native-hz250", &found), 1000u);
  EXPECT_FALSE(found);
  EXPECT_EQ(idle_of("6.12-native-hz250", &found), 10'001'000u);
  EXPECT_TRUE(found);
  EXPECT_EQ(idle_of("6.12.100-native-hz250", &found), 10'001'000u);
  EXPECT_EQ(idle_of("6.12.101-native-hz250", &found), 1000u);
}

}  // namespace
}  // namespace kacct
