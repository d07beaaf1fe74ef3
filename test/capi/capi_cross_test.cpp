// The C API against the C++ model it wraps: on every sample trace (test/traces/) and several
// CPU x config combinations, libkacct's counters, reads and verdicts equal sim::run's, whether
// the trace is fed whole, in chunks, or as kacct_event structs; errors carry load()'s line and
// column; garbage never escapes as anything but an error code.
#include <gtest/gtest.h>
#include <kacct/kacct.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "arch/registry.hpp"
#include "model/gen/result.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"

namespace kacct {
namespace {

struct Close {
  void operator()(kacct_model* m) const { kacct_close(m); }
};
using Handle = std::unique_ptr<kacct_model, Close>;

Handle open(const std::string& cpu, const std::string& cfg) {
  kacct_model* m = nullptr;
  EXPECT_EQ(kacct_open(cpu.c_str(), cfg.c_str(), &m), KACCT_OK) << kacct_last_error();
  return Handle(m);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> sample_traces() {
  std::vector<std::filesystem::path> out;
  for (const auto& f : std::filesystem::directory_iterator(KACCT_TRACES_DIR))
    if (f.path().extension() == ".trace") out.push_back(f.path());
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::pair<std::string, std::string>> kCombos = {
    {"x86-64", "6.6-tick-hz250"}, {"x86-64", "6.1-tick-irqtime-steal-hz1000"}, {"POWER9", "5.4-tick-irqtime-hz300"},
    {"e500", "4.19-tick-hz100"},  {"MPC8xx", "4.11-tick-irqtime-hz250"},
};

// Every prediction of `m` equals sim::run on the same trace.
void expect_same(kacct_model* m, const trace::Trace& t, const std::string& cpu, const std::string& cfg,
                 const std::string& what) {
  SCOPED_TRACE(what + " " + cpu + " " + cfg);
  const auto c = arch::find_cpu(cpu);
  const auto k = arch::find_config(cfg);
  ASSERT_TRUE(c && k);
  auto p = sim::compile(t);
  ASSERT_TRUE(p.ok());
  const auto& prog = p.value();
  const auto mc = sim::model_cfg(*c, *k);
  const auto r = sim::run(prog, mc, {.check = false});

  uint64_t n = 0;
  ASSERT_EQ(kacct_event_count(m, &n), KACCT_OK) << kacct_error_message(m);
  EXPECT_EQ(n, t.events.size());
  uint32_t ncpus = 0;
  ASSERT_EQ(kacct_ncpus(m, &ncpus), KACCT_OK);
  ASSERT_EQ(ncpus, t.header.ncpus);
  for (uint32_t cpu_i = 0; cpu_i < ncpus; ++cpu_i) {
    kacct_cpustat cs;
    ASSERT_EQ(kacct_get_cpustat(m, cpu_i, &cs), KACCT_OK) << kacct_error_message(m);
    for (unsigned b = 0; b < KACCT_NR_BUCKETS; ++b) {
      EXPECT_EQ(cs.ns[b], r.cpus[cpu_i].cpustat[b]) << "cpu " << cpu_i << " " << kacct_bucket_name(kacct_bucket(b));
      EXPECT_EQ(cs.ticks[b], r.cpus[cpu_i].cpustat[b] / 10'000'000);
    }
  }
  kacct_cpustat cs;
  EXPECT_EQ(kacct_get_cpustat(m, ncpus, &cs), KACCT_E_INVALID_ARG);
  for (std::size_t i = ncpus; i < prog.tasks.size(); ++i) {
    kacct_task_times tt;
    ASSERT_EQ(kacct_get_task_times(m, prog.tasks[i].tid, &tt), KACCT_OK) << kacct_error_message(m);
    EXPECT_EQ(tt.utime, r.tasks[i].utime);
    EXPECT_EQ(tt.stime, r.tasks[i].stime);
    EXPECT_EQ(tt.gtime, r.tasks[i].gtime);
    EXPECT_EQ(tt.sum_exec_runtime, r.tasks[i].sum_exec_runtime);
  }
  kacct_task_times tt;
  EXPECT_EQ(kacct_get_task_times(m, 999999999, &tt), KACCT_E_NOT_FOUND);

  std::size_t nreads = 0;
  ASSERT_EQ(kacct_read_count(m, &nreads), KACCT_OK);
  ASSERT_EQ(nreads, r.reads.size());
  std::size_t k_read = 0;
  for (std::size_t e = 0; e < prog.events.size(); ++e) {
    if (prog.events[e].kind != trace::Kind::Read) continue;
    const auto& want = r.reads[k_read];
    kacct_read got;
    ASSERT_EQ(kacct_get_read(m, k_read, &got), KACCT_OK);
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(int(got.kind), int(want.kind));
    EXPECT_EQ(got.tid, want.tid);
    EXPECT_EQ(got.ts, want.ts);
    EXPECT_EQ(got.event_index, e);
    EXPECT_EQ(got.utime_ns, want.utime);
    EXPECT_EQ(got.stime_ns, want.stime);
    EXPECT_EQ(got.rtime_ns, want.rtime);
    EXPECT_EQ(got.utime_ticks, want.utime / 10'000'000);
    EXPECT_EQ(got.stime_us, want.stime / 1000);
    ++k_read;
  }
  kacct_read rd;
  EXPECT_EQ(kacct_get_read(m, nreads, &rd), KACCT_E_INVALID_ARG);

  const auto rc = sim::run(prog, mc, {.check = true, .stop_at_violation = true});
  kacct_verdict v;
  ASSERT_EQ(kacct_check(m, &v), KACCT_OK);
  EXPECT_EQ(v.holds, !rc.violation && rc.obligations_failed.empty());
  EXPECT_EQ(std::string(v.invariant), rc.violation ? rc.violation->invariant : "");
  EXPECT_EQ(v.obligations_failed, rc.obligations_failed.size());
}

// kacct_event for a trace event (the inverse of the library's conversion).
kacct_event to_c(const trace::Event& e) {
  kacct_event c{};
  c.ts = e.ts;
  c.cpu = e.cpu;
  c.kind = kacct_kind(e.kind);
  c.a = e.a;
  c.b = e.b;
  c.prev_state = kacct_prev_state(e.prev_state);
  c.iowait = e.iowait;
  c.exc_kind = kacct_exc_kind(e.exc_kind);
  c.read_kind = kacct_read_kind(e.read_kind);
  c.read_id = e.read_id;
  c.fork_pid = e.fork_pid.value_or(0);
  c.fork_kthread = e.fork_kthread;
  c.fork_has_mm = e.fork_mm.has_value();
  c.fork_mm = e.fork_mm.value_or(0);
  c.fork_comm = e.fork_comm.empty() ? nullptr : e.fork_comm.c_str();
  return c;
}

TEST(CApi, SampleTracesWholeChunkedAndStructsMatchTheSimulator) {
  const auto traces = sample_traces();
  ASSERT_GE(traces.size(), 4u);
  for (const auto& path : traces) {
    const std::string text = slurp(path);
    auto loaded = trace::load(text);
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    const auto& t = loaded.value();
    for (const auto& [cpu, cfg] : kCombos) {
      auto whole = open(cpu, cfg);
      ASSERT_EQ(kacct_feed_text(whole.get(), text.data(), text.size()), KACCT_OK) << kacct_error_message(whole.get());
      expect_same(whole.get(), t, cpu, cfg, path.filename().string() + " whole");
    }
    // Chunks of varying sizes (cutting lines, CRLF pairs and the header anywhere).
    const auto& [cpu, cfg] = kCombos[0];
    for (std::size_t step : {1u, 5u, 13u, 64u}) {
      auto m = open(cpu, cfg);
      for (std::size_t i = 0; i < text.size(); i += step)
        ASSERT_EQ(kacct_feed_text(m.get(), text.data() + i, std::min(step, text.size() - i)), KACCT_OK)
            << kacct_error_message(m.get());
      expect_same(m.get(), t, cpu, cfg, path.filename().string() + " chunks of " + std::to_string(step));
    }
    // Header by API, events as structs (one batch, then one by one).
    for (bool batch : {true, false}) {
      auto m = open(cpu, cfg);
      ASSERT_EQ(kacct_set_ncpus(m.get(), t.header.ncpus), KACCT_OK);
      for (const auto& d : t.header.tasks) {
        kacct_task kt{d.tid, d.pid, d.comm.c_str(), d.nice, d.kthread, d.mm.value_or(0)};
        ASSERT_EQ(kacct_add_task(m.get(), &kt), KACCT_OK) << kacct_error_message(m.get());
      }
      std::vector<kacct_event> ev;
      for (const auto& e : t.events) ev.push_back(to_c(e));
      if (batch) {
        ASSERT_EQ(kacct_feed_events(m.get(), ev.data(), ev.size()), KACCT_OK) << kacct_error_message(m.get());
      } else {
        for (const auto& e : ev) ASSERT_EQ(kacct_feed_event(m.get(), &e), KACCT_OK) << kacct_error_message(m.get());
      }
      expect_same(m.get(), t, cpu, cfg, path.filename().string() + (batch ? " struct batch" : " structs"));
    }
  }
}

// The handle's machines stay alive between feeds: after every batch (structs) or chunk of whole
// lines (text), every answer equals sim::run of the trace fed so far, including kacct_check's,
// whose checked machine starts at the first call and then steps along. Gen vtime and native
// configs too (their backends' state is copied for the scaled times and reader views).
TEST(CApi, LiveAnswersAfterEveryFeedEqualARunOfThePrefix) {
  const std::vector<std::pair<std::string, std::string>> combos = {
      kCombos[1], {"x86-64", "6.1-gen-hz250"}, {"POWER9", "6.12-native-steal-hz250"}};
  for (const auto& path : sample_traces()) {
    const std::string text = slurp(path);
    auto loaded = trace::load(text);
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    const auto& t = loaded.value();
    for (const auto& [cpu, cfg] : combos) {
      const std::size_t batch = 1 + t.events.size() / 5;
      auto m = open(cpu, cfg);
      ASSERT_EQ(kacct_set_ncpus(m.get(), t.header.ncpus), KACCT_OK);
      for (const auto& d : t.header.tasks) {
        kacct_task kt{d.tid, d.pid, d.comm.c_str(), d.nice, d.kthread, d.mm.value_or(0)};
        ASSERT_EQ(kacct_add_task(m.get(), &kt), KACCT_OK) << kacct_error_message(m.get());
      }
      trace::Trace prefix{t.header, {}};
      for (std::size_t i = 0; i < t.events.size(); i += batch) {
        std::vector<kacct_event> ev;
        for (std::size_t j = i; j < std::min(i + batch, t.events.size()); ++j) {
          ev.push_back(to_c(t.events[j]));
          prefix.events.push_back(t.events[j]);
        }
        ASSERT_EQ(kacct_feed_events(m.get(), ev.data(), ev.size()), KACCT_OK) << kacct_error_message(m.get());
        expect_same(m.get(), prefix, cpu, cfg,
                    path.filename().string() + " structs, prefix of " + std::to_string(prefix.events.size()));
      }
      // Text in chunks of whole lines, a query after each.
      auto mt = open(cpu, cfg);
      std::size_t at = 0, lines = 0;
      while (at < text.size()) {
        std::size_t end = at;
        for (int k = 0; k < 9 && end < text.size(); ++k) end = text.find('\n', end) + 1;
        ASSERT_EQ(kacct_feed_text(mt.get(), text.data() + at, end - at), KACCT_OK) << kacct_error_message(mt.get());
        at = end;
        lines += 9;
        auto part = trace::load(text.substr(0, at));
        if (!part.ok()) continue;  // the header is not complete yet
        expect_same(mt.get(), part.value(), cpu, cfg,
                    path.filename().string() + " text, lines " + std::to_string(lines));
      }
    }
  }
}

TEST(CApi, ErrorsCarryTheLoadersLineAndColumnWhateverTheChunking) {
  const std::string good = slurp(std::filesystem::path(KACCT_TRACES_DIR) / "two-threads-yield.trace");
  // A syntax error and a semantic error (prev is not the current task), each late in the trace.
  for (const std::string& bad_line :
       {std::string("9000 0 tick bogus=1\n"), std::string("9000 1 switch prev=7 next=0\n")}) {
    std::string text = good;
    if (text.back() != '\n') text += '\n';
    text += bad_line;
    auto want = trace::load(text);
    ASSERT_FALSE(want.ok());
    for (std::size_t step : {1u, 7u, 4096u}) {
      auto m = open("x86-64", "6.6-tick-hz250");
      kacct_status st = KACCT_OK;
      for (std::size_t i = 0; i < text.size() && st == KACCT_OK; i += step)
        st = kacct_feed_text(m.get(), text.data() + i, std::min(step, text.size() - i));
      if (st == KACCT_OK) {  // the bad line was the unterminated tail: the first query reports it
        uint64_t n;
        st = kacct_event_count(m.get(), &n);
      }
      EXPECT_TRUE(st == KACCT_E_PARSE || st == KACCT_E_EVENT) << kacct_status_name(st);
      EXPECT_EQ(kacct_error_line(m.get()), want.error().line) << kacct_error_message(m.get());
      EXPECT_EQ(kacct_error_column(m.get()), want.error().column) << kacct_error_message(m.get());
      EXPECT_EQ(std::string(kacct_error_message(m.get())), want.error().to_string());
      if (step >= text.size()) continue;  // one chunk: all of it was rejected
      // The good part is still there. A rejected chunk changes nothing, so the start of the bad
      // line it ended may still be pending: the next query reports that line, then it is gone.
      uint64_t n = 0;
      kacct_status again = kacct_event_count(m.get(), &n);
      if (again != KACCT_OK) again = kacct_event_count(m.get(), &n);
      ASSERT_EQ(again, KACCT_OK) << kacct_error_message(m.get());
      EXPECT_EQ(n, trace::load(good).value().events.size());
    }
  }
}

TEST(CApi, UnterminatedHeaderAndNothingFedAreStateOrParseErrors) {
  auto m = open("x86-64", "6.6-tick-hz250");
  uint64_t n;
  EXPECT_EQ(kacct_event_count(m.get(), &n), KACCT_E_STATE);
  const std::string part = "kacct-trace 1\ncpu x86-64\nncpus 1\n";
  ASSERT_EQ(kacct_feed_text(m.get(), part.data(), part.size()), KACCT_OK);
  EXPECT_EQ(kacct_event_count(m.get(), &n), KACCT_E_PARSE);
  EXPECT_EQ(kacct_error_line(m.get()), 4u) << kacct_error_message(m.get());
  kacct_event e{};
  EXPECT_EQ(kacct_feed_event(m.get(), &e), KACCT_E_STATE);
  EXPECT_EQ(kacct_set_ncpus(m.get(), 0), KACCT_E_INVALID_ARG);
}

TEST(CApi, GarbageNeverEscapesAsAnythingButAnErrorCode) {
  std::mt19937_64 rng(7);
  const std::string good = slurp(std::filesystem::path(KACCT_TRACES_DIR) / "syscall-loop.trace");
  for (int round = 0; round < 200; ++round) {
    std::string text = good;
    const int edits = 1 + int(rng() % 4);
    for (int i = 0; i < edits; ++i) text[rng() % text.size()] = char(rng() % 256);
    auto m = open("POWER9", "6.6-tick-irqtime-hz250");
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t step = 1 + rng() % 100;
      kacct_feed_text(m.get(), text.data() + i, std::min(step, text.size() - i));
      i += step;
    }
    kacct_verdict v;
    const auto st = kacct_check(m.get(), &v);
    EXPECT_TRUE(st == KACCT_OK || st == KACCT_E_PARSE || st == KACCT_E_EVENT || st == KACCT_E_STATE)
        << kacct_status_name(st) << ": " << kacct_error_message(m.get());
  }
}

// KACCT_READ_TASKSTATS (API 1.1) as a struct and as text, on gen vtime (HZ=1000): the raw task_cputime()
// in ns and in microseconds (ac_utime/ac_stime); a switch's gap= goes in as a text line between
// structs and moves next's accounting by exactly the gap; read_kind past the enum is rejected.
TEST(CApi, TaskstatsReadsAndSwitchGapText) {
  EXPECT_EQ(KACCT_API_VERSION, 10003);
  EXPECT_EQ(int(KACCT_READ_TASKSTATS), 6);
  const std::string header = "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 100 pid=100 comm=app mm=1\nevents\n";
  for (std::uint64_t gap : {0ull, 234ull}) {
    auto m = open("x86-64", "6.1-gen-hz1000");
    ASSERT_EQ(kacct_feed_text(m.get(), header.data(), header.size()), KACCT_OK);
    const std::string sw = "0 0 switch prev=0 next=100 gap=" + std::to_string(gap) + "\n";
    ASSERT_EQ(kacct_feed_text(m.get(), sw.data(), sw.size()), KACCT_OK) << kacct_error_message(m.get());
    kacct_event ev[3] = {};
    ev[0].ts = 1000, ev[0].kind = KACCT_EV_SYSCALL_EXIT;
    ev[1].ts = 3'001'000, ev[1].kind = KACCT_EV_SYSCALL_ENTER, ev[1].a = 1;
    ev[2].ts = 3'500'000, ev[2].kind = KACCT_EV_READ, ev[2].read_kind = KACCT_READ_TASKSTATS, ev[2].read_id = 7;
    ASSERT_EQ(kacct_feed_events(m.get(), ev, 3), KACCT_OK) << kacct_error_message(m.get());
    const std::string tail = "3500000 0 read kind=taskstats id=8\n";
    ASSERT_EQ(kacct_feed_text(m.get(), tail.data(), tail.size()), KACCT_OK) << kacct_error_message(m.get());
    for (std::uint64_t id : {7, 8}) {
      kacct_read r;
      ASSERT_EQ(kacct_find_read(m.get(), id, &r), KACCT_OK) << kacct_error_message(m.get());
      EXPECT_EQ(r.kind, KACCT_READ_TASKSTATS);
      EXPECT_EQ(r.tid, 100u);
      EXPECT_EQ(r.utime_ns, 3'000'000u);            // 3 ms user >= TICK_NSEC (HZ=1000): flushed
      EXPECT_EQ(r.stime_ns, 1000 - gap + 499'000);  // kernel residue + running delta
      EXPECT_EQ(r.stime_us, (1000 - gap + 499'000) / 1000);
      EXPECT_EQ(r.clock_ns, 0u);
      EXPECT_EQ(r.rtime_ns, 0u);  // stored sum_exec_runtime: nothing brought it up to date
    }
    auto text = trace::load(header + sw +
                            "1000 0 syscall_exit\n3001000 0 syscall_enter nr=1\n"
                            "3500000 0 read kind=taskstats id=7\n" +
                            tail);
    ASSERT_TRUE(text.ok()) << text.error().to_string();
    expect_same(m.get(), text.value(), "x86-64", "6.1-gen-hz1000", "taskstats gap " + std::to_string(gap));
    kacct_event bad{};
    bad.ts = 4'000'000, bad.kind = KACCT_EV_READ, bad.read_kind = KACCT_READ_TASKSTATS + 1;
    EXPECT_EQ(kacct_feed_event(m.get(), &bad), KACCT_E_INVALID_ARG);
    EXPECT_NE(std::string(kacct_error_message(m.get())).find("read_kind 7 out of range"), std::string::npos);
    // an event inside a gap is an event error at its ts
    if (gap > 0) {
      auto g = open("x86-64", "6.1-gen-hz1000");
      const std::string t = header + sw + "1 0 tick\n";
      EXPECT_EQ(kacct_feed_text(g.get(), t.data(), t.size()), KACCT_E_EVENT);
      EXPECT_EQ(kacct_error_line(g.get()), 8u);
      EXPECT_EQ(kacct_error_column(g.get()), 1u);
    }
  }
}

// A rejected batch leaves nothing behind: its fork, the switch to the child and the parent's
// preemption are undone (trace::Tracker::rollback), so the same tid can be forked again and the
// answers equal a run of the accepted events only.
TEST(CApi, RejectedBatchWithAForkLeavesNoTrace) {
  const std::string head =
      "kacct-trace 1\ncpu x86-64\nncpus 2\nclock ns\ntask 100 pid=100 comm=a nice=0 mm=1\nevents\n"
      "0 0 switch prev=0 next=100\n";
  auto m = open("x86-64", "6.6-tick-hz250");
  ASSERT_EQ(kacct_feed_text(m.get(), head.data(), head.size()), KACCT_OK) << kacct_error_message(m.get());
  kacct_event b[4] = {};
  b[0].ts = 1000, b[0].kind = KACCT_EV_FORK, b[0].a = 100, b[0].b = 200, b[0].fork_pid = 100;
  b[1].ts = 2000, b[1].kind = KACCT_EV_SWITCH, b[1].a = 100, b[1].b = 200, b[1].prev_state = KACCT_PREV_R;
  b[2].ts = 3000, b[2].cpu = 1, b[2].kind = KACCT_EV_SWITCH, b[2].a = 0, b[2].b = 100;
  b[3].ts = 4000, b[3].kind = KACCT_EV_SWITCH, b[3].a = 200, b[3].b = 999;  // unknown next: rejected
  EXPECT_EQ(kacct_feed_events(m.get(), b, 4), KACCT_E_EVENT);
  uint64_t n = 0;
  ASSERT_EQ(kacct_event_count(m.get(), &n), KACCT_OK);
  EXPECT_EQ(n, 1u);
  // 200 is unknown again and 100 runs on CPU 0 again: a switch away from 200 is refused, the
  // same fork (and 100's preemption on CPU 0) is accepted.
  kacct_event away = b[1];
  away.a = 200, away.b = 0;
  EXPECT_EQ(kacct_feed_events(m.get(), &away, 1), KACCT_E_EVENT);
  ASSERT_EQ(kacct_feed_events(m.get(), b, 3), KACCT_OK) << kacct_error_message(m.get());
  kacct_event tick{};
  tick.ts = 4'000'000, tick.kind = KACCT_EV_TICK;
  ASSERT_EQ(kacct_feed_events(m.get(), &tick, 1), KACCT_OK) << kacct_error_message(m.get());
  auto t = trace::load(head +
                       "1000 0 fork parent=100 child=200 pid=100\n2000 0 switch prev=100 next=200 prev_state=R\n"
                       "3000 1 switch prev=0 next=100\n4000000 0 tick\n");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  expect_same(m.get(), t.value(), "x86-64", "6.6-tick-hz250", "after a rejected batch");
}

// A count no array can have is the caller's mistake, not a kacct bug: KACCT_E_INVALID_ARG, and
// the handle goes on working.
TEST(CApi, AbsurdEventCountIsAnInvalidArgument) {
  auto m = open("x86-64", "6.6-tick-hz250");
  ASSERT_EQ(kacct_set_ncpus(m.get(), 1), KACCT_OK);
  kacct_event e{};
  e.ts = 1000, e.kind = KACCT_EV_TICK;
  for (size_t n : {SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / sizeof(kacct_event)}) {
    EXPECT_EQ(kacct_feed_events(m.get(), &e, n), KACCT_E_INVALID_ARG) << n << ": " << kacct_error_message(m.get());
    EXPECT_NE(std::string(kacct_error_message(m.get())).find("larger than any array"), std::string::npos);
  }
  EXPECT_EQ(kacct_feed_events(m.get(), &e, 1), KACCT_OK) << kacct_error_message(m.get());
  uint64_t count = 0;
  ASSERT_EQ(kacct_event_count(m.get(), &count), KACCT_OK);
  EXPECT_EQ(count, 1u);
}

// kacct_add_task follows the text format: a kthread has no mm, the threads of a process one mm.
TEST(CApi, AddTaskRejectsAKthreadWithAnMmAndAThreadWithAnotherMm) {
  auto m = open("x86-64", "6.6-tick-hz250");
  ASSERT_EQ(kacct_set_ncpus(m.get(), 1), KACCT_OK);
  kacct_task kt{5, 0, "kworker", 0, 1, 42};
  EXPECT_EQ(kacct_add_task(m.get(), &kt), KACCT_E_INVALID_ARG);
  EXPECT_NE(std::string(kacct_error_message(m.get())).find("task 5"), std::string::npos)
      << kacct_error_message(m.get());
  kt.mm = 0;
  EXPECT_EQ(kacct_add_task(m.get(), &kt), KACCT_OK) << kacct_error_message(m.get());
  kacct_task main_thread{100, 100, "app", 0, 0, 1}, worker{101, 100, "worker", 0, 0, 2};
  EXPECT_EQ(kacct_add_task(m.get(), &main_thread), KACCT_OK) << kacct_error_message(m.get());
  EXPECT_EQ(kacct_add_task(m.get(), &worker), KACCT_E_INVALID_ARG);
  EXPECT_NE(std::string(kacct_error_message(m.get())).find("pid 100"), std::string::npos)
      << kacct_error_message(m.get());
  worker.mm = 1;
  EXPECT_EQ(kacct_add_task(m.get(), &worker), KACCT_OK) << kacct_error_message(m.get());
}

// API 1.2: taskstats' scaled times and /proc/stat as each read saw it, equal to the simulator's.
// A check that stopped judging an invariant says where (kacct_unjudged_count / kacct_get_unjudged):
// ns_bounded after DTL steal wrapped CPU 0's bucket, as `kacct check` prints it.
TEST(CApi, UnjudgedInvariantsAreListed) {
  const std::string text =
      slurp(std::filesystem::path(KACCT_TRACES_DIR) / ".." / "cli" / "native-steal-wraps-bucket.trace");
  ASSERT_FALSE(text.empty());
  for (const char* cfg : {"6.12-native-steal-hz250", "6.12-native-hz250"}) {
    const bool steal = std::string(cfg).find("steal") != std::string::npos;
    auto m = open("POWER9", cfg);
    ASSERT_EQ(kacct_feed_text(m.get(), text.data(), text.size()), KACCT_OK) << kacct_error_message(m.get());
    kacct_verdict v{};
    ASSERT_EQ(kacct_check(m.get(), &v), KACCT_OK) << kacct_error_message(m.get());
    EXPECT_EQ(v.holds, 1) << cfg;
    size_t n = 99;
    ASSERT_EQ(kacct_unjudged_count(m.get(), &n), KACCT_OK);
    ASSERT_EQ(n, steal ? 1u : 0u) << cfg;
    kacct_unjudged u{};
    if (steal) {
      ASSERT_EQ(kacct_get_unjudged(m.get(), 0, &u), KACCT_OK) << kacct_error_message(m.get());
      EXPECT_STREQ(u.invariant, "native_vtime.ns_bounded");
      EXPECT_EQ(u.cpu, 0u);
      EXPECT_EQ(u.line, 16u);  // the tick after the steal
      EXPECT_EQ(u.event_index, 6u);
      EXPECT_STREQ(u.cause, "native_vtime.steal_clamped");
    }
    EXPECT_EQ(kacct_get_unjudged(m.get(), n, &u), KACCT_E_INVALID_ARG);
    EXPECT_NE(std::string(kacct_error_message(m.get())).find("out of range"), std::string::npos);
    EXPECT_EQ(kacct_get_unjudged(m.get(), 0, nullptr), KACCT_E_INVALID_ARG);
  }
}

TEST(CApi, ScaledTimesAndReaderViewsOfProcStat) {
  const auto dir = std::filesystem::path(KACCT_TRACES_DIR);
  {
    const std::string text = slurp(dir / "8xx-yield.trace");
    auto m = open("MPC8xx", "4.19-native-hz250");
    ASSERT_EQ(kacct_feed_text(m.get(), text.data(), text.size()), KACCT_OK) << kacct_error_message(m.get());
    kacct_task_scaled s{};
    ASSERT_EQ(kacct_get_task_scaled(m.get(), 100, &s), KACCT_OK) << kacct_error_message(m.get());
    EXPECT_EQ(s.scaled, 1);
    EXPECT_EQ(s.utimescaled, 814976u);  // `kacct run --config 4.19-native-hz250` prints the same
    EXPECT_EQ(s.stimescaled, 813056u);
    EXPECT_EQ(kacct_get_task_scaled(m.get(), 999, &s), KACCT_E_NOT_FOUND);
    kacct_cpustat c;
    EXPECT_EQ(kacct_get_read_cpustat(m.get(), 0, 0, &c), KACCT_E_STATE);
  }
  {
    const std::string text = slurp(dir / "syscall-loop.trace");
    auto m = open("x86-64", "6.1-gen-hz250");
    ASSERT_EQ(kacct_feed_text(m.get(), text.data(), text.size()), KACCT_OK) << kacct_error_message(m.get());
    kacct_task_scaled s{};
    ASSERT_EQ(kacct_get_task_scaled(m.get(), 300, &s), KACCT_OK);
    kacct_task_times t{};
    ASSERT_EQ(kacct_get_task_times(m.get(), 300, &t), KACCT_OK);
    EXPECT_EQ(s.scaled, 0);
    EXPECT_EQ(s.utimescaled, t.utime);
    auto tr = trace::load(text);
    ASSERT_TRUE(tr.ok());
    auto prog = sim::compile(tr.value());
    ASSERT_TRUE(prog.ok());
    const auto cpu = *arch::find_cpu("x86-64");
    const auto r = sim::run(prog.value(), sim::model_cfg(cpu, *arch::find_config("6.1-gen-hz250")), {.check = false});
    const auto* g = r.backend_result<model::GenResult>();
    ASSERT_NE(g, nullptr);
    size_t reads = 0;
    ASSERT_EQ(kacct_read_count(m.get(), &reads), KACCT_OK);
    ASSERT_EQ(reads, g->procstat.size());
    for (size_t i = 0; i < reads; ++i)
      for (uint32_t k = 0; k < g->procstat[i].cpus.size(); ++k) {
        kacct_cpustat c;
        ASSERT_EQ(kacct_get_read_cpustat(m.get(), i, k, &c), KACCT_OK) << kacct_error_message(m.get());
        for (unsigned b = 0; b < KACCT_NR_BUCKETS; ++b) EXPECT_EQ(c.ns[b], g->procstat[i].cpus[k][b]);
      }
    kacct_cpustat c;
    EXPECT_EQ(kacct_get_read_cpustat(m.get(), reads, 0, &c), KACCT_E_INVALID_ARG);
    EXPECT_EQ(kacct_get_read_cpustat(m.get(), 0, 99, &c), KACCT_E_INVALID_ARG);
  }
}

}  // namespace
}  // namespace kacct
