// kacct run / kacct check: replay a trace on one CPU model and configuration, compare with the
// ground truth, or evaluate every spec invariant after every event.
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <optional>
#include <vector>

#include "common.hpp"
#include "proofs/replay.hpp"
#include "model/domain/reflect.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/ledger.hpp"
#include "model/gen/result.hpp"
#include "model/native/result.hpp"

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;
using trace::Bucket;
using trace::ReadKind;

constexpr std::uint64_t kNsPerUserTick = 10'000'000;  // NSEC_PER_SEC / USER_HZ (100)

// Signed model - truth, exactly: both are u64, so the difference is a sign and a u64 magnitude
// (it does not fit an int64 for a trace ending near 2^64 ns).
struct Diff {
  bool neg;
  std::uint64_t mag;
};
Diff diff(std::uint64_t model, std::uint64_t truth) {
  return model >= truth ? Diff{false, model - truth} : Diff{true, truth - model};
}
std::string sdiff(Diff d) { return d.mag == 0 ? "0" : fmt::format("{}{}", d.neg ? '-' : '+', d.mag); }
// In JSON a number when int64 or uint64 holds it, else (a difference below -(2^63)) its exact
// decimal text as a string.
json jdiff(Diff d) {
  if (!d.neg) return d.mag;
  if (d.mag <= std::uint64_t(INT64_MAX)) return -std::int64_t(d.mag);
  if (d.mag == std::uint64_t(INT64_MAX) + 1) return INT64_MIN;
  return fmt::format("-{}", d.mag);
}

// The kernel's user/nice columns include guest/guest_nice; the ledger keeps them apart
// (docs/trace-format.md section 5). Truth in the kernel's view, per bucket:
std::uint64_t truth_kernel_view(const std::array<std::uint64_t, trace::kBuckets>& t, unsigned b) {
  if (b == model::USER) return t[size_t(Bucket::User)] + t[size_t(Bucket::Guest)];
  if (b == model::NICE) return t[size_t(Bucket::Nice)] + t[size_t(Bucket::GuestNice)];
  return t[b];  // same order as enum cpu_usage_stat
}

struct ReadUnit {
  const char* unit;
  std::uint64_t div;
};
ReadUnit read_unit(ReadKind k) {
  switch (k) {
    case ReadKind::ProcStat:
    case ReadKind::TaskStat: return {"clock_ticks", kNsPerUserTick};
    case ReadKind::RusageSelf:
    case ReadKind::RusageThread:
    case ReadKind::Taskstats: return {"us", 1000};
    case ReadKind::ThreadCputime:
    case ReadKind::ProcessCputime: return {"ns", 1};
  }
  return {"ns", 1};
}
bool clock_read(ReadKind k) { return k == ReadKind::ThreadCputime || k == ReadKind::ProcessCputime; }

// /proc/stat's cpu lines (show_stat(): user nice system idle iowait irq softirq steal guest
// guest_nice, USER_HZ ticks) from per-CPU kcpustat ns; the "cpu" line converts the ns sums.
using Stat = std::array<std::uint64_t, model::NR_STATS>;
std::string procstat_lines(const std::vector<Stat>& cpus, std::string_view indent) {
  static constexpr unsigned order[] = {model::USER, model::NICE,    model::SYSTEM, model::IDLE,  model::IOWAIT,
                                       model::IRQ,  model::SOFTIRQ, model::STEAL,  model::GUEST, model::GUEST_NICE};
  Stat sum{};
  for (const auto& c : cpus)
    for (unsigned b = 0; b < model::NR_STATS; ++b) sum[b] += c[b];
  auto line = [&](const std::string& name, const Stat& v) {
    std::string l = fmt::format("{}{}", indent, name);
    for (unsigned b : order) l += fmt::format(" {}", v[b] / kNsPerUserTick);
    return l + "\n";
  };
  std::string out = line("cpu ", sum);
  for (std::size_t c = 0; c < cpus.size(); ++c) out += line(fmt::format("cpu{}", c), cpus[c]);
  return out;
}
// taskstats ac_utimescaled/ac_stimescaled (ns): task_cputime_scaled() is utimescaled/stimescaled
// with ARCH_HAS_SCALED_CPUTIME (native vtime, scaled compiled in), else task_cputime().
struct ScaledView {
  bool scaled;  // the task's own scaled fields (else the raw utime/stime)
  std::uint64_t utime, stime;
};
ScaledView scaled_view(const sim::RunResult& r, const sim::ModelCfg& mc, std::size_t i) {
  if (const auto* n = r.backend_result<model::native::NativeResult>();
      n && mc.native.scaled && i < n->task_scaled.size())
    return {true, n->task_scaled[i].utimescaled, n->task_scaled[i].stimescaled};
  return {false, r.tasks[i].utime, r.tasks[i].stime};
}

