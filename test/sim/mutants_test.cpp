// Mutants: a test that the tests work. For every spec invariant that the machine's check mode
// evaluates (model/sim/machine.cpp), a plausibly broken model step must make it false. The
// steps are real: the state before and after one event comes from running a trace prefix
// through the simulator (or, for cputime_adjust, from the model itself); the mutant then
// corrupts the "after" state the way a bug would. Each test first asserts that the real step
// satisfies the invariant, so no mutant can pass vacuously.
#include <gtest/gtest.h>

#include "model/sim/machine.hpp"
#include "spec/invariants.hpp"

namespace kacct {
namespace {

using namespace model;
using C = Concrete;

sim::ModelCfg cfg(bool irq_time, bool steal) {
  sim::ModelCfg m;
  m.tick = TickCfg{irq_time, steal, 4'000'000};
  m.adjust = AdjustCfg{AdjustEra::ClampToRtime, ScaleDiv::Exact128};
  return m;
}

const std::string kHeader = R"(kacct-trace 1
cpu x86-64
ncpus 1
clock ns
task 100 pid=100 comm=batch nice=5 mm=1
events
)";

// User ticks of a nice task, with steal before the second one.
const std::string kNiceTicks = kHeader + R"(0 0 switch prev=0 next=100
1000 0 syscall_exit
4000000 0 tick
7000000 0 steal ns=500000
8000000 0 tick
)";
constexpr size_t kSecondTick = 4;

// An irq in user mode, a tick, steal and a switch (rq clock update).
const std::string kIrq = kHeader + R"(0 0 switch prev=0 next=100
1000 0 syscall_exit
2000 0 irq_enter vec=1
5000 0 irq_exit
6000 0 tick
7000 0 steal ns=500
8000 0 switch prev=100 next=0
)";
constexpr size_t kIrqExit = 3, kIrqTick = 4, kSwitchAfterSteal = 6;

// CPU 0 and the task that was current at event i, before and after it.
struct Around {
  CpuAcct<C> before, after;
  TaskAcct<C> task_before, task_after;
};
Around around(const std::string& text, size_t i, const sim::ModelCfg& m) {
  auto t = trace::load(text);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  auto p = sim::compile(t.value());
  EXPECT_TRUE(p.ok());
  auto prefix = [&](size_t n) {
    sim::Program q = p.value();
    q.events.resize(n);
    q.lines.resize(n);
    auto r = sim::run(q, m, {.check = true});
    EXPECT_FALSE(r.violation) << r.violation->invariant;
    return r;
  };
  const auto a = prefix(i), b = prefix(i + 1);
  const std::uint32_t task = 1;  // tid 100 is the first task after the idle task (ncpus 1)
  return {a.cpus[0], b.cpus[0], a.tasks[task], b.tasks[task]};
}

TickCtx user_tick_ctx() {  // what the machine passes for a user-mode tick of a nice task
  TickCtx x;
  x.user_tick = true;
  x.preempt_count = HARDIRQ_OFFSET;
  x.nice_pos = true;
  return x;
}

// ---- tick_conserves ----

TEST(Mutant, TickChargedToTwoBucketsBreaksTickConserves) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, false));
  ASSERT_TRUE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
  s.after.cpustat[SYSTEM] += s.after.cpustat[NICE] - s.before.cpustat[NICE];  // also charged as system
  EXPECT_FALSE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
}

TEST(Mutant, StealTakenButTickFullyChargedBreaksTickConserves) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, true));
  ASSERT_EQ(s.after.cpustat[STEAL] - s.before.cpustat[STEAL], 500'000u);
  ASSERT_TRUE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
  s.after.cpustat[NICE] += 500'000;  // cputime not reduced by the steal taken
  EXPECT_FALSE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
}

TEST(Mutant, IrqTimeTakenButTickFullyChargedBreaksTickConserves) {
  C d;
  auto s = around(kIrq, kIrqTick, cfg(true, false));
  const auto taken = s.before.irqtime.tick_delta - s.after.irqtime.tick_delta;
  ASSERT_EQ(taken, 3000u);
  ASSERT_TRUE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
  s.after.cpustat[USER] += taken;  // irqtime_tick_accounted() result ignored
  EXPECT_FALSE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));
}

// ---- tick_attributed ----

