// The claims of the kacct-local proposed fixes (proofs/claims_fixes.hpp): each finding's
// witness without and with the fix (the finding is gone, every invariant still holds), and a
// corpus on which the fix changes nothing but what the finding names.
#include "proofs/claims_fixes.hpp"

#include <fmt/format.h>

#include <random>
#include <stdexcept>

#include "arch/registry.hpp"
#include "model/psi/script.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "proofs/jobs.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model;

namespace {

// ---- the witnesses (the same text as test/findings/<file>)

const char* kGenFork =
    "kacct-trace 1\n"
    "# A task on a nohz_full CPU forks with unflushed vtime residues (all below TICK_NSEC).\n"
    "cpu x86-64\nncpus 1\nclock ns\ntask 100 pid=100 comm=loop nice=0 mm=1\nevents\n"
    "1000 0 switch prev=0 next=100\n2000 0 syscall_exit\n1500000 0 syscall_enter nr=57\n"
    "1600000 0 syscall_exit\n1700000 0 syscall_enter nr=57\n2000000 0 fork parent=100 child=101 mm=2\n"
    "2100000 0 syscall_exit\n2200000 0 switch prev=100 next=101\n2300000 0 syscall_exit\n";
const char* kPsiIdle =
    "psi v1\n"
    "# Irq time while cpu 0 idles, then task 1 (group 1) runs: 6.10+ charge the idle irq time to group 1.\n"
    "version 6.12\ncpus 2\ngroup 1 parent 0\ntask 1 group 1\nwait 1000\nirq 0 5000\nwait 1000\nwakeup 0 by 1\n"
    "schedule 0 1\nwait 4000000\ntick 0\nirq 0 700\nwait 100\nschedule 0 0\n";
const char* kPpcIdleSteal =
    "kacct-trace 1\n"
    "# A POWER9 shared-processor LPAR CPU idles; the hypervisor logs 200 us of steal in the idle stretch.\n"
    "cpu POWER9\nncpus 1\nclock ns\nevents\n0 0 tick\n1000000 0 steal ns=200000\n4000000 0 tick\n";
const char* kPpcSplit =
    "kacct-trace 1\n"
    "# PPC970 (no SPURR, no PURR: read_spurr() returns the TB): kernel, user, kernel, then a tick.\n"
    "cpu PPC970\nncpus 1\nclock ns\ntask 100 pid=100 comm=loop nice=0 mm=1\nevents\n"
    "0 0 switch prev=0 next=100\n30000 0 syscall_exit\n120000 0 syscall_enter nr=0\n180000 0 tick\n";
// The 2024 arm64 report's input (LKML "sched/cputime: Fix mul_u64_u64_div_u64() precision").
constexpr std::uint64_t kS = 175136586720000ull, kU = 1416780000ull, kR = 135989749728000ull;

// ---- helpers

struct Run {
  sim::RunResult r;
  std::string violation;  // invariant name, or ""
};
Run run_trace(const std::string& text, const arch::Config& cfg, const char* fix) {
  auto t = trace::load(text);
  if (!t) throw std::runtime_error("fix witness: " + t.error().to_string());
  auto p = sim::compile(t.value());
  if (!p) throw std::runtime_error("fix witness: " + p.error().to_string());
  auto m = sim::model_cfg(*arch::find_cpu(t.value().header.cpu_model), cfg);
  if (fix) sim::apply_fix(m, fix);
  Run out{sim::run(p.value(), m, {.check = true, .stop_at_violation = true}), ""};
  if (out.r.violation) out.violation = out.r.violation->invariant;
  return out;
}
bool has_finding(const sim::RunResult& r, std::string_view inv) {
  if (const auto* n = r.backend_result<native::NativeResult>())
    for (const auto& f : n->findings)
      if (f.invariant == inv) return true;
  return false;
}
std::uint64_t cpustat(const sim::RunResult& r, unsigned b) {
  std::uint64_t s = 0;
  for (const auto& c : r.cpus) s += c.cpustat[b];
  return s;
}
std::string fix_line(const std::string& base, const char* fix) { return base + " --with-fix " + fix + " FILE"; }
// A violated fix claim: the witness still shows the finding with the fix applied.
void still_there(Result& r, const std::string& text, const std::string& cmd, const std::string& ext) {
  r.verdict = Verdict::Violated;
  r.counterexample = text;
  r.replay = ext == "psi" ? kReplayScript : kReplayTrace;
  r.command = {cmd, "", 0, "with the fix; the output still shows the finding", ext};
}

arch::Config gen_612() { return {arch::v(6, 12), arch::Accounting::Gen, false, false, 250}; }
arch::Config native_612(bool steal) { return {arch::v(6, 12), arch::Accounting::Native, false, steal, 250}; }

// Random traces of the builder on `cpu` replayed without and with a fix: same invariant verdict
// on every trace; identical kcpustat and task times where `untouched(before run)`, and
// `touched_ok(before, after)` on the others.
template <class F, class G>
Result corpus_unchanged(const std::string& name, const char* cpu, const arch::Config& cfg, const char* fix,
                        F&& untouched, G&& touched_ok, const std::string& what, const std::string& touched_what) {
  Result r;
  r.name = name;
  r.verdict = Verdict::Holds;
  unsigned n = 0, same = 0, touched = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    trace::BuildSpec s;
    s.cpu_model = cpu;
    const auto text = trace::write(trace::random_trace(seed, s, 400));
    auto a = run_trace(text, cfg, nullptr), b = run_trace(text, cfg, fix);
    ++n;
    bool ok = a.violation == b.violation;
    if (untouched(a.r)) {
      ++same;
      ok = ok && to_json(a.r.cpus) == to_json(b.r.cpus) && to_json(a.r.tasks) == to_json(b.r.tasks);
    } else {
      ++touched;
      ok = ok && touched_ok(a.r, b.r);
    }
    if (!ok && r.verdict == Verdict::Holds) {
      r.verdict = Verdict::Violated;
      r.counterexample = text;
      r.replay = kReplayTrace;
      r.command = {fix_line("kacct run --config " + cfg.name(), fix), "", 0,
                   "compare with the same command without --with-fix", "trace"};
      r.detail = fmt::format("seed {}: the fix changed {} (invariants '{}' -> '{}')", seed,
                             a.violation == b.violation ? "the outputs of a trace it should not touch" : "a verdict",
                             a.violation, b.violation);
    }
  }
  if (r.verdict == Verdict::Holds)
    r.detail = fmt::format(
        "{} random traces ({} x 400 builder actions, seeds 1..40) on {}: the same check-mode verdict on all; "
        "identical kcpustat and task times on the {} {}; on the {} others {}",
        n, cpu, cfg.name(), same, what, touched, touched_what);
  r.approximations = {"judged on generated traces, not on every run"};
  return r;
}

