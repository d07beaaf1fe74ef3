// PSI irq steps (model/psi/psi.hpp) on hand-computed values: which group is charged how much
// from which call site, each write inside its own write section (sequence +2 per section, not
// only even), under the rq lock. Each test names the catalogued mutants
// (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include "model/psi/psi.hpp"

namespace {
using namespace kacct;
using namespace kacct::model;
using namespace kacct::model::psi;

struct PsiKill : ::testing::Test {
  Concrete d;
  PsiCfg cfg;
  // Groups: 0 root, 1 and 2 its children; tasks 1 and 2 in group 1, task 3 in group 2; one CPU.
  World<Concrete> w = make_world(d, 1, {-1, 0, 0}, 3);
  PsiKill() {
    w.c.tasks[1].group = w.c.tasks[2].group = 1;
    w.c.tasks[3].group = 2;
  }
  void irq(std::uint64_t from, std::uint64_t to) {  // a hardirq from..to
    w.v.now = from;
    irq_boundary(d, cfg, w, 0, IrqClass::None);
    w.v.now = to;
    irq_boundary(d, cfg, w, 0, IrqClass::Hardirq);
  }
  std::uint32_t irq_full(int g) const { return w.v.gc[g][0].irq_full; }
  std::uint32_t seq(int g) const { return w.v.gc[g][0].seq; }
};

// 601, 605, 608-610, 612-614: 6.10+ charges at the tick and at a switch between groups.
TEST_F(PsiKill, ChargesAtTickAndSwitch) {
  cfg.ver = arch::v(6, 10);
  w.c.curr[0] = 1;
  w.c.tasks[1].cpu = 0;
  irq(0, 100);
  sched_tick(d, cfg, w, 0);
  EXPECT_EQ(irq_full(1), 100u);
  EXPECT_EQ(irq_full(0), 100u);
  EXPECT_EQ(irq_full(2), 0u);
  EXPECT_EQ(seq(1), 2u);
  EXPECT_EQ(seq(0), 2u);
  EXPECT_EQ(w.v.gc[1][0].state_start, 100u);
  irq(120, 150);
  schedule(d, cfg, w, 0, 2);  // same group: not charged
  EXPECT_EQ(w.c.curr[0], 2);
  EXPECT_EQ(irq_full(1), 100u);
  schedule(d, cfg, w, 0, 0);  // to idle: task 2's groups charged
  EXPECT_EQ(irq_full(1), 130u);
  EXPECT_EQ(irq_full(0), 130u);
  EXPECT_EQ(seq(1), 4u);
  irq(160, 200);
  sched_tick(d, cfg, w, 0);  // idle is never charged
  EXPECT_EQ(irq_full(0), 130u);
  EXPECT_EQ(seq(0), 4u);
  EXPECT_TRUE(w.c.faults.empty());
}

// 603, 606, 609: disabled groups are skipped; a negative delta charges nothing.
TEST_F(PsiKill, DisabledGroupsAndNegativeDelta) {
  cfg.ver = arch::v(6, 10);
  w.c.enabled[0] = 0;
  w.c.curr[0] = 3;
  irq(0, 100);
  sched_tick(d, cfg, w, 0);
  EXPECT_EQ(irq_full(2), 100u);
  EXPECT_EQ(irq_full(0), 0u);
  EXPECT_EQ(seq(0), 0u);
  w.v.cpu[0].psi_irq_time = w.v.cpu[0].acct.irqtime.total - (std::uint64_t{1} << 63);  // (s64)delta < 0
  sched_tick(d, cfg, w, 0);
  EXPECT_EQ(irq_full(2), 100u);
  EXPECT_EQ(seq(2), 2u);
  cfg.ver = arch::v(6, 1);
  w.c.enabled[0] = 0;
  irq(200, 260);
  w.v.now = 300;
  clock_gettime_thread(d, cfg, w, 0);
  EXPECT_EQ(irq_full(2), 160u);
  EXPECT_EQ(irq_full(0), 0u);
}

// 602, 604, 611, 618: 6.1-6.9 charge the clamped delta from update_rq_clock, in a section.
TEST_F(PsiKill, ChargesInRqClock) {
  cfg.ver = arch::v(6, 1);
  w.c.curr[0] = 1;
  irq(0, 100);
  w.v.now = 400;
  clock_gettime_thread(d, cfg, w, 0);
  EXPECT_EQ(irq_full(1), 100u);
  EXPECT_EQ(seq(1), 2u);
  EXPECT_EQ(w.v.gc[1][0].state_start, 400u);
  irq(400, 450);
  w.v.now = 500;
  clock_gettime_thread(d, cfg, w, 0);
  EXPECT_EQ(irq_full(1), 150u);
  EXPECT_EQ(seq(1), 4u);
  w.c.curr[0] = 0;
  irq(500, 520);
  w.v.now = 600;
  clock_gettime_thread(d, cfg, w, 0);  // idle: consumed, not charged
  EXPECT_EQ(irq_full(0), 150u);
  EXPECT_EQ(seq(0), 4u);
}

// 607: 6.17+ one per-CPU psi_seq section around the walk, no per-group section.
TEST_F(PsiKill, PerCpuSection) {
  cfg.ver = arch::v(6, 17);
  ASSERT_TRUE(cfg.percpu_seq());
  w.c.curr[0] = 1;
  irq(0, 100);
  sched_tick(d, cfg, w, 0);
  EXPECT_EQ(irq_full(1), 100u);
  EXPECT_EQ(w.v.cpu[0].psi_seq, 2u);
  EXPECT_EQ(seq(1), 0u);
}

// 615-616: a cgroup move writes both chains, each group in a section, under the rq lock.
TEST_F(PsiKill, MoveSections) {
  w.c.tasks[1].cpu = 0;
  cgroup_move(d, w, 1, 2, 0);
  EXPECT_EQ(seq(1), 2u);
  EXPECT_EQ(seq(2), 2u);
  EXPECT_EQ(seq(0), 4u);
  EXPECT_EQ(w.c.tasks[1].group, 2);
  EXPECT_TRUE(w.c.faults.empty());
  cgroup_move(d, w, 1, 1, 1);  // from another CPU: it takes rq 0's lock
  EXPECT_TRUE(w.c.faults.empty());
}

}  // namespace