TEST(Mutant, NiceTaskTickInUserBucketBreaksTickAttributed) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, false));
  const auto x = user_tick_ctx();
  ASSERT_TRUE(spec::tick::tick_attributed(d, s.before, s.after, x, false));
  const auto t = s.after.cpustat[NICE] - s.before.cpustat[NICE];
  ASSERT_GT(t, 0u);
  s.after.cpustat[NICE] -= t;  // task_nice(p) > 0 ignored: USER instead of NICE
  s.after.cpustat[USER] += t;
  ASSERT_TRUE(spec::tick::tick_conserves(d, s.before, s.after, std::uint64_t{4'000'000}));  // only attribution is wrong
  EXPECT_FALSE(spec::tick::tick_attributed(d, s.before, s.after, x, false));
}

// ---- steal_accounted ----

TEST(Mutant, StealConsumedButNotAccountedBreaksStealAccounted) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, true));
  ASSERT_TRUE(spec::tick::steal_accounted(d, s.after));
  s.after.cpustat[STEAL] = s.before.cpustat[STEAL];  // prev_steal_time advanced, cpustat not
  EXPECT_FALSE(spec::tick::steal_accounted(d, s.after));
}

// ---- irq_boundary_conserves / irqtime_pending_bounded ----

TEST(Mutant, IrqDeltaNotAddedToTickDeltaBreaksIrqBoundaryConserves) {
  C d;
  auto s = around(kIrq, kIrqExit, cfg(true, false));
  ASSERT_EQ(s.after.cpustat[IRQ] - s.before.cpustat[IRQ], 3000u);
  ASSERT_TRUE(spec::tick::irq_boundary_conserves(d, s.before, s.after));
  s.after.irqtime.tick_delta = s.before.irqtime.tick_delta;  // IRQ and total updated, tick_delta forgotten
  EXPECT_FALSE(spec::tick::irq_boundary_conserves(d, s.before, s.after));
}

TEST(Mutant, IrqDeltaInBothBucketsBreaksIrqBoundaryConserves) {
  C d;
  auto s = around(kIrq, kIrqExit, cfg(true, false));
  ASSERT_TRUE(spec::tick::irq_boundary_conserves(d, s.before, s.after));
  s.after.cpustat[SOFTIRQ] += s.after.cpustat[IRQ] - s.before.cpustat[IRQ];  // hardirq delta also as softirq
  EXPECT_FALSE(spec::tick::irq_boundary_conserves(d, s.before, s.after));
}

// ---- irq_boundary_attributed: per category, not only the sum ----

// A softirq in task context, then a hardirq nested in a second softirq.
const std::string kSoftirq = kHeader + R"(0 0 switch prev=0 next=100
1000 0 softirq_enter vec=3
5000 0 softirq_exit
6000 0 softirq_enter vec=1
7000 0 irq_enter vec=1
9000 0 irq_exit
9500 0 softirq_exit
)";
constexpr size_t kSoftirqExit = 2, kNestedIrqEnter = 4, kNestedIrqExit = 5, kOuterSoftirqExit = 6;

TEST(Mutant, HardirqTimeInSoftirqBreaksIrqBoundaryAttributedNotTheSum) {
  C d;
  auto s = around(kIrq, kIrqExit, cfg(true, false));
  ASSERT_TRUE(spec::tick::irq_boundary_attributed(d, s.before, s.after, HARDIRQ_OFFSET, false));
  const auto delta = s.after.cpustat[IRQ] - s.before.cpustat[IRQ];
  s.after.cpustat[IRQ] -= delta;  // the hardirq's time charged as softirq
  s.after.cpustat[SOFTIRQ] += delta;
  EXPECT_TRUE(spec::tick::irq_boundary_conserves(d, s.before, s.after));  // the sum cannot see it
  EXPECT_FALSE(spec::tick::irq_boundary_attributed(d, s.before, s.after, HARDIRQ_OFFSET, false));
}
TEST(Mutant, SoftirqTimeInHardirqBreaksIrqBoundaryAttributed) {
  C d;
  for (auto [i, pc] : {std::pair{kSoftirqExit, SOFTIRQ_OFFSET}, std::pair{kNestedIrqEnter, SOFTIRQ_OFFSET},
                       std::pair{kOuterSoftirqExit, SOFTIRQ_OFFSET}}) {
    auto s = around(kSoftirq, i, cfg(true, false));
    const auto delta = s.after.cpustat[SOFTIRQ] - s.before.cpustat[SOFTIRQ];
    ASSERT_GT(delta, 0u) << i;
    ASSERT_TRUE(spec::tick::irq_boundary_attributed(d, s.before, s.after, pc, false)) << i;
    s.after.cpustat[SOFTIRQ] -= delta;
    s.after.cpustat[IRQ] += delta;
    EXPECT_FALSE(spec::tick::irq_boundary_attributed(d, s.before, s.after, pc, false)) << i;
  }
  // The nested hardirq's exit: its time is IRQ, the softirq it interrupted gets none.
  auto s = around(kSoftirq, kNestedIrqExit, cfg(true, false));
  const std::uint32_t pc = HARDIRQ_OFFSET + SOFTIRQ_OFFSET;
  ASSERT_EQ(s.after.cpustat[IRQ] - s.before.cpustat[IRQ], 2000u);
  ASSERT_TRUE(spec::tick::irq_boundary_attributed(d, s.before, s.after, pc, false));
  s.after.cpustat[IRQ] -= 2000;
  s.after.cpustat[SOFTIRQ] += 2000;
  EXPECT_FALSE(spec::tick::irq_boundary_attributed(d, s.before, s.after, pc, false));
}
// Leaving task context (and a softirq run by ksoftirqd) charges no irq bucket.
TEST(Mutant, TaskTimeChargedAsIrqBreaksIrqBoundaryAttributed) {
  C d;
  auto s = around(kSoftirq, 1, cfg(true, false));  // softirq_enter from task context
  ASSERT_TRUE(spec::tick::irq_boundary_attributed(d, s.before, s.after, 0, false));
  s.after.cpustat[SOFTIRQ] += 1000;
  s.after.irqtime.total += 1000;
  s.after.irqtime.tick_delta += 1000;
  EXPECT_TRUE(spec::tick::irq_boundary_conserves(d, s.before, s.after));
  EXPECT_FALSE(spec::tick::irq_boundary_attributed(d, s.before, s.after, 0, false));
  EXPECT_EQ(spec::tick::irq_bucket_left(SOFTIRQ_OFFSET, true), NR_STATS);
  EXPECT_EQ(spec::tick::irq_bucket_left(HARDIRQ_OFFSET + SOFTIRQ_OFFSET, true), IRQ);
}

