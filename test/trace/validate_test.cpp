// Semantics: every class of order/context error is reported by load() with
// the line and the column of the offending field; the tracker state is right.
#include <string>

#include "test_util.hpp"

namespace kacct::trace::test {
namespace {

// Event lines start at line 8.  Columns: "5 0 " puts the kind at column 5;
// "5 0 switch " puts the first key at column 12.
struct Case {
  const char* name;
  std::string events;
  uint32_t line, column;
  const char* message;
};

std::string repeat(const std::string& s, int n) {
  std::string out;
  while (n-- > 0) out += s;
  return out;
}

const std::string kRun100 = "0 0 switch prev=0 next=100\n";   // line 8: app on cpu0, kernel mode
const std::string kUser100 = kRun100 + "1 0 syscall_exit\n";  // line 9: app in user mode

TEST(TraceValidate, ErrorsNameLineAndColumn) {
  const Case cases[] = {
      {"time backwards", "10 0 tick\n9 1 tick\n", 9, 1,
       "time goes backwards: ts 9 is before the previous event's ts 10"},
      {"irq_exit without irq", "5 0 irq_exit\n", 8, 5, "irq_exit without irq_enter"},
      {"softirq_exit without enter", "5 0 softirq_exit\n", 8, 5, "softirq_exit without softirq_enter"},
      {"softirq nested", "5 0 softirq_enter vec=1\n6 0 softirq_enter vec=2\n", 9, 5, "softirqs do not nest"},
      {"softirq in irq", "5 0 irq_enter\n6 0 softirq_enter vec=1\n", 9, 5, "softirq_enter inside irq"},
      {"irq too deep", repeat("5 0 irq_enter\n", 16), 23, 5, "irq nesting deeper than 15"},
      {"syscall_exit in user", kUser100 + "2 0 syscall_exit\n", 10, 5,
       "syscall_exit in user mode; expected kernel mode"},
      {"exc_exit in user", kUser100 + "2 0 exc_exit\n", 10, 5, "exc_exit in user mode; expected kernel mode"},
      {"syscall_enter in kernel", kRun100 + "1 0 syscall_enter nr=1\n", 9, 5,
       "syscall_enter in kernel mode; expected user mode"},
      {"syscall by idle", "5 0 syscall_enter nr=1\n", 8, 5, "syscall_enter by the idle task"},
      {"syscall inside irq", kUser100 + "2 0 irq_enter\n3 0 syscall_enter nr=1\n", 11, 5,
       "inside irq (depth 1); expected process context"},
      {"guest_enter from user", kUser100 + "2 0 guest_enter\n", 10, 5,
       "guest_enter in user mode; expected kernel mode"},
      {"guest_exit outside guest", kRun100 + "1 0 guest_exit\n", 9, 5,
       "guest_exit in kernel mode; expected guest mode"},
      {"switch in guest", kRun100 + "1 0 guest_enter\n2 0 switch prev=100 next=0\n", 10, 5, "switch in guest mode"},
      {"switch in irq", kRun100 + "1 0 irq_enter\n2 0 switch prev=100 next=0\n", 10, 5, "switch inside irq"},
      {"prev not current", "5 0 switch prev=100 next=200\n", 8, 12,
       "prev=100 is not the current task on cpu 0 (current is 0)"},
      {"next running", kRun100 + "1 1 switch prev=0 next=100\n", 9, 19, "next=100 is already running on cpu 0"},
      {"next unknown", "5 0 switch prev=0 next=999\n", 8, 19, "next=999 is an unknown task"},
      {"next current", "5 0 switch prev=0 next=0\n", 8, 19, "next=0 is already current"},
      {"next sleeping", kRun100 + "1 0 switch prev=100 next=0 prev_state=S\n2 1 switch prev=0 next=100\n", 10, 19,
       "next=100 is sleeping; expected a wakeup first"},
      {"iowait needs block", kRun100 + "1 0 switch prev=100 next=0 iowait=1\n", 9, 28,
       "iowait=1 needs a blocking prev_state"},
      {"idle sleeps", "5 0 switch prev=0 next=100 prev_state=S\n", 8, 28, "the idle task cannot sleep or exit"},
      {"X without exit", kRun100 + "1 0 switch prev=100 next=0 prev_state=X\n", 9, 28, "did not exit"},
      {"exited sleeps", kRun100 + "1 0 exit\n2 0 switch prev=100 next=0 prev_state=S\n", 10, 28,
       "task 100 has exited; expected prev_state=X or R"},
      {"exiting task acts", kRun100 + "1 0 exit\n2 0 syscall_exit\n", 10, 5, "syscall_exit by exiting task 100"},
      {"switch to exited", kRun100 + "1 0 exit\n2 0 switch prev=100 next=0 prev_state=X\n3 1 switch prev=0 next=100\n",
       11, 19, "next=100 has exited"},
      {"wakeup exited", kRun100 + "1 0 exit\n2 0 switch prev=100 next=0 prev_state=X\n3 1 wakeup tid=100\n", 11, 12,
       "tid=100 has exited"},
      {"wakeup unknown", "5 0 wakeup tid=7\n", 8, 12, "tid=7 is an unknown task"},
      {"wakeup idle", "5 0 wakeup tid=0\n", 8, 12, "the idle task is never woken"},
      {"idle_enter with task", kRun100 + "1 0 idle_enter\n", 9, 5, "idle_enter while task 100 is current"},
      {"idle_exit without enter", "5 0 idle_exit\n", 8, 5, "idle_exit without idle_enter"},
      {"idle_enter twice", "5 0 idle_enter\n6 0 idle_enter\n", 9, 5, "already in nohz idle"},
      {"tick in nohz", "5 0 idle_enter\n6 0 tick\n", 9, 5, "tick in nohz idle"},
      {"switch from nohz", "5 0 idle_enter\n6 0 switch prev=0 next=100\n", 9, 5, "expected idle_exit first"},
      {"steal too big", "100 0 steal ns=101\n", 8, 13, "steal ns=101 exceeds the interval 100"},
      {"steal per cpu", "100 0 tick\n150 1 tick\n170 1 steal ns=21\n", 10, 13, "exceeds the interval 20"},
      {"tb decreases", "0 0 tick tb=10\n1 1 tick tb=5\n2 0 tick tb=9\n", 10, 10,
       "tb decreased on cpu 0: 9 < previous 10"},
      {"purr decreases", "0 0 tick purr=10\n2 0 tick purr=9\n", 9, 10, "purr decreased"},
      {"spurr decreases", "0 0 tick spurr=10 tb=1\n2 0 tick tb=2 spurr=9\n", 9, 15, "spurr decreased"},
      {"fork not current", kRun100 + "1 0 fork parent=200 child=300 mm=3\n", 9, 10,
       "parent=200 is not the current task"},
      {"fork dup child", kRun100 + "1 0 fork parent=100 child=200 mm=3\n", 9, 21, "child=200 already exists"},
      {"fork in user", kUser100 + "2 0 fork parent=100 child=300 mm=3\n", 10, 5, "fork in user mode"},
      {"fork no mm", kRun100 + "1 0 fork parent=100 child=300\n", 9, 5, "missing mm= for a new user process"},
      {"fork kthread mm", "1 0 fork parent=0 child=300 kthread mm=3\n", 8, 37, "kthreads have no mm"},
      {"fork bad pid", kRun100 + "1 0 fork parent=100 child=300 pid=200\n", 9, 31, "pid=200 must be the child's tid"},
      {"thread other mm", kRun100 + "1 0 fork parent=100 child=300 pid=100 mm=2\n", 9, 39, "expected mm=1"},
      {"exit in user", kUser100 + "2 0 exit\n", 10, 5, "exit in user mode"},
      {"idle exits", "5 0 exit\n", 8, 5, "exit by the idle task"},
      {"kthread to user", "0 0 fork parent=0 child=3 kthread\n1 0 switch prev=0 next=3\n2 0 syscall_exit\n", 10, 5,
       "kthreads never enter user mode"},
      {"read in user", kUser100 + "2 0 read kind=proc_stat\n", 10, 5, "read in user mode"},
      {"read unknown tid", kRun100 + "1 0 read kind=task_stat tid=9\n", 9, 25, "tid=9 is an unknown task"},
      {"rusage other", kRun100 + "1 0 read kind=rusage_self tid=200\n", 9, 27, "rusage_self reads the current task"},
      {"proc_stat tid", kRun100 + "1 0 read kind=proc_stat tid=200\n", 9, 25, "proc_stat is system-wide"},
      {"taskstats unknown tid", kRun100 + "1 0 read kind=taskstats tid=9\n", 9, 25, "tid=9 is an unknown task"},
      {"taskstats in user", kUser100 + "2 0 read kind=taskstats\n", 10, 5, "read in user mode; expected kernel mode"},
      {"taskstats by idle", "5 0 read kind=taskstats\n", 8, 5, "read by the idle task"},
      {"taskstats in irq", kRun100 + "1 0 irq_enter\n2 0 read kind=taskstats tid=200\n", 10, 5, "read inside irq"},
      {"event inside gap", kRun100 + "1 0 switch prev=100 next=0 gap=10\n5 0 tick\n", 10, 1,
       "ts 5 is inside the gap of the switch at ts 1 (line 9) on cpu 0 (gap ends at 11); expected ts >= 11"},
      {"event 1 ns before gap end", kRun100 + "1 0 switch prev=100 next=0 gap=10\n3 1 tick\n10 0 irq_enter\n", 11, 1,
       "ts 10 is inside the gap"},
      {"gap overflow", "18446744073709551615 0 switch prev=0 next=100 gap=1\n", 8, 47,
       "gap=1 puts next's clock read past 2^64-1 ns; expected gap <= 0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    expect_error(kHeader + c.events, c.line, c.column, c.message);
  }
}

// gap= holds back only its own CPU, up to and excluding ts + gap; a later switch without gap=
// adds no new constraint; code-built traces name the field.
TEST(TraceValidate, SwitchGapConstrainsOnlyItsCpu) {
  const std::string ok = kHeader +
                         "0 0 switch prev=0 next=100 gap=1000\n"
                         "1 1 switch prev=0 next=200\n"  // other CPU, inside cpu0's gap
                         "999 1 tick\n"
                         "1000 0 tick\n"                    // exactly at the gap's end
                         "1000 0 switch prev=100 next=0\n"  // no gap=
                         "1000 0 idle_enter\n";
  auto r = load(ok);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  Tracker tr(r.value().header);
  for (const auto& e : r.value().events) ASSERT_FALSE(tr.apply(e));
  EXPECT_EQ(tr.cpu(0).gap_end, 1000u);
  EXPECT_EQ(tr.cpu(1).gap_end, 0u);

  Trace t = r.value();
  t.events[3].ts = 999;  // cpu0 tick inside the gap
  auto err = validate(t);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "ts");
  EXPECT_EQ(err->line, 11u);
  t = r.value();
  t.events[1].switch_gap = UINT64_MAX;  // the switch at ts 1: 1 + gap > 2^64-1
  err = validate(t);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "gap");
  EXPECT_EQ(err->line, 9u);
  // the ledger is unchanged by gap=: it charges by context
  Trace nogap = r.value();
  nogap.events[0].switch_gap.reset();
  auto a = ground_truth(r.value()), b = ground_truth(nogap);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().task.at(100).system, 1000u);
  EXPECT_EQ(a.value().task.at(100).system, b.value().task.at(100).system);
  EXPECT_EQ(a.value().cpu, b.value().cpu);
}

