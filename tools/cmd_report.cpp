// kacct report: one self-contained HTML page (inline SVG, no script library, no network) that
// shows what `run`, `validate`, `psi-irq run`, `lazy-tlb run` and `perf-replay` compute:
// timelines of a trace's true CPU states beside where each config charged them, a section per
// patch with its counterexamples drawn, PSI pressure and lazy-TLB mm references over time, and
// predicted vs kernel-reported reads (docs/report.md).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <array>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common.hpp"
#include "model/lazytlb/script.hpp"
#include "model/psi/script.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/ledger.hpp"
#include "proofs/verdict.hpp"
#include "report/html.hpp"

namespace kacct::cli {
// Named (and anonymous inside): the using-directive and helper names below stay out of the
// other commands' files, which unity builds batch with this one.
namespace report_detail {
namespace {
using json = nlohmann::ordered_json;
using namespace report;
namespace mpsi = model::psi;
namespace mlt = model::lazytlb;

// Beyond this many events a timeline is drawn from evenly spaced samples (the page says so).
constexpr std::size_t kMaxSamples = 1000;
constexpr std::size_t kMaxReads = 100;                     // read markers per trace (evenly spaced beyond)
constexpr double kLeft = 230, kPlotW = 1000, kRight = 20;  // px: labels, plot, margin
constexpr std::size_t kMaxTasks = 8;                       // task charts per trace

std::string read_file(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Failure(fmt::format("{}: is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure(fmt::format("{}: cannot open", path));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string legend_buckets() {
  std::string o = R"(<div class="legend">states and charges:)";
  for (unsigned b = 0; b < model::NR_STATS; ++b)
    o += fmt::format(R"(<span class="sw" style="background:{}"></span>{})", kBucketColour[b], model::usage_names[b]);
  o += R"(<span class="sw" style="background:#fff;border-style:dashed"></span>offline / not charged)";
  o +=
      R"( &nbsp; <svg width="14" height="14" style="display:inline;margin:0 2px -2px 10px"><path class="read" d="M1,1 L13,1 L7,9 Z"/></svg>read)";
  return o + "</div>\n";
}

// ---- trace pages -------------------------------------------------------------------------

struct ConfigRun {
  arch::Config cfg;
  std::vector<std::vector<std::array<std::uint64_t, model::NR_STATS>>> cpustat;  // [sample][cpu]
  std::vector<std::vector<std::array<std::uint64_t, 2>>> task;                   // [sample][task] utime, stime
  sim::RunResult final;
};

// The trace's true states and each config's charges per CPU; per task true vs reported times
// and their error; the reads. `id` prefixes element ids (several traces on one validate page).
std::string trace_section(const trace::Trace& t, const sim::Program& prog, const arch::CpuFacts& cpu,
                          const std::vector<arch::Config>& cfgs, const std::string& id) {
  std::string o;
  const auto n = prog.events.size();
  const std::uint32_t ncpus = prog.header.ncpus;
  if (n == 0 || t.events.size() != n) return "<p class=\"note\">empty trace: nothing to draw</p>\n";
  const std::size_t stride = (n + kMaxSamples - 1) / kMaxSamples;
  std::vector<char> sampled(n, 0);
  std::vector<std::size_t> at;  // event index of each sample
  for (std::size_t i = 0; i < n; ++i)
    if ((i + 1) % stride == 0 || i + 1 == n) sampled[i] = 1, at.push_back(i);
  const std::size_t ns = at.size();

  // Truth at every sample (the ledger charged up to the sample's ts).
  std::vector<std::uint64_t> ts(ns + 1, 0);  // ts[0] = 0: the ledger starts there
  std::vector<std::vector<std::array<std::uint64_t, trace::kBuckets>>> truth(ns + 1);
  truth[0].assign(ncpus, {});
  // Tasks drawn: the non-idle ones with the most true time.
  std::vector<std::uint32_t> shown;
  {
    auto led = trace::ground_truth(t);
    if (!led) throw Failure("ground truth: " + led.error().to_string());
    std::vector<std::pair<std::uint64_t, std::uint32_t>> by;
    for (std::uint32_t k = ncpus; k < prog.tasks.size(); ++k) {
      auto it = led.value().task.find(prog.tasks[k].tid);
      by.push_back({it == led.value().task.end() ? 0 : it->second.total(), k});
    }
    std::stable_sort(by.begin(), by.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; k < by.size() && k < kMaxTasks; ++k) shown.push_back(by[k].second);
  }
  std::vector<std::vector<std::array<std::uint64_t, 2>>> ttruth(
      ns + 1, std::vector<std::array<std::uint64_t, 2>>(shown.size()));
  {
    trace::Accountant acc(t.header);
    std::size_t s = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (auto e = acc.apply(t.events[i])) throw Failure("trace: " + e->to_string());
      if (!sampled[i]) continue;
      ++s;
      ts[s] = t.events[i].ts;
      const auto l = acc.snapshot(ts[s]);
      truth[s] = l.cpu;
      for (std::size_t k = 0; k < shown.size(); ++k) {
        auto it = l.task.find(prog.tasks[shown[k]].tid);
        if (it != l.task.end()) ttruth[s][k] = {it->second.user + it->second.guest, it->second.system};
      }
    }
  }
  // Each config, observed after every sampled event.
  std::vector<ConfigRun> runs;
  for (const auto& cfg : cfgs) {
    ConfigRun cr{cfg, {}, {}, {}};
    cr.cpustat.assign(1, std::vector<std::array<std::uint64_t, model::NR_STATS>>(ncpus));
    cr.task.assign(1, std::vector<std::array<std::uint64_t, 2>>(shown.size()));
    for (std::size_t k = 0; k < shown.size(); ++k) {  // counters the task had at the start
      const auto j = shown[k] - ncpus;
      if (j < prog.header.tasks.size())
        cr.task[0][k] = {prog.header.tasks[j].utime.value_or(0), prog.header.tasks[j].stime.value_or(0)};
    }
    sim::RunOptions opt;
    opt.observe = [&](std::size_t i, const sim::RunResult& r) {
      if (!sampled[i]) return;
      auto& c = cr.cpustat.emplace_back(ncpus);
      for (std::uint32_t p = 0; p < ncpus; ++p)
        for (unsigned b = 0; b < model::NR_STATS; ++b) c[p][b] = r.cpus[p].cpustat[b];
      auto& tk = cr.task.emplace_back(shown.size());
      for (std::size_t k = 0; k < shown.size(); ++k) tk[k] = {r.tasks[shown[k]].utime, r.tasks[shown[k]].stime};
    };
    cr.final = sim::run(prog, sim::model_cfg(cpu, cfg), opt);
    runs.push_back(std::move(cr));
  }
  const double t1 = double(std::max<std::uint64_t>(ts[ns], 1));
  const Scale x{0, t1, kLeft, kLeft + kPlotW};
  std::map<std::uint32_t, std::uint32_t> cpu_of_line;
  for (const auto& e : t.events) cpu_of_line[e.line] = e.cpu;
  const std::vector<sim::ReadResult> none;
  const auto& reads = runs.empty() ? none : runs[0].final.reads;
  // The reads drawn: all, or evenly spaced ones of a long trace (every config reads at the same
  // events, so index i is the same read in each run).
  std::vector<std::size_t> drawn;
  const std::size_t rstride = std::max<std::size_t>(1, (reads.size() + kMaxReads - 1) / kMaxReads);
  for (std::size_t i = 0; i < reads.size(); i += rstride) drawn.push_back(i);
  auto read_of = [&](const ConfigRun& r, std::size_t i) -> const sim::ReadResult* {
    return i < r.final.reads.size() && r.final.reads[i].line == reads[i].line ? &r.final.reads[i] : nullptr;
  };

  o += fmt::format(
           "<p class=\"note\">{} events, {} CPUs, {} to {}; configs on {}: {}.{}</p>\n", n, ncpus, fmt_ns(0),
           fmt_ns(t1), esc(cpu.name),
           [&] {
             std::string s;
             for (const auto& c : cfgs) s += (s.empty() ? "" : ", ") + esc(c.name());
             return s;
           }(),
           stride > 1 ? fmt::format(" <b>Downsampled</b>: {} events are drawn as {} samples (every {}th event); "
                                    "each bar is the sum over its sample interval, and the totals are exact.",
                                    n, ns, stride)
                      : "") +
       (rstride > 1 ? fmt::format(" {} of the {} reads are marked (every {}th).", drawn.size(), reads.size(), rstride)
                    : "");
  o += "<style>";
  for (unsigned b = 0; b < model::NR_STATS; ++b)
    o += fmt::format(".b-{}{{fill:{}}}", model::usage_names[b], kBucketColour[b]);
  o += "</style>\n";
  o += legend_buckets();
  o += "<p class=\"note\">Row <i>truth</i>: the state each CPU was in (the ground-truth ledger). One row per config: "
       "each charge the model made, drawn as a bar of its length that ends where it was charged (a tick of 4 ms "
       "charged at 12 ms spans 8-12 ms), coloured by the bucket it went to. Hover for exact values.</p>\n";

  // Per CPU: truth row, then one row per config, read markers, time axis.
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    const double row = 24, top = 22;
    const double h = top + row * double(1 + runs.size()) + 30;
    o += fmt::format(R"(<h3>cpu {}</h3><svg id="{}cpu{}" width="{}" height="{}" role="img">)", c, id, c,
                     kLeft + kPlotW + kRight, h);
    // truth: merge equal neighbours so that long traces stay small
    const double y0 = top;
    o += fmt::format(R"(<text class="row" x="{}" y="{:.1f}" text-anchor="end">truth</text>)", kLeft - 8, y0 + 16);
    o += fmt::format(R"(<g id="{}truth-cpu{}">)", id, c);
    struct Run {
      int b = -1;
      double a = 0, z = 0;
    } cur;
    auto flush = [&] {
      if (cur.b >= 0 && cur.z > cur.a)
        o += fmt::format(
            R"(<rect class="b-{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}"><title>{}: {} - {}</title></rect>)",
            trace::name(trace::Bucket(cur.b)), x(cur.a), y0 + 2, std::max(0.3, x(cur.z) - x(cur.a)), row - 4,
            trace::name(trace::Bucket(cur.b)), fmt_ns(cur.a), fmt_ns(cur.z));
      cur = {};
    };
    // Only samples at this CPU's own events (and the end): a `steal` event moves time of the
    // interval since the CPU's previous event into steal after the fact, which a snapshot taken
    // at another CPU's event had already charged to the running state.
    std::size_t prev = 0;
    for (std::size_t s = 1; s <= ns; ++s) {
      if (s < ns && t.events[at[s - 1]].cpu != c) continue;
      double a = double(ts[prev]);
      std::uint64_t tot = 0;
      for (std::size_t b = 0; b < trace::kBuckets; ++b)
        tot += truth[s][c][b] > truth[prev][c][b] ? truth[s][c][b] - truth[prev][c][b] : 0;
      const double span = double(ts[s] - ts[prev]);
      const std::size_t p = prev;
      prev = s;
      if (tot == 0) continue;
      for (std::size_t b = 0; b < trace::kBuckets; ++b) {
        const auto d = truth[s][c][b] > truth[p][c][b] ? truth[s][c][b] - truth[p][c][b] : 0;
        if (!d) continue;
        const double z = a + span * double(d) / double(tot);
        if (cur.b == int(b) && cur.z == a)
          cur.z = z;
        else
          flush(), cur = {int(b), a, z};
        a = z;
      }
    }
    flush();
    o += "</g>";
    // charges per config
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const double y = top + row * double(k + 1);
      o += fmt::format(R"(<text class="row" x="{}" y="{:.1f}" text-anchor="end">{}</text>)", kLeft - 8, y + 16,
                       esc(runs[k].cfg.name()));
      o += fmt::format(R"(<line class="grid" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)", kLeft, y + row - 1,
                       kLeft + kPlotW, y + row - 1);
      for (std::size_t s = 1; s <= ns; ++s) {
        const auto& p = runs[k].cpustat[s - 1][c];
        const auto& q = runs[k].cpustat[s][c];
        std::uint64_t tot = 0;
        unsigned dom = 0;
        for (unsigned b = 0; b < model::NR_STATS; ++b) {
          const auto d = q[b] >= p[b] ? q[b] - p[b] : 0;
          tot += d;
          if (d > (q[dom] >= p[dom] ? q[dom] - p[dom] : 0)) dom = b;
        }
        if (!tot) continue;
        const std::uint32_t line = t.events[at[s - 1]].line;
        std::string what;
        for (unsigned b = 0; b < model::NR_STATS; ++b)
          if (q[b] > p[b]) what += fmt::format(" {} {} ns", model::usage_names[b], q[b] - p[b]);
        o += fmt::format(R"(<g id="{}chg-{}-cpu{}-L{}" class="chg b-{}" data-ns="{}">)", id, k, c, line,
                         model::usage_names[dom], tot);
        if (stride == 1)  // a tooltip per charge; long traces leave them out to stay small
          o += fmt::format("<title>{} at {} (line {}):{}</title>", esc(runs[k].cfg.name()), fmt_ns(double(ts[s])), line,
                           what);
        double a = double(ts[s]) - double(tot);
        for (unsigned b = 0; b < model::NR_STATS; ++b) {
          if (q[b] <= p[b]) continue;
          const double z = a + double(q[b] - p[b]);
          const double xa = std::max(x(a), kLeft);
          o += fmt::format(R"(<rect class="b-{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}"/>)",
                           model::usage_names[b], xa, y + 2, std::max(0.6, x(z) - xa), row - 4);
          a = z;
        }
        o += "</g>";
      }
    }
    // reads made on this CPU
    const double yb = top + row * double(1 + runs.size());
    for (const auto i : drawn) {
      const auto& rd = reads[i];
      auto it = cpu_of_line.find(rd.line);
      if (it == cpu_of_line.end() || it->second != c) continue;
      const double px = x(double(rd.ts));
      std::string vals;
      for (const auto& r : runs)
        if (const auto* q = read_of(r, i))
          vals +=
              fmt::format("\n{}: utime {} ns, stime {} ns, rtime {} ns", r.cfg.name(), q->utime, q->stime, q->rtime);
      o += fmt::format(
          R"(<g id="{}read-L{}" class="read"><title>read id={} {} of tid {} at {} (line {}){}</title><line class="read" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{:.1f}"/><path class="read" d="M{:.1f},{} l-6,-9 l12,0 Z"/></g>)",
          id, rd.line, rd.id, trace::name(rd.kind), rd.tid, fmt_ns(double(rd.ts)), rd.line, esc(vals), px, top - 2, px,
          yb, px, top - 2);
    }
    o += time_axis(x, yb + 2);
    o += "</svg>\n";
  }

