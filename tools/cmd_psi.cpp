// kacct psi-irq run / kacct psi-irq seed: PSI irq event scripts (docs/models/psi-irq.md) on a kernel
// version, with the invariants checked after every event and the cost counters per call.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <vector>

#include "common.hpp"
#include "model/psi/script.hpp"

namespace kacct::cli {
// Named (and anonymous inside): the using-directive below stays out of the other commands'
// files, which unity builds batch with this one (model::lazytlb has a Script too).
namespace psi_detail {
namespace {
using json = nlohmann::ordered_json;
using namespace kacct::model::psi;

arch::KVersion parse_ver(const std::string& s) {
  if (auto v = arch::parse_version(s)) return *v;
  throw Failure("--version: expected MAJOR.MINOR[.POINT] or a distro build (6.1.192-3), got '" + s + "'");
}

struct Opts {
  std::string path, version, variant, irqtime;
  std::vector<std::string> fixes;  // --with-fix: kacct-local proposed fixes (docs/findings/)
  bool json = false;
  unsigned calls = 1000, ticks = 4;
};

PsiCfg cfg_for(const Script& s, const Opts& o) {
  PsiCfg c = script_cfg(s);
  if (!o.version.empty()) c.ver = parse_ver(o.version);
  if (!o.variant.empty() && !parse_variant(o.variant, c.variant))
    throw Failure("--variant: unknown '" + o.variant + "'");
  if (o.irqtime == "on")
    c.irqtime = true;
  else if (o.irqtime == "off")
    c.irqtime = false;
  else if (!o.irqtime.empty())
    throw Failure("--irqtime: on or off");
  for (const auto& f : o.fixes)
    if (!apply_fix(c, f)) throw Failure("--with-fix: '" + f + "' is not a kacct-local PSI fix (kacct findings)");
  return c;
}

void run_cmd(const Opts& o) {
  const std::string text = read_file(o.path), name = input_name(o.path);
  auto p = parse_script(text);
  if (!p) {
    fmt::print(stderr, "{}:{}\n", name, p.error().str());
    throw Exit{kExitUsage};
  }
  const Script& s = p.value();
  const PsiCfg cfg = cfg_for(s, o);
  const RunResult r = run_script(s, cfg);
  if (r.error) {
    fmt::print(stderr, "{}:{}\n", name, r.error->str());
    throw Exit{kExitUsage};
  }
  // What /proc/pressure/irq (and a cgroup's irq.pressure) reports as `full ... total=`: the
  // group's times[PSI_IRQ_FULL] summed over CPUs, in microseconds.
  std::vector<std::uint64_t> total_ns;
  for (const auto& g : r.world.v.gc) {
    std::uint64_t t = 0;
    for (const auto& c : g) t += c.irq_full;
    total_ns.push_back(t);
  }
  if (o.json) {
    auto j = r.json(cfg);
    j["irq_full_total_ns"] = total_ns;
    json us = json::array();
    for (auto t : total_ns) us.push_back(t / 1000);
    j["irq_full_total_us"] = us;
    print_json(j);
  } else {
    fmt::print("{}: version {} irqtime {} variant {}: {} events\n", name, cfg.ver.str(), cfg.irqtime ? "on" : "off",
               variant_name(cfg.variant), s.events.size());
    Table t({"event", "calls", "clock reads", "irq reads", "levels", "seq sections", "psi calls"},
            {false, true, true, true, true, true, true});
    for (const auto& kv : r.per_kind) {  // (no structured binding: clang 14 cannot capture one)
      const auto& k = kv.first;
      const auto& v = kv.second;
      auto per = [&](std::uint64_t x) { return fmt::format("{:.2f}", v.calls ? double(x) / double(v.calls) : 0.0); };
      t.row({k, std::to_string(v.calls), per(v.costs.clock_reads), per(v.costs.irq_reads), per(v.costs.levels),
             per(v.costs.seq_sections), per(v.costs.psi_calls)});
    }
    fmt::print("per call:\n{}", t.str("  "));
    for (std::size_t c = 0; c < r.accrued.size(); ++c)
      fmt::print("cpu {}: irq accrued {} ns, charged {} ns\n", c, r.accrued[c], r.charged[c]);
    for (std::size_t g = 0; g < r.world.v.gc.size(); ++g) {
      std::vector<std::uint32_t> row;
      for (const auto& c : r.world.v.gc[g]) row.push_back(c.irq_full);
      // psi_show()'s total weights each CPU's times by its non-idle time (collect_percpu_times(),
      // 6.1/6.12 kernel/sched/psi.c), which the model does not track: the plain sum is that total
      // only for a group whose tasks ran on one CPU.
      fmt::print(
          "group {}: times[IRQ_FULL] per cpu {}; sum over cpus {} us ({} ns) (irq.pressure full total= if the "
          "group ran on one cpu; else the kernel weights cpus by non-idle time)\n",
          g, fmt::join(row, " "), total_ns[g] / 1000, total_ns[g]);
    }
    if (!r.idle_irq_finding.empty())
      fmt::print("kernel finding psi_irq.idle_irq_charged: {} ns in all; first: {}\n", r.idle_irq_charged,
                 r.idle_irq_finding);
    if (r.violation) {
      Script shown = s;
      shown.version = cfg.ver;
      shown.variant = cfg.variant;
      shown.events.resize(*r.failed_at + 1);
      fmt::print("VIOLATED {} at event {} (line {}): {}\ncounterexample (replays with kacct psi-irq run):\n{}",
                 r.violation->invariant, *r.failed_at + 1, r.line, r.violation->message, write_script(shown));
    } else {
      fmt::print("all invariants hold\n");
    }
  }
  if (r.violation) throw Exit{kExitViolation};
}

// The seed: per clock_gettime(CLOCK_THREAD_CPUTIME_ID) and per tick, on the versions around
// the two patches, beside the measured ns per call.
void seed_cmd(const Opts& o) {
  const auto text = seed_script_text(o.calls, o.ticks);
  const auto s = parse_script(text).value();  // generated: a failure is a bug
  struct Row {
    const char* label;
    arch::KVersion ver;
    const char* measured;
  };
  const Row rows[] = {{"5.10 (no PSI_IRQ)", arch::v(5, 10), "243 ns/call (John Stultz, 1e8 calls: 24.3 s)"},
                      {"6.1 (52b1364ba0b1)", arch::v(6, 1), "282 ns/call (28.2 s)"},
                      {"6.10 (ddae0ca2a8fe; = 6.1.y with the backport)", arch::v(6, 10), "243 ns/call (6.1+fix)"},
                      {"6.12 (3840cbe24cf0)", arch::v(6, 12), "not measured"},
                      {"6.17 (570c8efd5eb7)", arch::v(6, 17), "not measured"}};
  json out;
  out["scenario"] = json{{"cgroup_levels_incl_root", 3},
                         {"calls_per_tick", o.calls},
                         {"ticks", o.ticks},
                         {"script", "kacct psi-irq seed --script"}};
  out["versions"] = json::array();
  for (const auto& row : rows) {
    PsiCfg cfg;
    cfg.ver = row.ver;
    auto r = run_script(s, cfg);
    auto per = [&](const char* kind) {
      const auto& k = r.per_kind.at(kind);
      auto f = [&](std::uint64_t x) { return double(x) / double(k.calls); };
      return json{{"clock_reads", f(k.costs.clock_reads)},
                  {"irq_time_reads", f(k.costs.irq_reads)},
                  {"cgroup_levels", f(k.costs.levels)},
                  {"seq_write_sections", f(k.costs.seq_sections)}};
    };
    out["versions"].push_back(json{{"version", row.label},
                                   {"measured", row.measured},
                                   {"per_clock_gettime", per("clock_gettime")},
                                   {"per_tick", per("tick")},
                                   {"invariants", r.violation ? r.violation->invariant : "hold"}});
  }
  print_json(out);
}

}  // namespace
}  // namespace psi_detail

void add_psi(CLI::App& app) {
  using psi_detail::Opts, psi_detail::run_cmd, psi_detail::seed_cmd;
  auto* psi = app.add_subcommand(command_name(arch::Mechanism::PsiIrq),
                                 "PSI irq pressure model: event scripts (docs/models/psi-irq.md)");
  psi->require_subcommand(1);
  auto o = std::make_shared<Opts>();
  auto* run =
      psi->add_subcommand("run", "Run a PSI event script, check every invariant, count costs; exit 1 on a violation");
  run->add_option("SCRIPT", o->path, "script file, or - for stdin")->required();
  run->add_option("--version", o->version, "kernel version MAJOR.MINOR (default: the script's, else 6.10)");
  run->add_option("--variant", o->variant,
                  "faithful | no-lock | double-count | lost-delta | no-neg-guard | no-record-times");
  run->add_option("--irqtime", o->irqtime, "on | off: irq time accounting at run time");
  run->add_option("--with-fix", o->fixes, "ID: apply a kacct-local proposed fix (not upstream; `kacct findings`)");
  run->add_flag("--json", o->json, "JSON output");
  run->callback([o] { run_cmd(*o); });
  auto s = std::make_shared<Opts>();
  auto* seed = psi->add_subcommand("seed", "The seed scenario's cost counters per clock_gettime and per tick (JSON)");
  seed->add_option("--calls", s->calls, "clock_gettime calls per tick")->check(CLI::Range(1u, 16000u));
  seed->add_option("--ticks", s->ticks, "ticks")->check(CLI::Range(1u, 1000u));
  seed->add_flag("--script", s->json, "print the scenario script instead");
  seed->callback([s] {
    if (s->json)
      fmt::print("{}", model::psi::seed_script_text(s->calls, s->ticks));
    else
      seed_cmd(*s);
  });
}

}  // namespace kacct::cli
