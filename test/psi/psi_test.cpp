// PSI irq model: parser errors with positions, canonical round trip, the shipped scripts on
// every modelled version, the version differences, and the run-level mutants.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "model/psi/script.hpp"

using namespace kacct;
using namespace kacct::model::psi;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string file(const std::string& name) { return slurp(std::filesystem::path(KACCT_PSI_DIR) / name); }

const arch::KVersion kVersions[] = {arch::v(5, 10), arch::v(6, 1),  arch::v(6, 10),
                                    arch::v(6, 12), arch::v(6, 14), arch::v(6, 17)};

PsiCfg cfg(arch::KVersion v, Variant var = Variant::Faithful, bool irqtime = true) {
  PsiCfg c;
  c.ver = v;
  c.variant = var;
  c.irqtime = irqtime;
  return c;
}

void expect_error(const std::string& text, std::uint32_t line, std::uint32_t col, const std::string& part) {
  auto p = parse_script(text);
  ASSERT_FALSE(p) << "accepted: " << text;
  const auto& e = p.error();
  EXPECT_EQ(e.line, line) << e.str();
  EXPECT_EQ(e.col, col) << e.str();
  EXPECT_NE(e.message.find(part), std::string::npos) << e.str();
}
Script parse(const std::string& text) {
  auto p = parse_script(text);
  EXPECT_TRUE(p) << p.error().str();
  return p ? p.value() : Script{};
}
RunResult run(const Script& s, const PsiCfg& c) {
  auto r = run_script(s, c);
  EXPECT_FALSE(r.error) << r.error->str();
  return r;
}

}  // namespace

TEST(PsiScript, ErrorsCarryLineAndColumn) {
  expect_error("", 1, 1, "psi v1");
  expect_error("psi v2\n", 1, 1, "psi v1");
  expect_error("psi v1\ncpus 2\ntick 2\n", 3, 6, "no cpu 2");
  expect_error("psi v1\ncpus 1\ngroup 2 parent 0\n", 3, 7, "in order");
  expect_error("psi v1\ncpus 1\ngroup 1 parent 1\n", 3, 16, "earlier group");
  expect_error("psi v1\ncpus 1\nwait x1\n", 3, 6, "unsigned number");
  expect_error("psi v1\ncpus 1\ntick 0 extra\n", 3, 8, "unexpected 'extra'");
  expect_error("psi v1\ncpus 1\nrepeat 3\ntick 0\n", 3, 1, "without 'end'");
  expect_error("psi v1\ncpus 1\nend\n", 3, 1, "without 'repeat'");
  expect_error("psi v1\ncpus 1\ntick 0\ncpus 2\n", 4, 1, "before the first event");
  expect_error("psi v1\nvariant broken\n", 2, 9, "unknown variant");
  expect_error("psi v1\ncpus 1\n  frobnicate 1\n", 3, 3, "unknown statement");
  expect_error("psi v1\ncpus 1\nschedule 0 1\n", 3, 12, "no task 1");
  expect_error("psi v1\ncpus 1\npressure 0 off by 0\n", 3, 10, "root");
  expect_error("psi v1\ncpus 1\nrepeat 300000\nrepeat 4\ntick 0\nend\nend\n", 3, 8, "more than");
}

TEST(PsiScript, SemanticErrorsAtTheEvent) {
  auto s = parse("psi v1\ncpus 2\ntask 1 group 0\nschedule 0 1\nschedule 1 1\n");
  auto r = run_script(s, cfg(arch::v(6, 10)));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->line, 5u);
  EXPECT_EQ(r.error->message, "event 'schedule 1 1' cannot happen: task 1 is running on cpu 0");
  EXPECT_EQ(r.failed_at, 1u);
  EXPECT_EQ(r.steps, 1u);
  auto t = parse("psi v1\ncpus 1\nirq_exit 0\n");
  auto q = run_script(t, cfg(arch::v(6, 10)));
  ASSERT_TRUE(q.error);
  EXPECT_EQ(q.error->str(), "3:1: event 'irq_exit 0' cannot happen: cpu 0 is not in an irq");
}

TEST(PsiScript, CanonicalRoundTrip) {
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KACCT_PSI_DIR) / "scripts")) {
    auto s = parse(slurp(e.path()));
    auto text = write_script(s);
    auto again = parse(text);
    EXPECT_EQ(s, again) << e.path();
    EXPECT_EQ(text, write_script(again));
  }
}