  // Totals: what each config charged per CPU and bucket (= `kacct run`), beside the truth.
  o += "<h3>totals (ns)</h3><p class=\"note\">The sum of the bars above, per config; equal to <code>kacct run</code>'s "
       "kcpustat. Truth in the kernel's view (user and nice include guest and guest_nice).</p>\n<table><tr><th "
       "class=\"l\">cpu</th><th class=\"l\">bucket</th><th>truth</th>";
  for (const auto& r : runs) o += fmt::format("<th>{}</th>", esc(r.cfg.name()));
  o += "</tr>\n";
  for (std::uint32_t c = 0; c < ncpus; ++c)
    for (unsigned b = 0; b < model::NR_STATS; ++b) {
      auto tv = truth[ns][c][b];
      if (b == model::USER) tv += truth[ns][c][std::size_t(trace::Bucket::Guest)];
      if (b == model::NICE) tv += truth[ns][c][std::size_t(trace::Bucket::GuestNice)];
      o += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>", c, model::usage_names[b], tv);
      for (std::size_t k = 0; k < runs.size(); ++k) {
        const auto drawn = runs[k].cpustat[ns][c][b];
        const auto final = runs[k].final.cpus[c].cpustat[b];
        o += fmt::format(R"(<td id="{}total-{}-cpu{}-{}" data-ns="{}">{}{}</td>)", id, k, c, model::usage_names[b],
                         drawn, drawn, drawn == final ? "" : fmt::format(" (run: {}!)", final));
      }
      o += "</tr>\n";
    }
  o += "</table>\n";