TEST(Mutant, IrqDeltaPendingTwiceBreaksIrqtimePendingBounded) {
  C d;
  auto s = around(kIrq, kIrqExit, cfg(true, false));
  ASSERT_TRUE(spec::tick::irqtime_pending_bounded(d, s.after));
  s.after.irqtime.tick_delta += s.after.irqtime.total - s.before.irqtime.total;  // added twice
  EXPECT_FALSE(spec::tick::irqtime_pending_bounded(d, s.after));
}

// ---- rq_clock_split ----

TEST(Mutant, StealNotSubtractedFromClockTaskBreaksRqClockSplit) {
  C d;
  auto s = around(kIrq, kSwitchAfterSteal, cfg(false, true));
  const auto st = s.after.rq.prev_steal_time_rq - s.before.rq.prev_steal_time_rq;
  ASSERT_EQ(st, 500u);
  ASSERT_TRUE(spec::tick::rq_clock_split(d, s.after));
  s.after.rq.clock_task += st;  // steal recorded as taken but still in clock_task
  EXPECT_FALSE(spec::tick::rq_clock_split(d, s.after));
}

TEST(Mutant, IrqTimeNotSubtractedFromClockTaskBreaksRqClockSplit) {
  C d;
  auto s = around(kIrq, kSwitchAfterSteal, cfg(true, false));
  ASSERT_EQ(s.after.rq.prev_irq_time, 3000u);
  ASSERT_TRUE(spec::tick::rq_clock_split(d, s.after));
  s.after.rq.prev_irq_time += 3000;  // irq time taken out twice
  EXPECT_FALSE(spec::tick::rq_clock_split(d, s.after));
}

// ---- monotonic (CPU and task) ----

TEST(Mutant, StealSubtractedFromBucketBreaksCpuMonotonic) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, true));
  ASSERT_TRUE(spec::tick::monotonic(d, s.before, s.after));
  ASSERT_GE(s.before.cpustat[NICE], 500'000u);
  s.after.cpustat[NICE] = s.before.cpustat[NICE] - 500'000;  // steal taken out of the bucket, not the tick
  EXPECT_FALSE(spec::tick::monotonic(d, s.before, s.after));
}

TEST(Mutant, TickOverwritesUtimeBreaksTaskMonotonic) {
  C d;
  auto s = around(kNiceTicks, kSecondTick, cfg(false, false));
  ASSERT_TRUE(spec::tick::monotonic(d, s.task_before, s.task_after));
  ASSERT_EQ(s.task_after.utime, 8'000'000u);
  s.task_after.utime = s.task_after.utime - s.task_before.utime - 1;  // p->utime = cputime (minus a rounding)
  EXPECT_FALSE(spec::tick::monotonic(d, s.task_before, s.task_after));
}

