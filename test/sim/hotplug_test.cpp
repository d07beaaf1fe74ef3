// CPU hotplug (cpu_offline / cpu_online): the trace rules, the ground truth, and each backend's
// steps against values computed by hand from the kernel's arithmetic (docs/models/*.md, hotplug
// sections). The hotplug invariants are violated on purpose here: the kernel loses or counts
// time over a hotplug cycle, and each test pins which and how much.
#include <gtest/gtest.h>

#include <functional>

#include "arch/registry.hpp"
#include "model/gen/gen.hpp"
#include "model/gen/result.hpp"
#include "model/native/native.hpp"
#include "model/native/result.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "model/trace/ledger.hpp"
#include "spec/gen_vtime.hpp"
#include "spec/native_vtime.hpp"

namespace kacct {
namespace {

// 7 header lines: the first event is on line 8.
const std::string kHead =
    "kacct-trace 1\ncpu x86-64\nncpus 2\nclock ns\ntask 100 pid=100 comm=app mm=1\n"
    "task 200 pid=200 comm=other mm=2\nevents\n";
const std::string kHeadP9 =
    "kacct-trace 1\ncpu POWER9\nncpus 2\nclock ns\ntask 100 pid=100 comm=app mm=1\n"
    "task 200 pid=200 comm=other mm=2\nevents\n";

trace::Error load_error(const std::string& events) {
  auto t = trace::load(kHead + events);
  EXPECT_FALSE(t.ok());
  return t.ok() ? trace::Error{} : t.error();
}

TEST(Hotplug, TraceRulesNameLineAndColumn) {
  // Any event on an offline CPU but cpu_online: line 10 (third event), column of the kind.
  auto e = load_error("0 0 switch prev=0 next=100\n10 1 cpu_offline\n20 1 tick\n");
  EXPECT_EQ(e.line, 10u);
  EXPECT_EQ(e.column, 6u);
  EXPECT_NE(e.message.find("offline"), std::string::npos) << e.message;
  // The CPU dies in its idle task, with no irq, and with the tick running.
  e = load_error("0 1 switch prev=0 next=100\n10 1 cpu_offline\n");
  EXPECT_EQ(e.line, 9u);
  EXPECT_NE(e.message.find("idle task"), std::string::npos) << e.message;
  e = load_error("0 1 irq_enter\n10 1 cpu_offline\n");
  EXPECT_NE(e.message.find("inside irq"), std::string::npos) << e.message;
  e = load_error("0 1 idle_enter\n10 1 cpu_offline\n");
  EXPECT_NE(e.message.find("nohz idle"), std::string::npos) << e.message;
  // Never the last online CPU; cpu_online only of an offline CPU.
  e = load_error("10 1 cpu_offline\n20 0 cpu_offline\n");
  EXPECT_EQ(e.line, 9u);
  EXPECT_NE(e.message.find("last online"), std::string::npos) << e.message;
  e = load_error("10 1 cpu_online\n");
  EXPECT_EQ(e.line, 8u);
  EXPECT_NE(e.message.find("expected cpu_offline first"), std::string::npos) << e.message;
  // Steal reported after bring-up is bounded by the time since cpu_online (line 10, column of ns=).
  e = load_error("10 1 cpu_offline\n1000 1 cpu_online\n1100 1 steal ns=200\n");
  EXPECT_EQ(e.line, 10u);
  EXPECT_EQ(e.column, 14u);
  // No keys.
  e = load_error("10 1 cpu_offline ns=3\n");
  EXPECT_EQ(e.line, 8u);
  EXPECT_EQ(e.column, 18u);
  // Round trip.
  auto t = trace::load(kHead + "10 1 cpu_offline\n1000 1 cpu_online\n");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(trace::parse(trace::write(t.value())).value(), t.value());
}

TEST(Hotplug, LedgerChargesOfflineTimeToNoBucket) {
  auto t = trace::load(kHead +
                       "0 0 switch prev=0 next=100\n100 1 cpu_offline\n1100 1 cpu_online\n1500 1 tick\n"
                       "2000 0 tick\n");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  const auto l = trace::ground_truth(t.value()).value();
  // cpu 1: idle 0..100 and 1100..2000 (900), offline 100..1100 (1000); 900 + 100 + 1000 = end.
  EXPECT_EQ(l.at(1, trace::Bucket::Idle), 1000u);
  EXPECT_EQ(l.offline[1], 1000u);
  EXPECT_EQ(l.offline[0], 0u);
  EXPECT_EQ(l.at(0, trace::Bucket::System), 2000u);
}

sim::RunResult run(const std::string& text, const char* cpu, arch::Config cfg,
                   const std::function<void(sim::ModelCfg&)>& tweak = {}) {
  auto t = trace::load(text);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  auto p = sim::compile(t.value());
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(arch::legal(*arch::find_cpu(cpu), cfg)) << cfg.name();
  auto m = sim::model_cfg(*arch::find_cpu(cpu), cfg);
  if (tweak) tweak(m);
  // Past the first violation: the values after it are part of what the tests pin.
  return sim::run(p.value(), m, {.check = true, .stop_at_violation = false});
}

// Tick accounting: the ticks stop with the CPU and nothing is credited for the offline period
// or for the partial tick before it. HZ=250: TICK_NSEC = 4 ms.
TEST(Hotplug, TickAccountsNothingWhileOffline) {
  const std::string tr = kHead +
                         "0 0 switch prev=0 next=100\n"
                         "4000000 1 tick\n"         // idle tick: IDLE += 4 ms
                         "5000000 1 cpu_offline\n"  // 4..5 ms never sampled
                         "20000000 1 cpu_online\n"  // 15 ms offline: in no bucket
                         "22000000 1 steal ns=1000000\n"
                         "24000000 1 tick\n";  // idle tick
  for (bool irq : {false, true}) {
    // Without steal: two idle ticks, 8 ms, though the CPU was online for 9 ms.
    auto r = run(tr, "x86-64", {arch::v(6, 1), arch::Accounting::Tick, irq, false, 250});
    EXPECT_FALSE(r.violation) << r.violation->invariant;
    EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 8'000'000u);
    EXPECT_EQ(r.cpus[1].cpustat[model::STEAL], 0u);
    // With steal: the second tick takes the 1 ms reported after bring-up out of its 4 ms.
    r = run(tr, "x86-64", {arch::v(6, 1), arch::Accounting::Tick, irq, true, 250});
    EXPECT_FALSE(r.violation) << r.violation->invariant;
    EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 7'000'000u);
    EXPECT_EQ(r.cpus[1].cpustat[model::STEAL], 1'000'000u);
  }
}