  // Per task: true vs reported utime / stime over time, then the error.
  for (std::size_t k = 0; k < shown.size(); ++k) {
    const auto& ti = prog.tasks[shown[k]];
    o += fmt::format("<h3>task {} ({}, pid {})</h3>\n", ti.tid, esc(ti.comm), ti.pid);
    double ymax = 1, emin = 0, emax = 0;
    for (std::size_t s = 0; s <= ns; ++s) {
      ymax = std::max({ymax, double(ttruth[s][k][0]), double(ttruth[s][k][1])});
      for (const auto& r : runs) {
        ymax = std::max({ymax, double(r.task[s][k][0]), double(r.task[s][k][1])});
        for (int f = 0; f < 2; ++f) {
          const double e = double(r.task[s][k][f]) - double(ttruth[s][k][f]);
          emin = std::min(emin, e), emax = std::max(emax, e);
        }
      }
    }
    if (emin == emax) emax = 1;
    auto chart = [&](bool err) {
      const double H = 170, top = 10, bottom = top + H;
      const double lo = err ? emin : 0, hi = err ? emax : ymax * 1.05;
      const Scale y{lo, hi, bottom, top};
      std::string g = fmt::format(R"(<svg id="{}task{}-{}" width="{}" height="{}" role="img">)", id, ti.tid,
                                  err ? "error" : "times", kLeft + kPlotW + kRight, bottom + 28);
      g += fmt::format(R"(<text class="title" x="8" y="{:.1f}">{}</text>)", top + 12,
                       err ? "error: reported - true" : "utime / stime");
      g += value_axis(y, kLeft, kLeft + kPlotW, [](double v) { return fmt_ns(v); });
      g += time_axis(x, bottom);
      auto line = [&](auto&& val, const char* colour, const char* dash, double w, const std::string& label,
                      bool steps) {
        std::string pts;
        for (std::size_t s = 0; s <= ns; ++s) {  // model counters step at charges; true time grows between events
          const double v = val(s);
          if (s && steps && stride == 1) pts += fmt::format("{:.1f},{:.1f} ", x(double(ts[s])), y(val(s - 1)));
          pts += fmt::format("{:.1f},{:.1f} ", x(double(ts[s])), y(v));
        }
        return fmt::format(
            R"(<polyline fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" points="{}"><title>{}</title></polyline>)",
            colour, w, dash, pts, esc(label));
      };
      if (!err) {
        g += line([&](std::size_t s) { return double(ttruth[s][k][0]); }, kBucketColour[model::USER], "", 4,
                  "true utime", false);
        g += line([&](std::size_t s) { return double(ttruth[s][k][1]); }, kBucketColour[model::SYSTEM], "", 4,
                  "true stime", false);
      } else {
        g += fmt::format(R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#000"/>)", kLeft, y(0),
                         kLeft + kPlotW, y(0));
      }
      for (std::size_t r = 0; r < runs.size(); ++r)
        for (int f = 0; f < 2; ++f) {
          const auto& R = runs[r];
          auto v = [&](std::size_t s) { return double(R.task[s][k][f]) - (err ? double(ttruth[s][k][f]) : 0.0); };
          g += line(v, kSeriesColour[r % 8], f ? "6,3" : "", 1.6,
                    fmt::format("{} {}{}", R.cfg.name(), f ? "stime" : "utime", err ? " error" : ""), true);
        }
      if (!err)  // reads of this task: the adjusted values each config reported
        for (std::size_t r = 0; r < runs.size(); ++r)
          for (const auto i : drawn)
            if (const auto* q = read_of(runs[r], i); q && q->tid == ti.tid &&
                                                     q->kind != trace::ReadKind::ThreadCputime &&
                                                     q->kind != trace::ReadKind::ProcessCputime)
              for (int f = 0; f < 2; ++f)
                g += fmt::format(
                    R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}" stroke="#000"><title>{} read id={} {}: {} {} ns (after cputime_adjust)</title></circle>)",
                    x(double(q->ts)), y(double(f ? q->stime : q->utime)), kSeriesColour[r % 8], esc(runs[r].cfg.name()),
                    q->id, trace::name(q->kind), f ? "stime" : "utime", f ? q->stime : q->utime);
      for (const auto i : drawn)
        g += fmt::format(R"(<line class="read" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}"/>)", x(double(reads[i].ts)),
                         top, bottom);
      return g + "</svg>\n";
    };
    o += chart(false);
    o += chart(true);
    std::string lg = R"(<div class="legend">)";
    lg += fmt::format(R"(<span class="sw" style="background:{}"></span>true utime)", kBucketColour[model::USER]);
    lg += fmt::format(R"(<span class="sw" style="background:{}"></span>true stime)", kBucketColour[model::SYSTEM]);
    for (std::size_t r = 0; r < runs.size(); ++r)
      lg +=
          fmt::format(R"(<span class="sw" style="background:{}"></span>{}: utime solid, stime dashed, dots: its reads)",
                      kSeriesColour[r % 8], esc(runs[r].cfg.name()));
    o += lg + "</div>\n";
  }
  if (prog.tasks.size() - ncpus > shown.size())
    o += fmt::format("<p class=\"note\">{} more tasks not drawn (the {} with the most true time are).</p>\n",
                     prog.tasks.size() - ncpus - shown.size(), shown.size());
  return o;
}

