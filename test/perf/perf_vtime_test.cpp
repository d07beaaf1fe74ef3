// Gen vtime from kprobes (model/trace/perf_vtime.hpp): a hand-made probe trace whose kernel
// arithmetic is worked out below, on a 2-CPU machine with CPU 1 nohz_full.
#include <gtest/gtest.h>

#include <string>

#include "arch/registry.hpp"
#include "model/sim/oracle.hpp"
#include "model/trace/perf.hpp"

namespace kacct {
namespace {
using trace::perf::convert;

std::string probe(const char* ts, const char* fn, const char* fields) {
  return std::string("   kacct-workload   200/200   [001]    ") + ts + ":   kprobes:" + fn + ": (c0000000001b9dbc) " +
         fields + "\n";
}
std::string line(const char* ts, const char* ev, const char* fields) {
  return std::string("   kacct-workload   200/200   [001]    ") + ts + ":   " + ev + ": " + fields + "\n";
}

// Task 200 runs in user mode since sched_clock 1000000500 (before the trace) with residues
// vu=100, vst=50. Kernel clocks: user exit c1=1000001200, user enter c2=1000001500 (a marker
// that powerpc traces only at sys_exit), user exit c3=1000002100 (the read syscall), read clock
// 1000002150, user enter c4=1000002600. The kernel's se.sum_exec_runtime passes the runtime
// events by 300 ns (a dropped sched_stat_runtime).
std::string script() {
  const char* f = "tu=0 ts=0 rt=1000";
  std::string s;
  s += probe("1.000001000", "vtime_user_exit", (std::string("pid=200 st=1000000500 vs=3 vu=100 vst=50 ") + f).c_str());
  s += line("1.000001300", "raw_syscalls:sys_exit", "NR 100001 = -38");
  s += probe("1.000001400", "vtime_user_enter", (std::string("pid=200 st=1000001200 vs=2 vu=800 vst=50 ") + f).c_str());
  s += probe("1.000002000", "vtime_user_exit", (std::string("pid=200 st=1000001500 vs=3 vu=800 vst=350 ") + f).c_str());
  s += line("1.000002200", "raw_syscalls:sys_enter", "NR 17 (5, 7ffe31666e20, 3ff, 0, 0, 0)");
  s += line("1.000002300", "sched:sched_stat_runtime", "comm=kacct-workload pid=200 runtime=500 [ns] vruntime=9 [ns]");
  s += probe("1.000002400", "cputime_adjust", "cs=400 cu=0 cr=1500 pu=0 ps=0");
  s += line("1.000002500", "raw_syscalls:sys_exit", "NR 17 = 10");
  s += probe("1.000002550", "vtime_user_enter", "pid=200 st=1000002100 vs=2 vu=1400 vst=350 tu=0 ts=0 rt=1800");
  s += probe("1.000003000", "vtime_user_exit", "pid=200 st=1000002600 vs=3 vu=1400 vst=850 tu=0 ts=0 rt=1800");
  return s;
}

trace::perf::Options options() {
  trace::perf::Options o;
  o.cpu_model = "POWER9";
  o.ncpus = 2;
  std::string err;
  o.reads.push_back(*trace::perf::parse_read_spec("rusage_thread@1", &err));
  return o;
}

TEST(PerfVtime, KernelClocksDriveTheTransitions) {
  auto c = convert(script(), options());
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  const auto& st = c.value().stats;
  ASSERT_TRUE(st.vtime.active);
  EXPECT_EQ(st.vtime.cpus, std::vector<std::uint32_t>{1});
  EXPECT_EQ(st.vtime.transitions, 5u);
  EXPECT_EQ(st.vtime.transitions_exact, 4u);  // the last one has no later probe
  // The task was declared with the state of its first probe and the user time pending since its
  // starttime (1000001000 - 1000000500 = 500 ns) added to its user residue.
  const auto& h = c.value().trace.header;
  ASSERT_EQ(h.tasks.size(), 1u);
  EXPECT_EQ(h.tasks[0].vtime_utime, 600u);
  EXPECT_EQ(h.tasks[0].vtime_stime, 50u);
  // exc_enter/exc_exit at the kernel's clocks (trace ts relative to the first sample); the first
  // puts the task found in user mode back there at its switch-in.
  std::vector<std::uint64_t> at;
  for (const auto& e : c.value().trace.events)
    if (e.kind == trace::Kind::ExcEnter || e.kind == trace::Kind::ExcExit) at.push_back(e.ts);
  EXPECT_EQ(at, (std::vector<std::uint64_t>{0, 200, 500, 1100, 1600, 2000}));
  // The marker seen only at sys_exit, the read's clock inferred from cputime_adjust's stime.
  EXPECT_EQ(st.markers, 1u);
  ASSERT_EQ(st.read_clocks.size(), 1u);
  EXPECT_EQ(st.read_clocks[0].how, "inferred");
  EXPECT_EQ(st.read_clocks[0].lo, 1000002150u);
  EXPECT_EQ(st.read_clocks[0].model_utime_in, 0u);
  // 300 ns of runtime no event showed, restored from the probe.
  EXPECT_EQ(st.vtime.runtime_restored, 1u);
  EXPECT_EQ(st.vtime.runtime_restored_ns, 300u);
  EXPECT_EQ(st.vtime.runtime_excess, 0u);
}

TEST(PerfVtime, ModelMatchesEveryCheckpoint) {
  const auto cpu = *arch::find_cpu("POWER9");
  auto pr = sim::predict(script(), options(), cpu, *arch::find_config("6.1-gen-hz250"), 200);
  ASSERT_TRUE(pr.ok()) << pr.error().to_string();
  const auto& cp = pr.value().checkpoints;
  EXPECT_EQ(cp.total, 4u);
  EXPECT_EQ(cp.exact, cp.total) << (cp.diffs.empty() ? "" : cp.diffs.front());
  // A wrong clock must show: the 4.9 jiffy variant accounts nothing below a jiffy.
  auto jiffy = sim::predict(script(), options(), cpu, *arch::find_config("4.9-gen-hz250"), 200);
  ASSERT_TRUE(jiffy.ok());
  EXPECT_LT(jiffy.value().checkpoints.exact, jiffy.value().checkpoints.total);
}

TEST(PerfVtime, MalformedProbeIsReportedNotGuessed) {
  std::string s = script();
  s += probe("1.000003100", "vtime_user_enter", "pid=200 st=x vs=2");
  auto c = convert(s, options());
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  const auto& st = c.value().stats;
  EXPECT_EQ(st.repairs.at("malformed tracepoint fields skipped"), 1u);
  EXPECT_EQ(st.vtime.transitions, 5u);  // the bad probe moved nothing
}

}  // namespace
}  // namespace kacct