// Task truth mapped onto the task's counters: what the task itself did.
struct TaskTruthView {
  std::uint64_t utime, stime, gtime, rtime;
};
TaskTruthView task_truth(const trace::TaskTruth& t) {
  return {t.user + t.guest, t.system, t.guest, t.user + t.system + t.guest};
}

struct RunInput {
  arch::CpuFacts cpu;
  arch::Config cfg;
  Loaded trace;
  sim::Program prog;
};

sim::Program compile_or_exit(const Loaded& l) {
  auto p = sim::compile(l.trace);
  if (!p) {
    const auto& e = p.error();
    fmt::print(stderr, "{}:{}: {}\n", l.name, e.line, e.message);
    throw Exit{kExitUsage};
  }
  return std::move(p).value();
}

// The trace's CPU or --cpu; `note` gets the line saying they differ (printed once the whole
// input is known to be a valid trace, as before streaming).
arch::CpuFacts pick_cpu(const std::string& opt, const std::string& name, const trace::Header& h, std::string& note) {
  if (!opt.empty()) {
    auto c = resolve_cpu(opt);
    if (h.cpu_model != c.name)
      note = fmt::format("kacct: note: {} was recorded on '{}'; modelling it as {}\n", name, h.cpu_model, c.name);
    return c;
  }
  if (auto c = arch::find_cpu(h.cpu_model)) return *c;
  throw Failure(
      fmt::format("the trace's CPU '{}' is not in the table; pass --cpu (see `kacct list cpus`)", h.cpu_model));
}

// The reads of a streamed run in a temporary file, not in memory (`run` lists every one, after
// tables that need the whole input); in memory if no temporary file can be made.
class ReadSpill {
 public:
  ReadSpill() = default;
  ReadSpill(const ReadSpill&) = delete;
  ReadSpill& operator=(const ReadSpill&) = delete;
  ~ReadSpill() {
    if (f_) std::fclose(f_);
  }
  void take(std::vector<sim::ReadResult>& v) {
    if (v.empty() || failed_) return;
    if (!f_ && !(f_ = std::tmpfile())) {
      failed_ = true;
      return;
    }
    if (std::fwrite(v.data(), sizeof v[0], v.size(), f_) != v.size())
      throw Failure("run: cannot spill reads to a temporary file");
    n_ += v.size();
    v.clear();
  }
  std::size_t size(const std::vector<sim::ReadResult>& tail) const { return n_ + tail.size(); }
  // Every read in order: the spilled ones, then `tail` (those still in the run's result).
  template <class F>
  void each(const std::vector<sim::ReadResult>& tail, F&& f) const {
    if (f_) {
      std::rewind(f_);
      std::vector<sim::ReadResult> buf(4096);
      for (std::size_t left = n_; left > 0;) {
        const std::size_t k = std::fread(buf.data(), sizeof buf[0], std::min(left, buf.size()), f_);
        if (k == 0) throw Failure("run: cannot read back the spilled reads");
        for (std::size_t j = 0; j < k; ++j) f(buf[j]);
        left -= k;
      }
    }
    for (const auto& rd : tail) f(rd);
  }

 private:
  std::FILE* f_ = nullptr;
  std::size_t n_ = 0;
  bool failed_ = false;
};
static_assert(std::is_trivially_copyable_v<sim::ReadResult>);