// ---- gen vtime: copy_process() clears the residues

Result gen_fork(const arch::Patch& p) {
  Result r;
  r.name = "gen_vtime.fork_no_double_count";
  const auto cfg = arch::Config{p.before, arch::Accounting::Gen, false, false, 250};
  auto a = run_trace(kGenFork, cfg, nullptr), b = run_trace(kGenFork, cfg, "kacct-gen-fork-residues");
  const auto ia = a.r.backend_result<GenResult>()->fork_inherited, ib = b.r.backend_result<GenResult>()->fork_inherited;
  r.detail = fmt::format(
      "witness on {}: the child starts with {} ns of the parent's residues without the fix, {} ns with it; "
      "check-mode invariants: '{}' -> '{}'",
      cfg.name(), ia, ib, a.violation.empty() ? "all hold" : a.violation,
      b.violation.empty() ? "all hold" : b.violation);
  if (ib == 0 && b.violation.empty())
    r.verdict = Verdict::Holds;
  else
    still_there(r, kGenFork, fix_line("kacct check --config " + cfg.name(), "kacct-gen-fork-residues"), "trace");
  r.approximations = {
      "one nohz_full CPU, HZ=250; the exit half of the finding (residues of a dead task never reach "
      "kcpustat) is not part of this fix"};
  return r;
}

