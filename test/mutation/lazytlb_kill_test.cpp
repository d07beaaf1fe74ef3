// Lazy-TLB steps (model/lazytlb/) on short scripts with their exact final state: which CPU is
// left lazily on which mm, which mask bits a flush clears, what mm_count holds. Each test names
// the catalogued mutants (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include <string>

#include "model/lazytlb/script.hpp"

namespace {
using namespace kacct::model::lazytlb;

RunResult run(const std::string& head, const std::string& events) {
  auto p = parse_script("lazytlb 1\ncpus 2\ntasks 3\nmms 2\n" + head + "events\n" + events);
  EXPECT_TRUE(p) << p.error().str();
  auto r = run_script(p.value());
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.failed_at) << r.violations.front().invariant << ": " << r.violations.front().detail;
  return r;
}
// CPU 1 ran task 0 (mm 0) and went idle: it is lazily on mm 0.
const char* kLazyOnCpu1 = "switch 1 0\nfinish 1\nidle 1\nfinish 1\n";

// 512: the radix exit flush (6.6+, shootdown) IPIs the lazy CPU off mm 0; it clears its own bit.
TEST(LazyTlbKill, ExitFlushShootsLazyCpus) {
  auto r = run("arch ppc64-radix\nversion 6.6\n", std::string(kLazyOnCpu1) + "switch 0 0\nfinish 0\nexit 0\n");
  const auto& w = r.world;
  EXPECT_EQ(w.tasks[w.idle_of(1)].active_mm, kInitMm);
  EXPECT_FALSE(w.mms[0].mask.test(1));
}

// 523: a trim flush whose mask holds one other CPU IPIs it (not the caller).
TEST(LazyTlbKill, TrimFlushOfALoneOtherCpu) {
  auto r = run("arch ppc64-radix\nversion 6.6\n", std::string(kLazyOnCpu1) + "switch 0 2\nfinish 0\nflush 0 0\n");
  const auto& w = r.world;
  EXPECT_EQ(w.tasks[w.idle_of(1)].active_mm, kInitMm);
  EXPECT_FALSE(w.mms[0].mask.test(1));
  EXPECT_EQ(w.mms[0].mask.count(), 0);
}

// 525: sched_force_init_mm (6.14+) drops the outgoing CPU's lazy reference at offline.
TEST(LazyTlbKill, ForceInitMmDropsTheLazyReference) {
  auto r = run("arch generic\nversion 6.14\n", std::string(kLazyOnCpu1) + "offline 1\n");
  const auto& w = r.world;
  EXPECT_EQ(w.tasks[w.idle_of(1)].active_mm, kInitMm);
  EXPECT_EQ(w.cnt[0].mm_count, 1u);  // task 0's mm_users reference only
  EXPECT_EQ(w.cnt[0].mm_users, 1u);
}

// 526: finish_cpu (6.14+) leaves the dead CPU's idle task with no active_mm, not init_mm.
TEST(LazyTlbKill, FinishCpuClearsActiveMm) {
  auto r = run("arch generic\nversion 6.14\n", std::string(kLazyOnCpu1) + "offline 1\ndead 1\n");
  EXPECT_EQ(r.world.tasks[r.world.idle_of(1)].active_mm, kNull);
  auto old = run("arch generic\nversion 6.12\n", std::string(kLazyOnCpu1) + "offline 1\ndead 1\n");
  EXPECT_EQ(old.world.tasks[old.world.idle_of(1)].active_mm, kInitMm);
}

}  // namespace
