// Replays every QEMU fixture (Debian 6.1, VIRT_CPU_ACCOUNTING_GEN on nohz_full CPU 1, HZ=250,
// amd64 and ppc64el) and compares kacct's gen vtime prediction with what the kernel reported.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "arch/registry.hpp"
#include "model/sim/oracle.hpp"
#include "../conformance/fixture_util.hpp"

namespace kacct {
namespace {
using json = nlohmann::json;

struct Fixture {
  std::string name;
  json meta;
  std::vector<sim::KernelRead> values;
  std::string text;
  trace::perf::Options options;
};

std::optional<trace::ReadKind> kind_of(const std::string& s) {
  for (std::size_t k = 0; k < trace::kReadKindCount; ++k)
    if (trace::name(trace::ReadKind(k)) == s) return trace::ReadKind(k);
  return std::nullopt;
}

// A fixture whose trace lost events can pass only with a stated reason: the reduced trace must
// carry every PERF_RECORD_LOST reduce.py counted, and a loss needs meta "lost_allowance".
std::string lost_events_problem(const json& meta, std::uint64_t lost_events, std::uint64_t lost_records) {
  const auto counted = meta.value("lost_events", std::uint64_t{0});
  const auto records = meta.value("lost_records", std::uint64_t{0});
  if (counted != lost_events || records != lost_records)
    return "meta.json counts " + std::to_string(counted) + " lost events in " + std::to_string(records) +
           " records, the trace has " + std::to_string(lost_events) + " in " + std::to_string(lost_records);
  if (lost_events && meta.value("lost_allowance", std::string()).empty())
    return "perf lost " + std::to_string(lost_events) + " events and meta.json has no \"lost_allowance\"";
  return {};
}

TEST(ConformanceGen, LostEventsNeedAnAllowance) {
  EXPECT_EQ(lost_events_problem(json::object(), 0, 0), "");
  EXPECT_NE(lost_events_problem(json{{"lost_events", 17}, {"lost_records", 1}}, 17, 1), "");
  EXPECT_EQ(lost_events_problem(
                json{{"lost_events", 17}, {"lost_records", 1}, {"lost_allowance", "after the last read"}}, 17, 1),
            "");
  EXPECT_NE(lost_events_problem(json{{"lost_events", 0}}, 17, 1), "");  // the reducer dropped the loss
  EXPECT_NE(lost_events_problem(json{{"lost_events", 17}, {"lost_records", 1}}, 0, 0), "");
}

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (auto& d : conformance::load_fixtures(KACCT_GEN_FIXTURES)) {
    Fixture f{d.name, d.meta, {}, std::move(d.text), conformance::read_options(d)};
    f.options.cpu_model = d.meta["cpu"];
    for (const auto& j : d.values) {
      sim::KernelRead r;
      r.marker = j["marker"];
      const auto k = kind_of(j["kind"]);
      EXPECT_TRUE(k) << f.name << ": " << j.dump();
      r.kind = k.value_or(trace::ReadKind::ProcStat);
      if (j.contains("value")) r.value = j["value"].get<std::uint64_t>();
      if (j.contains("utime")) r.utime = j["utime"].get<std::uint64_t>();
      if (j.contains("stime")) r.stime = j["stime"].get<std::uint64_t>();
      f.values.push_back(r);
    }
    out.push_back(std::move(f));
  }
  return out;
}

struct Run {
  sim::Prediction prediction;
  std::vector<sim::ReadComparison> reads;
};
std::optional<Run> replay(const Fixture& f, const std::string& config,
                          const std::function<void(sim::ModelCfg&)>& tweak = {},
                          trace::perf::Options::ExitAt exit_at = trace::perf::Options::ExitAt::Inferred) {
  const auto cpu = arch::find_cpu(f.meta["cpu"].get<std::string>());
  const auto cfg = arch::find_config(config);
  EXPECT_TRUE(cpu && cfg) << f.name << ": " << config;
  if (!cpu || !cfg) return std::nullopt;
  auto options = f.options;
  options.exit_at = exit_at;
  auto pr = sim::predict(f.text, options, *cpu, *cfg, f.meta["pid"].get<std::uint64_t>(), tweak);
  EXPECT_TRUE(pr.ok()) << f.name << ": " << (pr.ok() ? "" : pr.error().to_string());
  if (!pr) return std::nullopt;
  Run r{std::move(pr).value(), {}};
  r.reads = sim::compare(r.prediction, f.values);
  return r;
}

// A group read after a thread's exit depends on when __exit_signal() folded the thread's times
// in, which no event marks: the kernel's value must then lie between the predictions with the
// exit at either end the trace allows (sched_process_exit, the final switch). Returns why not.
std::string outside_exit_bound(const std::vector<const Run*>& runs, const sim::KernelRead& k,
                               std::string* bounds = nullptr) {
  std::vector<const sim::PredictedRead*> p;
  for (const auto* r : runs)
    for (const auto& x : r->prediction.reads)
      if (x.marker == k.marker && x.kind == k.kind) p.push_back(&x);
  if (p.size() != runs.size()) return "not predicted in every run";
  auto within = [&](const char* what, std::optional<std::uint64_t> v, auto get) -> std::string {
    if (!v) return "";
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (const auto* x : p) lo = std::min(lo, get(*x)), hi = std::max(hi, get(*x));
    const auto text = std::string(what) + ": kernel " + std::to_string(*v) +
                      (*v >= lo && *v <= hi ? " in [" : " not in [") + std::to_string(lo) + ", " + std::to_string(hi) +
                      "]";
    if (*v >= lo && *v <= hi) {
      if (bounds) *bounds += text + "; ";
      return "";
    }
    return text;
  };
  return within("value", k.value, [](const auto& x) { return x.value; }) +
         within(" utime", k.utime, [](const auto& x) { return x.utime; }) +
         within(" stime", k.stime, [](const auto& x) { return x.stime; });
}

TEST(ConformanceGen, EveryRecordedReadIsPredicted) {
  const auto fx = fixtures();
  ASSERT_GE(fx.size(), 6u) << "fixtures missing under " << KACCT_GEN_FIXTURES;
  std::map<std::string, int> totals;
  for (const auto& f : fx) {
    auto run = replay(f, f.meta["config"]);
    if (!run) continue;
    const auto& st = run->prediction.conversion.stats;
    ASSERT_TRUE(st.vtime.active) << f.name << ": no vtime probes in the trace";
    EXPECT_EQ(lost_events_problem(f.meta, st.lost_events, st.lost_records), "") << f.name;
    // Reads off with the inferred exit clock: within the bound over the exit clock?
    decltype(run) early, late;
    std::set<std::uint64_t> bounded;
    for (const auto& c : run->reads) {
      if (c.agreement != sim::Agreement::Off) continue;
      if (!early) early = replay(f, f.meta["config"], {}, trace::perf::Options::ExitAt::ProcessExit);
      if (!late) late = replay(f, f.meta["config"], {}, trace::perf::Options::ExitAt::FinalSwitch);
      if (!early || !late) break;
      for (const auto& k : f.values) {
        std::string b;
        if (k.marker == c.marker && outside_exit_bound({&*run, &*early, &*late}, k, &b).empty()) {
          bounded.insert(c.marker);
          std::printf("%s marker %llu %s: within the bound over a dead thread's exit clock: %s\n", f.name.c_str(),
                      (unsigned long long)c.marker, std::string(trace::name(c.kind)).c_str(), b.c_str());
        }
      }
    }
    std::map<sim::Agreement, int> n;
    // A fixture may pin reads the model is known to miss ("known_off": the markers, the number of
    // checkpoints off, and why); exactly those must be off, so a fix or a new miss both show.
    const auto known = f.meta.value("known_off", json::object());
    std::set<std::uint64_t> known_markers, off_markers;
    for (const auto& m : known.value("markers", json::array())) known_markers.insert(m.get<std::uint64_t>());
    if (!known.empty()) {
      EXPECT_FALSE(known.value("why", std::string()).empty()) << f.name << ": known_off without why";
    }
    for (const auto& c : run->reads) {
      ++n[c.agreement];
      ++totals[std::string(sim::name(c.agreement))];
      if (c.agreement == sim::Agreement::Off && !bounded.count(c.marker)) off_markers.insert(c.marker);
      if (known_markers.count(c.marker) || bounded.count(c.marker)) continue;
      EXPECT_NE(c.agreement, sim::Agreement::Off)
          << f.name << " marker " << c.marker << " " << trace::name(c.kind) << " (" << c.how << "): " << c.detail;
      EXPECT_NE(c.agreement, sim::Agreement::Unverifiable) << f.name << " marker " << c.marker << ": " << c.detail;
      // Only taskstats (no probe sees its clock) may be merely within bounds.
      if (c.agreement == sim::Agreement::WithinBounds) { EXPECT_EQ(c.kind, trace::ReadKind::Taskstats) << f.name; }
    }
    // Every transition of every task on the nohz_full CPU: the kernel's task_cputime() there.
    EXPECT_EQ(off_markers, known_markers) << f.name << ": the reads off are not the known ones";
    // And the reads only a bound over an exit clock covers are pinned too ("exit_bound": markers, why).
    std::set<std::uint64_t> pinned;
    const auto eb = f.meta.value("exit_bound", json::object());
    for (const auto& m : eb.value("markers", json::array())) pinned.insert(m.get<std::uint64_t>());
    EXPECT_EQ(bounded, pinned) << f.name << ": the reads within the exit-clock bound are not the pinned ones";
    if (!eb.empty()) { EXPECT_FALSE(eb.value("why", std::string()).empty()) << f.name << ": exit_bound without why"; }
    const auto& cp = run->prediction.checkpoints;
    const auto known_cp = known.value("checkpoints", std::uint64_t{0});
    if (!known_cp)
      for (const auto& d : cp.diffs) ADD_FAILURE() << f.name << ": " << d;
    EXPECT_GT(cp.total, 0u) << f.name;
    EXPECT_EQ(cp.total - cp.exact, known_cp) << f.name;
    std::printf(
        "%-32s reads: %d exact, %d within bounds, %zu within the exit-clock bound, %zu off (known) of %zu; checkpoints "
        "%llu/%llu exact; transitions %llu "
        "(%llu exact "
        "clocks), switches %llu (%llu exact)\n",
        f.name.c_str(), n[sim::Agreement::Exact], n[sim::Agreement::WithinBounds], bounded.size(), off_markers.size(),
        f.values.size(), (unsigned long long)cp.exact, (unsigned long long)cp.total,
        (unsigned long long)st.vtime.transitions, (unsigned long long)st.vtime.transitions_exact,
        (unsigned long long)st.vtime.switches, (unsigned long long)st.vtime.switches_exact);
  }
  EXPECT_GT(totals["exact"], 0);
}

// The comparison can fail: the same traces replayed as if the CPU kept tick accounting (6.1 tick
// model) or with the 4.9 jiffy-granular gen vtime must miss the kernel's values.
TEST(ConformanceGen, OtherAccountingIsDetected) {
  int off_tick = 0, off_jiffy = 0;
  for (const auto& f : fixtures()) {
    if (auto r = replay(f, "6.1-tick-hz250"))
      for (const auto& c : r->reads) off_tick += c.agreement == sim::Agreement::Off;
    if (auto r = replay(f, "4.9-gen-hz250")) {
      for (const auto& c : r->reads) off_jiffy += c.agreement == sim::Agreement::Off;
      off_jiffy += int(r->prediction.checkpoints.total - r->prediction.checkpoints.exact);
    }
  }
  EXPECT_GT(off_tick, 0);
  EXPECT_GT(off_jiffy, 0);
}

// The kernel finding the fixtures revealed: a forked child starts with its parent's vtime residues
// (copy_process()). A model without it (a kernel that zeroed them) misses the real kernel.
TEST(ConformanceGen, ForkInheritsVtimeResidues) {
  std::uint64_t off = 0, inherited_runs = 0;
  for (const auto& f : fixtures()) {
    auto r = replay(f, f.meta["config"], [](sim::ModelCfg& m) { m.gen.fork_copies_residues = false; });
    if (!r) continue;
    const auto& cp = r->prediction.checkpoints;
    off += cp.total - cp.exact;
    for (const auto& c : r->reads) off += c.agreement == sim::Agreement::Off;
    inherited_runs += cp.total != cp.exact;
  }
  EXPECT_GT(off, 0u);
  std::printf("without the inherited residues: %llu mismatches in %llu of %zu runs\n", (unsigned long long)off,
              (unsigned long long)inherited_runs, fixtures().size());
}

}  // namespace
}  // namespace kacct
