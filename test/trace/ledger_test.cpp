// Ground truth: a hand-computed ledger, incremental snapshots, and the
// sample traces in test/traces/.
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "test_util.hpp"

namespace kacct::trace::test {
namespace {

using B = Bucket;

uint64_t row_sum(const Ledger& l, uint32_t c) { return std::accumulate(l.cpu[c].begin(), l.cpu[c].end(), uint64_t{0}); }

// kGolden (also the example in docs/trace-format.md), interval by interval.
// app = tid 100 (nice 0), batch = tid 200 (nice 5, so its user time is Nice).
//
// cpu0: [0,100)      system  app        cpu1: [0,200)      idle
//       [100,400)    user    app              [200,300)    system  batch
//       [400,450)    irq     app              [300,1000)   nice    batch, of which
//       [450,500)    softirq app                           steal ns=100 -> 600 nice + 100 steal
//       [500,700)    user    app              [1000,1300)  nice    batch
//       [700,800)    system  app              [1300,1400)  system  batch
//       [800,1100)   iowait  (idle, app in iowait)  [1400,1500) system batch (exiting)
//       [1100,1200)  idle                     [1500,1600)  system  app
//       [1200,2000)  idle (nohz)              [1600,1900)  guest   app
//                                             [1900,2000)  system  app (charged to end_ts)
// cpu0: user 300+200=500, system 100+100=200, irq 50, softirq 50, iowait 300,
//       idle 100+800=900                                     -> sum 2000
// cpu1: idle 200, system 100+100+100+100+100=500, nice 600+300=900, steal 100,
//       guest 300                                            -> sum 2000
// app:   user 500, system 100+100+100+100=400, irq 50, softirq 50, guest 300
// batch: user 600+300=900, system 100+100+100=300, steal 100
TEST(TraceLedger, GoldenHandComputed) {
  auto t = load(kGolden);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto r = ground_truth(t.value());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Ledger& l = r.value();
  EXPECT_EQ(l.end_ts, 2000u);

  std::array<uint64_t, kBuckets> cpu0{}, cpu1{};
  cpu0[size_t(B::User)] = 500, cpu0[size_t(B::System)] = 200, cpu0[size_t(B::Irq)] = 50;
  cpu0[size_t(B::Softirq)] = 50, cpu0[size_t(B::Iowait)] = 300, cpu0[size_t(B::Idle)] = 900;
  cpu1[size_t(B::Idle)] = 200, cpu1[size_t(B::System)] = 500, cpu1[size_t(B::Nice)] = 900;
  cpu1[size_t(B::Steal)] = 100, cpu1[size_t(B::Guest)] = 300;
  ASSERT_EQ(l.cpu.size(), 2u);
  EXPECT_EQ(l.cpu[0], cpu0);
  EXPECT_EQ(l.cpu[1], cpu1);
  EXPECT_EQ(row_sum(l, 0), 2000u);
  EXPECT_EQ(row_sum(l, 1), 2000u);

  ASSERT_EQ(l.task.size(), 2u);
  EXPECT_EQ(l.task.at(100), (TaskTruth{.user = 500, .system = 400, .guest = 300, .irq = 50, .softirq = 50}));
  EXPECT_EQ(l.task.at(200), (TaskTruth{.user = 900, .system = 300, .steal = 100}));
  EXPECT_EQ(l.task.at(100).total() + l.task.at(200).total(),
            4000u - 900 - 300 - 200);  // everything but cpu0 idle+iowait and cpu1 idle
}

TEST(TraceLedger, IncrementalSnapshots) {
  auto t = load(kGolden);
  ASSERT_TRUE(t.ok());
  Accountant acc(t.value().header);
  for (const Event& e : t.value().events) {
    ASSERT_FALSE(acc.apply(e));
    if (e.ts == 800) break;  // after the switch to idle with iowait=1
  }
  Ledger at800 = acc.snapshot(800);
  EXPECT_EQ(at800.at(0, B::User), 500u);
  EXPECT_EQ(at800.at(0, B::Iowait), 0u);
  // cpu1 charged [300,800) as nice: the steal at 1000 is not known yet.
  EXPECT_EQ(at800.at(1, B::Nice), 500u);
  Ledger at900 = acc.snapshot(900);
  EXPECT_EQ(at900.at(0, B::Iowait), 100u);  // nr_iowait=1 on cpu0 since 800
  EXPECT_EQ(row_sum(at900, 0), 900u);
  EXPECT_EQ(row_sum(at900, 1), 900u);
  EXPECT_EQ(acc.tracker().now(), 800u);
}

TEST(TraceLedger, GuestNiceAndNoTasks) {
  auto t = load(
      "kacct-trace 1\ncpu P\nncpus 1\nclock ns\ntask 9 comm=vm nice=1 mm=1\nevents\n"
      "10 0 switch prev=0 next=9\n20 0 guest_enter\n50 0 steal ns=5\n60 0 guest_exit\n");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto l = ground_truth(t.value()).value();
  EXPECT_EQ(l.at(0, B::Idle), 10u);
  EXPECT_EQ(l.at(0, B::System), 10u);
  EXPECT_EQ(l.at(0, B::GuestNice), 35u);  // [20,60) minus 5 stolen
  EXPECT_EQ(l.at(0, B::Steal), 5u);
  EXPECT_EQ(l.at(0, B::Guest), 0u);
  EXPECT_EQ(l.task.at(9), (TaskTruth{.system = 10, .guest = 35, .steal = 5}));

  auto empty = ground_truth(parse("kacct-trace 1\ncpu P\nncpus 3\nclock ns\nevents\n").value());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty.value().end_ts, 0u);
  EXPECT_EQ(empty.value().cpu.size(), 3u);
  EXPECT_EQ(row_sum(empty.value(), 2), 0u);
}

TEST(TraceLedger, BucketNamesFollowCpuUsageStat) {
  EXPECT_EQ(name(B::User), "user");
  EXPECT_EQ(name(B::Softirq), "softirq");
  EXPECT_EQ(name(B::GuestNice), "guest_nice");
  EXPECT_EQ(size_t(B::Steal), 7u);
}

TEST(TraceLedger, SampleTracesLoadAndBalance) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KACCT_TRACES_DIR)) {
    if (entry.path().extension() != ".trace") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = load(ss.str());
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    EXPECT_EQ(parse(write(t.value())).value(), t.value());  // canonical round trip
    auto l = ground_truth(t.value());
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    uint64_t tasks = 0;
    for (const auto& [tid, truth] : l.value().task) tasks += truth.total();
    uint64_t busy = 0;
    for (uint32_t c = 0; c < l.value().cpu.size(); ++c) {
      EXPECT_EQ(row_sum(l.value(), c), l.value().end_ts);  // every ns charged exactly once
      busy += row_sum(l.value(), c) - l.value().at(c, B::Idle) - l.value().at(c, B::Iowait);
    }
    // Interrupts while idle are charged to the CPU but to no task.
    EXPECT_LE(tasks, busy);
    ++n;
  }
  EXPECT_GE(n, 4u);
}

}  // namespace
}  // namespace kacct::trace::test
