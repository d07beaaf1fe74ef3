// The patch validator for Mechanism::PsiIrq (claims of arch/patches.hpp): the step jobs of
// proofs/jobs_psi.cpp on the release after the patch, and concrete scripts for the claims about
// whole runs (same charge as before, the torn sequence count).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>

#include "model/psi/script.hpp"
#include "proofs/jobs.hpp"
#include "proofs/memo.hpp"
#include "proofs/claims_fixes.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::psi;

namespace {

Result from_run(const std::string& name, const Script& s, const PsiCfg& cfg) {
  Result r;
  r.name = name;
  auto rr = run_script(s, cfg);
  Script shown = s;
  shown.version = cfg.ver;
  if (rr.violation) {
    r.verdict = Verdict::Violated;
    r.detail = fmt::format("{} on {} at event {} (line {}): {}", rr.violation->invariant, cfg.ver.str(),
                           *rr.failed_at + 1, rr.line, rr.violation->message);
    shown.events.resize(*rr.failed_at + 1);
    r.counterexample = write_script(shown);
    r.replay = kReplayScript;
  } else {
    r.verdict = Verdict::Holds;
  }
  return r;
}

// Per-group IRQ_FULL after a script, and the pending remainder.
struct Outcome {
  std::vector<std::uint32_t> groups;
  std::uint64_t pending = 0;
};
Outcome outcome(const Script& s, arch::KVersion v) {
  PsiCfg cfg;
  cfg.ver = v;
  auto r = run_script(s, cfg);
  Outcome o;
  for (const auto& g : r.world.v.gc) o.groups.push_back(g[0].irq_full);
  o.pending = r.accrued[0] - r.charged[0];
  return o;
}

Result same_charge(const arch::Patch& p) {
  Result r;
  r.name = "psi_irq.same_charge";
  r.approximations = {
      "judged on three small scenarios (irq while idle, cgroup move with irq pending, irq between ticks), "
      "not on every run; a difference found is a fact, none found would be unknown"};
  // Three scenarios that separate the versions, each small enough to read.
  const char* idle =
      "psi v1\ncpus 2\ngroup 1 parent 0\ntask 1 group 1\nirq 0 5000\nwakeup 0 by 1\nschedule 0 1\ntick 0\n";
  const char* move =
      "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\n"
      "move 1 2 by 1\ntick 0\n";
  const char* lag =
      "psi v1\ncpus 1\ngroup 1 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\nclock_gettime 0\n";
  std::vector<std::string> diffs;
  for (auto [label, text] :
       {std::pair{"irq while idle", idle}, {"cgroup move with irq pending", move}, {"irq between ticks", lag}}) {
    auto s = parse_script(text).value();
    auto a = outcome(s, p.before), b = outcome(s, p.after);
    if (a.groups != b.groups || a.pending != b.pending) {
      diffs.push_back(fmt::format("{}: per-group IRQ_FULL on cpu 0 {} before, {} after; pending {} -> {} ns", label,
                                  fmt::join(a.groups, "/"), fmt::join(b.groups, "/"), a.pending, b.pending));
      if (!r.counterexample) {
        s.version = p.after;
        r.counterexample = write_script(s);
      }
    }
  }
  if (diffs.empty()) {
    r.verdict = Verdict::Unknown;
    r.detail = "no difference on the scenarios (not a proof that there is none)";
    return r;
  }
  r.verdict = Verdict::Violated;
  r.replay = kReplayScript;  // both versions ran the scenario
  r.detail = fmt::format(
      "not the same; exactly how it differs: (1) lag: after the fix irq time waits for the next sched_tick or "
      "cross-group "
      "switch of a non-idle task (bounded by the irq time of one tick while ticks run; unbounded on nohz_full, where a "
      "delta >= 2^32 ns wraps the u32 times[]), before it was charged at every rq clock update; (2) irq time while the "
      "CPU idles was consumed uncharged before and is charged after the fix to the next task accounted on that CPU; "
      "(3) irq time pending at a cgroup move goes to the new group after the fix (to the old one at its last clock "
      "update before). Scenarios: {}",
      fmt::join(diffs, "; "));
  return r;
}

// The modelled release with the same PSI irq code as p.after (a point release has its
// backports: 6.1.100 is 6.10's, 6.12.42 6.17's; a6fd16148fdd only matters with irq time off,
// which the jobs do not run).
const char* model_version(const arch::Patch& p) {
  return arch::applied("570c8efd5eb7", p.after)   ? "6.17"
         : arch::applied("3840cbe24cf0", p.after) ? "6.12"
         : arch::applied("ddae0ca2a8fe", p.after) ? "6.10"
                                                  : "6.1";
}

Result no_double_count(const arch::Patch& p, const std::vector<Result>& jobs) {
  Result r;
  r.name = "psi_irq.no_double_count";
  r.verdict = Verdict::Holds;
  std::vector<std::string> parts;
  for (const auto& j : jobs) {
    if (j.name.find("charge_exact") == std::string::npos && j.name.find("base_le_total") == std::string::npos &&
        j.name.find("monotonic") == std::string::npos)
      continue;
    r.verdict = worst(r.verdict, j.verdict);
    r.seconds += j.seconds;
    parts.push_back(fmt::format("{} {}", j.name, name(j.verdict)));
    if (j.counterexample && !r.counterexample) r.counterexample = j.counterexample;
    if (j.verdict == Verdict::Violated && r.replay.empty()) {
      r.replay = j.replay;
      r.inputs = j.inputs;
      if (!r.counterexample) r.counterexample = j.counterexample;
    }
    for (const auto& a : j.approximations)
      if (std::find(r.approximations.begin(), r.approximations.end(), a) == r.approximations.end())
        r.approximations.push_back(a);
  }
  // And every shipped scenario on the release after (the nohz_full wrap is a loss, reported there).
  r.detail = fmt::format(
      "{} on {} (per step, Z3): every ns that leaves the pending irq time is added once to each "
      "enabled group on the charged task's path",
      fmt::join(parts, ", "), p.after.str());
  return r;
}

Result lock_held(const arch::Patch& p, const std::vector<Result>& jobs) {
  Result r;
  for (const auto& j : jobs)
    if (j.name.rfind("psi_irq.lock_held", 0) == 0) r = j;
  r.name = "psi_irq.lock_held";
  // The draft that called it before rq_lock in sched_tick, on the race scenario.
  if (arch::applied("ddae0ca2a8fe", p.after)) {
    auto s = parse_script(
                 "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 1\ngroup 3 parent 1\ntask 1 group 2\nschedule 0 1\n"
                 "irq 0 300\nrace_tick_move 0 1 3 by 1\n")
                 .value();
    PsiCfg cfg;
    cfg.ver = p.after;
    cfg.variant = Variant::NoLock;
    auto draft = from_run("draft", s, cfg);
    r.detail += fmt::format("; the pre-merge draft (psi_account_irqtime before rq_lock in sched_tick) is caught: {}",
                            draft.detail);
    if (!r.counterexample)
      r.counterexample = draft.counterexample ? "# the draft, variant no-lock:\n" + *draft.counterexample : "";
  }
  return r;
}

Result seq_even(const std::vector<Result>& jobs) {
  Result r;
  for (const auto& j : jobs)
    if (j.name.rfind("psi_irq.seq_even", 0) == 0) r = j;
  r.name = "psi_irq.seq_even";
  return r;
}

// The claims' jobs on one version, in psi_jobs' order, computed once per process and together
// (one context, so that a step's vacuity check serves all four obligations): two patches land on
// the same modelled version, and no_double_count and seq_even read the same steps. lag_zero,
// delta_fits_u32 and neg_guard are `kacct prove`'s alone. A reused copy reports 0 s.
std::vector<Result> claim_jobs(const char* ver, std::initializer_list<const char*> obs, unsigned timeout_ms) {
  static Memo<std::vector<Result>> memo;
  bool fresh = false;
  auto all = memo.get(
      fmt::format("{}/{}", ver, timeout_ms),
      [&] {
        return psi_jobs(
            timeout_ms, Variant::Faithful, ver,
            std::vector<std::string>{"lock_held", "seq_even", "base_le_total", "monotonic", "charge_exact"});
      },
      &fresh);
  std::vector<Result> out;
  double others = 0;  // the computing claim reports the time of the jobs it did not ask for too
  for (auto& r : all) {
    const bool asked = std::any_of(
        obs.begin(), obs.end(), [&](const char* ob) { return r.name.rfind(fmt::format("psi_irq.{}[", ob), 0) == 0; });
    if (!asked) others += r.seconds;
    if (!asked) continue;
    if (!fresh) r.seconds = 0;
    out.push_back(std::move(r));
  }
  if (fresh && !out.empty()) out.front().seconds += others;
  return out;
}

}  // namespace

std::vector<Result> psi_irq_claims(const arch::Patch& p, unsigned timeout_ms) {
  if (p.local) return psi_irq_fix_claims(p, timeout_ms);  // a kacct-local fix (claims_fixes.cpp)
  std::vector<Result> out;
  // The release after the patch is judged on the nearest modelled version at or below it.
  const char* ver = model_version(p);
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    if (claim == "psi_irq.same_charge")
      out.push_back(same_charge(p));
    else if (claim == "psi_irq.no_double_count")
      out.push_back(no_double_count(p, claim_jobs(ver, {"base_le_total", "monotonic", "charge_exact"}, timeout_ms)));
    else if (claim == "psi_irq.lock_held")
      out.push_back(lock_held(p, claim_jobs(ver, {"lock_held"}, timeout_ms)));
    else if (claim == "psi_irq.seq_even")
      out.push_back(seq_even(claim_jobs(ver, {"seq_even"}, timeout_ms)));
    else
      out.push_back(unknown_claim(claim));
  }
  return out;
}

}  // namespace kacct::proofs
