// Gen vtime configs in the perf oracle: vtime runs only on nohz_full CPUs. A trace without vtime
// probes is a kernel booted without nohz_full= (unless the caller names the CPUs): the tick
// accounts every CPU there (vtime_accounting_enabled_this_cpu() is false), as under tick
// accounting. test/cli/perf/mini.perf: one 4 ms tick in user mode (100.004) and one inside
// write() (100.008) on CPU 0, HZ=250, so TICK_NSEC = 4,000,000 ns.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "arch/registry.hpp"
#include "model/sim/oracle.hpp"
#include "model/trace/perf.hpp"

namespace kacct {
namespace {
using trace::ReadKind;

std::string mini() {
  std::ifstream in(std::string(KACCT_CLI_PERF) + "/mini.perf");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
trace::perf::Options reads() {
  trace::perf::Options o;
  o.reads = {{ReadKind::Taskstats, 500, 2}, {ReadKind::RusageSelf, 0, 2}};
  return o;
}
sim::Prediction run(const char* config, const std::function<void(sim::ModelCfg&)>& tweak = {}) {
  auto pr = sim::predict(mini(), reads(), *arch::find_cpu("x86-64"), *arch::find_config(config), 500, tweak);
  EXPECT_TRUE(pr) << pr.error().to_string();
  return pr ? pr.value() : sim::Prediction{};
}

TEST(PerfNohzFull, GenWithoutNohzFullTicksLikeTick) {
  const auto gen = run("6.12-gen-hz250");
  ASSERT_EQ(gen.reads.size(), 2u);
  // One user tick and one system tick: the raw task counters (taskstats, ns / 1000 in us).
  EXPECT_EQ(gen.reads[0].utime_ns, 4'000'000u);
  EXPECT_EQ(gen.reads[0].stime_ns, 4'000'000u);
  EXPECT_EQ(gen.reads[0].utime, 4000u);
  EXPECT_EQ(gen.reads[0].stime, 4000u);
  // And every read as the tick kernel of the same release reports it.
  const auto tick = run("6.12-tick-hz250");
  ASSERT_EQ(tick.reads.size(), gen.reads.size());
  for (std::size_t i = 0; i < tick.reads.size(); ++i) {
    EXPECT_EQ(gen.reads[i].utime_ns, tick.reads[i].utime_ns) << i;
    EXPECT_EQ(gen.reads[i].stime_ns, tick.reads[i].stime_ns) << i;
    EXPECT_EQ(gen.reads[i].rtime_ns, tick.reads[i].rtime_ns) << i;
  }
}

TEST(PerfNohzFull, NamedNohzFullCpuRunsVtime) {
  // CPU 0 nohz_full: vtime accounts the time in user and kernel mode as it passes, not by the
  // tick. The task runs from 100.000000 to the read at 100.008100 (8,100,000 ns of runtime) and
  // is in user mode except inside the syscalls 100.000100-100.0001005, 100.000101-100.000103
  // and the write() around the second tick, so the split can no longer be 4 ms / 4 ms.
  const auto v = run("6.12-gen-hz250", [](sim::ModelCfg& m) { m.gen.nohz_full = 1; });
  ASSERT_EQ(v.reads.size(), 2u);
  EXPECT_NE(v.reads[0].utime_ns, 4'000'000u);
  EXPECT_GT(v.reads[0].utime_ns, v.reads[0].stime_ns);
  // CPU 1 nohz_full leaves CPU 0, where the task runs, to the tick.
  const auto other = run("6.12-gen-hz250", [](sim::ModelCfg& m) { m.gen.nohz_full = 2; });
  ASSERT_EQ(other.reads.size(), 2u);
  EXPECT_EQ(other.reads[0].utime_ns, 4'000'000u);
  EXPECT_EQ(other.reads[0].stime_ns, 4'000'000u);
}

}  // namespace
}  // namespace kacct
