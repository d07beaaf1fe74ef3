// kacct lazy-tlb: the lazy-TLB mm model (docs/models/lazy-tlb.md).
//   explore  every reachable state of a small world (states, depth, first violation as a script)
//   run      replay an event script, checking every invariant after every event
//   compare  a real kernel's recorded counts against the model replaying the same events
//   seed     the seed scenario (N CPUs, N threads through idle): costs per context switch by
//            mode and the throughput model beside the seed's 1M -> 118M switches/s
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "common.hpp"
#include "model/lazytlb/conformance.hpp"
#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/seed.hpp"

namespace kacct::cli {
// Named (and anonymous inside): the using-directive below stays out of the other commands'
// files, which unity builds batch with this one (model::psi has a Script too).
namespace lazytlb_detail {
namespace {
using namespace kacct::model::lazytlb;

struct Target {
  std::string mode, arch, version;
  std::vector<std::string> mutants;
  bool debug = false;
};
// --mode picks a representative arch and release; --arch/--version override.
Script header_of(const Target& t) {
  Script h;
  if (t.mode == "refcount") {
    h.arch = Arch::Generic;
    h.version = arch::v(6, 12);
  } else if (t.mode == "shootdown") {
    h.arch = Arch::PpcRadix;
    h.version = arch::v(6, 12);
  } else if (t.mode == "pre-6.4") {
    h.arch = Arch::PpcRadix;
    h.version = arch::v(6, 3);
  } else if (!t.mode.empty())
    throw Failure("unknown --mode '" + t.mode + "' (refcount, shootdown, pre-6.4)");
  if (!t.arch.empty()) {
    auto a = parse_arch(t.arch);
    if (!a) throw Failure("unknown --arch '" + t.arch + "' (generic, ppc64-radix, ppc64-hash)");
    h.arch = *a;
  }
  if (!t.version.empty()) {
    auto p = parse_script("lazytlb 1\nversion " + t.version + "\nevents\n");
    if (!p) throw Failure(fmt::format("--version '{}': {}", cut(t.version), p.error().message));
    h.version = p.value().version;
  }
  // --mode with --arch/--version: the pair must give that mode, else one of them would be ignored.
  if (!t.mode.empty() && (!t.arch.empty() || !t.version.empty())) {
    const Cfg c = config_for(h.arch, h.version);
    const bool book3s64 = h.arch != Arch::Generic;
    const bool ok = t.mode == "shootdown"  ? c.shootdown
                    : t.mode == "refcount" ? !c.shootdown
                                           : book3s64 && !c.shootdown;
    if (!ok)
      throw Failure(fmt::format(
          "--mode {} contradicts --arch/--version: {} {} is {} mode (shootdown is ppc64-radix or ppc64-hash from "
          "6.4; pre-6.4 is those before 6.4; refcount is generic, or ppc64 before 6.4); give --mode alone, or "
          "--arch and --version alone",
          t.mode, arch_name(h.arch), h.version.str(), mode_name(c)));
  }
  for (const auto& m : t.mutants) {
    Cfg scratch;
    if (!apply_mutant(scratch, m))
      throw Failure(fmt::format("unknown --mutant '{}' ({})", m, fmt::join(kMutants, ", ")));
  }
  h.mutants = t.mutants;
  h.debug_shoot_lazies = t.debug;
  return h;
}

nlohmann::ordered_json costs_json(const Costs& c) {
  return {{"switches", c.switches}, {"mm_count_atomics", c.count_atomics}, {"mm_users_atomics", c.users_atomics},
          {"ipis", c.ipis},         {"cpumask_updates", c.mask_updates},   {"frees", c.frees}};
}

void explore_cmd(const Target& t, const Sizes& s, std::size_t max_states, bool hotplug, bool symmetry, bool json,
                 bool quiet) {
  if (s.cpus < 1 || s.cpus > 8 || s.tasks < 1 || s.tasks > 8 || s.mms < 1 || s.mms > 4)
    throw Failure("explore sizes: --cpus 1..8, --tasks 1..8, --mms 1..4");
  ExploreOptions o;
  o.header = header_of(t);
  o.header.sizes = s;
  o.max_states = max_states;
  o.hotplug = hotplug;
  o.symmetry = symmetry;
  const Cfg cfg = o.header.cfg();
  const auto t0 = std::chrono::steady_clock::now();
  Progress progress(quiet);
  if (progress.on())
    o.progress = [&](std::size_t states, std::size_t expanded, std::size_t depth) {
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.show(fmt::format("lazy-tlb explore: {} states, {} expanded, depth {}, {:.0f} states/s", states, expanded,
                                depth, dt > 0 ? double(expanded) / dt : 0.0));
    };
  auto r = explore(o);
  progress.clear();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::ordered_json j;
  j["arch"] = arch_name(o.header.arch);
  j["version"] = o.header.version.str();
  j["mode"] = mode_name(cfg);
  j["mutants"] = o.header.mutants;
  j["cpus"] = s.cpus;
  j["tasks"] = s.tasks;
  j["mms"] = s.mms;
  j["hotplug"] = hotplug;
  j["symmetry"] = symmetry ? (cpus_symmetric(cfg) ? "cpus,tasks,mms" : "tasks,mms") : "none";
  j["states"] = r.states;
  j["transitions"] = r.transitions;
  j["depth"] = r.depth;
  j["complete"] = !r.truncated && !r.violation;
  j["zombie_states"] = r.zombie_states;
  j["frees"] = r.frees;
  j["max_ipis_one_event"] = r.max_ipis_step;
  j["seconds"] = sec;
  j["verdict"] = r.violation ? "violated" : r.truncated ? "unknown" : "holds";
  if (r.violation) {
    j["violation"] = {{"invariant", r.violation->invariant}, {"detail", r.violation->detail}};
    j["counterexample"] = write_script(*r.counterexample);
  }
  if (json) {
    print_json(j);
  } else {
    fmt::print("lazy-tlb explore: {} {} ({}), {} CPUs, {} tasks, {} mms{}{}\n", arch_name(o.header.arch),
               o.header.version.str(), mode_name(cfg), s.cpus, s.tasks, s.mms,
               hotplug ? (s.cpus > 1 ? ", CPU hotplug (one CPU out at a time)" : "") : ", no CPU hotplug",
               o.header.mutants.empty() ? "" : fmt::format(", mutants {}", fmt::join(o.header.mutants, ",")));
    if (symmetry)
      fmt::print(
          "  states counted up to renaming {} (--symmetry)\n",
          cpus_symmetric(cfg) ? "CPUs other than 0, tasks and mms" : "tasks and mms (a mutant singles out a CPU)");
    fmt::print("  states {}  transitions {}  depth {}  ({:.2f} s){}\n", r.states, r.transitions, r.depth, sec,
               r.truncated ? "  TRUNCATED at --max-states" : "");
    fmt::print("  mm frees {}  states with a zombie mm (pinned only by lazy refs) {}  most IPIs by one event {}\n",
               r.frees, r.zombie_states, r.max_ipis_step);
    if (r.violation) {
      fmt::print("  VIOLATED {}: {}\n  counterexample (replay with `kacct lazy-tlb run FILE`):\n",
                 r.violation->invariant, r.violation->detail);
      for (auto& line : write_script(*r.counterexample)) std::fputc(line, stdout);
    } else {
      fmt::print("  {}\n", r.truncated ? "verdict unknown (state space not exhausted)"
                                       : "every invariant holds in every reachable state");
    }
  }
  if (r.violation) throw Exit{kExitViolation};
  if (r.truncated) throw Exit{kExitUnknown};
}

void run_cmd(const std::string& path, bool json) {
  const std::string name = input_name(path), text = read_file(path);
  auto p = parse_script(text);
  if (!p) {
    fmt::print(stderr, "{}:{}\n", name, p.error().str());
    throw Exit{kExitUsage};
  }
  const Script& s = p.value();
  auto r = run_script(s);
  if (r.error) {
    fmt::print(stderr, "{}:{}\n", name, r.error->str());
    throw Exit{kExitUsage};
  }
  nlohmann::ordered_json j;
  j["script"] = name;
  j["mode"] = mode_name(s.cfg());
  j["events"] = r.steps;
  j["costs"] = costs_json(r.costs);
  j["max_zombie_mms"] = r.max_zombies;
  j["events_with_zombie_mm"] = r.zombie_steps;
  if (r.failed_at) {
    j["verdict"] = "violated";
    j["failed_event"] = {{"index", *r.failed_at}, {"line", r.line}, {"event", event_text(s.events[*r.failed_at])}};
    j["violations"] = nlohmann::ordered_json::array();
    for (const auto& v : r.violations) j["violations"].push_back({{"invariant", v.invariant}, {"detail", v.detail}});
  } else {
    j["verdict"] = "holds";
  }
  if (json) {
    print_json(j);
  } else {
    fmt::print("{}: {} events, {} ({})\n", name, r.steps, j["verdict"].get<std::string>(),
               j["mode"].get<std::string>());
    fmt::print("  switches {}  mm_count atomics {}  mm_users atomics {}  IPIs {}  cpumask updates {}  frees {}\n",
               r.costs.switches, r.costs.count_atomics, r.costs.users_atomics, r.costs.ipis, r.costs.mask_updates,
               r.costs.frees);
    if (r.failed_at)
      for (const auto& v : r.violations)
        fmt::print("  line {}: {}: {}\n", j["failed_event"]["line"].get<unsigned>(), v.invariant, v.detail);
  }
  if (r.failed_at) throw Exit{kExitViolation};
}

// compare: the script's header (or --mode/--arch/--version/--mutant instead: negative
// controls), every expectation row checked after its step (conformance.hpp).
void compare_cmd(const std::string& path, const std::string& epath, const Target& t, bool json) {
  const std::string name = input_name(path), text = read_file(path);
  auto p = parse_script(text);
  if (!p) {
    fmt::print(stderr, "{}:{}\n", name, p.error().str());
    throw Exit{kExitUsage};
  }
  const std::string ename = input_name(epath), etext = read_file(epath);
  auto e = parse_expected(etext);
  if (!e) {
    fmt::print(stderr, "{}:{}\n", ename, e.error().str());
    throw Exit{kExitUsage};
  }
  Script s = p.value();
  if (!t.mode.empty() || !t.arch.empty() || !t.version.empty() || !t.mutants.empty() || t.debug) {
    Target o = t;
    if (o.mode.empty()) {  // what is not given stays the script's
      if (o.arch.empty()) o.arch = std::string(arch_name(s.arch));
      if (o.version.empty()) o.version = s.version.str();
    }
    const Script h = header_of(o);
    s.arch = h.arch;
    s.version = h.version;
    s.mutants = h.mutants;
    s.debug_shoot_lazies = h.debug_shoot_lazies;
  }
  const auto c = compare(s, e.value());
  if (c.run.error) { fmt::print(stderr, "{}:{}\n", name, c.run.error->str()); }
  const bool stopped = c.run.error || c.run.failed_at;
  const bool exact = c.rows > 0 && c.place + c.ipi_rows == c.rows && c.counts_exact + c.counts_bound == c.counted &&
                     c.ipi_exact == c.ipi_rows && !stopped && c.rows == e.value().rows.size();
  nlohmann::ordered_json j;
  j["script"] = name;
  j["expect"] = ename;
  j["arch"] = arch_name(s.arch);
  j["version"] = s.version.str();
  j["mode"] = mode_name(s.cfg());
  j["mutants"] = s.mutants;
  j["events"] = c.run.steps;
  j["rows"] = e.value().rows.size();
  j["compared"] = c.rows;
  j["place_exact"] = c.place;
  j["counted"] = c.counted;
  j["counts_exact"] = c.counts_exact;
  j["counts_within_exit"] = c.counts_bound;
  j["mask_exact"] = c.mask_exact;
  j["mask_subset"] = c.mask_subset;
  j["ipi_rows"] = c.ipi_rows;
  j["ipi_exact"] = c.ipi_exact;
  j["verdict"] = c.rows == 0 ? "nothing compared" : !exact ? "off" : c.counts_bound ? "within bound" : "exact";
  if (c.run.failed_at) {
    j["stopped_at"] = {{"index", *c.run.failed_at}, {"line", c.run.line}};
    j["violations"] = nlohmann::ordered_json::array();
    for (const auto& v : c.violations) j["violations"].push_back({{"invariant", v.invariant}, {"detail", v.detail}});
  }
  auto rows = [](const std::vector<Mismatch>& v) {
    auto a = nlohmann::ordered_json::array();
    for (const auto& m : v)
      a.push_back({{"line", m.want.line}, {"step", m.want.step}, {"cpu", m.want.cpu}, {"what", m.what}});
    return a;
  };
  j["off"] = rows(c.off);
  j["mask_off"] = rows(c.mask_off);
  if (json) {
    print_json(j);
  } else {
    fmt::print("{} vs {}: {} {} ({}){}, {} events\n", ename, name, arch_name(s.arch), s.version.str(),
               mode_name(s.cfg()), s.mutants.empty() ? "" : fmt::format(", mutants {}", fmt::join(s.mutants, ",")),
               c.run.steps);
    fmt::print(
        "  rows {}/{} compared: task and active_mm {} exact; mm_users+mm_count {}/{} exact; mm_cpumask {}/{} "
        "exact, {}/{} kernel bits within the model's\n",
        c.rows, e.value().rows.size(), c.place, c.counted ? c.counts_exact : 0, c.counted, c.mask_exact, c.counted,
        c.mask_subset, c.counted);
    if (c.counts_bound)
      fmt::print("  {} rows within the states of an exit or a CLONE_VM fork under way (exit@S, fork@S)\n",
                 c.counts_bound);
    if (c.ipi_rows) fmt::print("  IPI totals {}/{} exact\n", c.ipi_exact, c.ipi_rows);
    for (std::size_t i = 0; i < std::min<std::size_t>(c.off.size(), 10); ++i)
      fmt::print("  {}:{}: after step {}, CPU {}: {}\n", ename, c.off[i].want.line, c.off[i].want.step,
                 c.off[i].want.cpu, c.off[i].what);
    for (const auto& v : c.violations) fmt::print("  {}:{}: {}: {}\n", name, c.run.line, v.invariant, v.detail);
    fmt::print("  verdict: {}\n", j["verdict"].get<std::string>());
  }
  if (c.run.error) throw Exit{kExitUsage};
  if (c.rows == 0) throw Exit{kExitUnknown};
  if (!exact) throw Exit{kExitViolation};
}

SeedCosts seed_mode(int n, int rounds, Arch a, arch::KVersion ver) {
  std::size_t failed = 0;
  auto c = seed_costs(n, rounds, a, ver, &failed);
  if (!c) throw Failure("internal error: seed scenario fails at event " + std::to_string(failed));
  return *c;
}
nlohmann::ordered_json seed_json(const SeedCosts& c, const Throughput& tp, int n) {
  nlohmann::ordered_json j;
  j["mode"] = mode_name(c.cfg);
  j["arch"] = arch_name(c.cfg.arch);
  j["version"] = c.version.str();
  j["loop_switches"] = c.loop_switches;
  j["mm_count_atomics_per_switch"] = c.count_atomics_per_switch;
  j["ipis_per_switch"] = c.ipis_per_switch;
  j["cpumask_updates_per_switch"] = c.mask_updates_per_switch;
  j["exit_ipis"] = c.exit_ipis;
  j["mm_freed_at_end"] = c.mm_freed_at_end;
  j["ipis_per_switch_including_exit"] = c.ipis_per_switch_including_exit;
  j["model_switches_per_s"] = tp.switches_per_s(n, c.count_atomics_per_switch);
  return j;
}

void seed_cmd(int n, int rounds, bool script_only, const Target& t) {
  if (n < 2 || n > 192) throw Failure("--cpus must be in 2..192");
  if (rounds < 1 || rounds > 1000) throw Failure("--rounds must be in 1..1000");
  if (script_only) {
    Script h = header_of(t.mode.empty() && t.arch.empty() ? Target{"shootdown", "", "", {}, false} : t);
    auto s = seed_scenario(n, rounds, h.arch, h.version);
    std::fputs(write_script(s.script).c_str(), stdout);
    return;
  }
  const auto ref = seed_mode(n, rounds, Arch::Generic, arch::v(6, 12));
  const auto pre = seed_mode(n, rounds, Arch::PpcRadix, arch::v(6, 3));
  const auto sd = seed_mode(n, rounds, Arch::PpcRadix, arch::v(6, 12));
  const auto sd64 = seed_mode(n, rounds, Arch::PpcRadix, arch::v(6, 4));
  const double a_ref = ref.count_atomics_per_switch;
  const auto tp = fit_throughput(a_ref);
  nlohmann::ordered_json out;
  out["cpus"] = n;
  out["threads"] = n;
  out["rounds"] = rounds;
  out["modes"] = {seed_json(ref, tp, n), seed_json(pre, tp, n), seed_json(sd64, tp, n), seed_json(sd, tp, n)};
  out["throughput_model"] = {
      {"formula", "X(N) = min(N/c, 1/(a*L)); a = mm_count atomics per switch (model)"},
      {"c_us_per_switch_per_cpu", tp.c * 1e6},
      {"L_us_per_line_transfer", tp.L * 1e6},
      {"fitted_to", "seed at N=192: 118e6/s shootdown, 1e6/s refcount (reproduced by construction)"},
      {"crossover_cpus", tp.crossover_cpus(a_ref)},
      {"speedup", tp.switches_per_s(n, 0) / tp.switches_per_s(n, a_ref)}};
  print_json(out);
}

}  // namespace
}  // namespace lazytlb_detail

void add_lazytlb(CLI::App& app) {
  using lazytlb_detail::Target, lazytlb_detail::Sizes, lazytlb_detail::explore_cmd, lazytlb_detail::run_cmd,
      lazytlb_detail::compare_cmd, lazytlb_detail::seed_cmd;
  auto* g = app.add_subcommand(command_name(arch::Mechanism::LazyTlb),
                               "Lazy-TLB mm references: explore, run scripts, seed costs");
  g->require_subcommand(1);
  auto tgt = std::make_shared<Target>();
  auto add_target = [tgt](CLI::App* c) {
    c->add_option("--mode", tgt->mode,
                  "refcount (generic 6.12), shootdown (ppc64-radix 6.12), pre-6.4 (ppc64-radix 6.3)");
    c->add_option("--arch", tgt->arch, "generic, ppc64-radix, ppc64-hash");
    c->add_option("--version", tgt->version, "kernel release MAJOR.MINOR");
    c->add_option("--mutant", tgt->mutants,
                  "deliberately broken variant: no-lazy-grab, shoot-skip-cpu, clear-wrong-cpu, no-force-init-mm, "
                  "dead-no-drop, offline-clear-all");
    c->add_flag("--debug-shoot-lazies", tgt->debug, "CONFIG_DEBUG_VM_SHOOT_LAZIES");
  };
  auto sizes = std::make_shared<Sizes>();
  auto max_states = std::make_shared<std::size_t>(2'000'000);
  auto json = std::make_shared<bool>(false);
  auto* ex = g->add_subcommand("explore", "Visit every reachable state of a small world");
  add_target(ex);
  ex->add_option("--cpus", sizes->cpus, "CPUs (1..8)");
  ex->add_option("--tasks", sizes->tasks, "ordinary task slots (1..8)");
  ex->add_option("--mms", sizes->mms, "mm slots (1..4)");
  ex->add_option("--max-states", *max_states, "stop (verdict unknown) beyond this many states");
  ex->add_flag("--json", *json, "JSON output");
  auto no_hotplug = std::make_shared<bool>(false);
  ex->add_flag("--no-hotplug", *no_hotplug, "no CPU goes offline (by default any CPU but 0 may, one at a time)");
  auto quiet = std::make_shared<bool>(false);
  ex->add_flag("-q,--quiet", *quiet, "no progress on stderr (shown only when stderr is a terminal)");
  auto symmetry = std::make_shared<bool>(false);
  ex->add_flag("--symmetry", *symmetry,
               "one state per class of states equal up to renaming CPUs (but 0), task and mm slots");
  ex->callback([=] {
    if (tgt->mode.empty() && tgt->arch.empty()) tgt->mode = "shootdown";
    explore_cmd(*tgt, *sizes, *max_states, !*no_hotplug, *symmetry, *json, *quiet);
  });
  auto path = std::make_shared<std::string>();
  auto* run = g->add_subcommand("run", "Replay an event script, checking every invariant after every event");
  run->add_option("script", *path, "script file, or - for stdin")->required();
  run->add_flag("--json", *json, "JSON output");
  run->callback([=] { run_cmd(*path, *json); });
  auto epath = std::make_shared<std::string>();
  auto* cmp = g->add_subcommand(
      "compare", "A kernel's recorded mm counts (lazytlb-reduce.py) against the model after each step of the script");
  cmp->add_option("script", *path, "script file")->required();
  cmp->add_option("expect", *epath, "expectation file (lazytlb-expect 1)")->required();
  add_target(cmp);
  cmp->add_flag("--json", *json, "JSON output");
  cmp->callback([=] { compare_cmd(*path, *epath, *tgt, *json); });
  auto n = std::make_shared<int>(192);
  auto rounds = std::make_shared<int>(10);
  auto script = std::make_shared<bool>(false);
  auto* sd =
      g->add_subcommand("seed", "Seed scenario costs per context switch by mode, with the throughput model (JSON)");
  add_target(sd);
  sd->add_option("--cpus", *n, "N CPUs and N threads (2..192)");
  sd->add_option("--rounds", *rounds, "trips through idle per thread (1..1000)");
  sd->add_flag("--script", *script, "print the generated event script (of --mode/--arch) instead");
  sd->callback([=] { seed_cmd(*n, *rounds, *script, *tgt); });
}

}  // namespace kacct::cli