// --with-fix: kacct-local proposed fixes (arch/patches.hpp `local` rows) on the config's model.
sim::ModelCfg with_fixes(sim::ModelCfg m, const std::vector<std::string>& fixes) {
  for (const auto& f : fixes) try {
      sim::apply_fix(m, f);
    } catch (const std::invalid_argument& e) {
      throw Failure(std::string("--with-fix: ") + e.what() + " (kacct findings lists them)");
    }
  return m;
}
std::string fixes_note(const std::vector<std::string>& fixes) {
  std::string s;
  for (const auto& f : fixes) s += " +" + f;
  return s;
}

// Streams the trace: the model and the ground truth advance event by event, and only the
// tasks, the reads (spilled to a temporary file) and one chunk of events stay in memory.
void run_cmd(const std::string& cpu_opt, const std::string& cfg_opt, const std::string& path, bool as_json,
             const std::vector<std::string>& fixes) {
  std::optional<trace::Accountant> acc;
  TraceStream in(
      path, [&](const trace::Header& h) { acc.emplace(h); }, [&](const trace::Event& e) { acc->apply(e); });
  if (!in.start()) in.finish();  // prints the trace's error
  struct L {
    std::string name;
  } l{in.name()};
  std::string note;
  std::optional<arch::CpuFacts> cpu_;
  std::optional<arch::Config> cfg_;
  sim::ModelCfg mc;
  try {
    cpu_ = pick_cpu(cpu_opt, l.name, in.header(), note);
    cfg_ = resolve_config(cfg_opt);
    require_legal(*cpu_, *cfg_);
    mc = with_fixes(sim::model_cfg(*cpu_, *cfg_), fixes);
  } catch (const Failure&) {
    in.finish();  // an error in the trace wins, as when the trace was loaded first
    fmt::print(stderr, "{}", note);
    throw;
  }
  const auto& cpu = *cpu_;
  const auto& cfg = *cfg_;
  ReadSpill spill;
  const bool spill_reads = mc.acct != arch::Accounting::Gen;  // gen's per-read /proc/stat views name reads by index
  sim::RunOptions ro{.check = false};
  ro.refill = [&](sim::RunResult& res) {
    if (spill_reads) spill.take(res.reads);
    return in.refill();
  };
  const auto r = sim::run(in.program(), mc, ro);
  in.finish();
  fmt::print(stderr, "{}", note);
  const auto& prog = in.program();
  const auto* gen = r.backend_result<model::GenResult>();
  const auto truth = acc->snapshot(acc->tracker().now());
  const auto ncpus = prog.header.ncpus;
  const auto& names = model::usage_names;

  if (as_json) {
    json j;
    j["cpu"] = cpu.name;
    j["config"] = cfg.name();
    if (!fixes.empty()) j["with_fix"] = fixes;
    j["trace"] = l.name;
    j["events"] = r.events;
    j["end_ts"] = truth.end_ts;
    json cpus = json::array();
    for (std::uint32_t c = 0; c < ncpus; ++c) {
      json ns = json::object(), ticks = json::object();
      for (unsigned b = 0; b < model::NR_STATS; ++b) {
        ns[names[b]] = r.cpus[c].cpustat[b];
        ticks[names[b]] = r.cpus[c].cpustat[b] / kNsPerUserTick;
      }
      cpus.push_back(json{{"cpu", c}, {"cpustat_ns", ns}, {"cpustat_ticks", ticks}, {"state", to_json(r.cpus[c])}});
    }
    j["cpus"] = cpus;
    json tasks = json::array();
    for (std::size_t i = 0; i < prog.tasks.size(); ++i) {
      const auto& ti = prog.tasks[i];
      const auto& t = r.tasks[i];
      tasks.push_back(json{{"tid", ti.tid},
                           {"pid", ti.pid},
                           {"comm", ti.comm},
                           {"idle", i < ncpus},
                           {"kthread", ti.kthread},
                           {"nice", ti.nice},
                           {"utime", t.utime},
                           {"stime", t.stime},
                           {"gtime", t.gtime},
                           {"rtime", t.sum_exec_runtime},
                           {"utimescaled", scaled_view(r, mc, i).utime},
                           {"stimescaled", scaled_view(r, mc, i).stime},
                           {"state", to_json(t)}});
    }
    j["tasks"] = tasks;
    json reads = json::array();
    spill.each(r.reads, [&](const sim::ReadResult& rd) {
      const auto u = read_unit(rd.kind);
      json x{{"id", rd.id},     {"kind", trace::name(rd.kind)}, {"tid", rd.tid},        {"ts", rd.ts},
             {"line", rd.line}, {"utime_ns", rd.utime},         {"stime_ns", rd.stime}, {"rtime_ns", rd.rtime},
             {"unit", u.unit}};
      if (clock_read(rd.kind))
        x["value"] = rd.rtime;
      else
        x["utime"] = rd.utime / u.div, x["stime"] = rd.stime / u.div;
      reads.push_back(x);
    });
    j["reads"] = reads;
    // /proc/stat per CPU in USER_HZ ticks: at the end from kcpustat, and with gen vtime as each
    // read saw it (kcpustat_cpu_fetch adds a nohz_full CPU's pending vtime).
    auto ticks_of = [](const Stat& v) {
      json o = json::object();
      for (unsigned b = 0; b < model::NR_STATS; ++b) o[model::usage_names[b]] = v[b] / kNsPerUserTick;
      return o;
    };
    {
      json ps = json::array();
      for (std::uint32_t c = 0; c < ncpus; ++c) ps.push_back(ticks_of(r.cpus[c].cpustat));
      j["proc_stat"] = ps;
    }
    if (gen) {
      json views = json::array();
      for (std::size_t k = 0; k < gen->procstat.size(); ++k) {
        json cpus = json::array();
        for (const auto& c : gen->procstat[k].cpus) cpus.push_back(ticks_of(c));
        views.push_back(json{
            {"read", k < r.reads.size() ? json(r.reads[k].id) : json()}, {"ts", gen->procstat[k].ts}, {"cpus", cpus}});
      }
      j["proc_stat_at_reads"] = views;
    }
    json tc = json::array(), tt = json::array();
    for (std::uint32_t c = 0; c < ncpus; ++c) {
      json b = json{{"cpu", c}};
      for (size_t k = 0; k < trace::kBuckets; ++k) b[std::string(trace::name(Bucket(k)))] = truth.cpu[c][k];
      tc.push_back(b);
    }
    for (const auto& [tid, t] : truth.task)
      tt.push_back(json{{"tid", tid},
                        {"user", t.user},
                        {"system", t.system},
                        {"guest", t.guest},
                        {"irq", t.irq},
                        {"softirq", t.softirq},
                        {"steal", t.steal}});
    j["truth"] = json{{"end_ts", truth.end_ts}, {"cpus", tc}, {"tasks", tt}};
    json ec = json::array(), et = json::array();
    for (std::uint32_t c = 0; c < ncpus; ++c) {
      json b = json{{"cpu", c}};
      for (unsigned k = 0; k < model::NR_STATS; ++k)
        b[names[k]] = jdiff(diff(r.cpus[c].cpustat[k], truth_kernel_view(truth.cpu[c], k)));
      ec.push_back(b);
    }
    for (std::size_t i = ncpus; i < prog.tasks.size(); ++i) {
      auto it = truth.task.find(prog.tasks[i].tid);
      if (it == truth.task.end()) continue;
      const auto v = task_truth(it->second);
      const auto& t = r.tasks[i];
      et.push_back(json{{"tid", prog.tasks[i].tid},
                        {"utime", jdiff(diff(t.utime, v.utime))},
                        {"stime", jdiff(diff(t.stime, v.stime))},
                        {"gtime", jdiff(diff(t.gtime, v.gtime))},
                        {"rtime", jdiff(diff(t.sum_exec_runtime, v.rtime))}});
    }
    j["error"] = json{{"cpus", ec}, {"tasks", et}};
    j["obligations_failed"] = r.obligations_failed;
    print_json(j);
    return;
  }

  fmt::print("{}: {} events, {} CPUs, end_ts {} ns\nmodel: {} {}{}\n\n", l.name, r.events, ncpus, truth.end_ts,
             cpu.name, cfg.name(), fixes_note(fixes));
  // Per-CPU kcpustat: model ns, USER_HZ ticks, truth (kernel view), error.
  {
    std::vector<std::string> h{"cpu", "bucket", "model ns", "ticks", "truth ns", "error ns"};
    Table t(h, {true, false, true, true, true, true});
    for (std::uint32_t c = 0; c < ncpus; ++c)
      for (unsigned k = 0; k < model::NR_STATS; ++k) {
        const auto m = r.cpus[c].cpustat[k];
        const auto tv = truth_kernel_view(truth.cpu[c], k);
        t.row({k == 0 ? std::to_string(c) : "", names[k], std::to_string(m), std::to_string(m / kNsPerUserTick),
               std::to_string(tv), sdiff(diff(m, tv))});
      }
    fmt::print("kcpustat (ticks at USER_HZ=100; truth user/nice include guest/guest_nice as the kernel does)\n{}\n",
               t.str("  "));
  }
  {
    Table t(
        {"tid", "pid", "comm", "utime", "stime", "gtime", "rtime", "err utime", "err stime", "err gtime", "err rtime"},
        {true, true, false, true, true, true, true, true, true, true, true});
    for (std::size_t i = 0; i < prog.tasks.size(); ++i) {
      const auto& ti = prog.tasks[i];
      const auto& m = r.tasks[i];
      std::vector<std::string> row{std::to_string(ti.tid),
                                   std::to_string(ti.pid),
                                   ti.comm,
                                   std::to_string(m.utime),
                                   std::to_string(m.stime),
                                   std::to_string(m.gtime),
                                   std::to_string(m.sum_exec_runtime)};
      auto it = i < ncpus ? truth.task.end() : truth.task.find(ti.tid);
      if (it != truth.task.end()) {
        const auto v = task_truth(it->second);
        row.push_back(sdiff(diff(m.utime, v.utime)));
        row.push_back(sdiff(diff(m.stime, v.stime)));
        row.push_back(sdiff(diff(m.gtime, v.gtime)));
        row.push_back(sdiff(diff(m.sum_exec_runtime, v.rtime)));
      } else {
        row.insert(row.end(), 4, "-");
      }
      t.row(std::move(row));
    }
    fmt::print(
        "tasks (ns; error = model - truth, truth utime = user+guest, stime = system, rtime = user+system+guest)\n{}\n",
        t.str("  "));
  }
  {
    Table t({"tid", "user", "system", "guest", "irq", "softirq", "steal"}, {true, true, true, true, true, true, true});
    for (const auto& [tid, v] : truth.task)
      t.row({std::to_string(tid), std::to_string(v.user), std::to_string(v.system), std::to_string(v.guest),
             std::to_string(v.irq), std::to_string(v.softirq), std::to_string(v.steal)});
    fmt::print("ground truth per task (ns, time the task was current)\n{}\n", t.str("  "));
  }
  if (spill.size(r.reads) > 0) {  // two passes over the reads: column widths, then the rows
    Table t({"id", "line", "ts", "kind", "tid", "utime ns", "stime ns", "rtime ns", "result"},
            {true, true, true, false, true, true, true, true, false});
    auto cells = [](const sim::ReadResult& rd) {
      const auto u = read_unit(rd.kind);
      std::string res = clock_read(rd.kind)
                            ? fmt::format("{} ns", rd.rtime)
                            : fmt::format("utime={} stime={} {}", rd.utime / u.div, rd.stime / u.div, u.unit);
      return std::vector<std::string>{std::to_string(rd.id),
                                      std::to_string(rd.line),
                                      std::to_string(rd.ts),
                                      std::string(trace::name(rd.kind)),
                                      std::to_string(rd.tid),
                                      std::to_string(rd.utime),
                                      std::to_string(rd.stime),
                                      std::to_string(rd.rtime),
                                      res};
    };
    spill.each(r.reads, [&](const sim::ReadResult& rd) { t.measure(cells(rd)); });
    std::string out = "reads\n" + t.head("  ");
    spill.each(r.reads, [&](const sim::ReadResult& rd) {
      out += t.line(cells(rd), "  ");
      if (out.size() >= (1u << 20)) {
        fmt::print("{}", out);
        out.clear();
      }
    });
    fmt::print("{}\n", out);
  }
  {
    std::vector<Stat> end;
    for (std::uint32_t c = 0; c < ncpus; ++c) end.push_back(r.cpus[c].cpustat);
    fmt::print(
        "/proc/stat at the end (USER_HZ ticks: user nice system idle iowait irq softirq steal guest guest_nice)\n{}\n",
        procstat_lines(end, "  "));
  }
  if (gen && !gen->procstat.empty()) {
    fmt::print("/proc/stat as each read saw it (gen vtime: kcpustat_cpu_fetch adds a nohz_full CPU's pending vtime)\n");
    for (std::size_t k = 0; k < gen->procstat.size(); ++k)
      fmt::print("  read {} at ts {}:\n{}", k < r.reads.size() ? std::to_string(r.reads[k].id) : "?",
                 gen->procstat[k].ts, procstat_lines(gen->procstat[k].cpus, "    "));
    fmt::print("\n");
  }
  {
    Table t({"tid", "ac_utimescaled us", "ac_stimescaled us", "utimescaled ns", "stimescaled ns", "source"},
            {true, true, true, true, true, false});
    for (std::size_t i = ncpus; i < prog.tasks.size(); ++i) {
      const auto v = scaled_view(r, mc, i);
      t.row({std::to_string(prog.tasks[i].tid), std::to_string(v.utime / 1000), std::to_string(v.stime / 1000),
             std::to_string(v.utime), std::to_string(v.stime), v.scaled ? "utimescaled/stimescaled" : "utime/stime"});
    }
    fmt::print(
        "scaled cputime per task (taskstats ac_utimescaled/ac_stimescaled: task_cputime_scaled(), the task's "
        "utimescaled/stimescaled with ARCH_HAS_SCALED_CPUTIME, else its utime/stime; gen: pending vtime not "
        "added)\n{}\n",
        t.str("  "));
  }
  for (const auto& o : r.obligations_failed) fmt::print("warning: obligation failed: {}\n", o);
}

