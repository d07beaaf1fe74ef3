// The simulator on the sample traces (test/traces/*.trace): every legal CPU x config runs them
// with check=true without a violated invariant or failed obligation, and deterministically.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"

namespace kacct {
namespace {

TEST(Machine, SampleTracesPassEveryCheckOnEveryCombo) {
  size_t traces = 0;
  for (const auto& f : std::filesystem::directory_iterator(KACCT_TRACES_DIR)) {
    if (f.path().extension() != ".trace") continue;
    std::ifstream in(f.path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = trace::load(ss.str());
    ASSERT_TRUE(t.ok()) << f.path() << ": " << t.error().to_string();
    auto p = sim::compile(t.value());
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    ++traces;
    for (const auto& c : arch::combos()) {
      const auto m = sim::model_cfg(c.cpu, c.cfg);
      const auto r = sim::run(p.value(), m, {.check = true});
      ASSERT_FALSE(r.violation) << f.path() << " " << c.cpu.name << " " << c.cfg.name() << ": "
                                << r.violation->invariant << " at line " << r.violation->line;
      ASSERT_TRUE(r.obligations_failed.empty()) << r.obligations_failed.front();
      ASSERT_EQ(r.events, t.value().events.size());
      // The backend of the configured mode ran: its result is the variant's alternative for it.
      ASSERT_EQ(r.backend.index(), std::size_t(c.cfg.acct)) << c.cfg.name();
      const auto again = sim::run(p.value(), m, {.check = false});
      ASSERT_EQ(to_json(again.cpus), to_json(r.cpus));
      ASSERT_EQ(to_json(again.tasks), to_json(r.tasks));
    }
  }
  EXPECT_GE(traces, 4u);
}

}  // namespace
}  // namespace kacct

namespace kacct {
namespace {

// Which reads bring the running reader's sum_exec_runtime up to date (6.12 cputime.c):
// task_stat and rusage_thread read the stored value; thread_cputime, proc_stat, rusage_self and
// process_cputime call task_sched_runtime(current) first.
TEST(Machine, ReadsUpdateRtimeOnlyWhereTheKernelDoes) {
  const char* text = R"(kacct-trace 1
cpu x86-64
ncpus 1
clock ns
task 100 pid=100 comm=app mm=1
events
0 0 switch prev=0 next=100
1000000 0 read kind=task_stat id=1
1000000 0 read kind=rusage_thread id=2
1000000 0 read kind=thread_cputime id=3
2000000 0 read kind=task_stat id=4
3000000 0 read kind=proc_stat id=5
3000000 0 read kind=task_stat id=6
)";
  auto t = trace::load(text);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto p = sim::compile(t.value());
  ASSERT_TRUE(p.ok());
  const auto r = sim::run(p.value(), sim::model_cfg(*arch::find_cpu("x86-64"), *arch::find_config("6.12-tick-hz250")));
  ASSERT_EQ(r.reads.size(), 6u);
  EXPECT_EQ(r.reads[0].rtime, 0u);  // stored value: nothing since the switch
  EXPECT_EQ(r.reads[1].rtime, 0u);
  EXPECT_EQ(r.reads[2].rtime, 1'000'000u);  // task_sched_runtime()
  EXPECT_EQ(r.reads[3].rtime, 1'000'000u);  // the update of read 3, not 2 ms
  EXPECT_EQ(r.reads[4].rtime, 3'000'000u);  // group read: task_sched_runtime(current)
  EXPECT_EQ(r.reads[5].rtime, 3'000'000u);
}

}  // namespace
}  // namespace kacct

namespace kacct {
namespace {

// A thread preempted after its exit (release_task() in the kernel) that runs again: the group's
// reads afterwards hold only what it had at its exit (__exit_signal()), so they equal those of
// the same trace where the thread dies at the preemption, while the thread's own times grow.
TEST(Machine, TimeAfterExitNeverReachesTheGroup) {
  std::ifstream in(std::string(KACCT_TRACES_DIR) + "/exit-preempted.trace");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  ASSERT_NE(text.find("prev=101 next=0 prev_state=R"), std::string::npos);
  // the variant: 101 dies at the preemption; cpu 0 stays idle from 8 ms on
  std::string dies;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("7000000 1 switch", 0) == 0) l = "7000000 1 switch prev=101 next=0 prev_state=X";
    if (l.rfind("8000000 0", 0) == 0 || l.rfind("9000000 0", 0) == 0 || l.rfind("9100000 0", 0) == 0 ||
        l.rfind("12000000 0", 0) == 0 || l.rfind("14000000 0", 0) == 0)
      continue;
    dies += l + "\n";
  }
  auto a = trace::load(text), b = trace::load(dies);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  auto pa = sim::compile(a.value()), pb = sim::compile(b.value());
  ASSERT_TRUE(pa.ok() && pb.ok());
  for (const auto& [cpu, config] : {std::pair{"x86-64", "6.12-tick-hz250"}, std::pair{"POWER9", "6.12-native-hz250"},
                                    std::pair{"x86-64", "6.12-gen-hz250"}}) {
    const auto m = sim::model_cfg(*arch::find_cpu(cpu), *arch::find_config(config));
    const auto ra = sim::run(pa.value(), m, {.check = true}), rb = sim::run(pb.value(), m, {.check = true});
    ASSERT_FALSE(ra.violation) << config << ": " << ra.violation->invariant << " " << ra.violation->detail;
    ASSERT_EQ(ra.reads.size(), 2u);
    ASSERT_EQ(rb.reads.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(ra.reads[i].utime, rb.reads[i].utime) << config << " read " << i;
      EXPECT_EQ(ra.reads[i].stime, rb.reads[i].stime) << config << " read " << i;
    }
    const auto t101 = [](const sim::Program& p, const sim::RunResult& r) {
      for (std::size_t i = 0; i < p.tasks.size(); ++i)
        if (p.tasks[i].tid == 101) return r.tasks[i].utime + r.tasks[i].stime;
      return std::uint64_t{0};
    };
    EXPECT_GT(t101(pa.value(), ra), t101(pb.value(), rb)) << config << ": 101 ran after its exit";
  }
}

}  // namespace
}  // namespace kacct
