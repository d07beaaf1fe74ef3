// Replays recorded irq-time traces (tick accounting + IRQ_TIME_ACCOUNTING, amd64 and ppc64le, kernels built
// from Debian's sources) and compares the model's kcpustat and irqtime.tick_delta with the
// kernel's at every checkpoint: the values kprobes read at each hardirq/softirq boundary and
// each tick, in ns. Deltas from each CPU's first checkpoint (the trace starts mid-run); the
// pending tick_delta is absolute (the reducer seeds it). Fixtures with task-checkpoints.xz also
// compare the ticked task's utime/stime before each tick (growth since its first checkpoint).
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "arch/patches.hpp"
#include "arch/registry.hpp"
#include "arch/version.hpp"
#include "model/gen/result.hpp"
#include "model/psi/script.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"
#include "xz.hpp"
#include "../conformance/fixture_dirs.hpp"

using namespace kacct;

namespace {

constexpr std::array<model::Usage, 6> kCols = {model::USER,    model::NICE, model::SYSTEM,
                                               model::SOFTIRQ, model::IRQ,  model::IDLE};
constexpr std::array<const char*, 7> kNames = {"user", "nice", "system", "softirq", "irq", "idle", "tick_delta"};

struct Checkpoint {
  std::size_t event;
  std::uint32_t cpu;
  std::array<std::uint64_t, 7> k;  // kCols..., tick_delta
};
// The ticked task's utime/stime before a tick (recordings whose tick probes fetched the task).
struct TaskCheckpoint {
  std::size_t event;
  std::uint32_t cpu;
  std::uint64_t tid, utime, stime;
};
// Gen vtime recordings: the task's struct vtime before each vtime hook and switch on the nohz_full
// CPU (tid 0: that CPU's idle task; starttime on the trace's clock, utime/stime residues).
struct VtimeCheckpoint {
  std::size_t event;
  std::uint32_t cpu;
  std::uint64_t tid, starttime, utime, stime;
};
struct Fixture {
  std::string name, text, config;
  std::vector<Checkpoint> cps;
  std::vector<TaskCheckpoint> task_cps;
  std::vector<VtimeCheckpoint> vtime_cps;
  std::optional<std::uint32_t> nohz_full;  // gen vtime recordings: the nohz_full CPU (meta)
};

Fixture load_fixture(const std::filesystem::path& d) {
  Fixture f;
  f.name = d.filename();
  f.config = conformance::meta_value(d, "config");
  f.text = cli::read_input_maybe_xz((d / "trace.xz").string());
  std::istringstream c(cli::read_input_maybe_xz((d / "checkpoints.xz").string()));
  for (std::string line; std::getline(c, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Checkpoint p{};
    s >> p.event >> p.cpu;
    for (auto& v : p.k) s >> v;
    f.cps.push_back(p);
  }
  if (const auto n = conformance::meta_value(d, "nohz_full"); !n.empty()) f.nohz_full = std::stoul(n);
  if (std::filesystem::exists(d / "vtime-checkpoints.xz")) {
    std::istringstream vc(cli::read_input_maybe_xz((d / "vtime-checkpoints.xz").string()));
    for (std::string line; std::getline(vc, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream s(line);
      VtimeCheckpoint p{};
      s >> p.event >> p.cpu >> p.tid >> p.starttime >> p.utime >> p.stime;
      f.vtime_cps.push_back(p);
    }
  }
  if (std::filesystem::exists(d / "task-checkpoints.xz")) {
    std::istringstream tc(cli::read_input_maybe_xz((d / "task-checkpoints.xz").string()));
    for (std::string line; std::getline(tc, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream s(line);
      TaskCheckpoint p{};
      s >> p.event >> p.cpu >> p.tid >> p.utime >> p.stime;
      f.task_cps.push_back(p);
    }
  }
  return f;
}
std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (const auto& d : conformance::fixture_dirs(KACCT_IRQ_FIXTURES)) out.push_back(load_fixture(d));
  return out;
}

struct Outcome {
  std::size_t checked = 0, exact = 0;
  std::map<std::string, std::size_t> off;  // per column
  std::string first_off;
  std::size_t task_checked = 0, task_exact = 0;  // the ticked task's utime and stime
  std::string task_first_off;
  std::size_t nohz_checked = 0, nohz_exact = 0;  // the kcpustat checkpoints of the nohz_full CPU
};

// Model state before each event (the state after the previous one), per CPU: kcpustat columns
// and tick_delta.
Outcome compare(const Fixture& f, const std::string& config) {
  auto t = trace::load(f.text);
  EXPECT_TRUE(t.ok()) << f.name << ": " << (t.ok() ? "" : t.error().message);
  if (!t.ok()) return {};
  auto prog = sim::compile(t.value());
  EXPECT_TRUE(prog.ok());
  const auto cpu = arch::find_cpu(t.value().header.cpu_model);  // x86-64 or POWER9
  const auto cfg = arch::find_config(config);
  EXPECT_TRUE(cpu && cfg) << config;
  if (!prog.ok() || !cpu || !cfg) return {};
  std::map<std::size_t, std::vector<const Checkpoint*>> at;
  for (const auto& c : f.cps) at[c.event].push_back(&c);
  using State = std::array<std::uint64_t, 7>;
  std::vector<State> before(prog.value().header.ncpus);
  auto snap = [](const sim::RunResult& r, std::uint32_t c) {
    State s{};
    for (std::size_t i = 0; i < kCols.size(); ++i) s[i] = r.cpus[c].cpustat[kCols[i]];
    s[6] = r.cpus[c].irqtime.tick_delta;
    return s;
  };
  std::vector<std::optional<std::pair<State, State>>> base(before.size());  // kernel, model
  Outcome o;
  auto check = [&](std::size_t ev) {
    auto it = at.find(ev);
    if (it == at.end()) return;
    for (const auto* c : it->second) {
      const State& m = before[c->cpu];
      if (!base[c->cpu]) base[c->cpu] = {c->k, m};
      const auto& [kb, mb] = *base[c->cpu];
      ++o.checked;
      bool all = true;
      for (std::size_t i = 0; i < 7; ++i) {
        const std::uint64_t kv = i == 6 ? c->k[i] : c->k[i] - kb[i];
        const std::uint64_t mv = i == 6 ? m[i] : m[i] - mb[i];
        if (kv != mv) {
          all = false;
          ++o.off[kNames[i]];
          if (o.first_off.empty())
            o.first_off = "event " + std::to_string(ev) + " cpu " + std::to_string(c->cpu) + " " + kNames[i] +
                          ": kernel " + std::to_string(kv) + " model " + std::to_string(mv);
        }
      }
      o.exact += all;
      if (f.nohz_full && c->cpu == *f.nohz_full) {
        ++o.nohz_checked;
        o.nohz_exact += all;
      }
    }
  };
  // Task checkpoints: growth of the task's utime/stime since its first checkpoint (the trace
  // starts mid-run), kernel against model; trace task ids are the kernel's pids.
  std::map<std::size_t, std::vector<const TaskCheckpoint*>> task_at;
  for (const auto& c : f.task_cps) task_at[c.event].push_back(&c);
  std::map<std::uint64_t, std::uint32_t> index_of;
  const auto& tasks = prog.value().tasks;
  for (std::uint32_t i = prog.value().header.ncpus; i < tasks.size(); ++i) index_of[tasks[i].tid] = i;
  std::map<std::uint64_t, std::array<std::uint64_t, 4>> task_base;  // kernel u, s; model u, s
  auto check_tasks = [&](std::size_t ev, const sim::RunResult& r) {
    auto it = task_at.find(ev);
    if (it == task_at.end()) return;
    for (const auto* c : it->second) {
      ++o.task_checked;
      const auto idx = index_of.find(c->tid);
      if (idx == index_of.end() || idx->second >= r.tasks.size()) {
        if (o.task_first_off.empty())
          o.task_first_off = "event " + std::to_string(ev) + ": no task " + std::to_string(c->tid);
        continue;
      }
      const std::uint64_t mu = r.tasks[idx->second].utime, ms = r.tasks[idx->second].stime;
      const auto& b =
          task_base.try_emplace(c->tid, std::array<std::uint64_t, 4>{c->utime, c->stime, mu, ms}).first->second;
      const bool ok = c->utime - b[0] == mu - b[2] && c->stime - b[1] == ms - b[3];
      o.task_exact += ok;
      if (!ok && o.task_first_off.empty())
        o.task_first_off = "event " + std::to_string(ev) + " task " + std::to_string(c->tid) + ": kernel utime+" +
                           std::to_string(c->utime - b[0]) + " stime+" + std::to_string(c->stime - b[1]) +
                           ", model utime+" + std::to_string(mu - b[2]) + " stime+" + std::to_string(ms - b[3]);
    }
  };
  sim::RunOptions opt;
  opt.observe = [&](std::size_t i, const sim::RunResult& r) {
    // state before event i+1 on every CPU = state after event i
    for (std::uint32_t c = 0; c < before.size(); ++c) before[c] = snap(r, c);
    check(i + 1);
    check_tasks(i + 1, r);
  };
  check(0);
  auto mcfg = sim::model_cfg(*cpu, *cfg);
  // vtime only on the recording's nohz_full CPU; the other keeps tick accounting
  if (f.nohz_full && cfg->acct == arch::Accounting::Gen) mcfg.gen.nohz_full = std::uint64_t{1} << *f.nohz_full;
  sim::run(prog.value(), mcfg, opt);
  return o;
}

// The model's struct vtime before each vtime checkpoint, absolute (the converter declares each
// task's residues as the gen CPU first found them). sim::run's observer sees no backend state, so
// the trace runs as a LiveRun cut before every checkpoint and reads backend_now() there.
struct VtimeOutcome {
  std::size_t checked = 0, exact = 0;
  std::string first_off;
};
VtimeOutcome compare_vtime(const Fixture& f, const std::string& config) {
  VtimeOutcome o;
  auto t = trace::load(f.text);
  const auto cpu = arch::find_cpu("x86-64");
  const auto cfg = arch::find_config(config);
  if (!t.ok() || !cpu || !cfg || !f.nohz_full) return o;
  auto mcfg = sim::model_cfg(*cpu, *cfg);
  if (cfg->acct == arch::Accounting::Gen) mcfg.gen.nohz_full = std::uint64_t{1} << *f.nohz_full;
  std::map<std::size_t, std::vector<const VtimeCheckpoint*>> at;
  for (const auto& c : f.vtime_cps) at[c.event].push_back(&c);
  sim::Compiler comp(t.value().header);
  const sim::RunOptions ro;
  sim::LiveRun run(comp.program(), mcfg, ro);
  const auto& events = t.value().events;
  for (std::size_t i = 0; i <= events.size(); ++i) {
    if (const auto it = at.find(i); it != at.end()) {
      run.advance();
      comp.next_chunk();
      const auto br = run.backend_now();
      const auto* g = std::get_if<model::GenResult>(&br);
      const auto& tasks = comp.program().tasks;
      for (const auto* c : it->second) {
        ++o.checked;
        std::optional<std::size_t> idx;
        if (c->tid == 0) idx = c->cpu;
        for (std::size_t k = comp.program().header.ncpus; !idx && k < tasks.size(); ++k)
          if (tasks[k].tid == c->tid) idx = k;
        std::string why;
        if (!g || !idx || *idx >= g->vtime.size()) {
          why = "no model vtime for task " + std::to_string(c->tid);
        } else if (const auto& v = g->vtime[*idx];
                   v.starttime != c->starttime || v.utime != c->utime || v.stime != c->stime) {
          why = "task " + std::to_string(c->tid) + ": kernel starttime " + std::to_string(c->starttime) + " utime " +
                std::to_string(c->utime) + " stime " + std::to_string(c->stime) + ", model " +
                std::to_string(v.starttime) + " " + std::to_string(v.utime) + " " + std::to_string(v.stime);
        }
        o.exact += why.empty();
        if (!why.empty() && o.first_off.empty()) o.first_off = "event " + std::to_string(i) + " " + why;
      }
    }
    if (i < events.size() && comp.add(events[i])) return o;  // the trace compiled above: not reached
  }
  return o;
}

TEST(ConformanceIrq, EveryCheckpointExact) {
  const auto fs = fixtures();
  ASSERT_FALSE(fs.empty());
  std::size_t with_tasks = 0;
  for (const auto& f : fs) {
    ASSERT_FALSE(f.cps.empty()) << f.name << ": a fixture with no checkpoint compares nothing";
    const auto o = compare(f, f.config);
    EXPECT_EQ(o.checked, f.cps.size()) << f.name;
    EXPECT_EQ(o.exact, o.checked) << f.name << ": first off: " << o.first_off;
    std::printf("%s (%s): %zu/%zu checkpoints exact\n", f.name.c_str(), f.config.c_str(), o.exact, o.checked);
    EXPECT_EQ(o.task_checked, f.task_cps.size()) << f.name;
    EXPECT_EQ(o.task_exact, o.task_checked) << f.name << ": first off: " << o.task_first_off;
    if (!f.task_cps.empty())
      std::printf("%s: %zu/%zu task checkpoints (utime, stime) exact\n", f.name.c_str(), o.task_exact, o.task_checked);
    with_tasks += !f.task_cps.empty();
    if (f.nohz_full) {
      EXPECT_GT(o.nohz_checked, 0u) << f.name;
      ASSERT_FALSE(f.vtime_cps.empty()) << f.name << ": a gen recording without vtime checkpoints";
      const auto v = compare_vtime(f, f.config);
      EXPECT_EQ(v.checked, f.vtime_cps.size()) << f.name;
      EXPECT_EQ(v.exact, v.checked) << f.name << ": first off: " << v.first_off;
      std::printf("%s: nohz_full CPU %u: %zu/%zu kcpustat checkpoints, %zu/%zu vtime checkpoints exact\n",
                  f.name.c_str(), *f.nohz_full, o.nohz_exact, o.nohz_checked, v.exact, v.checked);
    }
  }
  // the 6.12.118 recordings fetched the ticked task's times: task growth is compared somewhere
  EXPECT_GT(with_tasks, 0u) << "no fixture with task-checkpoints.xz: task times compared nowhere";
}

// The converter's gen path on a hand-written recording (handwritten/gen-irqtime/ftrace.txt, whose
// header derives the kernel's struct vtime at each hook from 6.12 cputime.c; reduce_gen_test.py
// checks the reduction): the model must give the same vtime at every hook, and without irq time
// (account_other_time() takes nothing) must not.
TEST(ConformanceIrq, HandwrittenGenVtimeWithIrqTime) {
  const auto f = load_fixture(std::filesystem::path(KACCT_IRQ_HANDWRITTEN) / "gen-irqtime");
  ASSERT_TRUE(f.nohz_full);
  ASSERT_EQ(f.vtime_cps.size(), 5u);
  const auto v = compare_vtime(f, f.config);
  EXPECT_EQ(v.checked, 5u);
  EXPECT_EQ(v.exact, 5u) << v.first_off;
  std::string plain = f.config;
  plain.erase(plain.find("-irqtime"), 8);
  const auto w = compare_vtime(f, plain);
  EXPECT_EQ(w.checked, 5u);
  EXPECT_LT(w.exact, w.checked) << "as " << plain;
  std::printf("handwritten gen-irqtime: %zu/%zu exact; as %s %zu/%zu (must miss: %s)\n", v.exact, v.checked,
              plain.c_str(), w.exact, w.checked, w.first_off.c_str());
}

// Negative controls: without irq time accounting (plain tick) the ticks take whole TICK_NSECs and
// no irq/softirq column moves; must miss.
TEST(ConformanceIrq, WrongMechanismMisses) {
  const auto fs = fixtures();
  ASSERT_FALSE(fs.empty());
  for (const auto& f : fs) {
    std::string plain = f.config;
    ASSERT_NE(plain.find("-irqtime"), std::string::npos) << f.name << ": config " << plain;
    plain.erase(plain.find("-irqtime"), 8);
    const auto o = compare(f, plain);
    EXPECT_GT(o.checked, 0u) << f.name;
    EXPECT_LT(o.exact, o.checked / 2) << f.name << " replayed as " << plain;
    std::printf("%s as %s: %zu/%zu exact (must miss)\n", f.name.c_str(), plain.c_str(), o.exact, o.checked);
    if (!f.task_cps.empty()) {  // whole TICK_NSECs to the task instead of what irq time left
      EXPECT_EQ(o.task_checked, f.task_cps.size()) << f.name;
      EXPECT_LT(o.task_exact, o.task_checked / 2) << f.name << " replayed as " << plain;
      std::printf("%s as %s: %zu/%zu task checkpoints exact (must miss)\n", f.name.c_str(), plain.c_str(), o.task_exact,
                  o.task_checked);
    }
  }
}

// Gen recordings: the same trace with tick accounting and irq time on every CPU (no vtime on the
// nohz_full CPU) must miss that CPU's kcpustat checkpoints; the tick CPU stays exact.
TEST(ConformanceIrq, GenRecordingAsTickMisses) {
  std::size_t gens = 0;
  for (const auto& f : fixtures()) {
    if (!f.nohz_full) continue;
    ++gens;
    std::string tick = f.config;
    ASSERT_NE(tick.find("-gen-"), std::string::npos) << f.name << ": config " << tick;
    tick.replace(tick.find("-gen-"), 5, "-tick-");
    const auto o = compare(f, tick);
    EXPECT_GT(o.nohz_checked, 0u) << f.name;
    EXPECT_LT(o.nohz_exact, o.nohz_checked / 2) << f.name << " replayed as " << tick;
    EXPECT_EQ(o.checked - o.nohz_checked, o.exact - o.nohz_exact) << f.name << ": the tick CPU as " << tick;
    std::printf("%s as %s: nohz_full CPU %zu/%zu exact (must miss), the other CPU %zu/%zu\n", f.name.c_str(),
                tick.c_str(), o.nohz_exact, o.nohz_checked, o.exact - o.nohz_exact, o.checked - o.nohz_checked);
  }
  EXPECT_GT(gens, 0u) << "no gen vtime fixture: nothing compared";
}

// PSI irq: the same recording as a `kacct psi-irq` script, cut where the guest read irq.pressure.
// A cgroup whose tasks all ran on one CPU has the kernel's aggregated total = that CPU's
// times[PSI_IRQ_FULL] (collect_percpu_times() weights each CPU by its non-idle time; the other
// CPU's weight is 0), so its growth between the reads must match the model's (psi_off). The root
// spans both CPUs: the kernel's non-idle-weighted mean is not modelled and not compared.
struct PsiReads {
  std::map<std::string, std::map<std::string, std::uint64_t>> us;  // start/end -> group name -> total
};
PsiReads psi_reads(const std::string& dir) {
  PsiReads r;
  std::ifstream f(dir + "/psi-kernel");
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string mark, name;
    s >> mark;
    for (std::uint64_t v; s >> name >> v;) r.us[mark][name] = v;
  }
  return r;
}
// The script's group ids by the cgroup's last path component ("group 3 parent 2  # cgroup /B/C").
std::map<std::string, std::size_t> psi_groups(const std::string& script) {
  std::map<std::string, std::size_t> out;
  std::istringstream s(script);
  for (std::string line; std::getline(s, line);) {
    if (line.rfind("group ", 0) != 0) continue;
    const auto c = line.find("# cgroup ");
    if (c == std::string::npos) continue;
    const auto path = line.substr(c + 9);
    out[path.substr(path.rfind('/') + 1)] = std::stoul(line.substr(6));
  }
  return out;
}
// Per group, times[IRQ_FULL] summed over CPUs (ns), after the script up to the mark.
std::vector<std::vector<std::uint64_t>> psi_at(const std::string& text, const std::string& mark,
                                               std::optional<arch::KVersion> ver) {
  const auto cut = text.find("# mark " + mark);
  EXPECT_NE(cut, std::string::npos) << mark;
  auto s = model::psi::parse_script(text.substr(0, cut));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  if (!s.ok()) return {};
  auto cfg = model::psi::script_cfg(s.value());
  if (ver) cfg.ver = *ver;
  const auto r = model::psi::run_script(s.value(), cfg, false);
  EXPECT_FALSE(r.error) << (r.error ? r.error->str() : "");
  std::vector<std::vector<std::uint64_t>> out;
  for (const auto& g : r.world.v.gc) {
    out.emplace_back();
    for (const auto& c : g) out.back().push_back(c.irq_full);
  }
  return out;
}
// Groups A, B and (later recordings) B's child C, on the one CPU each ran on; a group's total
// includes its children's (every ancestor is charged). The guest's shell read each irq.pressure in a
// forked child ('# mark start.A.lo' at its fork, '.hi' at its exit): the kernel's growth between
// the two reads must lie within the model's growth between the outer and the inner ends of those
// windows, +-1 us (both totals are truncated to us).
// Whether the script has no event (only waits, marks and comments) after position `at`.
bool after_last_event(const std::string& script, std::size_t at) {
  std::istringstream s(script.substr(at));
  for (std::string line; std::getline(s, line);)
    if (!line.empty() && line[0] != '#' && line.rfind("wait ", 0) != 0) return false;
  return true;
}
int psi_off(const std::string& dir, std::optional<arch::KVersion> ver, std::string* detail) {
  std::stringstream ss(cli::read_input_maybe_xz(dir + "/psi-irq.psi.xz"));
  const auto k = psi_reads(dir);
  if (!k.us.count("start") || !k.us.count("end")) return -1;
  const auto ids = psi_groups(ss.str());
  int off = 0, compared = 0;
  bool late_any = false;
  // A ran on CPU 0, B (with its child C, when the recording has it) on CPU 1: one CPU each
  for (const std::string n : {"A", "B", "C"}) {
    if (!k.us.at("start").count(n) || !k.us.at("end").count(n)) continue;
    if (!ids.count(n)) {
      *detail += n + ": no such group in the script; ";
      ++off;
      continue;
    }
    const auto g = ids.at(n);
    // The model's state at a mark after the script's last event lacks the charges the kernel
    // made up to the read: it would loosen a lower bound (end.N.lo, start.N.hi), so those fail;
    // an upper bound (end.N.hi) only gets stricter.
    bool late = false;
    for (const auto* m : {"start.", "end."})
      for (const auto* side : {".lo", ".hi"}) {
        const std::string mark = m + n + side;
        if (mark == "end." + n + ".hi") continue;
        const auto at = ss.str().find("# mark " + mark + "\n");
        if (at != std::string::npos && after_last_event(ss.str(), at)) late = true;
      }
    if (late) {
      *detail += n + ": a read after the recording's last event (not comparable); ";
      late_any = true;
      continue;
    }
    auto total = [&](const std::string& mark) {
      const auto t = psi_at(ss.str(), mark, ver);
      return t.size() > g ? std::accumulate(t[g].begin(), t[g].end(), std::uint64_t{0}) : 0;
    };
    const auto s_lo = total("start." + n + ".lo"), s_hi = total("start." + n + ".hi");
    const auto e_lo = total("end." + n + ".lo"), e_hi = total("end." + n + ".hi");
    const auto kern = k.us.at("end").at(n) - k.us.at("start").at(n);
    const auto min_us = e_lo > s_hi ? (e_lo - s_hi) / 1000 : 0, max_us = (e_hi - s_lo) / 1000;
    const bool ok = kern + 1 >= min_us && kern <= max_us + 1;
    off += !ok;
    ++compared;
    *detail += n + ": kernel " + std::to_string(kern) + " us, model " + std::to_string(min_us) + ".." +
               std::to_string(max_us) + " us" + (ok ? "" : " (off)") + "; ";
  }
  return compared && !late_any ? off : -1;  // -1 fails both the comparison and its control
}

TEST(ConformanceIrq, PsiIrqSingleCpuGroupsWithinReadWindows) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& d : fs::directory_iterator(KACCT_IRQ_FIXTURES)) {
    if (!fs::exists(d.path() / "psi-irq.psi.xz")) continue;
    std::string detail;
    EXPECT_EQ(psi_off(d.path().string(), std::nullopt, &detail), 0) << d.path().filename() << ": " << detail;
    std::printf("%s psi: %s\n", d.path().filename().c_str(), detail.c_str());
    ++n;
  }
  EXPECT_GT(n, 0);
}