TEST(PsiScript, ShippedSeedIsTheGeneratedOne) { EXPECT_EQ(parse(file("seed.psi")), parse(seed_script_text(1000, 4))); }

// Every shipped script except the u32-wrap finding holds on every version, irq time on and off.
TEST(PsiModel, ScriptsHoldOnEveryVersion) {
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KACCT_PSI_DIR) / "scripts")) {
    if (e.path().filename() == "nohz-wrap.psi") continue;
    auto s = parse(slurp(e.path()));
    s.version.reset();
    for (auto v : kVersions)
      for (bool irq : {true, false}) {
        auto r = run(s, cfg(v, Variant::Faithful, irq));
        EXPECT_FALSE(r.violation) << e.path() << " " << v.str() << ": " << r.violation->invariant << ": "
                                  << r.violation->message;
      }
  }
}

TEST(PsiModel, SeedCostsPerCall) {
  auto s = parse(file("seed.psi"));
  auto pre = run(s, cfg(arch::v(6, 1)));
  auto post = run(s, cfg(arch::v(6, 10)));
  ASSERT_FALSE(pre.violation);
  ASSERT_FALSE(post.violation);
  const auto& a = pre.per_kind.at("clock_gettime");
  const auto& b = post.per_kind.at("clock_gettime");
  ASSERT_EQ(a.calls, 4000u);
  // 6.1: the rq clock read + PSI's cpu_clock, 3 levels, 3 sections per call; 6.10: none of PSI.
  EXPECT_EQ(a.costs.clock_reads, 2 * a.calls);
  EXPECT_EQ(a.costs.levels, 3 * a.calls);
  EXPECT_EQ(a.costs.seq_sections, 3 * a.calls);
  EXPECT_EQ(b.costs.clock_reads, b.calls);
  EXPECT_EQ(b.costs.levels, 0u);
  EXPECT_EQ(b.costs.seq_sections, 0u);
  // The tick pays instead after the fix.
  EXPECT_EQ(post.per_kind.at("tick").costs.seq_sections, 3 * 4u);
  // Same irq time in the end, per group, on both: every clock_gettime pre-fix and the next tick
  // post-fix, except the last tick's irq, still pending after the fix.
  EXPECT_EQ(pre.accrued, post.accrued);
  EXPECT_EQ(pre.world.v.gc[2][0].irq_full, 8000u);
  EXPECT_EQ(post.world.v.gc[2][0].irq_full, 6000u);
  EXPECT_EQ(post.max_pending, 2000u);
}

TEST(PsiModel, ClockReadsPerVersionAtTheTick) {
  auto s = parse(file("seed.psi"));
  auto tick_reads = [&](arch::KVersion v) {
    auto r = run(s, cfg(v));
    const auto& k = r.per_kind.at("tick");
    return std::make_pair(k.costs.clock_reads / k.calls, k.costs.seq_sections / k.calls);
  };
  EXPECT_EQ(tick_reads(arch::v(6, 1)), std::make_pair(std::uint64_t{2}, std::uint64_t{3}));   // clock + PSI's
  EXPECT_EQ(tick_reads(arch::v(6, 10)), std::make_pair(std::uint64_t{2}, std::uint64_t{3}));  // one before the walk
  EXPECT_EQ(tick_reads(arch::v(6, 12)), std::make_pair(std::uint64_t{4}, std::uint64_t{3}));  // one per group
  EXPECT_EQ(tick_reads(arch::v(6, 17)), std::make_pair(std::uint64_t{2}, std::uint64_t{1}));  // psi_seq
}

TEST(PsiModel, IdleIrqTimeIsChargedOnlyAfterTheFix) {
  auto s = parse(file("scripts/idle-irq.psi"));
  auto pre = run(s, cfg(arch::v(6, 1)));
  auto post = run(s, cfg(arch::v(6, 10)));
  ASSERT_FALSE(pre.violation);
  ASSERT_FALSE(post.violation);
  EXPECT_EQ(pre.world.v.gc[1][0].irq_full, 700u);    // the idle period's 5000 ns are consumed
  EXPECT_EQ(post.world.v.gc[1][0].irq_full, 5700u);  // ... and charged to task 1's group after the fix
}

