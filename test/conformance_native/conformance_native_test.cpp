// Replays native vtime recordings (VIRT_CPU_ACCOUNTING_NATIVE with scaled cputime, ppc64le
// POWER9 under QEMU, kernels built from Debian's sources) and compares, in kernel units:
// each CPU's kernel_cpustat before every accounting hook (ns, deltas from the CPU's first
// checkpoint: the trace starts mid-run), each task's utime/stime/utimescaled/stimescaled before
// every flush (ns, deltas from its first checkpoint) and the workload's own reads
// (/proc/PID/stat, per-thread stat, getrusage, taskstats with the scaled pair). The reads
// fixtures (reads/, native-reduce.py --reads): unmodified programs (LTP, stress-ng), every
// CPU-time read found at its syscall and compared, with pinned counts (reads/counts.txt).
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

// A read of another process's /proc/PID/stat (F), of the reaped children's times (K), a wait4()
// reap or stop/continue report with the child's rusage (W), a read not compared (U).
struct ForeignPoint {
  std::uint64_t id, tid;
  std::array<std::uint64_t, 2> v;
};
struct ChildrenPoint {
  std::uint64_t id, tid;
  std::string unit;
  std::array<std::uint64_t, 2> v;
};
struct WaitPoint {
  std::uint64_t anchor, reaper, child;
  bool rusage, has_values;
  std::array<std::uint64_t, 2> v;
};

struct Fixture {
  std::string name, text, config, version;
  std::vector<ForeignPoint> fps;
  std::vector<ChildrenPoint> kps;
  std::vector<WaitPoint> wps;
  std::vector<std::string> ups;
  std::vector<CpuPoint> cps;
  std::vector<TaskPoint> tps;
  std::vector<ReadPoint> rps;
  std::vector<StatPoint> sps;
  struct Drop {
    std::size_t from, to;  // release_task() entry and return (__exit_signal() in between)
    std::uint64_t tid;
  };
  std::vector<Drop> drops;
  // A thread released by another task (its ptracer) after its final switch: group reads from
  // the anchor read event on add the model's flush of the thread since its exit event.
  struct Add {
    std::size_t exit;
    std::uint64_t tid, anchor;
  };
  std::vector<Add> adds;
};