arch::CpuFacts trace_cpu(const std::string& opt, const trace::Trace& t) {
  if (!opt.empty()) return resolve_cpu(opt);
  if (auto c = arch::find_cpu(t.header.cpu_model)) return *c;
  throw Failure(
      fmt::format("the trace's CPU '{}' is not in the table; pass --cpu (see `kacct list cpus`)", t.header.cpu_model));
}

std::string trace_page(const std::string& path, const std::string& cpu_opt, const std::vector<std::string>& cfg_names) {
  if (cfg_names.empty()) throw Failure("report: a trace needs at least one --config");
  Loaded l = load_trace(path);
  const auto cpu = trace_cpu(cpu_opt, l.trace);
  std::vector<arch::Config> cfgs;
  for (const auto& c : cfg_names) {
    cfgs.push_back(resolve_config(c));
    require_legal(cpu, cfgs.back());
  }
  auto prog = sim::compile(l.trace);
  if (!prog) {
    fmt::print(stderr, "{}:{}: {}\n", l.name, prog.error().line, prog.error().message);
    throw Exit{kExitUsage};
  }
  std::string o = page_head("kacct report: " + l.name);
  o += fmt::format("<h1>Where the CPU time went: {}</h1>\n", esc(l.name));
  o += trace_section(l.trace, prog.value(), cpu, cfgs, "");
  return o + page_tail();
}

// ---- PSI scripts ---------------------------------------------------------------------------

// IRQ_FULL pressure per cgroup over the script's clock, from the runner's state after each
// (sampled) prefix of the script: the runner has no per-event hook, and prefixes replay exactly.
std::string psi_section(const mpsi::Script& s, const mpsi::PsiCfg& cfg, const std::string& id) {
  std::string o;
  const auto whole = mpsi::run_script(s, cfg, true);
  if (whole.error)
    return fmt::format("<p class=\"note\">the script stops at line {}: {}</p>\n", whole.line, esc(whole.error->str()));
  const std::size_t n = s.events.size();
  const std::size_t stride = std::max<std::size_t>(1, (n + 399) / 400);
  struct Pt {
    std::uint64_t now;
    std::size_t ev;
    std::vector<std::uint64_t> g;  // IRQ_FULL summed over CPUs, per group
  };
  std::vector<Pt> pts;
  const std::size_t ng = s.parent.size();
  for (std::size_t k = 0; k <= n; k += (k == n ? 1 : std::min(stride, n - k))) {
    mpsi::Script p = s;
    p.events.resize(k);
    if (!p.lines.empty()) p.lines.resize(k);
    const auto r = mpsi::run_script(p, cfg, false);
    Pt pt{r.world.v.now, k, std::vector<std::uint64_t>(ng, 0)};
    for (std::size_t g = 0; g < ng && g < r.world.v.gc.size(); ++g)
      for (const auto& gc : r.world.v.gc[g]) pt.g[g] += gc.irq_full;
    pts.push_back(std::move(pt));
    if (k == n) break;
  }
  o += fmt::format(
      "<p class=\"note\">version {}, irqtime {}, {} CPUs, {} cgroups, {} events{}. Verdict: "
      "<span class=\"verdict v-{}\">{}</span> {}</p>\n",
      cfg.ver.str(), cfg.irqtime ? "on" : "off", s.cpus, ng, n,
      stride > 1 ? fmt::format(" (drawn every {} events)", stride) : "", whole.violation ? "violated" : "holds",
      whole.violation ? "violated" : "every invariant holds",
      whole.violation ? esc(fmt::format("{} at event {} (line {}): {}", whole.violation->invariant,
                                        *whole.failed_at + 1, whole.line, whole.violation->message))
                      : "");
  double ymax = 1, tmax = 1;
  for (const auto& p : pts) {
    tmax = std::max(tmax, double(p.now));
    for (auto v : p.g) ymax = std::max(ymax, double(v));
  }
  // x: the script clock; events at one instant stack up as vertical steps.
  const Scale x{0, tmax, kLeft, kLeft + kPlotW};
  const double top = 10, H = 220, bottom = top + H;
  const Scale y{0, ymax * 1.08, bottom, top};
  o += fmt::format(R"(<svg id="{}psi" width="{}" height="{}" role="img">)", id, kLeft + kPlotW + kRight, bottom + 28);
  o += fmt::format(R"(<text class="title" x="8" y="{:.1f}">IRQ_FULL (ns)</text>)", top + 12);
  o += value_axis(y, kLeft, kLeft + kPlotW, [](double v) { return fmt_ns(v); });
  o += time_axis(x, bottom);
  for (std::size_t g = 0; g < ng; ++g) {
    std::string p;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (i) p += fmt::format("{:.1f},{:.1f} ", x(double(pts[i].now)), y(double(pts[i - 1].g[g])));
      p += fmt::format("{:.1f},{:.1f} ", x(double(pts[i].now)), y(double(pts[i].g[g])));
    }
    o += fmt::format(
        R"(<polyline id="{}psi-group{}" fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" points="{}"><title>group {}: IRQ_FULL {} ns at the end</title></polyline>)",
        id, g, kSeriesColour[g % 8], 2.0 + 2.0 * double(std::min<std::size_t>(ng - 1 - g, 3)), g >= 8 ? "5,3" : "", p,
        g, pts.back().g[g]);
  }
  if (whole.violation && whole.failed_at) {  // where the first violated invariant was found
    std::uint64_t now = 0;
    for (const auto& p : pts)
      if (p.ev <= *whole.failed_at + 1) now = p.now;
    o += fmt::format(
        R"(<g id="{0}psi-violation"><line x1="{1:.1f}" y1="{2}" x2="{1:.1f}" y2="{3}" stroke="#c62828" stroke-width="2"/><title>violated here</title></g>)",
        id, x(double(now)), top, bottom);
  }
  o += "</svg>\n<div class=\"legend\">";
  for (std::size_t g = 0; g < ng; ++g)
    o += fmt::format(R"(<span class="sw" style="background:{}"></span>group {}{})", kSeriesColour[g % 8], g,
                     g == 0 ? " (root)" : fmt::format(" (parent {})", s.parent[g]));
  o += "</div>\n<table><tr><th class=\"l\">group</th><th>IRQ_FULL at the end (ns)</th></tr>";
  for (std::size_t g = 0; g < ng; ++g)
    o += fmt::format("<tr><td class=\"l\">{}</td><td>{}</td></tr>", g, pts.back().g[g]);
  return o + "</table>\n";
}