// ---- PSI irq: idle-time irq charged to nobody

psi::RunResult psi_run(const char* text, arch::KVersion ver, bool fix) {
  auto s = psi::parse_script(text);
  if (!s) throw std::runtime_error("psi witness: " + s.error().str());
  auto cfg = psi::script_cfg(s.value());
  cfg.ver = ver;
  if (fix) psi::apply_fix(cfg, "kacct-psi-idle-irq");
  return psi::run_script(s.value(), cfg);
}
std::vector<std::uint32_t> groups(const psi::RunResult& r) {
  std::vector<std::uint32_t> g;
  for (const auto& row : r.world.v.gc)
    for (const auto& c : row) g.push_back(c.irq_full);
  return g;
}

Result psi_idle(const arch::Patch& p) {
  Result r;
  r.name = "psi_irq.idle_irq_not_charged";
  auto a = psi_run(kPsiIdle, p.before, false), b = psi_run(kPsiIdle, p.before, true);
  r.detail = fmt::format(
      "witness on {}: {} ns of irq time that ran while cpu 0 idled charged to group 1 without the fix, {} ns with "
      "it (group 1 times[IRQ_FULL] {} -> {}); invariants: '{}' -> '{}'",
      p.before.str(), a.idle_irq_charged, b.idle_irq_charged, groups(a)[2], groups(b)[2],
      a.violation ? a.violation->invariant : "all hold", b.violation ? b.violation->invariant : "all hold");
  if (b.idle_irq_charged == 0 && !b.violation)
    r.verdict = Verdict::Holds;
  else
    still_there(r, kPsiIdle, "kacct psi-irq run --with-fix kacct-psi-idle-irq FILE", "psi");
  r.approximations = {"one script; the one-delta u32 wrap on a nohz_full CPU (nohz-wrap.psi) is not this fix's"};
  return r;
}

Result psi_unchanged(const arch::Patch& p) {
  Result r;
  r.name = "psi_irq.fix_changes_nothing_else";
  r.verdict = Verdict::Holds;
  // Scripts without irq time while idle (identical results), and with it (only the idle share moves).
  const char* quiet[] = {
      "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\n"
      "move 1 2 by 1\ntick 0\n",
      "psi v1\ncpus 1\ngroup 1 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\nclock_gettime 0\n",
      "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 1\ntask 1 group 2\ntask 2 group 1\nschedule 0 1\nirq 0 900\n"
      "tick 0\nschedule 0 2\nirq 0 400\ntick 0\nschedule 0 1\nirq 0 250\nschedule 0 0\n"};
  unsigned n = 0;
  for (const char* text : quiet) {
    auto a = psi_run(text, p.before, false), b = psi_run(text, p.before, true);
    ++n;
    const bool same = groups(a) == groups(b) && a.charged == b.charged && !a.violation == !b.violation;
    if (!same && r.verdict == Verdict::Holds) {
      r.verdict = Verdict::Violated;
      r.counterexample = std::string(text);
      r.replay = kReplayScript;
      r.command = {"kacct psi-irq run --with-fix kacct-psi-idle-irq FILE", "", 0,
                   "compare with the same command without --with-fix", "psi"};
      r.detail = fmt::format("a script without idle irq time changed: groups differ");
    }
  }
  auto a = psi_run(kPsiIdle, p.before, false), b = psi_run(kPsiIdle, p.before, true);
  // with the fix: each group's times[IRQ_FULL] is less by exactly the idle share, nothing else moves
  bool exact = true;
  const auto ga = groups(a), gb = groups(b);
  for (std::size_t i = 0; i < ga.size(); ++i) exact = exact && (ga[i] == gb[i] || ga[i] - gb[i] == a.idle_irq_charged);
  if (!exact && r.verdict == Verdict::Holds) {
    r.verdict = Verdict::Violated;
    r.counterexample = std::string(kPsiIdle);
    r.replay = kReplayScript;
    r.command = {"kacct psi-irq run --with-fix kacct-psi-idle-irq FILE", "", 0,
                 "compare with the same command without --with-fix", "psi"};
    r.detail = "on the witness the groups changed by more than the idle share";
  }
  if (r.verdict == Verdict::Holds)
    r.detail = fmt::format(
        "{} scripts without irq time while idle (cgroup move, clock_gettime, nested groups): identical "
        "times[IRQ_FULL], charges and invariants; on the witness each group loses exactly the {} ns idle share",
        n, a.idle_irq_charged);
  r.approximations = {"judged on four small scripts on " + p.before.str() + ", not on every run"};
  return r;
}