sim::ModelCfg check_cfg(const arch::CpuFacts& cpu, const arch::Config& cfg,
                        const std::optional<model::AdjustCfg>& adjust, const std::vector<std::string>& fixes) {
  auto mc = sim::model_cfg(cpu, cfg);
  if (adjust) mc.adjust = *adjust;  // --cputime-adjust
  return with_fixes(mc, fixes);
}

// A check's result as a message (empty if clean); `line(n)` quotes source line n.
template <class Line>
std::string check_report(const std::string& name, const sim::RunResult& r, bool quote, Line&& line) {
  // gen vtime: residues a forked child copied (a kernel finding, not a violation)
  if (const auto* gen = r.backend_result<model::GenResult>(); quote && gen && !gen->fork_finding.empty())
    fmt::print("{}:{}: kernel finding gen_vtime.fork_no_double_count: {} ({} ns in all)\n", name, gen->fork_line,
               gen->fork_finding, gen->fork_inherited);
  // native vtime: the kernel hazards the trace reached (findings, not violations)
  if (const auto* native = r.backend_result<model::native::NativeResult>(); quote && native)
    for (const auto& f : native->findings)
      fmt::print("{}:{}: kernel finding {}: {}\n", name, f.line, f.invariant, f.detail);
  if (r.violation) {
    const auto& v = *r.violation;
    std::string s = fmt::format("{}:{}: invariant {} violated: {}", name, v.line, v.invariant, v.detail);
    if (!v.fixed_by.empty()) s += fmt::format(" (this kernel's own bug, fixed by {})", v.fixed_by);
    if (quote)
      if (auto src = line(v.line); !src.empty()) s += fmt::format("\n  {}", src);
    return s;
  }
  if (!r.obligations_failed.empty()) {
    std::string s = fmt::format("{}: obligation failed:", name);
    for (const auto& o : r.obligations_failed) s += " " + o;
    return s;
  }
  return {};
}