TEST(PsiModel, NohzFullWrapIsAFindingAfterTheFix) {
  auto s = parse(file("scripts/nohz-wrap.psi"));
  s.version.reset();
  auto pre = run(s, cfg(arch::v(6, 1)));
  EXPECT_FALSE(pre.violation) << pre.violation->message;
  auto post = run(s, cfg(arch::v(6, 10)));
  ASSERT_TRUE(post.violation);
  EXPECT_EQ(post.violation->invariant, "psi_irq.delta_fits_u32");
}

TEST(PsiMutants, NoLockTearsTheSequenceCount) {
  auto s = parse(file("scripts/race.psi"));
  for (auto v : {arch::v(6, 10), arch::v(6, 12), arch::v(6, 17)}) {
    auto r = run(s, cfg(v, Variant::NoLock));
    ASSERT_TRUE(r.violation) << v.str();
    EXPECT_EQ(r.violation->invariant, "psi_irq.lock_held");
    EXPECT_NE(r.violation->message.find("torn"), std::string::npos) << r.violation->message;
    // Without the lock check the odd count is what remains.
    bool odd = false;
    for (const auto& g : r.world.v.gc) odd = odd || (g[0].seq & 1);
    odd = odd || (r.world.v.cpu[0].psi_seq & 1);
    EXPECT_TRUE(odd) << v.str();
  }
}

TEST(PsiMutants, DoubleCountAndLostDeltaAreCaught) {
  auto s = parse(file("scripts/move.psi"));
  s.version.reset();
  auto dc = run(s, cfg(arch::v(6, 10), Variant::DoubleCount));
  ASSERT_TRUE(dc.violation);
  EXPECT_EQ(dc.violation->invariant, "psi_irq.conservation");
  EXPECT_NE(dc.violation->message.find("counted twice"), std::string::npos);
  auto ld = run(s, cfg(arch::v(6, 10), Variant::LostDelta));
  ASSERT_TRUE(ld.violation);
  EXPECT_EQ(ld.violation->invariant, "psi_irq.hierarchy");
}

// Per cgroup and per state, by hand: task 1 in group 2 (under 1, under the root) runs from 0;
// a 400 ns hardirq at 1000..1400; the tick at 1400 charges it (6.1: update_rq_clock's clamped
// irq delta, 400 <= the 1400 ns clock delta; 6.10: sched_tick) to groups 2, 1 and 0, and
// record_times() restarts each one's state clock at 1400.
TEST(PsiMutants, GroupLedgerAndStateClockPerGroup) {
  auto s = parse(
      "psi v1\ncpus 1\ngroup 1 parent 0\ngroup 2 parent 1\ntask 1 group 2\nschedule 0 1\n"
      "wait 1000\nirq 0 400\ntick 0\n");
  for (auto v : {arch::v(6, 1), arch::v(6, 10), arch::v(6, 17)}) {
    auto r = run(s, cfg(v));
    ASSERT_FALSE(r.violation) << v.str() << " " << r.violation->invariant << ": " << r.violation->message;
    for (int g : {0, 1, 2}) {
      EXPECT_EQ(r.world.v.gc[g][0].irq_full, 400u) << v.str() << " group " << g;
      EXPECT_EQ(r.world.v.gc[g][0].state_start, 1400u) << v.str() << " group " << g;
    }
    // record_times() skipped: the state clock of every charged group stays at 0.
    auto nr = run(s, cfg(v, Variant::NoRecordTimes));
    ASSERT_TRUE(nr.violation) << v.str();
    EXPECT_EQ(nr.violation->invariant, "psi_irq.state_clock");
    EXPECT_EQ(nr.violation->message, "group 0 cpu 0: state_start = 0 at clock 1400 after a write to its times");
  }
  // The delta charged to the leaf only: groups 1 and 0 keep 0 where the ground truth gives their
  // subtree 400; the charge log says the same (hierarchy), the truth ledger independently.
  auto ld = run(s, cfg(arch::v(6, 10), Variant::LostDelta));
  ASSERT_TRUE(ld.violation);
  EXPECT_EQ(ld.violation->invariant, "psi_irq.hierarchy");
  EXPECT_EQ(ld.violation->also, std::vector<std::string>{"psi_irq.group_ledger"});
  EXPECT_EQ(ld.world.v.gc[2][0].irq_full, 400u);
  EXPECT_EQ(ld.world.v.gc[1][0].irq_full, 0u);
}

TEST(PsiModel, Deterministic) {
  auto s = parse(file("scripts/move.psi"));
  auto a = run(s, cfg(arch::v(6, 12))).json(cfg(arch::v(6, 12))).dump();
  auto b = run(s, cfg(arch::v(6, 12))).json(cfg(arch::v(6, 12))).dump();
  EXPECT_EQ(a, b);
}