// ---- native vtime: SPLPAR idle steal, the user-exit split

Result ppc_idle_steal(const arch::Patch& p) {
  Result r;
  r.name = "native_vtime.idle_steal_once";
  const auto cfg = native_612(true);
  auto a = run_trace(kPpcIdleSteal, cfg, nullptr), b = run_trace(kPpcIdleSteal, cfg, "kacct-ppc-idle-steal");
  const bool fa = has_finding(a.r, "native_vtime.idle_steal_counted_twice"),
             fb = has_finding(b.r, "native_vtime.idle_steal_counted_twice");
  r.detail = fmt::format(
      "witness on POWER9 {} (4 ms idle, 200 us DTL steal): idle {} ns + steal {} ns = {} ns without the fix "
      "(finding {}), idle {} ns + steal {} ns = {} ns with it; invariants '{}' -> '{}'",
      cfg.name(), cpustat(a.r, IDLE), cpustat(a.r, STEAL), cpustat(a.r, IDLE) + cpustat(a.r, STEAL),
      fa ? "native_vtime.idle_steal_counted_twice" : "none", cpustat(b.r, IDLE), cpustat(b.r, STEAL),
      cpustat(b.r, IDLE) + cpustat(b.r, STEAL), a.violation.empty() ? "all hold" : a.violation,
      b.violation.empty() ? "all hold" : b.violation);
  if (!fb && b.violation.empty() && cpustat(b.r, IDLE) + cpustat(b.r, STEAL) <= 4'000'000)
    r.verdict = Verdict::Holds;
  else
    still_there(r, kPpcIdleSteal, fix_line("kacct check --config " + cfg.name(), "kacct-ppc-idle-steal"), "trace");
  r.approximations = {
      "the model's DTL: steal logged for the idle vCPU as for a running one (whether PowerVM "
      "logs it for a ceded vCPU is not known here)"};
  return r;
}

Result ppc_split(const arch::Patch& p) {
  Result r;
  r.name = "native_vtime.scaled_equals_unscaled";
  const auto cfg = native_612(false);
  auto a = run_trace(kPpcSplit, cfg, nullptr), b = run_trace(kPpcSplit, cfg, "kacct-ppc-user-exit-split");
  const auto& sa = a.r.backend_result<native::NativeResult>()->task_scaled[1];
  const auto& sb = b.r.backend_result<native::NativeResult>()->task_scaled[1];
  const bool fa = has_finding(a.r, "native_vtime.scaled_equals_unscaled"),
             fb = has_finding(b.r, "native_vtime.scaled_equals_unscaled");
  const auto& ta = a.r.tasks[1];
  r.detail = fmt::format(
      "witness on PPC970 {} (SPURR source = TB): task utime/stime {}/{} ns; utimescaled/stimescaled {}/{} without "
      "the fix (finding {}), {}/{} with it (finding {}); invariants '{}' -> '{}'",
      cfg.name(), ta.utime, ta.stime, sa.utimescaled, sa.stimescaled, fa ? "yes" : "no", sb.utimescaled, sb.stimescaled,
      fb ? "yes" : "no", a.violation.empty() ? "all hold" : a.violation,
      b.violation.empty() ? "all hold" : b.violation);
  if (!fb && b.violation.empty())
    r.verdict = Verdict::Holds;
  else
    still_there(r, kPpcSplit, fix_line("kacct check --config " + cfg.name(), "kacct-ppc-user-exit-split"), "trace");
  r.approximations = {
      "the SPURR read at the return to user costs one mfspr per kernel exit (not modelled as cost "
      "beyond the counters)"};
  return r;
}