// The last release of the fixture kernel's series without ddae0ca2a8fe (from the patch table): the
// point before its backport (6.1.99 for 6.1.y), else the mainline release before it (6.9 for 6.12).
std::optional<arch::KVersion> before_psi_rework(const std::filesystem::path& dir) {
  const auto kver = arch::parse_version(conformance::meta_value(dir, "kernel_version"));
  const auto p = arch::find_patch("ddae0ca2a8fe");
  if (!kver || !p) return std::nullopt;
  std::optional<arch::KVersion> out = p->before;
  for (const auto& b : arch::backports)
    if (b.id == p->id && b.first.series() == kver->series())
      out = arch::v(b.first.major, b.first.minor, b.first.point - 1u);
  // both ends from the table: the recorded kernel has the patch, the control does not
  if (!arch::applied(p->id, *kver) || arch::applied(p->id, *out)) return std::nullopt;
  return out;
}

// Negative control: a release before ddae0ca2a8fe (6.10; 6.1.100 by backport) charges irq time at
// every rq clock update and never idle-time irq to the next task; the same recording must miss.
TEST(ConformanceIrq, PsiIrqBeforeTheBackportMisses) {
  int n = 0;
  for (const auto& d : conformance::fixture_dirs(KACCT_IRQ_FIXTURES)) {
    if (!std::filesystem::exists(d / "psi-irq.psi.xz")) continue;
    const auto before = before_psi_rework(d);
    ASSERT_TRUE(before) << d.filename() << ": no release without ddae0ca2a8fe for kernel_version "
                        << conformance::meta_value(d, "kernel_version");
    std::string detail;
    EXPECT_GT(psi_off(d.string(), before, &detail), 0) << d.filename() << " as " << before->str() << ": " << detail;
    std::printf("%s psi as %s (must miss): %s\n", d.filename().c_str(), before->str().c_str(), detail.c_str());
    ++n;
  }
  EXPECT_GT(n, 0) << "no fixture with a psi script: the control compared nothing";
}

}  // namespace