// Gen vtime, nohz_full everywhere. cpu 1's idle task has its boot snapshot (0) when the CPU dies
// at 1000 ns; it comes back at 11000 and switches to task 200 at 12000.
const std::string kGenTrace = kHead +
                              "0 0 switch prev=0 next=100\n"
                              "1000 1 cpu_offline\n"
                              "11000 1 cpu_online\n"               // line 10
                              "12000 1 switch prev=0 next=200\n";  // line 11
arch::Config gen(arch::KVersion v) { return {v, arch::Accounting::Gen, false, false, 250}; }

TEST(Hotplug, GenSince514CountsOfflineTimeAsIdle) {
  // No vtime_init_idle() at bring-up: the switch's idle flush takes 12000 - 0 ns, 10000 of which
  // the CPU was offline.
  auto r = run(kGenTrace, "x86-64", gen(arch::v(6, 1)));
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 12000u);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "gen_vtime.hotplug_offline_not_accounted");
  EXPECT_EQ(r.violation->line, 11u);
  EXPECT_EQ(r.backend_result<model::GenResult>()->hotplug_offline_as_idle, 10000u);
}

TEST(Hotplug, GenBefore514DropsTheIdleTimeBeforeOffline) {
  // vtime_init_idle() at bring-up: fresh snapshot 11000; the 1000 ns of idle before the CPU died
  // are dropped with the offline period (ghost lost 11000); the switch flushes 12000 - 11000.
  auto r = run(kGenTrace, "x86-64", gen(arch::v(5, 10)));
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 1000u);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "gen_vtime.hotplug_online_time_kept");
  EXPECT_EQ(r.violation->line, 10u);
  const auto* g = r.backend_result<model::GenResult>();
  EXPECT_EQ(g->hotplug_online_dropped, 1000u);
  EXPECT_EQ(g->vcpu[1].lost, 11000u);
  // The broken variant: the same kernel era modelled without the reinit is caught the other way.
  r = run(kGenTrace, "x86-64", gen(arch::v(5, 10)), [](sim::ModelCfg& m) { m.gen.idle_init_on_online = false; });
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "gen_vtime.hotplug_offline_not_accounted");
}