TEST(Mutant, RtimeResetOnSwitchBreaksTaskMonotonic) {
  C d;
  auto s = around(kIrq, kSwitchAfterSteal, cfg(false, false));
  ASSERT_TRUE(spec::tick::monotonic(d, s.task_before, s.task_after));
  ASSERT_GT(s.task_before.sum_exec_runtime, 0u);
  s.task_after.sum_exec_runtime = s.task_after.sum_exec_runtime - s.task_before.sum_exec_runtime;  // per-slice
  EXPECT_FALSE(spec::tick::monotonic(d, s.task_before, s.task_after));
}

// ---- cputime_adjust G1..G3 ----

struct Adjusted {
  PrevCputime<C> before, out;
  TaskCputime<C> in;
};
Adjusted adjust(AdjustEra era, ScaleDiv div, TaskCputime<C> in, PrevCputime<C> prev) {
  C d;
  Adjusted a{prev, {}, in};
  a.out = cputime_adjust(d, AdjustCfg{era, div}, in, prev);
  EXPECT_TRUE(d.ok());
  return a;
}

TEST(Mutant, AdjustOutputDecreasedBreaksAdjustMonotonic) {
  C d;
  auto a =
      adjust(AdjustEra::ClampToRtime, ScaleDiv::Exact128, {3'000'000, 1'000'000, 10'000'000}, {4'000'000, 2'000'000});
  ASSERT_TRUE(spec::tick::adjust_monotonic(d, a.before, a.out));
  ASSERT_TRUE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));
  a.out.stime = a.before.stime - 1;  // the clamp to prev->stime dropped
  a.out.utime = a.in.sum_exec_runtime - a.out.stime;
  ASSERT_TRUE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));  // only G1 sees it
  EXPECT_FALSE(spec::tick::adjust_monotonic(d, a.before, a.out));
}

// The real 4.3..4.7 bug fixed by 173be9a14f7b: the utime == 0 shortcut skips the clamps.
TEST(Mutant, GotoUpdateEraShortcutBreaksAdjustMonotonic) {
  C d;
  const TaskCputime<C> in{0, 10, 12};
  const PrevCputime<C> prev{5, 5};
  ASSERT_TRUE(spec::tick::adjust_monotonic(d, prev, adjust(AdjustEra::ClampAlways, ScaleDiv::Exact128, in, prev).out));
  auto a = adjust(AdjustEra::GotoUpdate, ScaleDiv::Exact128, in, prev);
  EXPECT_FALSE(spec::tick::adjust_monotonic(d, a.before, a.out));
}

TEST(Mutant, UtimeNotRecomputedBreaksAdjustSumIsRtime) {
  C d;
  auto a =
      adjust(AdjustEra::ClampToRtime, ScaleDiv::Exact128, {3'000'000, 1'000'000, 10'000'000}, {4'000'000, 2'000'000});
  ASSERT_TRUE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));
  a.out.utime = a.in.utime;  // "utime = rtime - stime" forgotten
  EXPECT_FALSE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));
}

// The real <= 4.2 behaviour: per-field max() loses utime + stime == rtime.
TEST(Mutant, PerFieldMaxEraBreaksAdjustSumIsRtime) {
  C d;
  const TaskCputime<C> in{1, 1, 12};
  const PrevCputime<C> prev{10, 0};
  ASSERT_TRUE(
      spec::tick::adjust_sum_is_rtime(d, prev, in, adjust(AdjustEra::ClampAlways, ScaleDiv::Exact128, in, prev).out));
  auto a = adjust(AdjustEra::PerFieldMax, ScaleDiv::Exact128, in, prev);
  EXPECT_FALSE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));
}

TEST(Mutant, StimeAboveRtimeBreaksAdjustStimeLeRtime) {
  C d;
  auto a = adjust(AdjustEra::ClampAlways, ScaleDiv::Exact128, {3'000'000, 1'000'000, 10'000'000}, {0, 0});
  ASSERT_TRUE(spec::tick::adjust_stime_le_rtime(d, a.before, a.in, a.out));
  a.out.stime = a.in.sum_exec_runtime + 1;  // an inexact division that overshoots, unclamped (pre-77baa5bafcbe)
  a.out.utime = a.in.sum_exec_runtime - a.out.stime;                       // wraps
  ASSERT_TRUE(spec::tick::adjust_sum_is_rtime(d, a.before, a.in, a.out));  // the sum still matches mod 2^64
  ASSERT_TRUE(spec::tick::adjust_monotonic(d, a.before, a.out));
  EXPECT_FALSE(spec::tick::adjust_stime_le_rtime(d, a.before, a.in, a.out));
}

}  // namespace
}  // namespace kacct