// What a clean check did not judge (RunResult::unjudged): "" when every invariant was judged
// after every event, else the clause that keeps "holds" from reading wider than the check.
std::string unjudged_note(const sim::RunResult& r) {
  std::string s;
  for (const auto& u : r.unjudged)
    s += fmt::format("{}{} not judged on CPU {} from {} on (its premise ended: kernel finding {})",
                     s.empty() ? "" : "; ", u.invariant, u.cpu,
                     u.line ? fmt::format("line {}", u.line) : fmt::format("event {}", u.event + 1), u.cause);
  return s;
}

// One check of a loaded trace; returns the message (empty if clean).
// `skipped` gets what a clean run did not judge (unjudged_note).
std::string check_one(const Loaded& l, const sim::Program& prog, const arch::CpuFacts& cpu, const arch::Config& cfg,
                      bool quote, std::string& skipped) {
  const auto mc = check_cfg(cpu, cfg, std::nullopt, {});
  const auto r = sim::run(prog, mc, {.check = true, .stop_at_violation = true});
  skipped = unjudged_note(r);
  return check_report(l.name, r, quote, [&](std::uint32_t n) { return l.line(n); });
}

// One config, streamed: the input is read once, checked as it comes; after a violation the
// rest is still read and validated (an error in the trace wins, as when it was loaded first).
void check_stream(const std::string& cpu_opt, const std::string& cfg_opt, const std::string& path,
                  const std::optional<model::AdjustCfg>& adjust, const std::string& adjust_opt,
                  const std::vector<std::string>& fixes) {
  TraceStream in(path, nullptr, nullptr, true);
  if (!in.start()) in.finish();
  std::string note;
  std::optional<arch::CpuFacts> cpu;
  std::optional<arch::Config> cfg;
  sim::ModelCfg mc;
  try {
    if (cfg_opt.empty()) throw Failure("check: --config is required unless --all-configs is given");
    cpu = pick_cpu(cpu_opt, in.name(), in.header(), note);
    cfg = resolve_config(cfg_opt);
    require_legal(*cpu, *cfg);
    mc = check_cfg(*cpu, *cfg, adjust, fixes);
  } catch (const Failure&) {
    in.finish();
    fmt::print(stderr, "{}", note);
    throw;
  }
  sim::RunOptions ro{.check = true, .stop_at_violation = true};
  ro.refill = [&](sim::RunResult&) { return in.refill(); };
  const auto r = sim::run(in.program(), mc, ro);
  const std::string src = r.violation ? in.line(r.violation->line) : std::string();
  in.finish();
  fmt::print(stderr, "{}", note);
  auto msg = check_report(in.name(), r, true, [&](std::uint32_t) { return src; });
  if (msg.empty()) {
    const auto skipped = unjudged_note(r);
    fmt::print("{}: ok ({} {}{}{}, {} events, {})\n", in.name(), cpu->name, cfg->name(),
               adjust ? " cputime_adjust " + adjust_opt : "", fixes_note(fixes), r.events,
               skipped.empty() ? "every invariant holds after every event"
                               : "every invariant holds after every event where it was judged; " + skipped);
    return;
  }
  fmt::print("{}\n", msg);
  throw Exit{kExitViolation};
}