std::string psi_page(const std::string& path, const std::string& version) {
  const auto text = read_file(path);
  auto p = mpsi::parse_script(text);
  if (!p) throw Failure(fmt::format("{}:{}", path, p.error().str()));
  auto cfg = mpsi::script_cfg(p.value());
  if (!version.empty()) {
    auto v = arch::parse_version(version);
    if (!v) throw Failure("--version: expected MAJOR.MINOR[.POINT], got '" + version + "'");
    cfg.ver = *v;
  }
  std::string o = page_head("kacct report: " + path);
  o += fmt::format("<h1>PSI irq pressure per cgroup: {}</h1>\n", esc(path));
  o += psi_section(p.value(), cfg, "");
  return o + page_tail();
}

// ---- lazy-TLB scripts ----------------------------------------------------------------------

std::string lazytlb_section(const mlt::Script& s, const std::string& id) {
  std::string o;
  const auto cfg = s.cfg();
  auto w = mlt::initial(s.sizes);
  mlt::Costs costs;
  mlt::StepLog log;
  struct Step {
    std::vector<mlt::Ref> active;      // per CPU: the mm its current task references (active_mm)
    std::vector<std::uint32_t> count;  // per mm: mm_count
    std::uint64_t frees = 0, ipis = 0;
    std::string text;
  };
  std::vector<Step> steps;
  auto snap = [&](std::string text, std::uint64_t frees, std::uint64_t ipis) {
    Step st{{}, {}, frees, ipis, std::move(text)};
    for (const auto& c : w.cpus) st.active.push_back(c.curr >= 0 ? w.tasks[c.curr].active_mm : mlt::kNull);
    for (std::size_t m = 0; m < w.mms.size(); ++m)
      st.count.push_back(w.mms[m].st == mlt::MmState::Live ? std::uint32_t(w.cnt[m].mm_count) : 0);
    steps.push_back(std::move(st));
  };
  snap("initial", 0, 0);
  std::string stop;
  for (std::size_t i = 0; i < s.events.size() && i < 4000; ++i) {
    const auto& e = s.events[i];
    const auto line = i < s.lines.size() ? s.lines[i] : 0;
    if (auto why = mlt::not_enabled(w, cfg, e); !why.empty()) {
      stop = fmt::format("event {} (line {}) cannot happen: {}", i + 1, line, why);
      break;
    }
    const auto before = costs;
    std::vector<spec::lazytlb::Violation> bad;
    const bool ok = mlt::checked_step(cfg, w, e, costs, log, bad);
    snap(mlt::event_text(e), costs.frees - before.frees, costs.ipis - before.ipis);
    if (!ok) {
      stop = fmt::format("event {} (line {}) violates:", i + 1, line);
      for (const auto& b : bad) stop += " " + b.invariant;
      break;
    }
  }
  const std::size_t n = steps.size();
  o += fmt::format("<p class=\"note\">{} CPUs, {} tasks, {} mms, mode {}, {} events drawn{}. {}</p>\n", s.sizes.cpus,
                   s.sizes.tasks, s.sizes.mms, mlt::mode_name(cfg), n - 1,
                   s.events.size() > 4000 ? " (the first 4000)" : "",
                   stop.empty() ? "<span class=\"verdict v-holds\">holds</span> every invariant after every event"
                                : "<span class=\"verdict v-violated\">stopped</span> " + esc(stop));
  const Scale x{0, double(std::max<std::size_t>(n - 1, 1)), kLeft, kLeft + kPlotW};
  const double row = 24, top = 24;
  const int nm = s.sizes.mms;
  auto mm_colour = [&](mlt::Ref m) -> std::string {
    if (m == mlt::kInitMm) return "#dcdcdc";
    if (m < 0) return "#ffffff";
    return kSeriesColour[m % 8];
  };
  auto mm_name = [](mlt::Ref m) {
    return m == mlt::kInitMm ? std::string("init_mm") : m < 0 ? std::string("none") : fmt::format("mm {}", m);
  };
  const double hc = top + row * s.sizes.cpus;
  const double H2 = 150, top2 = hc + 34, bottom2 = top2 + H2;
  o += fmt::format(R"(<svg id="{}lazytlb" width="{}" height="{}" role="img">)", id, kLeft + kPlotW + kRight,
                   bottom2 + 34);
  o +=
      fmt::format(R"(<text class="title" x="8" y="14">active_mm per CPU, frees (&#x2715;) and IPIs (&#x25B2;)</text>)");
  for (int c = 0; c < s.sizes.cpus; ++c) {
    const double y = top + row * c;
    o += fmt::format(R"(<text class="row" x="{}" y="{:.1f}" text-anchor="end">cpu {}</text>)", kLeft - 8, y + 16, c);
    std::size_t a = 1;
    for (std::size_t k = 1; k <= n; ++k) {  // runs of one active_mm
      if (k < n && steps[k].active[c] == steps[a].active[c]) continue;
      o += fmt::format(
          R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}" stroke="#fff" stroke-width="0.5"><title>cpu {}: {} during events {}-{}</title></rect>)",
          x(double(a - 1)), y + 2, x(double(k - 1)) - x(double(a - 1)), row - 4, mm_colour(steps[a].active[c]), c,
          mm_name(steps[a].active[c]), a, k - 1);
      a = k;
    }
  }
  for (std::size_t k = 1; k < n; ++k) {
    const double px = x(double(k) - 0.5);
    if (steps[k].frees)
      o += fmt::format(
          R"(<text id="{}free-{}" x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#c62828" style="font-size:14px">&#x2715;<title>event {}: {}: {} mm freed</title></text>)",
          id, k, px, hc + 14, k, esc(steps[k].text), steps[k].frees);
    if (steps[k].ipis)
      o += fmt::format(
          R"(<text id="{}ipi-{}" x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#1565c0" style="font-size:13px">&#x25B2;<title>event {}: {}: {} IPIs</title></text>)",
          id, k, px, hc + 28, k, esc(steps[k].text), steps[k].ipis);
  }
  // mm_count per mm over the events
  std::uint32_t cmax = 1;
  for (const auto& st : steps)
    for (auto c : st.count) cmax = std::max(cmax, c);
  const Scale y{0, double(cmax) + 1, bottom2, top2};
  o += fmt::format(R"(<text class="title" x="8" y="{:.1f}">mm_count</text>)", top2 + 12);
  o += value_axis(y, kLeft, kLeft + kPlotW, [](double v) { return num(v); });
  for (int m = 0; m < nm; ++m) {
    std::string p;
    for (std::size_t k = 0; k < n; ++k) {
      if (k) p += fmt::format("{:.1f},{:.1f} ", x(double(k)), y(double(steps[k - 1].count[m])));
      p += fmt::format("{:.1f},{:.1f} ", x(double(k)), y(double(steps[k].count[m])));
    }
    o += fmt::format(
        R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"><title>mm {} mm_count</title></polyline>)",
        kSeriesColour[m % 8], p, m);
  }
  // axis: event numbers
  const double step = std::max(1.0, nice_step(double(n), 10));
  o += fmt::format(R"(<line class="axis" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)", kLeft, bottom2, kLeft + kPlotW,
                   bottom2);
  for (double k = 0; k <= double(n - 1); k += step)
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x(k), bottom2 + 16,
                     num(k));
  o += fmt::format(R"(<text class="tick" x="{}" y="{:.1f}" text-anchor="end">event</text>)", kLeft - 8, bottom2 + 16);
  o += "</svg>\n<div class=\"legend\">";
  o += R"(<span class="sw" style="background:#dcdcdc"></span>init_mm)";
  for (int m = 0; m < nm; ++m)
    o += fmt::format(R"(<span class="sw" style="background:{}"></span>mm {})", kSeriesColour[m % 8], m);
  o += "</div>\n<details><summary>events</summary><pre>";
  for (std::size_t k = 1; k < n; ++k) o += fmt::format("{:4} {}\n", k, esc(steps[k].text));
  return o + "</pre></details>\n";
}

