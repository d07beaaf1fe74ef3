// Replays native vtime recordings (VIRT_CPU_ACCOUNTING_NATIVE with scaled cputime, ppc64le
// POWER9 under QEMU, kernels built from Debian's sources) and compares, in kernel units:
// each CPU's kernel_cpustat before every accounting hook (ns, deltas from the CPU's first
// checkpoint: the trace starts mid-run), each task's utime/stime/utimescaled/stimescaled before
// every flush (ns, deltas from its first checkpoint) and the workload's own reads
// (/proc/PID/stat, per-thread stat, getrusage, taskstats with the scaled pair).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "arch/registry.hpp"
#include "model/native/result.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"
#include "xz.hpp"
#include "../conformance/fixture_dirs.hpp"

using namespace kacct;

namespace {

constexpr std::array<model::Usage, 8> kCols = {model::USER, model::NICE, model::SYSTEM, model::SOFTIRQ,
                                               model::IRQ,  model::IDLE, model::IOWAIT, model::STEAL};
constexpr std::array<const char*, 8> kNames = {"user", "nice", "system", "softirq", "irq", "idle", "iowait", "steal"};
constexpr std::array<const char*, 4> kTaskNames = {"utime", "stime", "utimescaled", "stimescaled"};

struct CpuPoint {
  std::size_t event;
  std::uint32_t cpu;
  std::array<std::uint64_t, 8> k;
};
struct TaskPoint {
  std::size_t event;
  std::uint64_t tid;
  std::array<std::uint64_t, 4> k;
};
struct ReadPoint {
  std::uint64_t id, tid;
  std::string kind;
  std::array<std::uint64_t, 4> v;
};
// A /proc/stat cpuN line read by the workload (clock ticks, in the file's column order) between
// the model's states after the first `lo` and `hi` events.
struct StatPoint {
  std::uint64_t id;
  std::size_t lo, hi;
  std::uint32_t reader, cpu;
  std::array<std::uint64_t, 8> v;  // user nice system idle iowait irq softirq steal
};
// /proc/stat's column order (fs/proc/stat.c show_stat()) as kCols indices
constexpr std::array<std::size_t, 8> kStatCol = {0, 1, 2, 5, 6, 4, 3, 7};
constexpr std::array<const char*, 8> kStatNames = {"user",   "nice", "system",  "idle",
                                                   "iowait", "irq",  "softirq", "steal"};

struct Fixture {
  std::string name, text, config, version;
  std::vector<CpuPoint> cps;
  std::vector<TaskPoint> tps;
  std::vector<ReadPoint> rps;
  std::vector<StatPoint> sps;
  struct Drop {
    std::size_t from, to;  // release_task() entry and return (__exit_signal() in between)
    std::uint64_t tid;
  };
  std::vector<Drop> drops;
};

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (const auto& d : conformance::fixture_dirs(KACCT_NATIVE_FIXTURES)) {
    Fixture f;
    f.name = d.filename();
    f.config = conformance::meta_value(d, "config");
    f.version = f.config.substr(0, f.config.find('-'));  // the replayed release (arch table)
    f.text = cli::read_input_maybe_xz((d / "trace.xz").string());
    std::istringstream c(cli::read_input_maybe_xz((d / "checkpoints.xz").string()));
    for (std::string line; std::getline(c, line);) {
      std::istringstream s(line);
      std::string tag;
      s >> tag;
      if (tag == "C") {
        CpuPoint p{};
        s >> p.event >> p.cpu;
        for (auto& v : p.k) s >> v;
        f.cps.push_back(p);
      } else if (tag == "T") {
        TaskPoint p{};
        s >> p.event >> p.tid;
        for (auto& v : p.k) s >> v;
        f.tps.push_back(p);
      } else if (tag == "D") {
        Fixture::Drop d{};
        s >> d.from >> d.to >> d.tid;
        f.drops.push_back(d);
      } else if (tag == "S") {
        StatPoint p{};
        s >> p.id >> p.lo >> p.hi >> p.reader >> p.cpu;
        for (auto& v : p.v) s >> v;
        f.sps.push_back(p);
      } else if (tag == "R") {
        ReadPoint p{};
        s >> p.id >> p.kind >> p.tid;
        for (auto& v : p.v) s >> v;
        f.rps.push_back(p);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

struct Outcome {
  std::size_t cpu_checked = 0, cpu_exact = 0, task_checked = 0, task_exact = 0, scaled_checked = 0, scaled_exact = 0,
              reads_checked = 0, reads_exact = 0,
              reads_bounded = 0,  // a flush during the read: the kernel's value between the model's at its ends
      reads_adjusted = 0;         // group reads without a released thread's later flushes (two per read)
  // /proc/stat cpuN lines: the kernel_cpustat columns (user nice system irq softirq steal) exact
  // or between the model's values at the read's markers; idle and iowait come from tick-sched
  // (get_cpu_idle_time_us(): nohz idle sleeptime), not kernel_cpustat: on the reading CPU their
  // sum may grow between two reads by at most the model's native idle+iowait, since each nohz
  // idle window lies inside one native idle interval (+4 ticks: both sides sum two truncated
  // columns)
  std::size_t stat_checked = 0, stat_exact = 0, stat_bounded = 0, idle_pairs = 0, idle_within = 0;
  std::uint64_t idle_kernel_ticks = 0, idle_model_ticks = 0;  // summed over the pairs
  std::map<std::string, std::size_t> off;                     // per column / read kind
  std::string first_off;
  // the kernel's own scaled values differ from its unscaled ones (SPURR != TB) at this many
  // task checkpoints: the scaled comparison can tell the split from a copy
  std::size_t kernel_scaled_differs = 0;
};

void note(Outcome& o, const std::string& what, const std::string& detail) {
  ++o.off[what];
  if (o.first_off.empty()) o.first_off = what + ": " + detail;
}

// The run of the first n events (the model's state before event n); scaled task times only
// exist at the end of a run (NativeResult).
sim::RunResult run_prefix(const trace::Trace& t, std::size_t n, const sim::ModelCfg& cfg) {
  trace::Trace p = t;
  p.events.resize(std::min(n, p.events.size()));
  auto prog = sim::compile(p);
  EXPECT_TRUE(prog.ok());
  return sim::run(prog.value(), cfg, {});
}

// expect_scaled: compare the scaled pair with the model's scaled values (false: with its
// unscaled utime/stime, the negative control).
Outcome compare(const Fixture& f, const std::string& config, bool scaled_from_model = true) {
  Outcome o;
  auto t = trace::load(f.text);
  EXPECT_TRUE(t.ok()) << f.name << ": " << (t.ok() ? "" : t.error().to_string());
  if (!t.ok()) return o;
  auto prog = sim::compile(t.value());
  EXPECT_TRUE(prog.ok());
  const auto cpu = arch::find_cpu("POWER9");
  const auto cfgp = arch::find_config(config);
  EXPECT_TRUE(cpu && cfgp) << config;
  if (!prog.ok() || !cpu || !cfgp) return o;
  const auto mcfg = sim::model_cfg(*cpu, *cfgp);
  const auto& tasks = prog.value().tasks;
  auto task_index = [&](std::uint64_t tid) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].tid == tid) return i;
    return std::nullopt;
  };
  std::map<std::size_t, std::vector<const CpuPoint*>> cat;
  std::map<std::size_t, std::vector<const TaskPoint*>> tat;
  for (const auto& c : f.cps) cat[c.event].push_back(&c);
  for (const auto& p : f.tps) tat[p.event].push_back(&p);
  using CState = std::array<std::uint64_t, 8>;
  std::vector<std::optional<std::pair<CState, CState>>> cbase(prog.value().header.ncpus);
  std::map<std::uint64_t, std::pair<std::array<std::uint64_t, 2>, std::array<std::uint64_t, 2>>> tbase;
  std::map<std::size_t, std::vector<CState>> stat_at;  // the model's kernel_cpustat after ev events
  for (const auto& sp : f.sps) stat_at[sp.lo], stat_at[sp.hi];
  std::vector<std::optional<std::size_t>> cfirst(prog.value().header.ncpus);
  auto check = [&](std::size_t ev, const sim::RunResult& r) {
    if (auto it = stat_at.find(ev); it != stat_at.end())
      for (const auto& cs : r.cpus) {
        CState m{};
        for (std::size_t i = 0; i < kCols.size(); ++i) m[i] = cs.cpustat[kCols[i]];
        it->second.push_back(m);
      }
    if (auto it = cat.find(ev); it != cat.end())
      for (const auto* c : it->second) {
        CState m{};
        for (std::size_t i = 0; i < kCols.size(); ++i) m[i] = r.cpus[c->cpu].cpustat[kCols[i]];
        if (!cbase[c->cpu]) cbase[c->cpu] = {c->k, m}, cfirst[c->cpu] = ev;
        const auto& [kb, mb] = *cbase[c->cpu];
        ++o.cpu_checked;
        bool all = true;
        for (std::size_t i = 0; i < kCols.size(); ++i)
          if (c->k[i] - kb[i] != m[i] - mb[i]) {
            all = false;
            note(o, kNames[i],
                 "event " + std::to_string(ev) + " cpu " + std::to_string(c->cpu) + ": kernel " +
                     std::to_string(c->k[i] - kb[i]) + " model " + std::to_string(m[i] - mb[i]));
          }
        o.cpu_exact += all;
      }
    if (auto it = tat.find(ev); it != tat.end())
      for (const auto* p : it->second) {
        // pid 0 is every CPU's idle task in the kernel (one per CPU, both with pid 0)
        const auto ti = p->tid ? task_index(p->tid) : std::nullopt;
        if (!ti || *ti >= r.tasks.size()) continue;
        const std::array<std::uint64_t, 2> m{r.tasks[*ti].utime, r.tasks[*ti].stime};
        const std::array<std::uint64_t, 2> k{p->k[0], p->k[1]};
        if (!tbase.count(p->tid)) tbase[p->tid] = {k, m};
        const auto& [kb, mb] = tbase[p->tid];
        ++o.task_checked;
        bool all = true;
        for (std::size_t i = 0; i < 2; ++i)
          if (k[i] - kb[i] != m[i] - mb[i]) {
            all = false;
            note(o, kTaskNames[i],
                 "event " + std::to_string(ev) + " task " + std::to_string(p->tid) + ": kernel " +
                     std::to_string(k[i] - kb[i]) + " model " + std::to_string(m[i] - mb[i]));
          }
        o.task_exact += all;
      }
  };
  // Threads that ran again after their release_task(): the trace writes their exit at the final
  // switch, so their times between the two are in the model's group sums and not in the
  // kernel's (__exit_signal() took them at release_task()); group reads in between subtract
  // them. Their model times before every event:
  std::map<std::uint64_t, std::vector<std::array<std::uint64_t, 2>>> dropped;
  for (const auto& d : f.drops) dropped[d.tid].assign(t.value().events.size() + 1, {0, 0});
  sim::RunOptions opt;
  opt.observe = [&](std::size_t i, const sim::RunResult& r) {
    check(i + 1, r);
    for (auto& [tid, v] : dropped)
      if (const auto ti = task_index(tid); ti && *ti < r.tasks.size())
        v[i + 1] = {r.tasks[*ti].utime, r.tasks[*ti].stime};
  };
  sim::RunResult zero;  // before the first event: nothing accounted
  zero.cpus.resize(prog.value().header.ncpus);
  zero.tasks.resize(tasks.size());
  check(0, zero);
  const auto full = sim::run(prog.value(), mcfg, opt);

  // Scaled pairs before each flush: prefix runs (deltas from each task's first checkpoint).
  std::map<std::uint64_t, std::pair<std::array<std::uint64_t, 2>, std::array<std::uint64_t, 2>>> sbase;
  std::map<std::size_t, sim::RunResult> prefix;
  for (const auto& [ev, ps] : tat) {
    if (std::all_of(ps.begin(), ps.end(), [](const TaskPoint* p) { return p->tid == 0; })) continue;
    const auto r = run_prefix(t.value(), ev, mcfg);
    const auto* nr = r.backend_result<model::native::NativeResult>();
    for (const auto* p : ps) {
      const auto ti = p->tid ? task_index(p->tid) : std::nullopt;
      if (!ti) continue;
      std::array<std::uint64_t, 2> m{};
      if (scaled_from_model && nr && *ti < nr->task_scaled.size())
        m = {nr->task_scaled[*ti].utimescaled, nr->task_scaled[*ti].stimescaled};
      else if (*ti < r.tasks.size())
        m = {r.tasks[*ti].utime, r.tasks[*ti].stime};
      const std::array<std::uint64_t, 2> k{p->k[2], p->k[3]};
      if (!sbase.count(p->tid)) sbase[p->tid] = {k, m};
      const auto& [kb, mb] = sbase[p->tid];
      o.kernel_scaled_differs += (k[0] - kb[0]) != (p->k[0] - tbase[p->tid].first[0]);
      ++o.scaled_checked;
      bool all = true;
      for (std::size_t i = 0; i < 2; ++i)
        if (k[i] - kb[i] != m[i] - mb[i]) {
          all = false;
          note(o, kTaskNames[2 + i],
               "event " + std::to_string(ev) + " task " + std::to_string(p->tid) + ": kernel " +
                   std::to_string(k[i] - kb[i]) + " model " + std::to_string(m[i] - mb[i]));
        }
      o.scaled_exact += all;
    }
  }

  // The workload's reads, in the kernel's units, for tasks the trace creates (their times start
  // at 0 in both).
  // Tasks declared at the start: their times then come from their first flush checkpoint
  // (utime=/stime= in the header); their scaled times are not known, so only the unscaled values
  // of their reads are compared. Without them: not compared.
  std::map<std::uint64_t, bool> declared;  // tid -> start times given
  for (const auto& d : t.value().header.tasks) declared[d.tid] = d.utime.has_value();
  // Each read is in the trace twice, at the workload's markers before (id) and after (id + 100000)
  // it. Without a flush of the task in between both give the same value, which must be exact;
  // with one (a tick during the read syscall) the kernel's value must lie between the two (the
  // read happened between them: the times only grow). Likewise a released thread's times are
  // taken at release_task()'s entry for the low end and at its return for the high end.
  // late: the released thread's times taken at release_task()'s return, else at its entry.
  auto model_read = [&](std::uint64_t id, const ReadPoint& rp, bool late,
                        bool* adjusted) -> std::optional<std::array<std::uint64_t, 4>> {
    const sim::ReadResult* mr = nullptr;
    for (const auto& r : full.reads)
      if (r.id == id) mr = &r;
    if (!mr) return std::nullopt;
    std::array<std::uint64_t, 4> m{};
    const bool ticks = rp.kind == "task_stat" || rp.kind == "thread_stat";
    const std::uint64_t unit = ticks ? 10'000'000 : 1000;  // USER_HZ 100 / us
    std::size_t at = 0;
    for (std::size_t i = 0; i < t.value().events.size(); ++i)
      if (t.value().events[i].line == mr->line) at = i;
    std::uint64_t ut = mr->utime, st = mr->stime;
    const bool group_read = rp.kind == "task_stat" || rp.kind == "rusage_self";
    for (const auto& d : f.drops) {
      const auto e = late ? d.to : d.from;
      const auto ti = task_index(d.tid), ri = task_index(rp.tid);
      if (!group_read || !ti || !ri || tasks[*ti].group != tasks[*ri].group || at < e) continue;
      const auto& v = dropped[d.tid];
      if (at >= v.size() || e >= v.size() || (v[at][0] == v[e][0] && v[at][1] == v[e][1])) continue;
      ut -= v[at][0] - v[e][0];
      st -= v[at][1] - v[e][1];
      *adjusted = true;
    }
    m[0] = ut / unit;
    m[1] = st / unit;
    if (rp.kind == "taskstats") {
      // the scaled pair at the read: a run up to and including the read event
      const auto r = run_prefix(t.value(), at + 1, mcfg);
      const auto* nr = r.backend_result<model::native::NativeResult>();
      const auto ti = task_index(rp.tid);
      if (nr && ti && *ti < nr->task_scaled.size()) {
        m[2] = (scaled_from_model ? nr->task_scaled[*ti].utimescaled : r.tasks[*ti].utime) / 1000;
        m[3] = (scaled_from_model ? nr->task_scaled[*ti].stimescaled : r.tasks[*ti].stime) / 1000;
      }
    }
    return m;
  };
  for (const auto& rp : f.rps) {
    const bool decl = declared.count(rp.tid) > 0;
    if (decl && !declared.at(rp.tid)) continue;
    ++o.reads_checked;
    bool adjusted = false;
    const auto lo = model_read(rp.id, rp, false, &adjusted), hi = model_read(rp.id + 100000, rp, true, &adjusted);
    o.reads_adjusted += adjusted;
    if (!lo || !hi) {
      note(o, "read_missing", "read " + std::to_string(rp.id));
      continue;
    }
    const std::size_t n = rp.kind == "taskstats" && !decl ? 4 : 2;
    auto same = [&](const std::array<std::uint64_t, 4>& m) {
      for (std::size_t i = 0; i < n; ++i)
        if (m[i] != rp.v[i]) return false;
      return true;
    };
    if (*lo == *hi && same(*lo)) {
      ++o.reads_exact;
    } else if (*lo != *hi && [&] {
                 for (std::size_t i = 0; i < n; ++i)
                   if (rp.v[i] < (*lo)[i] || rp.v[i] > (*hi)[i]) return false;
                 return true;
               }()) {
      ++o.reads_bounded;
    } else {
      for (std::size_t i = 0; i < n; ++i)
        if ((*lo)[i] != rp.v[i] || (*hi)[i] != rp.v[i])
          note(o, rp.kind + "." + std::to_string(i),
               "read " + std::to_string(rp.id) + " task " + std::to_string(rp.tid) + ": kernel " +
                   std::to_string(rp.v[i]) + " model " + std::to_string((*lo)[i]) + ".." + std::to_string((*hi)[i]));
    }
  }
  // /proc/stat lines: the model's absolute kernel_cpustat is the kernel's at the CPU's first
  // checkpoint plus the model's growth since (ns), printed by nsec_to_clock_t() (USER_HZ 100)
  auto stat_model = [&](const StatPoint& sp, std::size_t ev) -> std::optional<CState> {
    const auto it = stat_at.find(ev);
    if (sp.cpu >= cbase.size() || !cbase[sp.cpu] || *cfirst[sp.cpu] > ev || it == stat_at.end() ||
        sp.cpu >= it->second.size())
      return std::nullopt;
    const auto& [kb, mb] = *cbase[sp.cpu];
    CState v{};
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = (kb[i] + it->second[sp.cpu][i] - mb[i]) / 10'000'000;
    return v;
  };
  const StatPoint* prev_own = nullptr;
  std::vector<StatPoint> sps = f.sps;  // a forked child prints its reads before its parent
  std::sort(sps.begin(), sps.end(), [](const StatPoint& a, const StatPoint& b) { return a.lo < b.lo; });
  for (const auto& sp : sps) {
    if (sp.cpu >= cbase.size() || sp.reader >= cbase.size()) {  // a line the reduction misread: off
      ++o.stat_checked;
      note(o, "proc_stat.cpu",
           "read " + std::to_string(sp.id) + ": cpu " + std::to_string(sp.cpu) + " read on cpu " +
               std::to_string(sp.reader));
      continue;
    }
    const auto lo = stat_model(sp, sp.lo), hi = stat_model(sp, sp.hi);
    if (!lo || !hi) continue;
    ++o.stat_checked;
    bool exact = true, inside = true;
    for (std::size_t j = 0; j < kStatCol.size(); ++j) {
      if (kStatNames[j] == std::string("idle") || kStatNames[j] == std::string("iowait")) continue;
      const auto k = sp.v[j], l = (*lo)[kStatCol[j]], h = (*hi)[kStatCol[j]];
      exact = exact && l == k && h == k;
      if (k < l || k > h) {
        inside = false;
        note(o, std::string("proc_stat.") + kStatNames[j],
             "read " + std::to_string(sp.id) + " cpu " + std::to_string(sp.cpu) + ": kernel " + std::to_string(k) +
                 " model " + std::to_string(l) + ".." + std::to_string(h));
      }
    }
    o.stat_exact += exact;
    o.stat_bounded += !exact && inside;
    if (sp.cpu != sp.reader) continue;
    if (prev_own) {
      const auto a = stat_model(*prev_own, prev_own->lo);
      const std::uint64_t dk = (sp.v[3] + sp.v[4]) - (prev_own->v[3] + prev_own->v[4]);
      const std::uint64_t dm = ((*hi)[5] + (*hi)[6]) - ((*a)[5] + (*a)[6]);
      ++o.idle_pairs;
      o.idle_kernel_ticks += dk;
      o.idle_model_ticks += dm;
      if (dk <= dm + 4)
        ++o.idle_within;
      else
        note(o, "proc_stat.idle+iowait",
             "reads " + std::to_string(prev_own->id) + ".." + std::to_string(sp.id) + " cpu " + std::to_string(sp.cpu) +
                 ": kernel grew " + std::to_string(dk) + " ticks, model native idle " + std::to_string(dm));
    }
    prev_own = &sp;
  }
  return o;
}

std::string summary(const Outcome& o) {
  std::string s = "cpu " + std::to_string(o.cpu_exact) + "/" + std::to_string(o.cpu_checked) + ", task " +
                  std::to_string(o.task_exact) + "/" + std::to_string(o.task_checked) + ", scaled " +
                  std::to_string(o.scaled_exact) + "/" + std::to_string(o.scaled_checked) + ", reads " +
                  std::to_string(o.reads_exact) + "/" + std::to_string(o.reads_checked) + " exact (" +
                  std::to_string(o.reads_bounded) + " within a flush during the read or release_task(), " +
                  std::to_string(o.reads_adjusted) + " without a released thread's later flushes)";
  if (o.stat_checked)
    s += ", /proc/stat lines " + std::to_string(o.stat_exact) + "/" + std::to_string(o.stat_checked) + " exact (" +
         std::to_string(o.stat_bounded) + " within a flush during the read), idle+iowait within the native bound " +
         std::to_string(o.idle_within) + "/" + std::to_string(o.idle_pairs) + " (kernel " +
         std::to_string(o.idle_kernel_ticks) + " ticks, native idle " + std::to_string(o.idle_model_ticks) + ")";
  for (const auto& [k, v] : o.off) s += "; off " + k + ": " + std::to_string(v);
  return s;
}

TEST(ConformanceNative, EveryCheckpointAndReadExact) {
  const auto fs = fixtures();
  ASSERT_FALSE(fs.empty());
  for (const auto& f : fs) {
    ASSERT_FALSE(f.cps.empty() || f.tps.empty() || f.rps.empty()) << f.name << ": a fixture that compares nothing";
    const auto o = compare(f, f.config);
    EXPECT_EQ(o.cpu_checked, f.cps.size()) << f.name;
    EXPECT_GT(o.reads_checked, 0u) << f.name;
    EXPECT_EQ(o.cpu_exact, o.cpu_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.task_exact, o.task_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.scaled_exact, o.scaled_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.reads_exact + o.reads_bounded, o.reads_checked) << f.name << ": " << o.first_off;
    if (!f.sps.empty()) {  // recorded since 6.12: a fixture with /proc/stat lines compares them
      EXPECT_GT(o.stat_checked, 0u) << f.name;
      EXPECT_EQ(o.stat_exact + o.stat_bounded, o.stat_checked) << f.name << ": " << o.first_off;
      EXPECT_GT(o.idle_pairs, 0u) << f.name;
      EXPECT_EQ(o.idle_within, o.idle_pairs) << f.name << ": " << o.first_off;
    }
    // SPURR runs apart from the TB under QEMU: the scaled comparison is not a copy of the unscaled one
    EXPECT_GT(o.kernel_scaled_differs, 0u) << f.name;
    std::printf("%s (%s): %s; kernel scaled != unscaled at %zu task checkpoints\n", f.name.c_str(), f.config.c_str(),
                summary(o).c_str(), o.kernel_scaled_differs);
  }
}

// Negative controls: the same recording under tick accounting (whole ticks at the tick, nothing
// at the hooks) and under 4.9's immediate native accounting (cpustat at every hook, not at the
// flush) must miss the per-CPU checkpoints; scaled = unscaled must miss the scaled pairs.
TEST(ConformanceNative, WrongMechanismOrVersionMisses) {
  const auto fs = fixtures();
  ASSERT_FALSE(fs.empty());
  for (const auto& f : fs) {
    for (const std::string& wrong : {f.version + "-tick-hz250", std::string("4.9-native-steal-hz250")}) {
      const auto o = compare(f, wrong);
      EXPECT_GT(o.cpu_checked, 0u) << f.name;
      EXPECT_LT(o.cpu_exact, o.cpu_checked / 2) << f.name << " replayed as " << wrong;
      std::printf("%s as %s (must miss): %s\n", f.name.c_str(), wrong.c_str(), summary(o).c_str());
    }
    const auto o = compare(f, f.config, false);
    EXPECT_LT(o.scaled_exact, o.scaled_checked) << f.name;
    std::printf("%s with scaled = unscaled (must miss): %s\n", f.name.c_str(), summary(o).c_str());
  }
}

}  // namespace
