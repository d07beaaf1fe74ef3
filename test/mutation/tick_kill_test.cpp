// Per-category checks of the tick, irq time, steal and rq clock steps (model/tick/tick.hpp) on
// hand-computed values: which bucket each nanosecond lands in, not only the totals. Each test
// names the catalogued mutants (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include "model/tick/tick.hpp"

namespace {
using namespace kacct;
using namespace kacct::model;

struct TickFixture : ::testing::Test {
  Concrete d;
  CpuAcct<Concrete> c = zero_cpu(d);
  TaskAcct<Concrete> p = zero_task(d);
  // Every bucket but the listed ones is 0.
  void expect_only(std::initializer_list<std::pair<Usage, std::uint64_t>> want) {
    std::array<std::uint64_t, NR_STATS> w{};
    for (auto [u, v] : want) w[u] = v;
    for (unsigned b = 0; b < NR_STATS; ++b) EXPECT_EQ(c.cpustat[b], w[b]) << usage_names[b];
  }
};

// 101-107: the sinks, per bucket and per task field.
TEST_F(TickFixture, SinksPerBucket) {
  TickCtx x;
  account_user_time(d, c, p, x, 10);
  x.nice_pos = true;
  account_user_time(d, c, p, x, 20);
  expect_only({{USER, 10}, {NICE, 20}});
  EXPECT_EQ(p.utime, 30u);
  account_guest_time(d, c, p, x, 5);  // nice guest
  x.nice_pos = false;
  account_guest_time(d, c, p, x, 7);
  expect_only({{USER, 17}, {NICE, 25}, {GUEST, 7}, {GUEST_NICE, 5}});
  EXPECT_EQ(p.utime, 42u);
  EXPECT_EQ(p.gtime, 12u);
  account_system_index_time(d, c, p, 3, SYSTEM);
  EXPECT_EQ(p.stime, 3u);
  x.nr_iowait = true;
  account_idle_time(d, c, x, 4);
  x.nr_iowait = false;
  account_idle_time(d, c, x, 6);
  EXPECT_EQ(c.cpustat[IOWAIT], 4u);
  EXPECT_EQ(c.cpustat[IDLE], 6u);
}

// 108-111: account_system_time() by preempt count, with the timer's own HARDIRQ_OFFSET.
TEST_F(TickFixture, SystemTimeByContext) {
  auto one = [&](std::uint32_t pc, bool vcpu) {
    c = zero_cpu(d);
    p = zero_task(d);
    TickCtx x;
    x.preempt_count = pc;
    x.pf_vcpu = vcpu;
    account_system_time(d, c, p, x, HARDIRQ_OFFSET, 100);
  };
  one(HARDIRQ_OFFSET, false);
  expect_only({{SYSTEM, 100}});
  one(2 * HARDIRQ_OFFSET, false);  // a nested hardirq
  expect_only({{IRQ, 100}});
  one(HARDIRQ_OFFSET | SOFTIRQ_OFFSET, false);  // serving a softirq
  expect_only({{SOFTIRQ, 100}});
  one(HARDIRQ_OFFSET + 2 * SOFTIRQ_OFFSET, false);  // bh disabled, not serving: system
  expect_only({{SYSTEM, 100}});
  one(HARDIRQ_OFFSET, true);  // PF_VCPU outside any other irq: guest
  expect_only({{USER, 100}, {GUEST, 100}});
  EXPECT_EQ(p.gtime, 100u);
  one(HARDIRQ_OFFSET | SOFTIRQ_OFFSET, true);  // PF_VCPU in a softirq: softirq
  expect_only({{SOFTIRQ, 100}});
  EXPECT_EQ(p.stime, 100u);
}

// 112-114, 123: steal taken up to maxtime; the rest stays pending.
TEST_F(TickFixture, StealClampedAndPending) {
  TickCfg cfg;
  cfg.steal = true;
  c.steal_clock = 5000;
  EXPECT_EQ(steal_account_process_time(d, cfg, c, 1000), 1000u);
  EXPECT_EQ(c.cpustat[STEAL], 1000u);
  EXPECT_EQ(c.prev_steal_time, 1000u);
  EXPECT_EQ(steal_account_process_time(d, cfg, c, ~0ull), 4000u);
  EXPECT_EQ(c.cpustat[STEAL], 5000u);
  // A tick with 1 ms of new steal: 3 ms user.
  c.steal_clock = 5000 + 1'000'000;
  TickCtx x;
  x.user_tick = true;
  account_process_tick(d, cfg, c, p, x);
  EXPECT_EQ(c.cpustat[USER], cfg.tick_nsec - 1'000'000);
  EXPECT_EQ(c.cpustat[STEAL], 1'005'000u);
}

// 115-118: account_other_time(): steal first, then irq time, max in all; the rest pending.
TEST_F(TickFixture, OtherTimeStealThenIrq) {
  TickCfg cfg;
  cfg.steal = cfg.irq_time = true;
  c.steal_clock = 3000;
  c.irqtime.tick_delta = 5000;
  EXPECT_EQ(account_other_time(d, cfg, c, 4000), 4000u);
  EXPECT_EQ(c.cpustat[STEAL], 3000u);
  EXPECT_EQ(c.irqtime.tick_delta, 4000u);
  EXPECT_EQ(irqtime_tick_accounted(d, c, 1000), 1000u);
  EXPECT_EQ(c.irqtime.tick_delta, 3000u);
}

// 120-121: the irq-time tick goes to the task's base context.
TEST_F(TickFixture, IrqTimeTickByTaskKind) {
  TickCfg cfg;
  cfg.irq_time = true;
  c.irqtime.tick_delta = 1'000'000;
  TickCtx x;
  x.is_ksoftirqd = true;
  account_process_tick(d, cfg, c, p, x);
  expect_only({{SOFTIRQ, cfg.tick_nsec - 1'000'000}});
  c = zero_cpu(d);
  x = {};
  x.pf_vcpu = true;
  account_process_tick(d, cfg, c, p, x);
  expect_only({{USER, cfg.tick_nsec}, {GUEST, cfg.tick_nsec}});
}

// 122: an idle tick inside the timer interrupt is idle time.
TEST_F(TickFixture, IdleTickInTimerIrq) {
  TickCfg cfg;
  TickCtx x;
  x.is_idle = true;
  x.preempt_count = HARDIRQ_OFFSET;
  account_process_tick(d, cfg, c, p, x);
  expect_only({{IDLE, cfg.tick_nsec}});
  x.preempt_count = 2 * HARDIRQ_OFFSET;  // idle, but in a nested irq: system path (IRQ)
  c = zero_cpu(d);
  account_process_tick(d, cfg, c, p, x);
  expect_only({{IRQ, cfg.tick_nsec}});
}

// 124-126: account_idle_ticks(): with irq time the count is an int (truncated, sign-extended).
TEST_F(TickFixture, IdleTicksIntCount) {
  TickCfg cfg;
  TickCtx x;
  x.is_idle = true;
  account_idle_ticks(d, cfg, c, p, x, 3);
  expect_only({{IDLE, 3 * cfg.tick_nsec}});
  cfg.irq_time = true;
  c = zero_cpu(d);
  account_idle_ticks(d, cfg, c, p, x, (std::uint64_t{1} << 32) + 2);  // (int) -> 2
  expect_only({{IDLE, 2 * cfg.tick_nsec}});
  c = zero_cpu(d);
  account_idle_ticks(d, cfg, c, p, x, 0x8000'0000u);  // (int) -> INT_MIN, sign-extended
  expect_only({{IDLE, cfg.tick_nsec * 0xffff'ffff'8000'0000ull}});
  c = zero_cpu(d);
  account_idle_ticks(d, cfg, c, p, x, (std::uint64_t{1} << 33) + 5);  // (int) -> 5
  expect_only({{IDLE, 5 * cfg.tick_nsec}});
}

// 127-131: irq boundaries: hardirq and softirq time in their own buckets, task time in none.
TEST_F(TickFixture, IrqBoundaryPerCategory) {
  TickCfg cfg;
  cfg.irq_time = true;
  irqtime_account_irq(d, cfg, c, 100, IrqClass::Hardirq);
  irqtime_account_irq(d, cfg, c, 250, IrqClass::Softirq);
  irqtime_account_irq(d, cfg, c, 300, IrqClass::None);
  irqtime_account_irq(d, cfg, c, 340, IrqClass::Hardirq);
  expect_only({{IRQ, 140}, {SOFTIRQ, 150}});
  EXPECT_EQ(c.irqtime.total, 290u);
  EXPECT_EQ(c.irqtime.tick_delta, 290u);
  EXPECT_EQ(c.irqtime.irq_start_time, 340u);
}

// 132-137: update_rq_clock(): irq time and steal out of clock_task, each clamped.
TEST_F(TickFixture, RqClockSplit) {
  TickCfg cfg;
  cfg.irq_time = cfg.steal = true;
  c.irqtime.total = 300;
  c.steal_clock = 500;
  update_rq_clock(d, cfg, c, 1000);
  EXPECT_EQ(c.rq.clock, 1000u);
  EXPECT_EQ(c.rq.clock_task, 200u);
  EXPECT_EQ(c.rq.prev_irq_time, 300u);
  EXPECT_EQ(c.rq.prev_steal_time_rq, 500u);
  c.irqtime.total = 5300;  // 5000 ns of irq time in a 100 ns update: 100 taken
  c.steal_clock = 1500;
  update_rq_clock(d, cfg, c, 1100);
  EXPECT_EQ(c.rq.clock_task, 200u);
  EXPECT_EQ(c.rq.prev_irq_time, 400u);
  EXPECT_EQ(c.rq.prev_steal_time_rq, 500u);  // nothing left for steal: it stays pending
  cfg.irq_time = false;
  update_rq_clock(d, cfg, c, 1200);  // steal: 1000 pending, 100 taken
  EXPECT_EQ(c.rq.prev_steal_time_rq, 600u);
  EXPECT_EQ(c.rq.clock_task, 200u);
  cfg.steal_drop_excess = true;  // 108ad0999085: the excess is dropped
  update_rq_clock(d, cfg, c, 1300);
  EXPECT_EQ(c.rq.prev_steal_time_rq, 1500u);
  EXPECT_EQ(c.rq.steal_dropped, 800u);
  EXPECT_EQ(c.rq.clock_task, 200u);
  update_rq_clock(d, cfg, c, 1250);  // backwards: nothing moves
  EXPECT_EQ(c.rq.clock, 1300u);
  EXPECT_EQ(c.rq.clock_task, 200u);
  cfg.steal = false;
  update_rq_clock(d, cfg, c, 1400);
  EXPECT_EQ(c.rq.clock_task, 300u);
}

// 138-139: update_curr(): runtime once per clock_task advance, never backwards.
TEST_F(TickFixture, UpdateCurrOnce) {
  c.rq.clock_task = 200;
  update_curr(d, c, p);
  update_curr(d, c, p);
  EXPECT_EQ(p.sum_exec_runtime, 200u);
  EXPECT_EQ(p.exec_start, 200u);
  c.rq.clock_task = 150;  // behind exec_start ((s64)delta < 0): nothing
  update_curr(d, c, p);
  EXPECT_EQ(p.sum_exec_runtime, 200u);
  EXPECT_EQ(p.exec_start, 200u);
}

}  // namespace