std::string lazytlb_page(const std::string& path) {
  const auto text = read_file(path);
  auto p = mlt::parse_script(text);
  if (!p) throw Failure(fmt::format("{}:{}", path, p.error().str()));
  std::string o = page_head("kacct report: " + path);
  o += fmt::format("<h1>Lazy-TLB mm references: {}</h1>\n", esc(path));
  o += lazytlb_section(p.value(), "");
  return o + page_tail();
}

// ---- conformance ---------------------------------------------------------------------------

// `kacct perf-replay ... --json` (the prediction and the comparison) and the kernel's values
// (--values JSON lines): predicted vs reported per read, in ns.
std::string conformance_page(const std::string& replay_path, const std::string& values_path) {
  json rp;
  try {
    rp = json::parse(read_file(replay_path));
  } catch (const json::exception&) { throw Failure(replay_path + ": not the JSON of `kacct perf-replay --json`"); }
  if (!rp.is_object() || !rp.contains("reads") || !rp["reads"].is_array())
    throw Failure(replay_path + ": not the JSON of `kacct perf-replay --json` (no \"reads\")");
  std::map<std::uint64_t, json> kernel;
  if (!values_path.empty()) {
    std::istringstream in(read_file(values_path));
    std::string line;
    for (unsigned no = 1; std::getline(in, line); ++no) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        auto j = json::parse(line);
        if (j.contains("marker") && j["marker"].is_number_unsigned()) kernel[j["marker"].get<std::uint64_t>()] = j;
      } catch (const json::exception&) { throw Failure(fmt::format("{}:{}: not a JSON line", values_path, no)); }
    }
  }
  std::map<std::uint64_t, std::string> agreement;
  if (rp.contains("comparison"))
    for (const auto& c : rp["comparison"])
      if (c.contains("marker")) agreement[c["marker"].get<std::uint64_t>()] = c.value("agreement", "");
  auto to_ns = [](const std::string& unit) { return unit == "clock_ticks" ? 1e7 : unit == "us" ? 1e3 : 1.0; };
  struct Row {
    std::uint64_t marker;
    std::string kind, unit, agree;
    std::optional<double> pu, ps, pv, ku, ks, kv;  // ns
  };
  std::vector<Row> rows;
  for (const auto& r : rp["reads"]) {
    const auto m = r.value("marker", std::uint64_t(0));
    if (m >= (std::uint64_t(1) << 32)) continue;  // checkpoints, not marked reads
    Row row{m, r.value("kind", ""), r.value("unit", "ns"), agreement.count(m) ? agreement[m] : "", {}, {}, {}, {}, {},
            {}};
    const double f = to_ns(row.unit);
    if (r.contains("value")) row.pv = r["value"].get<double>() * f;
    if (r.contains("utime")) row.pu = r["utime"].get<double>() * f, row.ps = r["stime"].get<double>() * f;
    if (auto it = kernel.find(m); it != kernel.end()) {
      const double g = to_ns(it->second.value("unit", row.unit));
      if (it->second.contains("value")) row.kv = it->second["value"].get<double>() * g;
      if (it->second.contains("utime")) row.ku = it->second["utime"].get<double>() * g;
      if (it->second.contains("stime")) row.ks = it->second["stime"].get<double>() * g;
    }
    rows.push_back(std::move(row));
  }
  std::string o = page_head("kacct report: " + replay_path);
  o += fmt::format("<h1>Predicted vs kernel-reported reads: {}</h1>\n", esc(replay_path));
  o += fmt::format(
      "<p class=\"note\">cpu {}, config {}, pid {}; kernel values from {}. Each read as the kernel "
      "reported it (right bar of each pair) and as kacct predicted it (left), utime below stime, in the "
      "read's unit converted to ns.</p>\n",
      esc(rp.value("cpu", "?")), esc(rp.value("config", "?")), rp.value("pid", 0),
      values_path.empty() ? "nowhere (no --values: predictions only)" : esc(values_path));
  if (rp.contains("summary")) o += "<p class=\"note\">summary: " + esc(rp["summary"].dump()) + "</p>\n";
  double ymax = 1;
  for (const auto& r : rows)
    for (const auto& v : {r.pv, r.kv, std::optional<double>(r.pu.value_or(0) + r.ps.value_or(0)),
                          std::optional<double>(r.ku.value_or(0) + r.ks.value_or(0))})
      if (v) ymax = std::max(ymax, *v);
  const double top = 10, H = 260, bottom = top + H;
  const Scale y{0, ymax * 1.08, bottom, top};
  const double slot = rows.empty() ? kPlotW : kPlotW / double(rows.size());
  o += fmt::format(R"(<svg id="conformance" width="{}" height="{}" role="img">)", kLeft + kPlotW + kRight, bottom + 44);
  o += value_axis(y, kLeft, kLeft + kPlotW, [](double v) { return fmt_ns(v); });
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double x0 = kLeft + slot * double(i), bw = std::min(30.0, slot * 0.35);
    auto bar = [&](double x, std::optional<double> u, std::optional<double> s, std::optional<double> v,
                   const char* who) {
      std::string g;
      if (v) {
        g += fmt::format(
            R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} value {} ns</title></rect>)",
            x, y(*v), bw, bottom - y(*v), kBucketColour[9], who, num(*v));
      } else if (u || s) {
        const double uu = u.value_or(0), ss = s.value_or(0);
        g += fmt::format(
            R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} utime {} ns</title></rect>)",
            x, y(uu), bw, bottom - y(uu), kBucketColour[model::USER], who, num(uu));
        g += fmt::format(
            R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} stime {} ns</title></rect>)",
            x, y(uu + ss), bw, y(uu) - y(uu + ss), kBucketColour[model::SYSTEM], who, num(ss));
      }
      return g;
    };
    o += fmt::format(R"(<g id="read-{}" class="a-{}">)", r.marker, r.agree);
    o += bar(x0 + slot * 0.12, r.pu, r.ps, r.pv, "kacct");
    if (r.ku || r.ks || r.kv) o += bar(x0 + slot * 0.12 + bw + 2, r.ku, r.ks, r.kv, "kernel");
    const double cx = x0 + slot * 0.12 + bw;
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">#{}</text>)", cx, bottom + 13,
                     r.marker);
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle" style="font-size:9px">{}</text>)",
                     cx, bottom + 25, esc(r.kind));
    o += fmt::format(R"(<text class="tick a-{}" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text></g>)", r.agree, cx,
                     bottom + 38, esc(r.agree.empty() ? "-" : r.agree));
  }
  o += fmt::format(R"(<line class="axis" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"/>)", kLeft, bottom, kLeft + kPlotW,
                   bottom);
  o += "</svg>\n";
  o += fmt::format(
      R"(<div class="legend"><span class="sw" style="background:{}"></span>utime<span class="sw" style="background:{}"></span>stime<span class="sw" style="background:{}"></span>clock value (left bar: kacct, right bar: kernel)</div>)",
      kBucketColour[model::USER], kBucketColour[model::SYSTEM], kBucketColour[9]);
  o += "\n<p class=\"note\">Values in ns.</p><table><tr><th>marker</th><th class=\"l\">kind</th><th class=\"l\">read's "
       "unit</th><th>kacct utime</th><th>kernel "
       "utime</th><th>kacct stime</th><th>kernel stime</th><th>kacct value</th><th>kernel value</th><th "
       "class=\"l\">agreement</th></tr>\n";
  auto cell = [](std::optional<double> v) { return v ? num(*v) : std::string("-"); };
  for (const auto& r : rows)
    o += fmt::format(
        "<tr><td>{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l "
        "a-{}\">{}</td></tr>\n",
        r.marker, esc(r.kind), esc(r.unit), cell(r.pu), cell(r.ku), cell(r.ps), cell(r.ks), cell(r.pv), cell(r.kv),
        r.agree, esc(r.agree));
  o += "</table>\n";
  return o + page_tail();
}