TEST(Hotplug, GenStableBackportsKeepTheSnapshotLike514) {
  // f1a0a376ca0c reached 5.10.50: from there a 5.10 kernel behaves as 6.1 does at bring-up
  // (the idle flush takes the whole 12000 ns), 5.10.49 still drops the 1000 ns before offline.
  auto r = run(kGenTrace, "x86-64", gen(arch::v(5, 10, 50)));
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 12000u);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "gen_vtime.hotplug_offline_not_accounted");
  EXPECT_EQ(r.backend_result<model::GenResult>()->hotplug_online_dropped, 0u);
  r = run(kGenTrace, "x86-64", gen(arch::v(5, 10, 49)));
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 1000u);
  EXPECT_EQ(r.backend_result<model::GenResult>()->hotplug_online_dropped, 1000u);
}

TEST(Hotplug, GenBefore514JiffyDropsWholeJiffies) {
  // 4.9 (jiffy variant), HZ=250: jiffy_ns = 4 ms. Dies at 6 ms (jiffy 1), back at 20 ms
  // (jiffy 5): jiffy 0 -> 1 of idle dropped (4 ms), ghost lost 5 jiffies = 20 ms.
  const std::string tr = kHead + "0 0 switch prev=0 next=100\n6000000 1 cpu_offline\n20000000 1 cpu_online\n";
  auto r = run(tr, "x86-64", gen(arch::v(4, 9)));
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "gen_vtime.hotplug_online_time_kept");
  EXPECT_EQ(r.backend_result<model::GenResult>()->hotplug_online_dropped, 4'000'000u);
  EXPECT_EQ(r.backend_result<model::GenResult>()->vcpu[1].lost, 20'000'000u);
}

TEST(Hotplug, GenInitIdleKeepsCpuConservesAndABrokenOneDoesNot) {
  // Snapshot 300 ns consumed up to it; init_idle at 1000: lost += 700, snapshot 1000.
  Concrete d;
  model::TickCfg tc;
  model::GenCfg g;
  auto c = model::zero_cpu(d);
  auto vc = model::zero_vtime_cpu(d);
  model::GenCost cost;
  auto v = model::zero_vtime(d);
  v.starttime = 300;
  vc.consumed = 300;
  model::VtimeCtl s;
  s.is_idle = true;
  ASSERT_TRUE(spec::gen::gen_cpu_conserves(d, g, vc, v));
  model::GenStep<Concrete>{d, tc, g, c, vc, cost}.init_idle(v, s, {1000, 0}, 1);
  EXPECT_EQ(v.starttime, 1000u);
  EXPECT_EQ(vc.lost, 700u);
  EXPECT_EQ(v.seq, 2u);
  EXPECT_TRUE(spec::gen::gen_cpu_conserves(d, g, vc, v));
  EXPECT_TRUE(spec::gen::gen_seq_even(d, v));
  vc.lost = 0;  // broken: a reinit that does not account for the skipped clock
  EXPECT_FALSE(spec::gen::gen_cpu_conserves(d, g, vc, v));
}

// Native vtime on POWER9 (TB 512 MHz: 0.512 TB ticks per ns; tb_to_ns(t) = t * 1.953125 ns).
const std::string kNativeTrace = kHeadP9 +
                                 "0 0 switch prev=0 next=100\n"
                                 "1000 1 tick\n"         // TB 512: first event on cpu 1
                                 "3000 1 cpu_offline\n"  // TB 1536
                                 "13000 1 cpu_online\n"  // TB 6656, line 11
                                 "14000 1 tick\n";       // TB 7168, line 12
arch::Config native612() { return {arch::v(6, 12), arch::Accounting::Native, false, false, 250}; }