// ---- cputime_adjust: the clamp on the scale_stime() loop

Result scale_clamp(const arch::Patch& p, unsigned timeout_ms) {
  Result r;
  r.name = "cputime_adjust.stime_le_rtime";
  auto before = adjust_cfg(p.before, false);
  auto m = sim::ModelCfg{};
  m.adjust = before;
  sim::apply_fix(m, "kacct-scale-stime-clamp");
  Concrete k;
  auto call = [&](const AdjustCfg& c) {
    PrevCputime<Concrete> prev{0, 0};
    return cputime_adjust(k, c, TaskCputime<Concrete>{kU, kS, kR}, prev);
  };
  const auto ob = call(before), oa = call(m.adjust);
  auto z3 = adjust_claim(r.name, m.adjust, timeout_ms);
  r.verdict = z3.verdict;
  r.approximations = z3.approximations;
  r.seconds = z3.seconds;
  if (z3.verdict == Verdict::Violated) {
    r.counterexample = z3.counterexample;
    r.inputs = z3.inputs;
    r.replay = z3.replay;
    r.command = z3.command;
  }
  r.detail = fmt::format(
      "the 2024 arm64 input (stime {}, utime {}, rtime {}) on {} from prev 0: stime {} (> rtime by {} ns) without "
      "the fix, {} with it; any prev state with the fix (Z3): {} [{}]",
      kS, kU, kR, p.before.str(), ob.stime, ob.stime > kR ? ob.stime - kR : 0, oa.stime, name(z3.verdict), z3.detail);
  return r;
}

Result scale_unchanged(const arch::Patch& p) {
  Result r;
  r.name = "cputime_adjust.fix_changes_nothing_else";
  auto before = adjust_cfg(p.before, false);
  auto m = sim::ModelCfg{};
  m.adjust = before;
  sim::apply_fix(m, "kacct-scale-stime-clamp");
  Concrete k;
  std::mt19937_64 rng(7);
  unsigned n = 0, over = 0;
  r.verdict = Verdict::Holds;
  for (int i = 0; i < 200000; ++i) {
    unsigned b = 20 + unsigned(i % 40);
    std::uint64_t s = (rng() >> (64 - b)) | 1, u = (rng() >> (64 - b + 4)) + 1, rt = s - (rng() % (s / 3 + 1));
    if (s + u < s) continue;
    PrevCputime<Concrete> p1{0, 0}, p2{0, 0};
    const TaskCputime<Concrete> in{u, s, rt};
    const auto x = cputime_adjust(k, before, in, p1), y = cputime_adjust(k, m.adjust, in, p2);
    ++n;
    const bool overshoot = x.stime > rt;
    over += overshoot;
    const bool ok = overshoot ? (y.stime == rt && y.utime == 0) : (x.stime == y.stime && x.utime == y.utime);
    if (!ok) {
      r.verdict = Verdict::Violated;
      r.replay = kReplayStep;
      r.inputs = {{"stime", s}, {"utime", u}, {"rtime", rt}};
      r.detail = fmt::format("input stime {} utime {} rtime {}: ({}, {}) -> ({}, {})", s, u, rt, x.utime, x.stime,
                             y.utime, y.stime);
      return r;
    }
  }
  r.detail = fmt::format(
      "{} random calls from prev 0 on {}: identical (utime, stime) wherever the loop stays <= rtime; the {} that "
      "overshoot become (0, rtime)",
      n, p.before.str(), over);
  r.approximations = {"concrete search from prev = 0 (200000 inputs of 20..59 bits)"};
  return r;
}

}  // namespace