// ---- validate ------------------------------------------------------------------------------

// The config of the other release of the patch (4.19-native-hz250 -> 4.20-native-hz250), if any.
std::optional<arch::Config> other_release(const std::string& name, const proofs::PatchReport& p) {
  const auto dash = name.find('-');
  if (dash == std::string::npos) return std::nullopt;
  const auto ver = name.substr(0, dash);
  const std::string other = ver == p.before ? p.after : ver == p.after ? p.before : "";
  if (other.empty()) return std::nullopt;
  try {
    return resolve_config(other + name.substr(dash));
  } catch (const Failure&) { return std::nullopt; }
}

std::string counterexample_section(const proofs::PatchReport& p, const proofs::Result& c, const std::string& id) {
  std::string o;
  if (!c.counterexample) {
    if (c.inputs.is_null() || c.inputs.empty()) return o;
    o += "<p class=\"note\">The counterexample is the inputs of one call (no trace: one would be too long to draw, "
         "or the claim is about a single step):</p><pre>" +
         esc(c.inputs.dump(2)) + "</pre>\n";
    return o;
  }
  const std::string& text = *c.counterexample;
  o += "<details><summary>counterexample text";
  if (!c.command.empty()) o += " (replay: <code>" + esc(c.command.line) + "</code>)";
  o += "</summary><pre>" + esc(text.size() > 20000 ? text.substr(0, 20000) + "\n..." : text) + "</pre></details>\n";
  // Which kind of script: the first line that is not a comment.
  std::string first;
  {
    std::istringstream in(text);
    while (std::getline(in, first))
      if (!first.empty() && first[0] != '#') break;
  }
  try {
    if (first.rfind("kacct-trace", 0) == 0) {
      auto t = trace::load(text);
      if (!t) return o + "<p class=\"note\">the trace does not load: " + esc(t.error().message) + "</p>\n";
      auto prog = sim::compile(t.value());
      if (!prog) return o + "<p class=\"note\">the trace does not compile</p>\n";
      auto cpu = arch::find_cpu(t.value().header.cpu_model);
      if (!cpu || c.replay_config.empty()) return o;
      std::vector<arch::Config> cfgs{resolve_config(c.replay_config)};
      if (auto other = other_release(c.replay_config, p); other && arch::legal(*cpu, *other)) cfgs.push_back(*other);
      if (cfgs.size() == 2 && other_release(c.replay_config, p) && c.replay_config.rfind(p.after, 0) == 0)
        std::swap(cfgs[0], cfgs[1]);  // before first
      o += trace_section(t.value(), prog.value(), *cpu, cfgs, id);
    } else if (first.rfind("psi", 0) == 0) {
      auto s = mpsi::parse_script(text);
      if (!s) return o + "<p class=\"note\">the script does not parse: " + esc(s.error().str()) + "</p>\n";
      const auto cfg = mpsi::script_cfg(s.value());
      o += "<h4>as judged (" + esc(cfg.ver.str()) + ")</h4>\n" + psi_section(s.value(), cfg, id);
      auto before = cfg;
      if (auto v = arch::parse_version(p.before); v && cfg.ver != *v) {
        before.ver = *v;
        o += "<h4>on the release before the patch (" + esc(p.before) + ")</h4>\n" +
             psi_section(s.value(), before, id + "b-");
      }
    } else if (first.rfind("lazytlb", 0) == 0) {
      auto s = mlt::parse_script(text);
      if (!s) return o + "<p class=\"note\">the script does not parse: " + esc(s.error().str()) + "</p>\n";
      o += "<h4>as judged (" + esc(s.value().version.str()) + ")</h4>\n" + lazytlb_section(s.value(), id);
      if (auto v = arch::parse_version(p.before); v && s.value().version != *v) {
        auto before = s.value();
        before.version = *v;
        o += "<h4>on the release before the patch (" + esc(p.before) + ")</h4>\n" + lazytlb_section(before, id + "b-");
      }
    }
  } catch (const Failure& e) { o += "<p class=\"note\">cannot draw it: " + esc(e.what()) + "</p>\n"; }
  return o;
}

// `kacct validate --json` read back (the patches CI already judged, drawn without judging
// them again). The config a trace counterexample was judged on is the replay command's.
std::vector<proofs::PatchReport> reports_from_json(const std::string& path) {
  std::vector<proofs::PatchReport> out;
  try {
    const auto j = json::parse(read_file(path));
    for (const auto& p : j) {
      proofs::PatchReport r{p.at("patch"), p.at("title"), p.at("before"), p.at("after"), {}};
      for (const auto& c : p.at("claims")) {
        proofs::Result x;
        x.name = c.at("name");
        const std::string v = c.at("verdict");
        x.verdict = v == "holds"      ? proofs::Verdict::Holds
                    : v == "violated" ? proofs::Verdict::Violated
                    : v == "unknown"  ? proofs::Verdict::Unknown
                                      : proofs::Verdict::Error;
        x.detail = c.value("detail", "");
        x.approximations = c.value("approximations", std::vector<std::string>{});
        if (c.contains("scope")) {
          x.scope.covers = c["scope"].value("covers", std::vector<std::string>{});
          x.scope.omits = c["scope"].value("omits", std::vector<std::string>{});
        }
        if (c.contains("counterexample")) x.counterexample = c["counterexample"].get<std::string>();
        if (c.contains("inputs")) x.inputs = c["inputs"];
        x.replay = c.value("replay", "");
        if (c.contains("command")) {
          x.command.line = c["command"].value("line", "");
          const auto at = x.command.line.find("--config ");
          if (at != std::string::npos) {
            const auto from = at + 9;
            x.replay_config = x.command.line.substr(from, x.command.line.find(' ', from) - from);
          }
        }
        x.seconds = c.value("seconds", 0.0);
        r.claims.push_back(std::move(x));
      }
      out.push_back(std::move(r));
    }
  } catch (const json::exception& e) {
    throw Failure(fmt::format("{}: not the JSON of `kacct validate --json` ({})", path, e.what()));
  }
  return out;
}

