// The `read kind=taskstats` read on each backend (raw task_cputime(), stored rtime, no
// cputime_adjust, no prev_cputime) and the switch's `gap=` key in the gen vtime backend (next's
// vtime starts gap ns late; the CPU counts the gap as lost; every check still holds).
#include <gtest/gtest.h>

#include <cstdio>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace kacct {
namespace {

using trace::ReadKind;
constexpr std::uint64_t T250 = 4'000'000;  // TICK_NSEC at HZ=250

sim::Program program(const std::string& text) {
  auto t = trace::load(text);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  auto p = sim::compile(t.value());
  EXPECT_TRUE(p.ok()) << p.error().to_string();
  return std::move(p).value();
}
sim::ModelCfg cfg_of(const char* cpu, const char* config) {
  const auto c = arch::find_cpu(cpu);
  const auto k = arch::find_config(config);
  EXPECT_TRUE(c && k) << cpu << " " << config;
  EXPECT_TRUE(arch::legal(*c, *k)) << cpu << " " << config;
  return sim::model_cfg(*c, *k);
}
// 6.1 gen vtime at HZ=250 (Debian's HZ; the config table lists gen at HZ=1000 only).
sim::ModelCfg gen61() {
  const arch::Config k{arch::v(6, 1), arch::Accounting::Gen, false, false, 250};
  const auto c = *arch::find_cpu("x86-64");
  EXPECT_TRUE(arch::legal(c, k));
  return sim::model_cfg(c, k);
}
const sim::ReadResult& read_id(const sim::RunResult& r, std::uint64_t id) {
  for (const auto& rd : r.reads)
    if (rd.id == id) return rd;
  throw std::runtime_error("no read with id " + std::to_string(id));
}
std::uint32_t index_of(const sim::Program& p, std::uint64_t tid) {
  for (std::uint32_t k = p.header.ncpus; k < p.tasks.size(); ++k)
    if (p.tasks[k].tid == tid) return k;
  throw std::runtime_error("no task " + std::to_string(tid));
}

const std::string kHeader2 =
    "kacct-trace 1\ncpu x86-64\nncpus 2\nclock ns\n"
    "task 100 pid=100 comm=app mm=1\n"
    "task 200 pid=200 comm=mon mm=2\n"
    "events\n";

// Tick: taskstats is the task's tick-sampled counters as they are, with the stored rtime;
// task_stat on the same state is cputime_adjust()ed to rtime.
TEST(Taskstats, TickReadsTheTaskCountersUnadjusted) {
  const auto p = program(kHeader2 +
                         "0 0 switch prev=0 next=100\n"
                         "10 1 switch prev=0 next=200\n"
                         "1000 0 syscall_exit\n"
                         "4000000 0 tick\n"  // user tick: utime 4 ms, rtime 4 ms
                         "5000000 0 syscall_enter nr=1\n"
                         "8000000 0 tick\n"  // system tick: stime 4 ms, rtime 8 ms
                         "9000000 0 read kind=taskstats id=1\n"
                         "9000000 1 read kind=taskstats tid=100 id=2\n"
                         "9000000 0 read kind=thread_cputime id=3\n"  // task_sched_runtime: 9 ms stored
                         "9000000 0 read kind=taskstats id=4\n"
                         "9000000 0 read kind=task_stat id=5\n"
                         "9000000 0 read kind=taskstats id=6\n");
  const auto r = sim::run(p, cfg_of("x86-64", "6.1-tick-hz250"), {.check = true});
  ASSERT_FALSE(r.violation) << r.violation->invariant;
  const auto& t = r.tasks[index_of(p, 100)];
  ASSERT_EQ(t.utime, T250);
  ASSERT_EQ(t.stime, T250);
  for (std::uint64_t id : {1, 2, 4, 6}) {
    const auto& rd = read_id(r, id);
    EXPECT_EQ(rd.kind, ReadKind::Taskstats);
    EXPECT_EQ(rd.tid, 100u);
    EXPECT_EQ(rd.utime, t.utime) << id;
    EXPECT_EQ(rd.stime, t.stime) << id;
  }
  EXPECT_EQ(read_id(r, 1).rtime, 2 * T250);  // stored: no task_sched_runtime()
  EXPECT_EQ(read_id(r, 2).rtime, 2 * T250);
  EXPECT_EQ(read_id(r, 4).rtime, 9'000'000u);  // what the clock read stored
  const auto& ts = read_id(r, 5);
  EXPECT_EQ(ts.utime + ts.stime, 9'000'000u);  // adjusted to rtime...
  EXPECT_EQ(ts.utime, 4'500'000u);
  // ...and only task_stat touched prev_cputime
  EXPECT_EQ(t.prev_cputime.utime, 4'500'000u);
  const auto only = program(kHeader2 + "0 0 switch prev=0 next=100\n4000000 0 tick\n5000000 0 read kind=taskstats\n");
  const auto r2 = sim::run(only, cfg_of("x86-64", "6.1-tick-hz250"));
  EXPECT_EQ(r2.tasks[index_of(only, 100)].prev_cputime.stime, 0u);
  EXPECT_EQ(r2.reads.at(0).stime, T250);
}

// Gen vtime (6.1, every CPU nohz_full): taskstats adds the pending time of the task's current
// vtime state (residue + clock delta at the read's ts) and drops the other residues; task_stat
// on the same task_cputime() is adjusted to a synced rtime. A task that is switched out shows
// its counters only.
TEST(Taskstats, GenReadsTheRawVtimeViewAtTheReadsTs) {
  const auto p = program(kHeader2 +
                         "0 0 switch prev=0 next=100\n"  // SYS from 0
                         "10 1 switch prev=0 next=200\n"
                         "1000 0 syscall_exit\n"                 // stime residue 1000; USER from 1000
                         "3001000 0 syscall_enter nr=1\n"        // utime residue 3 ms (< TICK_NSEC); SYS
                         "3500000 0 read kind=taskstats id=1\n"  // stime 1000 + 499000
                         "3500000 0 read kind=task_stat id=2\n"  // syncs rtime to 3.5 ms
                         "3600000 1 read kind=taskstats tid=100 id=3\n"
                         "4000000 0 read kind=taskstats id=4\n"
                         "4500000 0 switch prev=100 next=0 prev_state=S\n"  // stime residue 1.5 ms, INACTIVE
                         "5000000 1 read kind=taskstats tid=100 id=5\n");
  const auto m = gen61();
  const auto r = sim::run(p, m, {.check = true});
  ASSERT_FALSE(r.violation) << r.violation->invariant << ": " << r.violation->detail;
  const auto k = index_of(p, 100);
  ASSERT_EQ(r.tasks[k].utime, 0u);  // nothing reached TICK_NSEC: all residues
  ASSERT_EQ(r.backend_result<model::GenResult>()->vtime[k].utime, 3'000'000u);
  const auto& a = read_id(r, 1);
  EXPECT_EQ(a.utime, 0u);  // the user residue is not in the SYS view
  EXPECT_EQ(a.stime, 500'000u);
  EXPECT_EQ(a.rtime, 0u);  // stored: no tick, no sync before it
  const auto& s = read_id(r, 2);
  EXPECT_EQ(s.rtime, 3'500'000u);
  EXPECT_EQ(s.stime, 3'500'000u);  // cputime_adjust: utime 0 -> stime = rtime
  EXPECT_NE(s.stime, a.stime);
  const auto& c = read_id(r, 3);  // another CPU's reader sees the delta at its own ts
  EXPECT_EQ(c.stime, 600'000u);
  EXPECT_EQ(c.rtime, 3'500'000u);  // the value task_stat's sync stored
  EXPECT_EQ(read_id(r, 4).stime, 1'000'000u);
  const auto& z = read_id(r, 5);  // INACTIVE: residues (3 ms user, 1.5 ms system) not reported
  EXPECT_EQ(z.utime, 0u);
  EXPECT_EQ(z.stime, 0u);
  EXPECT_EQ(r.backend_result<model::GenResult>()->vtime[k].stime, 1'500'000u);
  EXPECT_EQ(r.tasks[k].prev_cputime.stime, 3'500'000u);  // only task_stat's update
}

// Native (POWER9 6.1): the counters the last flush left; cputime_adjust is the identity there,
// so taskstats equals task_stat and the counters.
TEST(Taskstats, NativeReadsTheTaskCounters) {
  const auto p = program(
      "kacct-trace 1\ncpu POWER9\nncpus 1\nclock ns\n"
      "task 100 pid=100 comm=app mm=1\ntask 101 pid=101 comm=mon mm=2\nevents\n"
      "0 0 switch prev=0 next=100\n"
      "1000 0 syscall_exit\n"
      "700000 0 syscall_enter nr=1\n"
      "1000000 0 switch prev=100 next=101\n"
      "1500000 0 read kind=taskstats tid=100 id=1\n"
      "1500000 0 read kind=task_stat tid=100 id=2\n");
  const auto r = sim::run(p, cfg_of("POWER9", "6.1-native-hz250"), {.check = true});
  ASSERT_FALSE(r.violation) << r.violation->invariant;
  const auto& t = r.tasks[index_of(p, 100)];
  ASSERT_GT(t.utime, 0u);
  ASSERT_GT(t.stime, 0u);
  const auto& a = read_id(r, 1);
  EXPECT_EQ(a.utime, t.utime);
  EXPECT_EQ(a.stime, t.stime);
  EXPECT_EQ(a.rtime, t.sum_exec_runtime);
  EXPECT_EQ(read_id(r, 2).utime, a.utime);
  EXPECT_EQ(read_id(r, 2).stime, a.stime);
}

// gap=G on the switch to 100: 100's vtime starts G late, so it is charged exactly G less and the
// CPU's lost time grows by G; a switch without gap= uses GenCfg::switch_gap. The checks hold.
TEST(SwitchGap, GenChargesNextExactlyTheGapLess) {
  auto text = [](const std::string& gap) {
    return kHeader2 + "0 0 switch prev=0 next=100" + gap +
           "\n"
           "1000000 0 switch prev=100 next=200\n"  // no gap=: the global default
           "2500000 0 read kind=taskstats id=1\n";
  };
  for (std::uint64_t global : {0ull, 300ull}) {
    for (std::uint64_t g : {0ull, 1ull, 250ull, 12'345ull}) {
      const auto with = program(text(" gap=" + std::to_string(g)));
      const auto without = program(text(""));
      auto m = gen61();
      m.gen.switch_gap = global;
      const auto a = sim::run(with, m, {.check = true});
      const auto b = sim::run(without, m, {.check = true});
      ASSERT_FALSE(a.violation) << a.violation->invariant << ": " << a.violation->detail;
      ASSERT_FALSE(b.violation) << b.violation->invariant;
      const auto k = index_of(with, 100);
      EXPECT_EQ(a.backend_result<model::GenResult>()->vtime[k].consumed, 1'000'000u - g) << g;
      EXPECT_EQ(a.backend_result<model::GenResult>()->vtime[k].stime, 1'000'000u - g);
      EXPECT_EQ(b.backend_result<model::GenResult>()->vtime[k].consumed, 1'000'000u - global);
      EXPECT_EQ(b.backend_result<model::GenResult>()->vtime[k].consumed -
                    a.backend_result<model::GenResult>()->vtime[k].consumed,
                g - global);
      EXPECT_EQ(a.backend_result<model::GenResult>()->vcpu[0].lost, g + global);
      // 200 (switched in without gap=) is charged from 1 ms + the global gap
      EXPECT_EQ(read_id(a, 1).stime, 1'500'000u - global);
      // the ledger does not see the gap
      EXPECT_EQ(trace::ground_truth(trace::load(text(" gap=" + std::to_string(g))).value()).value().task.at(100).system,
                1'000'000u);
    }
  }
  // tick and native accounting ignore gap=
  for (const auto& cc : {std::pair{"x86-64", "6.1-tick-hz250"}, std::pair{"POWER9", "6.1-native-hz250"}}) {
    const char* cpu = cc.first;  // clang 14: no lambda capture of a structured binding
    const char* config = cc.second;
    auto tr = [&](const std::string& gap) {
      return "kacct-trace 1\ncpu " + std::string(cpu) +
             "\nncpus 1\nclock ns\ntask 100 pid=100 comm=app mm=1\ntask 200 pid=200 comm=b mm=2\nevents\n"
             "0 0 switch prev=0 next=100" +
             gap +
             "\n4000000 0 tick\n5000000 0 switch prev=100 next=200\n"
             "6000000 0 read kind=taskstats tid=100\n";
    };
    const auto m = cfg_of(cpu, config);
    const auto a = sim::run(program(tr(" gap=5000")), m), b = sim::run(program(tr("")), m);
    EXPECT_EQ(to_json(a.tasks), to_json(b.tasks)) << config;
    EXPECT_EQ(to_json(a.cpus), to_json(b.cpus)) << config;
  }
}

// Builder traces with gap= on every switch (as large as the next event on that CPU allows): every
// gen combo replays them with every check on (gen_vtime.cpu_conserves among them), and on the ns
// variants each CPU's lost time is exactly the sum of its gaps.
TEST(SwitchGap, PerEventGapsKeepEveryGenCheck) {
  std::size_t runs = 0, gaps = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    trace::BuildSpec spec;
    spec.cpu_model = "x86-64";
    spec.ncpus = 1 + seed % 3;
    auto t = trace::random_trace(seed, spec, 250);
    std::vector<std::uint64_t> want(spec.ncpus, 0);
    for (std::size_t i = 0; i < t.events.size(); ++i) {
      auto& e = t.events[i];
      if (e.kind != trace::Kind::Switch) continue;
      std::uint64_t room = 50'000;  // none later on this CPU: any gap
      for (std::size_t j = i + 1; j < t.events.size(); ++j)
        if (t.events[j].cpu == e.cpu) {
          room = t.events[j].ts - e.ts;
          break;
        }
      e.switch_gap = std::min<std::uint64_t>(room, (seed * 7919 + i * 104'729) % 50'000);
      want[e.cpu] += *e.switch_gap;
      gaps += *e.switch_gap != 0;
    }
    ASSERT_FALSE(trace::validate(t)) << trace::validate(t)->to_string();
    auto p = sim::compile(t);
    ASSERT_TRUE(p.ok());
    for (const auto& c : arch::combos()) {
      if (c.cfg.acct != arch::Accounting::Gen || c.cpu.name != std::string("x86-64")) continue;
      const auto m = sim::model_cfg(c.cpu, c.cfg);
      const auto r = sim::run(p.value(), m, {.check = true});
      ASSERT_FALSE(r.violation) << c.cfg.name() << " seed " << seed << ": " << r.violation->invariant << " at line "
                                << r.violation->line << ": " << r.violation->detail << "\n"
                                << trace::write(t);
      ASSERT_TRUE(r.obligations_failed.empty());
      ++runs;
      if (m.gen.variant == model::GenVariant::Jiffy) continue;
      for (std::uint32_t cpu = 0; cpu < spec.ncpus; ++cpu)
        EXPECT_EQ(r.backend_result<model::GenResult>()->vcpu[cpu].lost, want[cpu])
            << c.cfg.name() << " seed " << seed << " cpu " << cpu;
    }
  }
  EXPECT_GT(runs, 50u);
  EXPECT_GT(gaps, 20u);
  std::printf("%zu gen runs in check mode, %zu non-zero gaps\n", runs, gaps);
}

}  // namespace
}  // namespace kacct