TEST(TraceValidate, CodeBuiltTracesHaveNoLineOrColumn) {
  Trace t;
  t.header.cpu_model = "P";
  t.events.push_back(Event{});
  t.events.back().cpu = 3;
  auto err = validate(t);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->line, 0u);
  EXPECT_EQ(err->column, 0u);
  EXPECT_EQ(err->field, "cpu");
  EXPECT_EQ(err->to_string(), "cpu 3 out of range; expected 0..0");

  Trace dup;
  dup.header.cpu_model = "P";
  dup.header.tasks = {task_decl(5, 5, false, "a", 0, 1), task_decl(5, 5, false, "b", 0, 1)};
  ASSERT_TRUE(validate(dup));
  EXPECT_EQ(validate(dup)->message, "duplicate tid 5");
  EXPECT_FALSE(ground_truth(dup).ok());
}

TEST(TraceValidate, TrackerFollowsContexts) {
  auto r = parse(kHeader + kUser100 +
                 "2 0 irq_enter\n"
                 "3 1 switch prev=0 next=200\n"
                 "4 1 switch prev=200 next=0 prev_state=D iowait=1\n");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  Tracker tr(r.value().header);
  for (const Event& e : r.value().events) ASSERT_FALSE(tr.apply(e));
  EXPECT_EQ(tr.cpu(0).current, 100u);
  EXPECT_EQ(tr.cpu(0).mode, Mode::User);
  EXPECT_EQ(tr.cpu(0).irq_depth, 1u);
  EXPECT_EQ(tr.cpu(1).nr_iowait, 1u);
  EXPECT_EQ(tr.cpu(1).last_ts, 4u);
  const TaskState* b = tr.task(200);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->sleeping && b->iowait_blocked && !b->running);
  EXPECT_EQ(b->on_cpu, 1);
  EXPECT_EQ(b->saved_mode, Mode::Kernel);
  EXPECT_EQ(tr.task(0), nullptr);
  EXPECT_EQ(tr.idle(1).comm, "swapper/1");
  EXPECT_TRUE(tr.idle(1).running);
  EXPECT_EQ(tr.current(0).comm, "app");

  // A rejected event leaves the state untouched.
  Event bad;
  bad.ts = 5, bad.cpu = 0, bad.kind = Kind::SyscallEnter;  // inside the irq
  EXPECT_TRUE(tr.apply(bad));
  EXPECT_EQ(tr.now(), 4u);
  EXPECT_EQ(tr.cpu(0).mode, Mode::User);

  Event wake;
  wake.ts = 6, wake.cpu = 0, wake.kind = Kind::Wakeup, wake.a = 200;
  EXPECT_FALSE(tr.apply(wake));  // inside cpu0's irq, wakes the task that slept on cpu1
  EXPECT_EQ(tr.cpu(1).nr_iowait, 0u);
  EXPECT_FALSE(tr.task(200)->sleeping);
}