std::string validate_page(const std::vector<std::string>& ids, unsigned timeout_ms, unsigned jobs,
                          const std::string& from_json) {
  std::vector<proofs::PatchReport> reports;
  if (!from_json.empty()) {
    if (!ids.empty()) throw Failure("report: --from-json draws the patches in the file; give no patch ids");
    reports = reports_from_json(from_json);
  } else {
    try {
      reports = proofs::validate({ids, timeout_ms, jobs ? jobs : std::thread::hardware_concurrency() + 1});
    } catch (const std::invalid_argument& e) { throw Failure(e.what()); }
  }
  std::string o = page_head("kacct report: validate");
  o += "<h1>Patch claims: kacct validate</h1>\n<p class=\"note\">Each patch of the table with its claims, the "
       "verdict, what the verdict covers and omits, and every counterexample drawn as it replays.</p>\n";
  o += "<table><tr><th class=\"l\">patch</th><th class=\"l\">title</th><th class=\"l\">release</th><th "
       "class=\"l\">claims</th></tr>\n";
  for (const auto& p : reports) {
    o += fmt::format(
        "<tr><td class=\"l\"><a href=\"#p-{0}\">{0}</a></td><td class=\"l\">{1}</td><td class=\"l\">{2} "
        "&rarr; {3}</td><td class=\"l\">",
        esc(p.patch), esc(p.title), esc(p.before), esc(p.after));
    for (const auto& c : p.claims)
      o += fmt::format("<span class=\"verdict v-{}\" title=\"{}\">{}</span> ", proofs::name(c.verdict), esc(c.name),
                       proofs::name(c.verdict));
    o += "</td></tr>\n";
  }
  o += "</table>\n";
  for (const auto& p : reports) {
    o += fmt::format(
        "<h2 id=\"p-{0}\">{0} {1}</h2><p class=\"note\">before: {2}, after: {3}; worst verdict "
        "<span class=\"verdict v-{4}\">{4}</span></p>\n",
        esc(p.patch), esc(p.title), esc(p.before), esc(p.after), proofs::name(p.worst()));
    for (std::size_t i = 0; i < p.claims.size(); ++i) {
      const auto& c = p.claims[i];
      const std::string cid = fmt::format("p{}-c{}-", p.patch, i);
      o += fmt::format(
          "<h3 id=\"{0}claim\" class=\"claim c-{2}\">{1} <span class=\"verdict v-{2}\">{2}</span> <small>({3:.1f} "
          "s)</small></h3>\n",
          cid, esc(c.name), proofs::name(c.verdict), c.seconds);
      o += "<p>" + esc(c.detail) + "</p>\n";
      if (!c.replay.empty()) o += "<p class=\"note\">replayed: " + esc(c.replay) + "</p>\n";
      auto list = [&](const char* what, const std::vector<std::string>& v) {
        if (v.empty()) return;
        o += std::string("<details><summary>") + what + fmt::format(" ({})</summary><ul>", v.size());
        for (const auto& s : v) o += "<li>" + esc(s) + "</li>";
        o += "</ul></details>\n";
      };
      list("scope: covers", c.scope.covers);
      list("scope: omits", c.scope.omits);
      list("approximations", c.approximations);
      o += counterexample_section(p, c, cid);
    }
  }
  return o + page_tail();
}

struct Opts {
  std::vector<std::string> inputs, configs;
  std::string out, cpu, values, version, from_json;
  bool validate = false, psi = false, lazytlb = false, conformance = false;
  unsigned timeout_ms = 30000, jobs = 0;
};

void report_cmd(const Opts& o) {
  const int modes = int(o.validate) + int(o.psi) + int(o.lazytlb) + int(o.conformance);
  if (modes > 1) throw Failure("report: --validate, --psi, --lazytlb and --conformance are exclusive");
  if (!o.validate && o.inputs.size() != 1)
    throw Failure("report: give one input (a trace, or with --psi / --lazytlb / --conformance its file)");
  if (!o.configs.empty() && modes) throw Failure("report: --config is for traces");
  if (!o.from_json.empty() && !o.validate) throw Failure("report: --from-json goes with --validate");
  std::string page;
  if (o.validate)
    page = validate_page(o.inputs, o.timeout_ms, o.jobs, o.from_json);
  else if (o.psi)
    page = psi_page(o.inputs[0], o.version);
  else if (o.lazytlb)
    page = lazytlb_page(o.inputs[0]);
  else if (o.conformance)
    page = conformance_page(o.inputs[0], o.values);
  else
    page = trace_page(o.inputs[0], o.cpu, o.configs);
  if (o.out == "-") {
    fmt::print("{}", page);
    return;
  }
  std::ofstream f(o.out, std::ios::binary);
  if (!f) throw Failure(fmt::format("{}: cannot write", o.out));
  f << page;
  if (!f.flush()) throw Failure(fmt::format("{}: write error", o.out));
  fmt::print(stderr, "kacct: wrote {} ({} KB)\n", o.out, (page.size() + 1023) / 1024);
}

}  // namespace
}  // namespace report_detail

void add_report(CLI::App& app) {
  using report_detail::Opts, report_detail::report_cmd;
  auto o = std::make_shared<Opts>();
  auto* c = app.add_subcommand("report", "Write one self-contained HTML page with timelines (docs/report.md)");
  c->add_option("INPUT", o->inputs,
                "a trace; with --psi / --lazytlb a script; with --conformance perf-replay's --json output; with "
                "--validate patch ids (none: every patch)");
  c->add_option("--config", o->configs, "config drawn beside the truth (repeat for several; `kacct list configs`)");
  c->add_option("--cpu", o->cpu, "CPU model (default: the trace's cpu line)");
  c->add_option("-o,--output", o->out, "the HTML file to write (- for stdout)")->required();
  c->add_flag("--validate", o->validate, "judge the given patches (as `kacct validate`) and draw every counterexample");
  c->add_flag("--psi", o->psi, "INPUT is a PSI irq script: IRQ_FULL pressure per cgroup over time");
  c->add_flag("--lazytlb", o->lazytlb, "INPUT is a lazy-TLB script: active_mm per CPU, mm_count, frees and IPIs");
  c->add_flag("--conformance", o->conformance,
              "INPUT is `kacct perf-replay --json` output: predicted vs kernel-reported per read");
  c->add_option("--from-json", o->from_json,
                "with --validate: draw the output of `kacct validate --json` instead of judging again");
  c->add_option("--values", o->values, "with --conformance: the kernel's values (JSON lines, as perf-replay --values)");
  c->add_option("--version", o->version, "with --psi: the kernel version (default: the script's)");
  c->add_option("--timeout-ms", o->timeout_ms, "with --validate: solver timeout per claim (default 30000)")
      ->check(CLI::Range(1u, 86'400'000u));
  c->add_option("-j,--jobs", o->jobs, "with --validate: claims judged in parallel (default: one more than CPUs)");
  c->callback([o] { report_cmd(*o); });
}

}  // namespace kacct::cli