// The checker judges each event incrementally (only the psi_group_cpu records the event wrote
// or re-summed); judged in full instead it must give the same run: the same verdict at every
// event (a run stops at the first violation, so equal runs agree on every event up to it), the
// same findings, text and order. Over the shipped scripts and random scripts on every version,
// every variant (the mutants that violate) and the proposed fix, irq time on and off.
TEST(PsiIncremental, SameAsFullCheck) {
  std::vector<Script> scripts;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KACCT_PSI_DIR) / "scripts"))
    scripts.push_back(parse(slurp(e.path())));
  scripts.push_back(parse(seed_script_text(20, 3)));
  // Random scripts: 2 CPUs, groups 1 < 0, 2 < 1, 3 < 0, tasks 1-3; events kept possible by
  // tracking which task runs where (an impossible one would only end the run early).
  std::mt19937 rng(18);
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  for (int k = 0; k < 120; ++k) {
    std::string t = "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 1\ngroup 3 parent 0\n";
    t += "task 1 group 2\ntask 2 group 3\ntask 3 group 1\n";
    int curr[2] = {0, 0}, last[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 40; ++i) {
      const int c = pick(2), o = 1 - c, task = 1 + pick(3);
      switch (pick(10)) {
        case 0: t += fmt::format("wait {}\n", pick(3) == 0 ? (1ull << 33) : std::uint64_t(pick(5000))); break;
        case 1: t += fmt::format("irq {} {}{}\n", c, pick(3000), pick(2) ? " soft" : ""); break;
        case 2: t += fmt::format("tick {}\n", c); break;
        case 3: {
          const int next = pick(4);
          if (next != 0 && curr[o] == next) break;
          t += fmt::format("schedule {} {}\n", c, next);
          curr[c] = next;
          if (next) last[next] = c;
          break;
        }
        case 4:
          if (curr[c]) t += fmt::format("clock_gettime {}\n", c);
          break;
        case 5: t += fmt::format("wakeup {} by {}\n", c, pick(2)); break;
        case 6: t += fmt::format("move {} {} by {}\n", task, pick(4), pick(2)); break;
        case 7: t += fmt::format("pressure {} {} by {}\n", 1 + pick(3), pick(2) ? "on" : "off", pick(2)); break;
        case 8:
          if (last[task] >= 0)
            t += fmt::format("race_tick_move {} {} {} by {}\n", last[task], task, pick(4), 1 - last[task]);
          break;
        default: t += fmt::format("irq {} {}\n", c, pick(2) ? 100 : 4000); break;
      }
    }
    scripts.push_back(parse(t));
  }
  std::size_t runs = 0, violated = 0, events = 0;
  for (auto s : scripts) {
    s.version.reset();
    s.variant.reset();
    s.irqtime.reset();
    for (auto v : kVersions)
      for (auto var : {Variant::Faithful, Variant::NoLock, Variant::DoubleCount, Variant::LostDelta,
                       Variant::NoNegGuard, Variant::NoRecordTimes})
        for (int opt = 0; opt < 3; ++opt) {
          auto c = cfg(v, var, opt != 1);
          c.idle_irq_dropped = opt == 2;
          const auto inc = run_script(s, c, true, true);
          const auto full = run_script(s, c, true, false);
          const auto where =
              write_script(s) + v.str() + " " + std::string(variant_name(var)) + " " + std::to_string(opt);
          ASSERT_EQ(inc.violation.has_value(), full.violation.has_value()) << where;
          if (full.violation) {
            EXPECT_EQ(inc.violation->invariant, full.violation->invariant) << where;
            EXPECT_EQ(inc.violation->message, full.violation->message) << where;
            EXPECT_EQ(inc.violation->also, full.violation->also) << where;
            ++violated;
          }
          EXPECT_EQ(inc.steps, full.steps) << where;
          EXPECT_EQ(inc.failed_at, full.failed_at) << where;
          EXPECT_EQ(inc.json(c).dump(), full.json(c).dump()) << where;
          ++runs;
          events += full.steps;
        }
  }
  // Both verdicts occur (a comparison of runs that all hold would test little).
  EXPECT_GT(violated, runs / 10) << runs;
  EXPECT_LT(violated, runs) << runs;
  EXPECT_GT(events, 100000u);
}