void check_cmd(const std::string& cpu_opt, const std::string& cfg_opt, const std::string& path, bool all,
               const std::string& adjust_opt, const std::vector<std::string>& fixes) {
  if (all && !fixes.empty()) throw Failure("check: --with-fix needs one --config, not --all-configs");
  std::optional<model::AdjustCfg> adjust;
  if (!adjust_opt.empty()) {
    adjust = proofs::parse_adjust(adjust_opt);
    if (!adjust)
      throw Failure(
          fmt::format("--cputime-adjust: unknown '{}'; ERA is before-9d7fb0427648, 9d7fb0427648, "
                      "173be9a14f7b or 77baa5bafcbe, DIVISION is scale_stime, exact128 or generic2020",
                      adjust_opt));
    if (all) throw Failure("check: --cputime-adjust needs one --config, not --all-configs");
  }
  if (!all) return check_stream(cpu_opt, cfg_opt, path, adjust, adjust_opt, fixes);
  // Every combination replays the same input: it is read whole (memory grows with it).
  Loaded l = load_trace(path);
  const auto prog = compile_or_exit(l);
  if (!cfg_opt.empty()) throw Failure("check: --config and --all-configs are exclusive");
  std::vector<arch::Combo> combos_to_check;
  if (!cpu_opt.empty()) {
    const auto cpu = resolve_cpu(cpu_opt);
    for (const auto& k : arch::all_configs())
      if (arch::legal(cpu, k)) combos_to_check.push_back({cpu, k});
  } else {
    for (const auto& cpu : arch::cpus())  // every listed config, not only the props matrix
      for (const auto& k : arch::all_configs())
        if (arch::legal(cpu, k)) combos_to_check.push_back({cpu, k});
  }
  std::size_t bad = 0;
  for (const auto& c : combos_to_check) {
    std::string skipped;
    auto msg = check_one(l, prog, c.cpu, c.cfg, false, skipped);
    if (!msg.empty()) ++bad;
    fmt::print("{} {}: {}\n", c.cpu.name, c.cfg.name(),
               !msg.empty()      ? msg
               : skipped.empty() ? "ok"
                                 : "ok (" + skipped + ")");
  }
  fmt::print("{} of {} combinations violated\n", bad, combos_to_check.size());
  if (bad) throw Exit{kExitViolation};
}

}  // namespace

