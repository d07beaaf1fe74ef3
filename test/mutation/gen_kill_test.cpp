// Gen vtime steps (model/gen/gen.hpp) on hand-computed values: which residue (user, system,
// guest) each nanosecond waits in and which bucket it is flushed to, the seqcount write
// sections, the snapshot when the clock is behind it, and the readers. Each test names the
// catalogued mutants (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include "arch/registry.hpp"
#include "model/gen/gen.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/scenarios.hpp"

namespace {
using namespace kacct;
using namespace kacct::model;

struct GenKill : ::testing::Test {
  Concrete d;
  TickCfg tc;
  GenCfg g = gen_cfg(arch::v(6, 1), 1000);
  CpuAcct<Concrete> c = zero_cpu(d);
  VtimeCpu<Concrete> vc = zero_vtime_cpu(d);
  GenCost cost;
  VtimeTask<Concrete> v = zero_vtime(d);
  VtimeCtl s;
  TaskAcct<Concrete> t = zero_task(d);
  GenCtx x;
  GenKill() { tc.tick_nsec = 1'000'000; }
  GenStep<Concrete> step() { return GenStep<Concrete>{d, tc, g, c, vc, cost}; }
  static GenNow<Concrete> at(std::uint64_t now, std::uint64_t jiffies = 0) { return {now, jiffies}; }
  void expect_only(std::initializer_list<std::pair<Usage, std::uint64_t>> want) {
    std::array<std::uint64_t, NR_STATS> w{};
    for (auto [u, val] : want) w[u] = val;
    for (unsigned b = 0; b < NR_STATS; ++b) EXPECT_EQ(c.cpustat[b], w[b]) << usage_names[b];
  }
};

// 401, 408-411, 414-416: the three residues of the accumulating variant (4.13+), kept apart.
TEST_F(GenKill, ResiduesPerCategory) {
  s.state = VT_USER;
  s.cpu = 0;
  step().user_exit(v, t, s, x, at(500));
  EXPECT_EQ(v.utime, 500u);
  EXPECT_EQ(v.stime, 0u);
  EXPECT_EQ(v.seq, 2u);
  EXPECT_EQ(s.state, VT_SYS);
  step().user_enter(v, t, s, x, at(800));
  EXPECT_EQ(v.stime, 300u);
  EXPECT_EQ(s.state, VT_USER);
  step().user_exit(v, t, s, x, at(1000));
  step().guest_enter(v, t, s, x, at(1100));
  EXPECT_TRUE(s.pf_vcpu);
  EXPECT_EQ(s.state, VT_GUEST);
  step().guest_exit(v, t, s, x, at(1800));
  EXPECT_EQ(v.utime, 700u);
  EXPECT_EQ(v.stime, 400u);
  EXPECT_EQ(v.gtime, 700u);
  EXPECT_EQ(v.seq, 10u);
  expect_only({});
  // The system residue reaches TICK_NSEC exactly: flushed, and reset.
  step().user_enter(v, t, s, x, at(1800 + 1'000'000 - 400));
  expect_only({{SYSTEM, 1'000'000}});
  EXPECT_EQ(v.stime, 0u);
  EXPECT_EQ(t.stime, 1'000'000u);
}

// 412-413: the flushes by task state: PF_VCPU system time is guest time; a USER-state kernel
// flush (5.5+) is system time.
TEST_F(GenKill, FlushByState) {
  s.pf_vcpu = true;
  s.state = VT_GUEST;
  step().flush_system(v, t, s, x, at(1'000'000));
  expect_only({{USER, 1'000'000}, {GUEST, 1'000'000}});
  c = zero_cpu(d);
  s.pf_vcpu = false;
  s.state = VT_USER;
  step().flush_kernel(v, t, s, x, at(2'000'000));
  expect_only({{SYSTEM, 1'000'000}});
}

// 402-407: the clock behind the snapshot gives 0 and leaves the snapshot; other time is capped
// by the delta and subtracted once.
TEST_F(GenKill, DeltaAndOtherTime) {
  v.starttime = 1000;
  EXPECT_EQ(step().get_delta(v, s, at(900)), 0u);
  EXPECT_EQ(v.starttime, 1000u);
  tc.steal = true;
  c.steal_clock = 5000;
  EXPECT_EQ(step().get_delta(v, s, at(2000)), 0u);  // 1000 elapsed, all steal
  EXPECT_EQ(c.cpustat[STEAL], 1000u);
  EXPECT_EQ(c.prev_steal_time, 1000u);
  c.steal_clock = 1300;
  EXPECT_EQ(step().get_delta(v, s, at(3000)), 700u);
  EXPECT_EQ(v.other, 1300u);
  EXPECT_EQ(v.consumed, 2000u);
  GenCfg jg = gen_cfg(arch::v(4, 9), 1000);  // jiffies
  GenStep<Concrete> js{d, tc, jg, c, vc, cost};
  v = zero_vtime(d);
  v.starttime = 7;
  EXPECT_EQ(js.vtime_delta(v, at(0, 5)), 0u);
  tc.steal = false;
  EXPECT_EQ(js.get_delta(v, s, at(0, 5)), 0u);
  EXPECT_EQ(v.starttime, 7u);
  EXPECT_EQ(js.get_delta(v, s, at(0, 9)), 2 * jg.jiffy_ns);
  EXPECT_EQ(v.starttime, 9u);
}

// 417, 424: the <= 4.7 standalone flushes run in one write section.
TEST_F(GenKill, SnapshotSections) {
  g = gen_cfg(arch::v(4, 4), 1000);
  s.state = VT_SYS;
  step().account_kernel(v, t, s, x, at(1000));
  EXPECT_EQ(v.seq, 2u);
  EXPECT_EQ(s.in_section, 0);
  step().irq_exit_hook(v, t, s, x, at(2000));
  EXPECT_EQ(v.seq, 4u);
  expect_only({{SYSTEM, 2000}});
}

// 418-423: task switch, CPU bring-up, irq entry from idle.
TEST_F(GenKill, SwitchAndBringUp) {
  s.state = VT_SYS;
  s.cpu = 0;
  VtimeTask<Concrete> nv = zero_vtime(d);
  VtimeCtl ns;
  ns.pf_vcpu = true;
  step().task_switch(v, t, s, nv, ns, x, at(1000), at(1300), 0);
  EXPECT_EQ(s.cpu, -1);
  EXPECT_EQ(s.state, VT_INACTIVE);
  EXPECT_EQ(ns.state, VT_GUEST);
  EXPECT_EQ(nv.starttime, 1300u);
  EXPECT_EQ(vc.lost, 300u);
  step().init_idle(nv, ns, at(5000), 0);
  EXPECT_EQ(nv.starttime, 5000u);
  EXPECT_EQ(vc.lost, 300u + 3700u);
  g = gen_cfg(arch::v(4, 9), 1000);
  VtimeCtl js;
  step().switch_next(nv, js, at(123456, 7), 0);
  EXPECT_EQ(nv.starttime, 7u);
  // <= 4.7: an irq nested in an irq on the idle task flushes system time, not idle.
  g = gen_cfg(arch::v(4, 4), 1000);
  v = zero_vtime(d);
  VtimeCtl is;
  is.is_idle = true;
  is.state = VT_SYS;
  c = zero_cpu(d);
  step().irq_enter_hook(v, t, is, x, at(1000), true);
  expect_only({{SYSTEM, 1000}});
  c = zero_cpu(d);
  v = zero_vtime(d);
  step().irq_enter_hook(v, t, is, x, at(1000), false);
  expect_only({{IDLE, 1000}});
  c = zero_cpu(d);
  v = zero_vtime(d);
  x.nr_iowait = true;
  step().account_idle(v, is, x, at(1000));
  expect_only({{IOWAIT, 1000}});
}

// 425-428, 430: the readers add the pending time of the current state.
TEST_F(GenKill, Readers) {
  v.starttime = 1000;
  v.stime = 300;
  v.gtime = 200;
  s.state = VT_SYS;
  s.cpu = 0;
  t.stime = 5;
  auto tt = task_cputime(g, v, s, t, 1500, 0);
  EXPECT_EQ(tt.stime, 5u + 300u + 500u);
  EXPECT_TRUE(tt.pending);
  s.state = VT_GUEST;
  s.nice_pos = true;
  std::array<std::uint64_t, NR_STATS> out{};
  ASSERT_TRUE(kcpustat_cpu_fetch(g, c, v, s, 0, 1500, out));
  EXPECT_EQ(out[GUEST_NICE], 700u);
  EXPECT_EQ(out[NICE], 700u);
  EXPECT_EQ(out[GUEST], 0u);
  s.cpu = 1;
  EXPECT_FALSE(kcpustat_cpu_fetch(g, c, v, s, 0, 1500, out));
}

// 437, 440, 441: the kernel entries a trace implies (model/gen/backend.cpp), HZ=250 (TICK_NSEC
// 4 ms), on the machine. A switch in user mode after 5 ms of user: the user exit flushes them
// as user (440); the task switched back in resumes in user mode (441). An irq in guest mode on
// POWER9 (KVM HV exits the vtime guest first): its 0.5 ms is system, 4.5 ms guest (437).
sim::RunResult run_gen(const std::string& text, const char* cpu_name) {
  const auto t = trace::load(text);
  EXPECT_TRUE(t.ok());
  const auto p = sim::compile(t.value());
  const arch::Config cfg{arch::v(6, 1), arch::Accounting::Gen, false, false, 250};
  return sim::run(p.value(), sim::model_cfg(*arch::find_cpu(cpu_name), cfg), {.check = true});
}
TEST(GenKillMachine, KernelEntriesATraceImplies) {
  std::string s = trace::scenarios::header();
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n5002000 0 switch prev=100 next=0\n"
       "6002000 0 switch prev=0 next=100\n7002000 0 tick\n";
  auto r = run_gen(s, "x86-64");
  ASSERT_FALSE(r.violation) << r.violation->invariant;
  EXPECT_EQ(r.tasks[1].utime, 5'000'000u);
  EXPECT_EQ(r.tasks[1].stime, 0u);
  EXPECT_EQ(r.backend_result<GenResult>()->ctl[1].state, VT_USER);
  std::string gs = trace::scenarios::header();
  gs.replace(gs.find("x86-64"), 6, "POWER9");
  gs +=
      "1000 0 switch prev=0 next=100\n2000 0 guest_enter\n1002000 0 irq_enter vec=1\n1502000 0 irq_exit\n"
      "5002000 0 guest_exit\n5102000 0 switch prev=100 next=0 prev_state=S\n";
  auto q = run_gen(gs, "POWER9");
  ASSERT_FALSE(q.violation) << q.violation->invariant;
  EXPECT_EQ(q.tasks[1].gtime, 4'500'000u);
  EXPECT_EQ(q.backend_result<GenResult>()->vtime[1].stime, 601'000u);
}

}  // namespace
