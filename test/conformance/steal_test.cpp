// Tick steal from the recorder (tools/record-perf/steal.bt): each `kacct:tick_steal` record
// takes exactly its steal out of its tick in the model, and a tick whose steal is not known
// makes the reads after it unverifiable, never exact.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <optional>
#include <string>

#include "arch/registry.hpp"
#include "model/sim/oracle.hpp"
#include "model/trace/perf.hpp"

namespace kacct {
namespace {

using trace::ReadKind;
namespace perf = trace::perf;

std::string line(double t, const std::string& event, const std::string& fields) {
  return fmt::format("         a.out  500/500  [000] {:.9f}: {}: {}\n", t, event, fields);
}
std::string steal(double t, std::uint64_t now, std::uint64_t ns) {
  return fmt::format("     kacct-steal   -1/-1    [000] {:.9f}: kacct:tick_steal: now={} steal={}\n", t, now, ns);
}
// A tick at t (now = its ns): the timer interrupted user mode or a syscall; the recorder's steal
// record comes just before the hrtimer expiry (as reduce.py writes it).
std::string tick(double t, std::uint64_t now, bool user, std::optional<std::uint64_t> ns) {
  std::string s = fmt::format("a.out 500/500 [000] {:.9f}: irq_vectors:local_timer_entry: vector=236\n", t - 1e-7);
  s += "\tffffffff813300d2 __sysvec_apic_timer_interrupt\n\tffffffff81000e06 asm_sysvec_apic_timer_interrupt\n";
  if (!user) s += "\tffffffff8225a6c1 do_syscall_64\n";
  s += "\n";
  if (ns) s += steal(t, now, *ns);
  return s + line(t, "timer:hrtimer_expire_entry",
                  fmt::format("hrtimer=0xffff888627c1c6f8 function=tick_nohz_handler now={}", now));
}
std::string sys(double t, int nr, bool enter) {
  return line(t, enter ? "raw_syscalls:sys_enter" : "raw_syscalls:sys_exit",
              enter ? fmt::format("NR {} (0, 0, 0, 0, 0, 0)", nr) : fmt::format("NR {} = 0", nr));
}

// a.out runs from 100.0 s; a user tick at 100.004, then a syscall that spans the kernel tick at
// 100.008 (events each 1 ms before it: its steal must be spread over them), then a taskstats read
// (raw task_cputime(): the ticks' split as the kernel keeps it, in ns).
struct Ticks {
  std::optional<std::uint64_t> s1, s2;  // the ticks' steal records (nullopt: none)
};
std::string text(Ticks k) {
  std::string t = line(100.0, "sched:sched_switch",
                       "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a.out next_pid=500 "
                       "next_prio=120");
  t += tick(100.004, 100004000, true, k.s1);
  t += sys(100.005, 7, true) + sys(100.006, 7, false) + sys(100.007, 7, true);
  t += tick(100.008, 100008000, false, k.s2);
  t += sys(100.009, 7, false);
  t += sys(100.0091, 100001, true) + sys(100.0092, 100001, false) + sys(100.0093, 98, true);
  t += line(100.0094, "sched:sched_stat_runtime", "comm=a.out pid=500 runtime=9400000 [ns]");
  t += sys(100.0095, 98, false);
  return t;
}

perf::Options options() {
  perf::Options o;
  o.reads = {{ReadKind::Taskstats, 0, 1}};
  return o;
}

sim::PredictedRead read(Ticks k, perf::Stats* stats = nullptr) {
  const auto cpu = *arch::find_cpu("x86-64");
  const auto cfg = *arch::find_config("6.12-tick-steal-hz250");
  auto p = sim::predict(text(k), options(), cpu, cfg, 500);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
  if (!p.ok()) return {};
  if (stats) *stats = p.value().conversion.stats;
  EXPECT_EQ(p.value().reads.size(), 1u);
  return p.value().reads.empty() ? sim::PredictedRead{} : p.value().reads[0];
}

TEST(TickSteal, EachTickLosesExactlyItsSteal) {
  perf::Stats st;
  const auto r = read({123'457, 3'500'001}, &st);  // tick 2's steal needs all four gaps before it
  EXPECT_EQ(r.utime_ns, 4'000'000u - 123'457u);
  EXPECT_EQ(r.stime_ns, 4'000'000u - 3'500'001u);
  EXPECT_EQ(r.steal_unknown_before, 0u);
  EXPECT_EQ(st.tick_steal.records, 2u);
  EXPECT_EQ(st.tick_steal.ticks, 2u);
  EXPECT_EQ(st.tick_steal.ticks_steal, 2u);
  EXPECT_EQ(st.tick_steal.ns, 123'457u + 3'500'001u);
  EXPECT_EQ(st.tick_steal.max_ns, 3'500'001u);
  EXPECT_EQ(st.tick_steal.ticks_unplaced, 0u);
  EXPECT_GE(st.used["kacct:tick_steal"], 2u);
}

TEST(TickSteal, WithoutRecordsNothingIsTakenOut) {
  const auto r = read({});
  EXPECT_EQ(r.utime_ns, 4'000'000u);
  EXPECT_EQ(r.stime_ns, 4'000'000u);
  EXPECT_EQ(r.steal_unknown_before, 0u);  // a trace without records: steal is not claimed known
}

// account_process_tick(): steal >= TICK_NSEC accounts nothing (the steal is still consumed).
TEST(TickSteal, AWholeTickOfStealAccountsNothing) {
  const auto r = read({0, 4'000'000});
  EXPECT_EQ(r.utime_ns, 4'000'000u);
  EXPECT_EQ(r.stime_ns, 0u);
}

TEST(TickSteal, ATickWithoutItsRecordMakesLaterReadsUnverifiable) {
  perf::Stats st;
  const auto r = read({5, std::nullopt}, &st);
  EXPECT_EQ(st.tick_steal.ticks_without, 1u);
  EXPECT_EQ(r.steal_unknown_before, 1u);
  sim::Prediction p;
  p.reads = {r};
  sim::KernelRead k;
  k.marker = 1;
  k.kind = ReadKind::Taskstats;
  k.utime = r.utime;
  k.stime = r.stime;
  const auto c = sim::compare(p, {k});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].agreement, sim::Agreement::Unverifiable) << c[0].detail;  // even though the values agree
}

// More steal than the time since the CPU's previous tick cannot be fed: counted, not exact.
TEST(TickSteal, StealThatDoesNotFitIsCounted) {
  perf::Stats st;
  const auto r = read({4'000'001, 0}, &st);  // the trace starts 4 ms before the first tick
  EXPECT_EQ(st.tick_steal.ticks_unplaced, 1u);
  EXPECT_GT(st.tick_steal.unplaced_ns, 0u);
  EXPECT_EQ(r.steal_unknown_before, 1u);
}

// A garbled record is not a steal of 0: it is reported, and its tick's steal is unknown.
TEST(TickSteal, AMalformedRecordIsNotZeroSteal) {
  std::string t = text({7, 9});
  const auto at = t.find("steal=9");
  ASSERT_NE(at, std::string::npos);
  t.replace(at, 7, "steal=x");
  const auto p =
      sim::predict(t, options(), *arch::find_cpu("x86-64"), *arch::find_config("6.12-tick-steal-hz250"), 500);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const auto& st = p.value().conversion.stats;
  EXPECT_EQ(st.repairs.at("malformed tracepoint fields skipped"), 1u);
  EXPECT_EQ(st.tick_steal.records, 1u);
  EXPECT_EQ(st.tick_steal.ticks_without, 1u);
  ASSERT_EQ(p.value().reads.size(), 1u);
  EXPECT_EQ(p.value().reads[0].steal_unknown_before, 1u);
}

}  // namespace
}  // namespace kacct
