// sim::RunOptions::observe, which kacct report draws from: called once after every event, in
// order, with the run's state so far; observing changes nothing; the last call sees the final
// kcpustat and task times. For each accounting backend (tick, gen vtime, native vtime).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"

namespace kacct {
namespace {

sim::Program load(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto t = trace::load(ss.str());
  EXPECT_TRUE(t.ok()) << path;
  auto p = sim::compile(t.value());
  EXPECT_TRUE(p.ok()) << path;
  return std::move(p).value();
}

void expect_observed(const sim::Program& p, const char* cpu_name, const char* cfg_name, bool check) {
  SCOPED_TRACE(std::string(cpu_name) + " " + cfg_name + (check ? " check" : ""));
  const auto cpu = arch::find_cpu(cpu_name);
  ASSERT_TRUE(cpu);
  const auto cfg = arch::find_config(cfg_name);
  ASSERT_TRUE(cfg);
  const auto m = sim::model_cfg(*cpu, *cfg);
  std::vector<std::size_t> seen;
  std::vector<std::uint64_t> user_sum;  // kcpustat user of every CPU after each event
  sim::RunOptions o;
  o.check = check;
  o.observe = [&](std::size_t i, const sim::RunResult& r) {
    seen.push_back(i);
    std::uint64_t s = 0;
    for (const auto& c : r.cpus) s += c.cpustat[model::USER];
    user_sum.push_back(s);
  };
  const auto observed = sim::run(p, m, o);
  const auto plain = sim::run(p, m, {.check = check});
  ASSERT_EQ(seen.size(), p.events.size());
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i);
  for (std::size_t i = 1; i < user_sum.size(); ++i) EXPECT_LE(user_sum[i - 1], user_sum[i]) << "event " << i;
  std::uint64_t final_user = 0;
  for (std::size_t c = 0; c < plain.cpus.size(); ++c) {
    EXPECT_EQ(observed.cpus[c].cpustat, plain.cpus[c].cpustat) << "cpu " << c;
    final_user += plain.cpus[c].cpustat[model::USER];
  }
  EXPECT_EQ(user_sum.back(), final_user);
  ASSERT_EQ(observed.tasks.size(), plain.tasks.size());
  for (std::size_t t = 0; t < plain.tasks.size(); ++t) {
    EXPECT_EQ(observed.tasks[t].utime, plain.tasks[t].utime);
    EXPECT_EQ(observed.tasks[t].stime, plain.tasks[t].stime);
  }
  EXPECT_EQ(observed.reads.size(), plain.reads.size());
}

TEST(Observer, SeesEveryEventAndChangesNothing) {
  const auto showcase = load(KACCT_REPORT_DIR "/showcase.trace");
  for (bool check : {false, true}) {
    expect_observed(showcase, "x86-64", "4.19-tick-hz250", check);
    expect_observed(showcase, "x86-64", "6.6-tick-irqtime-steal-hz250", check);
    expect_observed(showcase, "x86-64", "6.6-gen-irqtime-steal-hz250", check);
  }
  const auto yield = load(KACCT_TRACES_DIR "/8xx-yield.trace");
  expect_observed(yield, "MPC8xx", "4.19-native-hz250", false);
}

}  // namespace
}  // namespace kacct
