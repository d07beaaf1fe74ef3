// Native vtime steps (model/native/native.hpp) on hand-computed values: the SPURR split's user
// share since the last sample, the SPLPAR steal clamp, and the buckets each step fills. Each test
// names the catalogued mutants (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include "model/native/native.hpp"

namespace {
using namespace kacct;
using namespace kacct::model;
using namespace kacct::model::native;
using C = Concrete;

// 306: the user share of a split is the user time since the previous split, not since boot.
TEST(NativeKill, SplitUsesUserTimeSinceLastSample) {
  C d;
  NativeCfg cfg;
  Cost k;
  auto a = zero_acct<C, 64>(d);
  a.utime = 100;
  EXPECT_EQ((delta_scaled<C, 64>(d, cfg, a, 300, 200, k)), 200u);  // ds == s + u: no scaling
  EXPECT_EQ(a.utime_scaled, 100u);
  EXPECT_EQ(a.utime_sspurr, 100u);
  // No user time since: the whole SPURR delta is system's.
  EXPECT_EQ((delta_scaled<C, 64>(d, cfg, a, 600, 300, k)), 300u);
  EXPECT_EQ(a.utime_scaled, 100u);
  // 300 SPURR ticks over 100 system + 100 user TB ticks: half each.
  a.utime = 200;
  EXPECT_EQ((delta_scaled<C, 64>(d, cfg, a, 900, 100, k)), 150u);
  EXPECT_EQ(a.utime_scaled, 250u);
  EXPECT_EQ(a.startspurr, 900u);
}

// 312-313: SPLPAR steal (4.11+) is clamped off the interval and accumulated in full.
TEST(NativeKill, SplparStealClampedOffTheInterval) {
  C d;
  NativeCfg cfg;
  cfg.scaled = false;
  cfg.splpar = true;
  Cost k;
  auto a = zero_acct<C, 64>(d);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Kernel, 100, 0, 150, k);  // more steal than interval
  EXPECT_EQ(a.stime, 0u);
  EXPECT_EQ(a.steal_time, 150u);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Kernel, 300, 0, 50, k);
  EXPECT_EQ(a.stime, 150u);
  EXPECT_EQ(a.steal_time, 200u);
}

// 314-316: each kernel-side context fills its own bucket, and its scaled share the matching one
// (guest time is user time for the scaled split).
TEST(NativeKill, KernelSideBucketsPerContext) {
  C d;
  NativeCfg cfg;
  Cost k;
  auto a = zero_acct<C, 64>(d);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Guest, 100, 100, 0, k);
  EXPECT_EQ(a.gtime, 100u);
  EXPECT_EQ(a.utime_scaled, 100u);
  EXPECT_EQ(a.stime_scaled, 0u);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Hardirq, 130, 130, 0, k);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Softirq, 170, 170, 0, k);
  account_kernel_side<C, 64>(d, cfg, a, Kctx::Kernel, 220, 220, 0, k);
  EXPECT_EQ(a.hardirq_time, 30u);
  EXPECT_EQ(a.softirq_time, 40u);
  EXPECT_EQ(a.stime, 50u);
  EXPECT_EQ(a.stime_scaled, 120u);
  EXPECT_EQ(a.utime_scaled, 100u);
}

// 321: vtime_flush hands guest time to account_guest_time (guest and user buckets).
TEST(NativeKill, FlushGuestTime) {
  C d;
  NativeCfg cfg;
  const auto sc = tb_scale_of(cfg.tb_hz);
  cfg.tb_scale = sc.scale;
  cfg.tb_shift = sc.shift;
  Cost k;
  auto a = zero_acct<C, 64>(d);
  a.gtime = 512;  // 1 us at 512 MHz
  auto c = zero_cpu(d);
  auto p = zero_task(d);
  Scaled<C> s{0, 0};
  vtime_flush<C, 64>(d, cfg, a, c, p, s, FlushCtx{}, k);
  EXPECT_EQ(c.cpustat[GUEST], 1000u);
  EXPECT_EQ(c.cpustat[USER], 1000u);
  EXPECT_EQ(p.gtime, 1000u);
  EXPECT_EQ(p.utime, 1000u);
}

// 326-328: the <= 4.10 immediate hand-off: guest_nice, the task's share of irq time, steal
// charged to the CPU only.
TEST(NativeKill, ImmediateHandOffPerBucket) {
  C d;
  NativeCfg cfg;
  cfg.flush_epoch = false;
  Cost k;
  auto a = zero_acct<C, 64>(d);
  a.gtime = 10;
  a.hardirq_time = 20;
  a.softirq_time = 30;
  a.steal_time = 40;
  a.stime = 50;
  TbSinks<C, 64> cpu{}, task{};
  Scaled<C> s{0, 0};
  FlushCtx fx;
  fx.nice_pos = true;
  flush_immediate<C, 64>(d, cfg, a, cpu, task, s, fx, false, k);
  EXPECT_EQ(cpu.cpustat[GUEST_NICE], 10u);
  EXPECT_EQ(cpu.cpustat[GUEST], 0u);
  EXPECT_EQ(cpu.cpustat[NICE], 10u);
  EXPECT_EQ(cpu.cpustat[IRQ], 20u);
  EXPECT_EQ(cpu.cpustat[STEAL], 40u);
  EXPECT_EQ(task.stime, 50u + 20u + 30u);
  EXPECT_EQ(task.utime, 10u);
  EXPECT_EQ(task.gtime, 10u);
}

// 331-333: PPC32 4.7-4.10 hand-over zeroes the incoming times; vtime_reset restarts the SPURR
// sample; read_spurr prefers SPURR.
TEST(NativeKill, HandOverResetAndSpurr) {
  C d;
  NativeCfg cfg;
  Cost k;
  auto prev = zero_acct<C, 32>(d), next = zero_acct<C, 32>(d);
  prev.starttime = 77;
  next.stime = 5;
  next.utime = 6;
  cfg.zero_on_switch = true;
  hand_over<C, 32>(d, cfg, prev, next, k);
  EXPECT_EQ(next.starttime, 77u);
  EXPECT_EQ(next.stime, 0u);
  EXPECT_EQ(next.utime, 0u);
  auto a = zero_acct<C, 64>(d);
  EXPECT_EQ((vtime_reset<C, 64>(d, cfg, a, 1000, 900, k)), 1000u);
  EXPECT_EQ(a.starttime, 1000u);
  EXPECT_EQ(a.startspurr, 900u);
  cfg.source = ScaledSource::Spurr;
  EXPECT_EQ((read_spurr<C, 64>(cfg, 1, 2, 3, k)), 3u);
  cfg.source = ScaledSource::Purr;
  EXPECT_EQ((read_spurr<C, 64>(cfg, 1, 2, 3, k)), 2u);
}

}  // namespace