std::vector<FixWitness> fix_witnesses() {
  std::vector<FixWitness> out;
  {
    const auto cfg = gen_612();
    auto a = run_trace(kGenFork, cfg, nullptr), b = run_trace(kGenFork, cfg, "kacct-gen-fork-residues");
    const auto ia = a.r.backend_result<GenResult>()->fork_inherited,
               ib = b.r.backend_result<GenResult>()->fork_inherited;
    out.push_back({"kacct-gen-fork-residues", "gen-vtime-fork-residues",
                   "kacct check --config " + cfg.name() + " test/findings/gen-fork.trace", "gen-fork.trace", kGenFork,
                   "gen_vtime.fork_no_double_count", fmt::format("child starts with {} ns of parent residues", ia),
                   fmt::format("child starts with {} ns", ib), ia > 0 && ib == 0 && b.violation.empty()});
  }
  {
    auto a = psi_run(kPsiIdle, arch::v(6, 12), false), b = psi_run(kPsiIdle, arch::v(6, 12), true);
    out.push_back({"kacct-psi-idle-irq", "psi-irq-idle-charge", "kacct psi-irq run test/findings/psi-idle-irq.psi",
                   "psi-idle-irq.psi", kPsiIdle, "psi_irq.idle_irq_charged",
                   fmt::format("{} ns of idle-time irq charged to group 1", a.idle_irq_charged),
                   fmt::format("{} ns", b.idle_irq_charged),
                   a.idle_irq_charged > 0 && b.idle_irq_charged == 0 && !b.violation});
  }
  {
    const auto cfg = native_612(true);
    auto a = run_trace(kPpcIdleSteal, cfg, nullptr), b = run_trace(kPpcIdleSteal, cfg, "kacct-ppc-idle-steal");
    out.push_back({"kacct-ppc-idle-steal", "ppc-splpar-idle-steal",
                   "kacct check --config " + cfg.name() + " test/findings/ppc-idle-steal.trace", "ppc-idle-steal.trace",
                   kPpcIdleSteal, "native_vtime.idle_steal_counted_twice",
                   fmt::format("idle {} + steal {} ns over 4 ms", cpustat(a.r, IDLE), cpustat(a.r, STEAL)),
                   fmt::format("idle {} + steal {} ns", cpustat(b.r, IDLE), cpustat(b.r, STEAL)),
                   has_finding(a.r, "native_vtime.idle_steal_counted_twice") &&
                       !has_finding(b.r, "native_vtime.idle_steal_counted_twice") && b.violation.empty()});
  }
  {
    const auto cfg = native_612(false);
    auto a = run_trace(kPpcSplit, cfg, nullptr), b = run_trace(kPpcSplit, cfg, "kacct-ppc-user-exit-split");
    const auto& sa = a.r.backend_result<native::NativeResult>()->task_scaled[1];
    const auto& sb = b.r.backend_result<native::NativeResult>()->task_scaled[1];
    out.push_back({"kacct-ppc-user-exit-split", "ppc-scaled-user-exit",
                   "kacct check --config " + cfg.name() + " test/findings/ppc-scaled-split.trace",
                   "ppc-scaled-split.trace", kPpcSplit, "native_vtime.scaled_equals_unscaled",
                   fmt::format("stime {} ns, stimescaled {} ns", a.r.tasks[1].stime, sa.stimescaled),
                   fmt::format("stime {} ns, stimescaled {} ns", b.r.tasks[1].stime, sb.stimescaled),
                   has_finding(a.r, "native_vtime.scaled_equals_unscaled") &&
                       !has_finding(b.r, "native_vtime.scaled_equals_unscaled") && b.violation.empty()});
  }
  {
    const auto before = adjust_cfg(arch::v(5, 8), false);
    auto m = sim::ModelCfg{};
    m.adjust = before;
    sim::apply_fix(m, "kacct-scale-stime-clamp");
    Concrete k;
    PrevCputime<Concrete> p1{0, 0}, p2{0, 0};
    const auto x = cputime_adjust(k, before, TaskCputime<Concrete>{kU, kS, kR}, p1);
    const auto y = cputime_adjust(k, m.adjust, TaskCputime<Concrete>{kU, kS, kR}, p2);
    out.push_back({"kacct-scale-stime-clamp", "scale-stime-loop-overshoot", "kacct validate kacct-scale-stime-clamp",
                   "", fmt::format("stime={} utime={} rtime={}", kS, kU, kR), "cputime_adjust.stime_le_rtime",
                   fmt::format("stime {} > rtime {}", x.stime, kR), fmt::format("stime {}", y.stime),
                   x.stime > kR && y.stime <= kR});
  }
  return out;
}