void add_run(CLI::App& app) {
  struct Opts {
    std::string cpu, config, trace, adjust;
    std::vector<std::string> fixes;
    bool json = false, all = false;
  };
  auto o = std::make_shared<Opts>();
  auto* run = app.add_subcommand("run", "Replay a trace on one CPU and config; print buckets, reads, truth and error");
  run->add_option("--cpu", o->cpu, "CPU model (default: the trace's cpu line; see `kacct list cpus`)");
  run->add_option("--config", o->config, "configuration, e.g. 6.6-tick-irqtime-hz250 (`kacct list configs`)")
      ->required();
  run->add_option("TRACE", o->trace,
                  "trace file, or - for stdin; streamed: memory grows with the tasks (and with --json, the reads), "
                  "not with the events")
      ->required();
  run->add_flag("--json", o->json, "JSON output (schema: docs/cli.md)");
  run->add_option("--with-fix", o->fixes, "ID: apply a kacct-local proposed fix (not upstream; `kacct findings`)");
  run->callback([o] { run_cmd(o->cpu, o->config, o->trace, o->json, o->fixes); });

  auto p = std::make_shared<Opts>();
  auto* check = app.add_subcommand("check", "Replay a trace checking every invariant after every event");
  check->add_option("--cpu", p->cpu, "CPU model (default: the trace's cpu line; with --all-configs: every CPU)");
  check->add_option("--config", p->config, "configuration (`kacct list configs`)");
  check
      ->add_option("TRACE", p->trace,
                   "trace file, or - for stdin; streamed with --config (memory grows with the tasks, not the "
                   "events), read whole with --all-configs")
      ->required();
  check->add_flag("--all-configs", p->all, "check every legal config of --cpu, or every legal combination");
  check->add_option("--cputime-adjust", p->adjust,
                    "ERA:DIVISION: replace the config's cputime_adjust (era by the patch that opens it, "
                    "e.g. 9d7fb0427648:exact128; docs/cli.md); for combinations no listed config has");
  check->add_option("--with-fix", p->fixes,
                    "ID: apply a kacct-local proposed fix (not upstream; `kacct findings`, docs/findings/)");
  check->callback([p] { check_cmd(p->cpu, p->config, p->trace, p->all, p->adjust, p->fixes); });
}

}  // namespace kacct::cli