TEST(TraceValidate, PreemptionInUserModeRestoresMode) {
  auto r = load(kHeader + kUser100 +
                "2 0 switch prev=100 next=200\n"  // preempted in user mode
                "3 0 syscall_exit\n"              // 200 was in kernel mode
                "4 0 switch prev=200 next=100\n"
                "5 0 syscall_enter nr=1\n");  // 100 resumes in user mode
  EXPECT_TRUE(r.ok()) << r.error().to_string();
}

TEST(TraceValidate, ForkedTasksInherit) {
  auto r = parse(kHeader +
                 "0 0 switch prev=0 next=200\n1 0 fork parent=200 child=201 pid=200\n"
                 "2 0 fork parent=200 child=202 comm=child mm=8\n");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  Tracker tr(r.value().header);
  for (const Event& e : r.value().events) ASSERT_FALSE(tr.apply(e));
  const TaskState* t = tr.task(201);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->pid, 200u);
  EXPECT_EQ(t->mm, 2u);
  EXPECT_EQ(t->nice, 5);
  EXPECT_EQ(t->comm, "batch");
  EXPECT_EQ(t->saved_mode, Mode::Kernel);
  EXPECT_FALSE(t->running);
  EXPECT_EQ(tr.task(202)->pid, 202u);
  EXPECT_EQ(tr.task(202)->mm, 8u);
  EXPECT_EQ(tr.task(202)->comm, "child");
}

}  // namespace
}  // namespace kacct::trace::test