std::vector<Fixture> fixtures(const std::string& root = KACCT_NATIVE_FIXTURES) {
  std::vector<Fixture> out;
  for (const auto& d : conformance::fixture_dirs(root)) {
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
      } else if (tag == "F") {
        ForeignPoint p{};
        s >> p.id >> p.tid >> p.v[0] >> p.v[1];
        f.fps.push_back(p);
      } else if (tag == "K") {
        ChildrenPoint p{};
        s >> p.id >> p.tid >> p.unit >> p.v[0] >> p.v[1];
        f.kps.push_back(p);
      } else if (tag == "W") {
        WaitPoint p{};
        s >> p.anchor >> p.reaper >> p.child >> p.rusage;
        p.has_values = bool(s >> p.v[0] >> p.v[1]);
        f.wps.push_back(p);
      } else if (tag == "A") {
        Fixture::Add a{};
        s >> a.exit >> a.tid >> a.anchor;
        f.adds.push_back(a);
      } else if (tag == "U") {
        f.ups.push_back(line);
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
      reads_adjusted = 0,         // group reads adjusted for a released thread (D and A lines)
      reads_skipped = 0,          // reads of a task declared without start times: not compared
      clocks_checked = 0, clocks_exact = 0;  // of the reads: CPU clocks (sum_exec_runtime, ns)
  // the reads fixtures: another process's stat (exact or between the model's at sys_enter and
  // sys_exit), the reaped children's times, wait4()'s rusage of the child (exact)
  std::size_t foreign_checked = 0, foreign_exact = 0, foreign_bounded = 0, children_checked = 0, children_exact = 0,
              wait_checked = 0, wait_exact = 0, reaps_placed = 0, reaps_made = 0;
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

// The reads fixtures' reaps (W), foreign group reads (F, at both anchors) and children reads (K,
// at the sys_exit anchor) into the program, before the anchor read events the reducer wrote
// (Program::reaps, foreign_reads, children_reads; what the perf oracle places from its
// conversion). False: an anchor or task is missing.
bool attach(sim::Program& p, const Fixture& f, const trace::Trace& t) {
  std::map<std::uint64_t, std::uint32_t> at;  // read id -> event index
  for (std::size_t i = 0; i < t.events.size(); ++i)
    if (t.events[i].kind == trace::Kind::Read) at[t.events[i].read_id] = std::uint32_t(i);
  std::map<std::uint64_t, std::uint32_t> dense;
  for (std::size_t i = p.header.ncpus; i < p.tasks.size(); ++i) dense[p.tasks[i].tid] = std::uint32_t(i);
  bool ok = true;
  auto event = [&](std::uint64_t id) {
    const auto it = at.find(id);
    ok = ok && it != at.end();
    return it == at.end() ? 0u : it->second;
  };
  auto task = [&](std::uint64_t tid) {
    const auto it = dense.find(tid);
    ok = ok && it != dense.end();
    return it == dense.end() ? 0u : it->second;
  };
  for (const auto& w : f.wps)
    p.reaps.push_back({event(w.anchor), task(w.reaper), task(w.child), w.anchor, w.rusage, true});
  for (const auto& x : f.fps)
    for (const auto id : {x.id, x.id + 100000}) p.foreign_reads.push_back({event(id), task(x.tid), id});
  for (const auto& k : f.kps) p.children_reads.push_back({event(k.id + 100000), task(k.tid), k.id});
  auto by_event = [](const auto& a, const auto& b) { return a.event < b.event; };
  std::stable_sort(p.reaps.begin(), p.reaps.end(), by_event);
  std::stable_sort(p.foreign_reads.begin(), p.foreign_reads.end(), by_event);
  std::stable_sort(p.children_reads.begin(), p.children_reads.end(), by_event);
  return ok;
}

// expect_scaled: compare the scaled pair with the model's scaled values (false: with its
// unscaled utime/stime, the negative control).
// scaled_ends_only: the scaled pairs at each task's first and last flush only (the reads
// fixtures: one prefix run per checkpoint event is quadratic in their 10^4-10^5 events).
Outcome compare(const Fixture& f, const std::string& config, bool scaled_from_model = true,
                bool scaled_ends_only = false) {
  Outcome o;
  auto t = trace::load(f.text);
  EXPECT_TRUE(t.ok()) << f.name << ": " << (t.ok() ? "" : t.error().to_string());
  if (!t.ok()) return o;
  auto prog = sim::compile(t.value());
  EXPECT_TRUE(prog.ok());
  if (prog.ok() && !attach(prog.value(), f, t.value())) {
    note(o, "placement", "a reads fixture's anchor or task is not in the trace");
    return o;
  }
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
  for (const auto& a : f.adds) dropped[a.tid].assign(t.value().events.size() + 1, {0, 0});
  std::map<std::uint64_t, std::size_t> read_at;  // read id -> event index
  for (std::size_t i = 0; i < t.value().events.size(); ++i)
    if (t.value().events[i].kind == trace::Kind::Read) read_at[t.value().events[i].read_id] = i;
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
  std::set<std::size_t> ends;
  if (scaled_ends_only) {
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> span;
    for (const auto& p : f.tps) {
      auto [it, fresh] = span.try_emplace(p.tid, p.event, p.event);
      it->second.first = std::min(it->second.first, p.event);
      it->second.second = std::max(it->second.second, p.event);
    }
    for (const auto& [tid, e] : span) ends.insert(e.first), ends.insert(e.second);
  }
  for (const auto& [ev, ps] : tat) {
    if (std::all_of(ps.begin(), ps.end(), [](const TaskPoint* p) { return p->tid == 0; })) continue;
    if (scaled_ends_only && !ends.count(ev)) continue;
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
    if (rp.kind == "process_cputime" || rp.kind == "thread_cputime") {  // sum_exec_runtime (ns)
      m[0] = mr->rtime;
      return m;
    }
    const bool ticks = rp.kind == "task_stat" || rp.kind == "thread_stat" || rp.kind == "times";
    const std::uint64_t unit = ticks ? 10'000'000 : 1000;  // USER_HZ 100 / us
    std::size_t at = 0;
    for (std::size_t i = 0; i < t.value().events.size(); ++i)
      if (t.value().events[i].line == mr->line) at = i;
    std::uint64_t ut = mr->utime, st = mr->stime;
    const bool group_read = rp.kind == "task_stat" || rp.kind == "rusage_self" || rp.kind == "times";
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
    for (const auto& a : f.adds) {
      const auto ti = task_index(a.tid), ri = task_index(rp.tid);
      const auto it = read_at.find(a.anchor);
      if (!group_read || !ti || !ri || tasks[*ti].group != tasks[*ri].group || it == read_at.end() || at < it->second)
        continue;
      const auto& v = dropped[a.tid];
      ut += v[it->second][0] - v[a.exit][0];
      st += v[it->second][1] - v[a.exit][1];
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
    if (decl && !declared.at(rp.tid)) {
      ++o.reads_skipped;
      continue;
    }
    ++o.reads_checked;
    bool adjusted = false;
    const auto lo = model_read(rp.id, rp, false, &adjusted), hi = model_read(rp.id + 100000, rp, true, &adjusted);
    o.reads_adjusted += adjusted;
    if (!lo || !hi) {
      note(o, "read_missing", "read " + std::to_string(rp.id));
      continue;
    }
    const bool clock = rp.kind == "process_cputime" || rp.kind == "thread_cputime";  // one value
    const std::size_t n = clock ? 1 : rp.kind == "taskstats" && !decl ? 4 : 2;
    auto same = [&](const std::array<std::uint64_t, 4>& m) {
      for (std::size_t i = 0; i < n; ++i)
        if (m[i] != rp.v[i]) return false;
      return true;
    };
    o.clocks_checked += clock;
    if (*lo == *hi && same(*lo)) {
      ++o.reads_exact;
      o.clocks_exact += clock;
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
  // The reads fixtures: another process's stat (ticks) at sys_enter and sys_exit, the children's
  // times and wait4()'s rusage (the child's group plus its reaped children, us) at sys_exit.
  for (const auto& x : f.fps) {
    ++o.foreign_checked;
    std::optional<std::array<std::uint64_t, 2>> lo, hi;
    for (const auto& r : full.foreign_reads) {
      const std::array<std::uint64_t, 2> v{r.utime / 10'000'000, r.stime / 10'000'000};
      if (r.id == x.id) lo = v;
      if (r.id == x.id + 100000) hi = v;
    }
    if (!lo || !hi) {
      note(o, "foreign_missing", "read " + std::to_string(x.id));
      continue;
    }
    if (*lo == *hi && *lo == x.v) {
      ++o.foreign_exact;
    } else if (x.v[0] >= (*lo)[0] && x.v[0] <= (*hi)[0] && x.v[1] >= (*lo)[1] && x.v[1] <= (*hi)[1] && *lo != *hi) {
      ++o.foreign_bounded;
    } else {
      note(o, "foreign_stat",
           "read " + std::to_string(x.id) + " of " + std::to_string(x.tid) + ": kernel " + std::to_string(x.v[0]) +
               "/" + std::to_string(x.v[1]) + " model " + std::to_string((*lo)[0]) + "/" + std::to_string((*lo)[1]) +
               ".." + std::to_string((*hi)[0]) + "/" + std::to_string((*hi)[1]));
    }
  }
  for (const auto& k : f.kps) {
    ++o.children_checked;
    const std::uint64_t unit = k.unit == "ticks" ? 10'000'000 : 1000;
    const auto r = std::find_if(full.children_reads.begin(), full.children_reads.end(),
                                [&](const sim::ChildrenResult& c) { return c.id == k.id; });
    if (r == full.children_reads.end()) {
      note(o, "children_missing", "read " + std::to_string(k.id));
      continue;
    }
    const std::array<std::uint64_t, 2> m{r->utime / unit, r->stime / unit};
    if (m == k.v)
      ++o.children_exact;
    else
      note(o, "children." + k.unit,
           "read " + std::to_string(k.id) + " of " + std::to_string(k.tid) + ": kernel " + std::to_string(k.v[0]) +
               "/" + std::to_string(k.v[1]) + " model " + std::to_string(m[0]) + "/" + std::to_string(m[1]));
  }
  for (const auto& w : f.wps) {
    const auto r =
        std::find_if(full.reaps.begin(), full.reaps.end(), [&](const sim::ReapResult& x) { return x.id == w.anchor; });
    o.reaps_placed += 1;
    o.reaps_made += r != full.reaps.end() && r->reaped;
    if (!w.has_values) continue;
    ++o.wait_checked;
    if (r == full.reaps.end() || r->child_tid != w.child) {
      note(o, "wait4_missing", "wait4 at " + std::to_string(w.anchor) + " of child " + std::to_string(w.child));
      continue;
    }
    const std::array<std::uint64_t, 2> m{(r->utime + r->children_utime) / 1000, (r->stime + r->children_stime) / 1000};
    if (m == w.v)
      ++o.wait_exact;
    else
      note(o, "wait4_rusage",
           "wait4 at " + std::to_string(w.anchor) + " of child " + std::to_string(w.child) + ": kernel " +
               std::to_string(w.v[0]) + "/" + std::to_string(w.v[1]) + " model " + std::to_string(m[0]) + "/" +
               std::to_string(m[1]));
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
                  std::to_string(o.reads_adjusted) + " adjusted for a thread's flushes after its exit event)";
  if (o.clocks_checked)
    s += ", CPU clocks " + std::to_string(o.clocks_exact) + "/" + std::to_string(o.clocks_checked) + " exact";
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

namespace {

// The reads fixtures: found (every recorded CPU-time read), exact, within the flush bound (a
// flush between the read's sys_enter and sys_exit), off, unverifiable (not compared: U lines).
struct ReadCounts {
  std::size_t found = 0, exact = 0, bounded = 0, off = 0, unverifiable = 0;
  bool operator==(const ReadCounts&) const = default;
};
ReadCounts read_counts(const Fixture& f, const Outcome& o) {
  ReadCounts c;
  c.unverifiable = f.ups.size();
  std::size_t waits = 0;
  for (const auto& w : f.wps) waits += w.has_values;
  c.found = f.rps.size() + f.fps.size() + f.kps.size() + waits + c.unverifiable;
  c.exact = o.reads_exact + o.foreign_exact + o.children_exact + o.wait_exact;
  c.bounded = o.reads_bounded + o.foreign_bounded;
  c.off = c.found - c.unverifiable - c.exact - c.bounded;
  return c;
}
std::string str(const ReadCounts& c) {
  return std::to_string(c.found) + " found, " + std::to_string(c.exact) + " exact, " + std::to_string(c.bounded) +
         " within the flush bound, " + std::to_string(c.off) + " off, " + std::to_string(c.unverifiable) +
         " unverifiable";
}
// reads/counts.txt: "FIXTURE FOUND EXACT BOUNDED OFF UNVERIFIABLE" per fixture
std::map<std::string, ReadCounts> pinned() {
  std::map<std::string, ReadCounts> out;
  std::ifstream in(std::string(KACCT_NATIVE_READS) + "/counts.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name;
    ReadCounts c;
    s >> name >> c.found >> c.exact >> c.bounded >> c.off >> c.unverifiable;
    out[name] = c;
  }
  return out;
}

TEST(ConformanceNativeReads, EveryReadFoundAndCompared) {
  const auto fs = fixtures(KACCT_NATIVE_READS);
  const auto pin = pinned();
  ASSERT_FALSE(fs.empty());
  ASSERT_EQ(pin.size(), fs.size()) << "reads/counts.txt must name every fixture";
  for (const auto& f : fs) {
    ASSERT_TRUE(pin.count(f.name)) << f.name << " is not in reads/counts.txt";
    const auto o = compare(f, f.config, true, true);
    const auto c = read_counts(f, o);
    // every CPU and task checkpoint exact as for native-work's recordings
    EXPECT_EQ(o.cpu_checked, f.cps.size()) << f.name;
    EXPECT_EQ(o.cpu_exact, o.cpu_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.task_exact, o.task_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.scaled_exact, o.scaled_checked) << f.name << ": " << o.first_off;
    EXPECT_EQ(o.reads_skipped, 0u) << f.name;
    EXPECT_EQ(o.reads_checked, f.rps.size()) << f.name;
    // every CPU clock here was placed at its own runtime update (meta: clock_bounded=0), both
    // ids at one point: exact or off, never within a bound
    EXPECT_EQ(o.clocks_exact, o.clocks_checked) << f.name << ": " << o.first_off;
    // a fixture whose every read failed (pinned so) still compares its checkpoints
    EXPECT_GT(o.cpu_checked, 0u) << f.name << ": nothing compared";
    EXPECT_GT(c.found, 0u) << f.name << ": no read found";
    EXPECT_EQ(c, pin.at(f.name)) << f.name << ": " << str(c) << "; first off: " << o.first_off;
    std::printf("%s (%s): %s (%zu R, %zu F, %zu K, %zu W with rusage; %zu reaps placed, %zu reaped); %s\n",
                f.name.c_str(), f.config.c_str(), str(c).c_str(), f.rps.size(), f.fps.size(), f.kps.size(),
                std::size_t(std::count_if(f.wps.begin(), f.wps.end(), [](const WaitPoint& w) { return w.has_values; })),
                o.reaps_placed, o.reaps_made, summary(o).c_str());
  }
}

// Negative control: the same recordings under tick accounting must miss reads (and CPU
// checkpoints); the model's reads are not the kernel's by construction.
TEST(ConformanceNativeReads, TickAccountingMisses) {
  const auto fs = fixtures(KACCT_NATIVE_READS);
  ASSERT_FALSE(fs.empty());
  std::size_t found = 0, exact = 0;
  for (const auto& f : fs) {
    const std::string wrong = f.version + "-tick-hz250";
    const auto o = compare(f, wrong, true, true);
    const auto c = read_counts(f, o);
    EXPECT_LT(o.cpu_exact, o.cpu_checked / 2) << f.name << " replayed as " << wrong;
    found += c.found - c.unverifiable;
    exact += c.exact;
    std::printf("%s as %s (must miss): %s; %s\n", f.name.c_str(), wrong.c_str(), str(c).c_str(), summary(o).c_str());
  }
  EXPECT_LT(exact, found / 2);
}

}  // namespace

namespace {

// The CPU clocks' control: each CPU-clock read is placed right after the reader's own runtime
// update (task_sched_runtime()'s update_curr()); with that update's ns set to 0 (the value before
// it) every clock read must be off.
TEST(ConformanceNativeReads, CpuClocksNeedTheReadsOwnUpdate) {
  std::size_t clocks = 0;
  for (auto f : fixtures(KACCT_NATIVE_READS)) {
    std::istringstream in(f.text);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::size_t zeroed = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const auto& l = lines[i];
      if (l.find(" read kind=thread_cputime ") == std::string::npos &&
          l.find(" read kind=process_cputime ") == std::string::npos)
        continue;
      const auto id = std::stoull(l.substr(l.find(" id=") + 4));
      if (id >= 100000) continue;  // the same point as id
      auto& u = lines[i - 1];
      const auto ns = u.find(" ns=");
      ASSERT_NE(u.find(" runtime tid="), std::string::npos)
          << f.name << ": read " << id << " not after a runtime update";
      u = u.substr(0, ns) + " ns=0" + u.substr(u.find(' ', ns + 1));
      ++zeroed;
    }
    if (!zeroed) continue;
    f.text.clear();
    for (const auto& l : lines) f.text += l + "\n";
    const auto o = compare(f, f.config, true, true);
    EXPECT_EQ(o.clocks_checked, zeroed) << f.name;
    EXPECT_EQ(o.clocks_exact, 0u) << f.name;
    auto off = [&](const std::string& k) { return o.off.count(k) ? o.off.at(k) : std::size_t(0); };
    EXPECT_EQ(off("process_cputime.0") + off("thread_cputime.0"), zeroed) << f.name;
    clocks += o.clocks_checked;
    std::printf("%s without the reads' own runtime updates (must miss): %s\n", f.name.c_str(), summary(o).c_str());
  }
  EXPECT_GT(clocks, 0u) << "no reads fixture has a CPU-clock read";
}

// The A lines' control: stress-ng --pthread's threads were released by strace after their final
// switch; without adding their final flush, the last getrusage(RUSAGE_SELF) must miss.
TEST(ConformanceNativeReads, PtracerReleaseNeedsTheFinalFlush) {
  bool seen = false;
  for (auto f : fixtures(KACCT_NATIVE_READS)) {
    if (f.adds.empty()) continue;
    seen = true;
    const auto with = compare(f, f.config, true, true);
    f.adds.clear();
    const auto without = compare(f, f.config, true, true);
    EXPECT_EQ(with.reads_exact, with.reads_checked) << f.name << ": " << with.first_off;
    EXPECT_LT(without.reads_exact, without.reads_checked) << f.name;
    std::printf("%s without the A lines (must miss): %s\n", f.name.c_str(), summary(without).c_str());
  }
  EXPECT_TRUE(seen) << "no reads fixture has a thread released by another task";
}

}  // namespace