TEST(Hotplug, NativeWithoutVtimeResetCountsOfflineTimeAsIdle) {
  // starttime 0 (no reset at boot either): first tick idle 512 TB = 1000 ns; second tick idle
  // 7168 - 512 = 6656 TB = 13000 ns, 6656 - 1536 = 5120 TB of it offline.
  auto r = run(kNativeTrace, "POWER9", native612(), [](sim::ModelCfg& m) { m.native.starttime_init = false; });
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 14000u);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "native_vtime.hotplug_offline_not_accounted");
  EXPECT_EQ(r.violation->line, 12u);
  EXPECT_EQ(r.backend_result<model::native::NativeResult>()->hotplug_offline_tb, 5120u);
}

TEST(Hotplug, NativeVtimeResetDropsTheOnlineTailBeforeOffline) {
  // Reset at the first event (starttime 512) and at bring-up (starttime 6656): the 1536 - 512 =
  // 1024 TB between the last hook and cpu_offline are in no bucket; the second tick flushes
  // 7168 - 6656 = 512 TB = 1000 ns of idle.
  auto r = run(kNativeTrace, "POWER9", native612(), [](sim::ModelCfg& m) { m.native.starttime_init = true; });
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 1000u);
  ASSERT_TRUE(r.violation);
  EXPECT_EQ(r.violation->invariant, "native_vtime.hotplug_online_time_kept");
  EXPECT_EQ(r.violation->line, 11u);
  EXPECT_EQ(r.backend_result<model::native::NativeResult>()->hotplug_online_lost_tb, 1024u);
  // Offline right at a hook: nothing online is lost, and tb_conserved holds over the reset.
  const std::string at_hook = kHeadP9 +
                              "0 0 switch prev=0 next=100\n1000 1 tick\n1000 1 cpu_offline\n"
                              "13000 1 cpu_online\n14000 1 tick\n";
  r = run(at_hook, "POWER9", native612(), [](sim::ModelCfg& m) { m.native.starttime_init = true; });
  EXPECT_FALSE(r.violation) << r.violation->invariant;
  EXPECT_EQ(r.cpus[1].cpustat[model::IDLE], 1000u);
}

TEST(Hotplug, NativeResetKeepsTbConservedAndABrokenOneDoesNot) {
  // Pending idle 100, flushed 400, starttime 500 at origin 0; reset at TB 900 skips 400.
  Concrete d;
  model::native::NativeCfg cfg;
  cfg.scaled = false;
  model::native::Cost k;
  auto a = model::native::zero_acct<Concrete, 64>(d);
  a.idle_time = 100;
  a.starttime = 500;
  std::uint64_t flushed = 400, origin = 0;
  ASSERT_TRUE(spec::native::tb_conserved(d, a, true, std::uint64_t{500}, flushed, origin));
  const std::uint64_t skipped = model::native::vtime_reset<Concrete, 64>(d, cfg, a, 900, 900, k);
  EXPECT_EQ(skipped, 400u);
  EXPECT_EQ(a.starttime, 900u);
  EXPECT_FALSE(spec::native::tb_conserved(d, a, true, std::uint64_t{900}, flushed, origin));  // broken: no ghost
  EXPECT_TRUE(spec::native::tb_conserved(d, a, true, std::uint64_t{900}, flushed, origin + skipped));
}

TEST(Hotplug, BuilderEmitsHotplugOnlyWhenAsked) {
  trace::BuildSpec s;
  s.ncpus = 3;
  std::size_t with = 0, without = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto& e : trace::random_trace(seed, s, 1000).events)
      without += e.kind == trace::Kind::CpuOffline || e.kind == trace::Kind::CpuOnline;
    s.hotplug = true;
    auto t = trace::random_trace(seed, s, 1000);
    EXPECT_FALSE(trace::validate(t));
    for (const auto& e : t.events) with += e.kind == trace::Kind::CpuOffline || e.kind == trace::Kind::CpuOnline;
    s.hotplug = false;
  }
  EXPECT_EQ(without, 0u);
  EXPECT_GT(with, 10u);
}

}  // namespace
}  // namespace kacct
