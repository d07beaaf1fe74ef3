// Gen vtime scenarios: each variant against the ground-truth ledger, the aligned-tick pathology
// of the jiffy variant, Frederic's loops, reader monotonicity, exit leftovers, seqcount discipline.
#include <gtest/gtest.h>

#include <algorithm>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/ledger.hpp"
#include "model/trace/scenarios.hpp"
#include "spec/invariants.hpp"

namespace kacct {
namespace {

struct Run {
  trace::Trace t;
  sim::RunResult r;
  trace::Ledger truth;
};
Run run(const std::string& text, arch::KVersion ver, unsigned hz = 250, bool irq = false, bool check = true) {
  auto t = trace::load(text);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  auto p = sim::compile(t.value());
  EXPECT_TRUE(p.ok()) << p.error().to_string();
  const arch::Config cfg{ver, arch::Accounting::Gen, irq, false, hz};
  const auto cpu = *arch::find_cpu("x86-64");
  EXPECT_TRUE(arch::legal(cpu, cfg));
  auto m = sim::model_cfg(cpu, cfg);
  auto r = sim::run(p.value(), m, {.check = check});
  auto g = trace::ground_truth(t.value());
  EXPECT_TRUE(g.ok());
  return {t.value(), std::move(r), g.value()};
}
constexpr std::uint64_t T250 = 4'000'000;

TEST(GenVtime, VariantsFollowTheVersion) {
  EXPECT_EQ(model::gen_cfg(arch::v(4, 4), 250).variant, model::GenVariant::Snapshot);
  EXPECT_EQ(model::gen_cfg(arch::v(4, 6), 250).variant, model::GenVariant::Jiffy);
  EXPECT_EQ(model::gen_cfg(arch::v(4, 12), 250).variant, model::GenVariant::Jiffy);
  EXPECT_EQ(model::gen_cfg(arch::v(4, 14), 250).variant, model::GenVariant::Accum);
  EXPECT_FALSE(model::gen_cfg(arch::v(5, 4), 250).states55);
  EXPECT_TRUE(model::gen_cfg(arch::v(5, 5), 250).states55);
}

TEST(GenVtime, KconfigLegality) {
  const auto x86 = *arch::find_cpu("x86-64"), e500 = *arch::find_cpu("e500"), p9 = *arch::find_cpu("POWER9");
  auto gen = [](arch::KVersion v, bool irq = false) { return arch::Config{v, arch::Accounting::Gen, irq, false, 250}; };
  EXPECT_TRUE(arch::legal(x86, gen(arch::v(6, 1))));
  EXPECT_TRUE(arch::legal(p9, gen(arch::v(6, 1))));
  EXPECT_FALSE(arch::legal(e500, gen(arch::v(6, 1))));  // PPC32: no HAVE_CONTEXT_TRACKING_USER in 6.1
  EXPECT_TRUE(arch::legal(e500, gen(arch::v(6, 12))));
  EXPECT_FALSE(arch::legal(x86, gen(arch::v(4, 9), true)));  // irqtime under gen modelled from 4.11
  std::size_t n = 0;
  for (const auto& c : arch::combos()) n += c.cfg.acct == arch::Accounting::Gen;
  EXPECT_GT(n, 100u);
}

// Aligned ticks (the interrupt from user arrives just before jiffies moves): jiffy vtime charges
// every jiffy to system; ns vtime (before and after) sees the user loop.
TEST(GenVtime, AlignedTickUserLoop) {
  const auto text = trace::scenarios::user_loop(T250, 0, 50);
  for (auto [ver, user_ok] : {std::pair{arch::v(4, 4), true}, {arch::v(4, 9), false}, {arch::v(6, 1), true}}) {
    auto x = run(text, ver);
    ASSERT_FALSE(x.r.violation) << x.r.violation->invariant << " " << x.r.violation->detail;
    const auto& task = x.r.tasks[1];
    const auto truth = x.truth.task.at(100);
    if (user_ok) {
      EXPECT_GT(task.utime + x.r.backend_result<model::GenResult>()->vtime[1].utime + T250, truth.user) << ver.str();
    } else {
      EXPECT_LE(task.utime, T250) << "jiffy vtime: the busy user loop shows (almost) no user time";
      EXPECT_GE(task.stime, 49 * T250);
      EXPECT_GT(truth.user, 49 * T250);
    }
  }
}
// Frederic's user loop: ticks at a random phase (here mid-jiffy): accurate at jiffy granularity.
TEST(GenVtime, FredericUserLoopAccurate) {
  auto x = run(trace::scenarios::user_loop(T250, T250 / 2, 50), arch::v(4, 9));
  const auto truth = x.truth.task.at(100);
  const auto& task = x.r.tasks[1];
  EXPECT_LE(task.utime, truth.user + T250);
  EXPECT_GE(task.utime + 2 * T250, truth.user);
}
// Frederic's brk kernel loop: short user fragments between syscalls are sampled in proportion.
TEST(GenVtime, FredericBrkLoopAccurate) {
  auto x = run(trace::scenarios::syscall_loop(60'000, 1500, 200), arch::v(4, 9), 1000, false, false);
  const auto truth = x.truth.task.at(100);
  const auto& task = x.r.tasks[1];
  const double tu = double(truth.user) / double(truth.user + truth.system);
  const double mu = double(task.utime) / double(task.utime + task.stime);
  EXPECT_NEAR(mu, tu, 0.03);
}
// Accum (and Snapshot) conserve exactly per task and category: truth = flushed + residue +
// pending delta of the current state (no irq time, no steal, no switch gap).
TEST(GenVtime, NsVariantsExactPerCategory) {
  for (auto ver : {arch::v(4, 4), arch::v(4, 14), arch::v(5, 5), arch::v(6, 1), arch::v(6, 12)}) {
    auto x = run(trace::scenarios::syscall_loop(5'000, 1500, 700), ver);
    ASSERT_FALSE(x.r.violation) << ver.str() << " " << x.r.violation->invariant;
    const auto truth = x.truth.task.at(100);
    const auto& t = x.r.tasks[1];
    const auto& v = x.r.backend_result<model::GenResult>()->vtime[1];
    const auto& s = x.r.backend_result<model::GenResult>()->ctl[1];
    const auto pend = x.truth.end_ts - v.starttime;
    EXPECT_EQ(truth.user, t.utime + v.utime + (s.state == model::VT_USER ? pend : 0)) << ver.str();
    EXPECT_EQ(truth.system + truth.irq + truth.softirq, t.stime + v.stime + (s.state == model::VT_SYS ? pend : 0))
        << ver.str();
    EXPECT_LT(v.utime, T250);
    EXPECT_LT(v.stime, T250);
  }
}
// Preemption on the way back to user (a switch the trace shows in user mode): the kernel
// entered first (user_exit) and the task resumes through user_enter. HZ=250, TICK_NSEC 4 ms.
// 2000..5002000 user (5 ms), switch out in user mode, back at 6002000 in user mode, 3 ms of
// user until syscall_enter, 100 us of system before sleeping; 1000 ns of system at the start.
// Without the entry at the switch, the 5 ms of user time went to system (stime 5001000).
TEST(GenVtime, SwitchInUserModeKeepsUserTime) {
  std::string s = trace::scenarios::header();
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n5002000 0 switch prev=100 next=0\n"
       "6002000 0 switch prev=0 next=100\n";
  const std::string tail = "9002000 0 syscall_enter nr=1\n9102000 0 switch prev=100 next=0 prev_state=S\n";
  // 6.1 (accum): the user exit at the switch flushes the 5 ms user residue (>= TICK_NSEC);
  // 4.4 (snapshot): every delta is flushed at once.
  for (auto ver : {arch::v(6, 1), arch::v(4, 4)}) {
    auto x = run(s + tail, ver);
    ASSERT_FALSE(x.r.violation) << ver.str() << " " << x.r.violation->invariant;
    const auto& t = x.r.tasks[1];
    const auto& v = x.r.backend_result<model::GenResult>()->vtime[1];
    EXPECT_EQ(x.truth.task.at(100).user, 8'000'000u);
    EXPECT_EQ(x.truth.task.at(100).system, 101'000u);
    if (ver == arch::v(6, 1)) {
      EXPECT_EQ(t.utime, 5'000'000u);
      EXPECT_EQ(v.utime, 3'000'000u);
      EXPECT_EQ(t.stime, 0u);
      EXPECT_EQ(v.stime, 101'000u);
    } else {
      EXPECT_EQ(t.utime, 8'000'000u) << ver.str();
      EXPECT_EQ(t.stime, 101'000u) << ver.str();
    }
  }
  // The resumed task is in user mode again (vtime_user_enter at the switch in): its pending
  // time reads as utime.
  auto x = run(s + "7002000 0 tick\n", arch::v(6, 1));
  const auto* g = x.r.backend_result<model::GenResult>();
  EXPECT_EQ(g->ctl[1].state, model::VT_USER);
  const auto tc = model::task_cputime(model::gen_cfg(arch::v(6, 1), 250), g->vtime[1], g->ctl[1], x.r.tasks[1],
                                      7'002'000, 7'002'000 / T250);
  EXPECT_EQ(tc.utime, 6'000'000u);  // 5 ms flushed + 1 ms pending
  EXPECT_EQ(tc.stime, 0u);
}

// An irq the trace shows in guest mode (a VM exit served by KVM). Guest 2000..5002000 with an
// irq at 1002000..1502000; 1000 ns of system before, 100 us after. Without irq time accounting:
// where KVM serves irqs before its vtime guest exit (x86 <= 5.8 and >= 5.13) all 5 ms are guest;
// where the vtime guest exit comes first (x86 5.9 .. 5.12, POWER9 Book3S HV) the irq's 0.5 ms is
// system and the guest residue flushed at guest_exit is 4.5 ms.
Run run_on(const std::string& text, const char* cpu_name, arch::KVersion ver) {
  auto t = trace::load(text);
  EXPECT_TRUE(t.ok());
  auto p = sim::compile(t.value());
  const arch::Config cfg{ver, arch::Accounting::Gen, false, false, 250};
  const auto cpu = *arch::find_cpu(cpu_name);
  EXPECT_TRUE(arch::legal(cpu, cfg)) << cpu_name << " " << ver.str();
  auto r = sim::run(p.value(), sim::model_cfg(cpu, cfg), {.check = true});
  return {t.value(), std::move(r), trace::ground_truth(t.value()).value()};
}
TEST(GenVtime, IrqInGuestModeFollowsKvmOrder) {
  std::string s = trace::scenarios::header();
  s += "1000 0 switch prev=0 next=100\n2000 0 guest_enter\n1002000 0 irq_enter vec=1\n1502000 0 irq_exit\n"
       "5002000 0 guest_exit\n5102000 0 switch prev=100 next=0 prev_state=S\n";
  for (auto cpu : {"x86-64", "POWER9"}) {
    const std::string text = std::string(s).replace(s.find("x86-64"), 6, cpu);
    for (auto ver : {arch::v(4, 4), arch::v(5, 8), arch::v(5, 9), arch::v(5, 12), arch::v(5, 13), arch::v(6, 1)}) {
      if (std::string(cpu) == "POWER9" && ver != arch::v(6, 1) && ver != arch::v(4, 4)) continue;
      auto x = run_on(text, cpu, ver);
      ASSERT_FALSE(x.r.violation) << cpu << " " << ver.str() << " " << x.r.violation->invariant;
      const bool exit_first = std::string(cpu) == "POWER9" || (ver >= arch::v(5, 9) && ver < arch::v(5, 13));
      EXPECT_EQ(model::gen_cfg(ver, 250, arch::find_cpu(cpu)->platform).guest_exit_before_irq, exit_first);
      const auto& t = x.r.tasks[1];
      const auto& v = x.r.backend_result<model::GenResult>()->vtime[1];
      EXPECT_EQ(x.truth.task.at(100).guest, 4'500'000u);
      EXPECT_EQ(x.truth.task.at(100).irq, 500'000u);
      const std::uint64_t guest = exit_first ? 4'500'000 : 5'000'000, sys = exit_first ? 601'000 : 101'000;
      EXPECT_EQ(t.gtime, guest) << cpu << " " << ver.str();
      EXPECT_EQ(t.utime, guest) << cpu << " " << ver.str();  // guest time is user time too
      EXPECT_EQ(t.stime + v.stime, sys) << cpu << " " << ver.str();
      EXPECT_EQ(v.gtime + v.utime, 0u) << cpu << " " << ver.str();
    }
  }
}

// 5.5+ readers drop the residue of the state just left: /proc/stat user and task_cputime utime
// go backwards by less than TICK_NSEC + the pending delta. Snapshot readers never do.
TEST(GenVtime, ReadersGoBackwardsUnderAccum) {
  auto acc = run(trace::scenarios::syscall_loop(3'000, 1500, 700), arch::v(6, 1));
  ASSERT_TRUE(acc.r.backend_result<model::GenResult>());
  EXPECT_GT(acc.r.backend_result<model::GenResult>()->kcpustat_backwards, 0u)
      << "kcpustat user should drop on user exit";
  EXPECT_GT(acc.r.backend_result<model::GenResult>()->task_view_backwards, 0u);
  EXPECT_LT(acc.r.backend_result<model::GenResult>()->max_kcpustat_drop, T250);
  auto snap = run(trace::scenarios::syscall_loop(3'000, 1500, 700), arch::v(4, 4));
  EXPECT_EQ(snap.r.backend_result<model::GenResult>()->task_view_backwards, 0u)
      << snap.r.backend_result<model::GenResult>()->first_backwards;
  EXPECT_EQ(snap.r.backend_result<model::GenResult>()->kcpustat_backwards, 0u);
}
// Exit: the residues of an exiting task are never flushed (Accum); nothing is left under Snapshot.
TEST(GenVtime, ExitLeftovers) {
  std::string s = trace::scenarios::header();
  s += "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n3000000 0 syscall_enter nr=60\n3500000 0 exit\n"
       "3600000 0 switch prev=100 next=0 prev_state=X\n";
  auto acc = run(s, arch::v(6, 1));
  ASSERT_FALSE(acc.r.violation) << acc.r.violation->invariant;
  EXPECT_GT(acc.r.backend_result<model::GenResult>()->exit_lost, 0u);
  EXPECT_LT(acc.r.backend_result<model::GenResult>()->exit_lost, 3 * T250);
  EXPECT_GT(acc.r.backend_result<model::GenResult>()->exit_unseen, 0u) << "the group misses the user residue";
  auto snap = run(s, arch::v(4, 4));
  EXPECT_EQ(snap.r.backend_result<model::GenResult>()->exit_lost, 0u);
}
// Seqcount discipline: before 5.5 the idle flush at a switch writes outside any section.
TEST(GenVtime, IdleFlushOutsideSectionBefore55) {
  std::string s = trace::scenarios::header();
  s += "1000 0 switch prev=0 next=100\n2000 0 switch prev=100 next=0 prev_state=S\n5000 0 wakeup tid=100\n"
       "6000 0 switch prev=0 next=100\n";
  EXPECT_GT(run(s, arch::v(5, 4)).r.backend_result<model::GenResult>()->cost.unbracketed_writes, 0u);
  EXPECT_EQ(run(s, arch::v(5, 5)).r.backend_result<model::GenResult>()->cost.unbracketed_writes, 0u);
}
// Cost per syscall of the seed loop, per variant.
TEST(GenVtime, SeedLoopCost) {
  const auto text = trace::scenarios::syscall_loop(20'000, 150, 220);
  auto a = run(text, arch::v(4, 4), 1000, false, false).r.backend_result<model::GenResult>()->cost;
  auto b = run(text, arch::v(4, 9), 1000, false, false).r.backend_result<model::GenResult>()->cost;
  auto c = run(text, arch::v(6, 1), 1000, false, false).r.backend_result<model::GenResult>()->cost;
  EXPECT_GE(a.clock_reads, 40'000u);
  EXPECT_LE(b.clock_reads, 10u);
  EXPECT_GE(c.clock_reads, 40'000u);
  EXPECT_GE(a.account_calls, 40'000u);
  EXPECT_LT(b.account_calls, 100u);
  EXPECT_LT(c.account_calls, 100u);
  EXPECT_GE(b.seq_sections, 40'000u);
}

}  // namespace
}  // namespace kacct

namespace kacct {
namespace {
// Finding: 4.6 jiffy vtime reproduces the NO_HZ_FULL getrusage() monotonicity regression that
// 173be9a14f7b fixed in 4.7: a first read with utime == stime == 0 puts all rtime in stime, a
// later read with stime == 0 and utime > 0 skips the clamps and stime goes back to 0.
TEST(GenVtime, Getrusage46Regression) {
  const std::string text =
      "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 900 pid=900 comm=qemu-kvm nice=10 mm=90\nevents\n"
      "100000 0 switch prev=0 next=900\n100001 0 tick\n100001 0 read kind=proc_stat id=1\n100002 0 exc_exit\n"
      "1000000 0 syscall_enter nr=16\n1100000 0 read kind=proc_stat id=2\n";
  auto x46 = run(text, arch::v(4, 6), 1000);
  ASSERT_TRUE(x46.r.violation);
  EXPECT_EQ(x46.r.violation->invariant, "cputime_adjust.monotonic");
  EXPECT_EQ(x46.r.violation->fixed_by, "173be9a14f7b");  // the kernel's bug, named by its fix
  auto x47 = run(text, arch::v(4, 7), 1000);
  EXPECT_FALSE(x47.r.violation) << x47.r.violation->invariant;

  // Fuzzers and props tolerate it (and go on checking the rest), recorded once.
  auto p = sim::compile(x46.t);
  ASSERT_TRUE(p.ok());
  const auto m =
      sim::model_cfg(*arch::find_cpu("x86-64"), arch::Config{arch::v(4, 6), arch::Accounting::Gen, false, false, 1000});
  const auto tolerated = sim::run(p.value(), m, {.check = true, .tolerate_known_bugs = true});
  EXPECT_FALSE(tolerated.violation) << tolerated.violation->invariant;
  ASSERT_EQ(tolerated.known_bugs.size(), 1u);
  EXPECT_EQ(tolerated.known_bugs[0].invariant, "cputime_adjust.monotonic");
  EXPECT_EQ(tolerated.known_bugs[0].line, x46.r.violation->line);
  EXPECT_EQ(tolerated.events, x46.t.events.size());  // ran to the end
}

// Which cputime_adjust() invariants each era still breaks: exactly the ones its proofs find
// violated (docs/models/cputime-adjust.md), and none once the clamp to rtime is in.
TEST(GenVtime, KnownAdjustBugsFollowTheEra) {
  using model::AdjustEra;
  using model::ScaleDiv;
  const auto fixed = [](AdjustEra e, ScaleDiv d, const char* inv) {
    return std::string(spec::tick::adjust_fixed_by(model::AdjustCfg{e, d}, inv));
  };
  EXPECT_EQ(fixed(AdjustEra::PerFieldMax, ScaleDiv::Loop32, "cputime_adjust.sum_is_rtime"), "9d7fb0427648");
  EXPECT_EQ(fixed(AdjustEra::GotoUpdate, ScaleDiv::Loop32, "cputime_adjust.sum_is_rtime"), "");
  EXPECT_EQ(fixed(AdjustEra::GotoUpdate, ScaleDiv::Loop32, "cputime_adjust.monotonic"), "173be9a14f7b");
  EXPECT_EQ(fixed(AdjustEra::ClampAlways, ScaleDiv::Loop32, "cputime_adjust.monotonic"), "");
  EXPECT_EQ(fixed(AdjustEra::ClampAlways, ScaleDiv::Generic2020, "cputime_adjust.stime_le_rtime"), "77baa5bafcbe");
  EXPECT_EQ(fixed(AdjustEra::ClampAlways, ScaleDiv::Exact128, "cputime_adjust.stime_le_rtime"), "");
  for (const char* inv : {"cputime_adjust.sum_is_rtime", "cputime_adjust.monotonic", "cputime_adjust.stime_le_rtime"})
    for (auto d : {ScaleDiv::Loop32, ScaleDiv::Generic2020, ScaleDiv::Exact128})
      EXPECT_EQ(fixed(AdjustEra::ClampToRtime, d, inv), "") << inv;
  // Every fix named is a cputime_adjust row of the patch table that claims that invariant.
  for (const char* inv : {"cputime_adjust.sum_is_rtime", "cputime_adjust.monotonic", "cputime_adjust.stime_le_rtime"})
    for (auto e : {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways})
      for (auto d : {ScaleDiv::Loop32, ScaleDiv::Generic2020, ScaleDiv::Exact128}) {
        const auto id = fixed(e, d, inv);
        if (id.empty()) continue;
        const auto p = arch::find_patch(id);
        ASSERT_TRUE(p) << id;
        EXPECT_EQ(p->mechanism, arch::Mechanism::CputimeAdjust) << id;
        EXPECT_NE(std::find(p->claims.begin(), p->claims.end(), std::string_view(inv)), p->claims.end())
            << id << " does not claim " << inv;
      }
}
}  // namespace
}  // namespace kacct