std::vector<Result> gen_vtime_fix_claims(const arch::Patch& p, unsigned) {
  std::vector<Result> out;
  for (auto c : p.claims) {
    if (c.empty()) continue;
    if (c == "gen_vtime.fork_no_double_count")
      out.push_back(gen_fork(p));
    else if (c == "gen_vtime.fix_changes_nothing_else")
      out.push_back(corpus_unchanged(
          std::string(c), "x86-64", {p.before, arch::Accounting::Gen, false, false, 250}, "kacct-gen-fork-residues",
          [](const sim::RunResult& r) { return r.backend_result<GenResult>()->fork_inherited == 0; },
          [](const sim::RunResult&, const sim::RunResult& b) {
            return b.backend_result<GenResult>()->fork_inherited == 0;
          },
          "without a fork that copied residues", "no residue is copied any more"));
    else
      out.push_back(unknown_claim(c));
  }
  return out;
}
std::vector<Result> psi_irq_fix_claims(const arch::Patch& p, unsigned) {
  std::vector<Result> out;
  for (auto c : p.claims) {
    if (c.empty()) continue;
    if (c == "psi_irq.idle_irq_not_charged")
      out.push_back(psi_idle(p));
    else if (c == "psi_irq.fix_changes_nothing_else")
      out.push_back(psi_unchanged(p));
    else
      out.push_back(unknown_claim(c));
  }
  return out;
}
std::vector<Result> native_vtime_fix_claims(const arch::Patch& p, unsigned) {
  std::vector<Result> out;
  const bool steal = p.id == "kacct-ppc-idle-steal";
  for (auto c : p.claims) {
    if (c.empty()) continue;
    if (c == "native_vtime.idle_steal_once")
      out.push_back(ppc_idle_steal(p));
    else if (c == "native_vtime.scaled_equals_unscaled")
      out.push_back(ppc_split(p));
    else if (c == "native_vtime.fix_changes_nothing_else" && steal)
      out.push_back(corpus_unchanged(
          std::string(c), "POWER9", native_612(true), "kacct-ppc-idle-steal",
          [](const sim::RunResult& r) { return !has_finding(r, "native_vtime.idle_steal_counted_twice"); },
          [](const sim::RunResult& a, const sim::RunResult& b) {
            // only idle (iowait) and steal move: the same task times and other buckets, and
            // idle + iowait + steal no larger than before
            if (to_json(a.tasks) != to_json(b.tasks) || a.cpus.size() != b.cpus.size()) return false;
            for (std::size_t i = 0; i < a.cpus.size(); ++i) {
              const auto &x = a.cpus[i].cpustat, &y = b.cpus[i].cpustat;
              for (unsigned k = 0; k < NR_STATS; ++k)
                if (k != IDLE && k != IOWAIT && k != STEAL && x[k] != y[k]) return false;
              if (y[IDLE] + y[IOWAIT] + y[STEAL] > x[IDLE] + x[IOWAIT] + x[STEAL]) return false;
            }
            return true;
          },
          "without DTL steal in an idle stretch",
          "identical task times and non-idle buckets, idle + iowait + steal no larger"));
    else if (c == "native_vtime.fix_changes_nothing_else")
      out.push_back(corpus_unchanged(
          std::string(c), "PPC970", native_612(false), "kacct-ppc-user-exit-split",
          [](const sim::RunResult&) { return true; }, [](const sim::RunResult&, const sim::RunResult&) { return true; },
          "(every trace: the fix moves only the scaled fields)", "-"));
    else
      out.push_back(unknown_claim(c));
  }
  return out;
}
std::vector<Result> cputime_adjust_fix_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<Result> out;
  for (auto c : p.claims) {
    if (c.empty()) continue;
    if (c == "cputime_adjust.stime_le_rtime")
      out.push_back(scale_clamp(p, timeout_ms));
    else if (c == "cputime_adjust.fix_changes_nothing_else")
      out.push_back(scale_unchanged(p));
    else
      out.push_back(unknown_claim(c));
  }
  return out;
}

}  // namespace kacct::proofs
