// Proof model "psi_irq": per-step obligations of PSI irq accounting (model/psi) with Z3, for
// each version's call sites, from every 64-bit state that satisfies the state invariants; and
// the patch validator for Mechanism::PsiIrq (claims of arch/patches.hpp), which adds concrete
// scripts for the claims about whole runs (same charge as before, the torn sequence count).
#include <fmt/format.h>

#include <cstdlib>
#include <functional>

#include "model/psi/script.hpp"
#include "proofs/jobs.hpp"
#include "proofs/bounds.hpp"
#include "proofs/prover.hpp"
#include "proofs/registry.hpp"
#include "spec/psi.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::psi;
using S = Symbolic;

namespace {

constexpr std::uint64_t kBound = std::uint64_t{1} << 62;
constexpr const char* kBoundNote = "every clock and irq total below 2^62 ns (146 years)";
constexpr const char* kTopoNote =
    "one fixed topology: 2 CPUs; groups root(0) > 1 > 2 and root > 3; tasks 1, 3 in group 2, task 2 in group 3; "
    "steps run on CPU 0 with task 1 current (or idle where the step says)";
constexpr const char* kStatesNote =
    "times[] other than IRQ_FULL and the PSI task state machine are not modelled; record_times only moves state_start";

template <class T> void bound(S& d, const T& v, std::vector<z3::expr>& out) { bound_u64(d, v, kBound, out); }

// The topology of every job.
template <class D> World<D> topo(D& d) {
  auto w = make_world(d, 2, {-1, 0, 1, 0}, 3);
  w.c.tasks[1] = {2, 0};
  w.c.tasks[2] = {3, -1};
  w.c.tasks[3] = {2, -1};
  w.c.curr = {1, 0};
  return w;
}

struct StepCase {
  const char* name;
  bool idle_curr;  // CPU 0 runs the idle task before the step
  std::function<void(S&, const PsiCfg&, World<S>&)> sym;
  std::function<void(Concrete&, const PsiCfg&, World<Concrete>&)> con;
  // The task charged under each version family (0: none; -1: pre-fix idle consumption).
  int charged_pre, charged_post;
  bool charge_point_post;  // 6.10+: nothing left pending afterwards
};

#define KACCT_STEP(body) \
  [](auto& d, const PsiCfg& cfg, auto& w) { body; }

std::vector<StepCase> steps() {
  auto both = [](auto f) { return std::make_pair(std::function<void(S&, const PsiCfg&, World<S>&)>(f),
                                                 std::function<void(Concrete&, const PsiCfg&, World<Concrete>&)>(f)); };
  std::vector<StepCase> out;
  auto add = [&](const char* n, bool idle, auto f, int pre, int post, bool point) {
    auto [s, c] = both(f);
    out.push_back({n, idle, s, c, pre, post, point});
  };
  add("wakeup_remote", false, KACCT_STEP(wakeup(d, cfg, w, 0, 1)), 1, 0, false);
  add("wakeup_idle", true, KACCT_STEP(wakeup(d, cfg, w, 0, 1)), -1, 0, false);
  add("clock_gettime", false, KACCT_STEP(clock_gettime_thread(d, cfg, w, 0)), 1, 0, false);
  add("sched_tick", false, KACCT_STEP(sched_tick(d, cfg, w, 0)), 1, 1, true);
  add("sched_tick_idle", true, KACCT_STEP(sched_tick(d, cfg, w, 0)), -1, 0, false);
  add("schedule_cross_group", false, KACCT_STEP(schedule(d, cfg, w, 0, 2)), 1, 1, true);
  add("schedule_same_group", false, KACCT_STEP(schedule(d, cfg, w, 0, 3)), 1, 0, false);
  add("schedule_to_idle", false, KACCT_STEP(schedule(d, cfg, w, 0, 0)), 1, 1, true);
  add("schedule_from_idle", true, KACCT_STEP(schedule(d, cfg, w, 0, 1)), -1, 0, false);
  add("cgroup_move", false, KACCT_STEP(cgroup_move(d, w, 1, 3, 1)), 0, 0, false);
  add("pressure_on", false, KACCT_STEP(set_pressure(d, w, 1, true, 1)), 0, 0, false);
  return out;
}

enum class Ob { SeqEven, BaseLeTotal, Monotonic, ChargeExact, LagZero, DeltaFitsU32, NegGuard };
const char* ob_name(Ob o) {
  switch (o) {
    case Ob::SeqEven: return "seq_even";
    case Ob::BaseLeTotal: return "base_le_total";
    case Ob::Monotonic: return "monotonic";
    case Ob::ChargeExact: return "charge_exact";
    case Ob::LagZero: return "lag_zero";
    case Ob::DeltaFitsU32: return "delta_fits_u32";
    case Ob::NegGuard: return "neg_guard";
  }
  return "?";
}

template <class D> const u64<D>& base_of(const PsiCfg& cfg, const World<D>& w, int cpu) {
  return cfg.charge_at_tick() ? w.v.cpu[cpu].psi_irq_time : w.v.cpu[cpu].acct.rq.prev_irq_time;
}

// The obligation over a step: `a` before, `b` after. Written once, evaluated symbolically (the
// query) and concretely (the replay of a counterexample).
template <class D>
boolean<D> obligation(D& d, Ob ob, const PsiCfg& cfg, const StepCase& st, const World<D>& a, const World<D>& b) {
  const auto delta = d.sub(base_of(cfg, b, 0), base_of(cfg, a, 0));
  const int charged = cfg.charge_at_tick() ? st.charged_post : cfg.charge_in_clock() ? st.charged_pre : 0;
  switch (ob) {
    case Ob::SeqEven: return spec::seq_even(d, b);
    case Ob::BaseLeTotal: return spec::base_le_total(d, cfg, b);
    case Ob::Monotonic: return spec::monotonic(d, a, b);
    case Ob::ChargeExact: {
      // What left the pending irq time went, mod 2^32, to each enabled group on the charged
      // task's path (as it was before the step) and nowhere else; with no charge, nothing left
      // it (pre-fix idle: it left, uncharged).
      boolean<D> r = d.lit_bool(true);
      std::vector<int> path;
      if (charged > 0) path = a.c.chain(a.c.group_of(charged));
      if (charged == 0 && cfg.has_psi_irq()) r = d.band(r, d.eq(delta, d.template lit<64>(0)));
      for (std::size_t g = 0; g < b.v.gc.size(); ++g)
        for (std::size_t c = 0; c < b.v.cpu.size(); ++c) {
          bool on_path = c == 0 && a.c.enabled[g];
          on_path = on_path && std::find(path.begin(), path.end(), int(g)) != path.end();
          auto want = on_path ? d.add(a.v.gc[g][c].irq_full, d.template trunc<32>(delta)) : a.v.gc[g][c].irq_full;
          r = d.band(r, d.eq(b.v.gc[g][c].irq_full, want));
        }
      return r;
    }
    case Ob::LagZero: return d.eq(base_of(cfg, b, 0), b.v.cpu[0].acct.irqtime.total);
    case Ob::DeltaFitsU32:
      return d.ult(delta, d.template lit<64>(std::uint64_t{1} << 32));
    case Ob::NegGuard: {
      // From a state whose base is ahead of irq_time_read: neither the base nor times[] move.
      boolean<D> r = d.eq(base_of(cfg, b, 0), base_of(cfg, a, 0));
      for (std::size_t g = 0; g < b.v.gc.size(); ++g) r = d.band(r, d.eq(b.v.gc[g][0].irq_full, a.v.gc[g][0].irq_full));
      return r;
    }
  }
  return d.lit_bool(false);
}

struct Named {
  const char* name;
  arch::KVersion ver;
};
const Named kVersions[] = {{"6.1", arch::v(6, 1)}, {"6.10", arch::v(6, 10)}, {"6.12", arch::v(6, 12)}, {"6.17", arch::v(6, 17)}};

}  // namespace

// One job per (version, obligation): one Z3 query per step, plus the concrete lock check.
std::vector<Result> psi_jobs(unsigned timeout_ms, Variant variant, const std::string& only_ver, const std::string& only_ob) {
  std::vector<Result> out;
  const std::vector<Ob> obs = {Ob::SeqEven, Ob::BaseLeTotal, Ob::Monotonic, Ob::ChargeExact,
                               Ob::LagZero, Ob::DeltaFitsU32, Ob::NegGuard};
  for (const auto& ver : kVersions) {
    if (!only_ver.empty() && only_ver != ver.name) continue;
    PsiCfg cfg;
    cfg.ver = ver.ver;
    cfg.variant = variant;
    // psi_irq.lock_held: the control structure is concrete, so one run per step decides it for
    // every value.
    if (only_ob.empty() || only_ob == "lock_held") {
      Result r;
      r.name = fmt::format("psi_irq.lock_held[{}]", ver.name);
      r.verdict = Verdict::Holds;
      r.approximations = {kTopoNote};
      r.detail = "every PSI and rq-clock write of every step is made by the CPU holding that rq's lock";
      for (const auto& st : steps()) {
        Concrete d;
        auto w = topo(d);
        if (st.idle_curr) w.c.curr[0] = 0;
        st.con(d, cfg, w);
        if (!w.c.faults.empty()) {
          r.verdict = Verdict::Violated;
          r.detail = fmt::format("{}: cpu {} wrote {} without rq {}'s lock", st.name, w.c.faults[0].actor,
                                 w.c.faults[0].what, w.c.faults[0].cpu);
          break;
        }
      }
      out.push_back(std::move(r));
    }
    for (Ob ob : obs) {
      if (!only_ob.empty() && only_ob != ob_name(ob)) continue;
      if (ob == Ob::LagZero && !cfg.charge_at_tick()) continue;
      if (ob == Ob::NegGuard && !cfg.charge_at_tick()) continue;
      Result r;
      r.name = fmt::format("psi_irq.{}[{}]", ob_name(ob), ver.name);
      r.verdict = Verdict::Holds;
      r.approximations = {kBoundNote, kTopoNote, kStatesNote};
      for (const auto& st : steps()) {
        if (ob == Ob::LagZero && !st.charge_point_post) continue;
        z3::context ctx;
        S d(ctx);
        auto w = topo(d);
        if (st.idle_curr) w.c.curr[0] = 0;
        make_fresh(d, w.v.now, "now");
        for (std::size_t i = 0; i < w.v.cpu.size(); ++i) make_fresh(d, w.v.cpu[i], fmt::format("cpu{}", i));
        for (std::size_t g = 0; g < w.v.gc.size(); ++g)
          for (std::size_t i = 0; i < w.v.gc[g].size(); ++i) make_fresh(d, w.v.gc[g][i], fmt::format("g{}c{}", g, i));
        std::vector<z3::expr> as;
        as.push_back(z3::ule(w.v.now.e(), ctx.bv_val(kBound, 64)));
        for (const auto& c : w.v.cpu) bound(d, c, as);
        for (const auto& g : w.v.gc) bound(d, g, as);
        as.push_back(spec::seq_even(d, w).e());
        if (ob == Ob::NegGuard) {
          as.push_back(z3::ult(w.v.cpu[0].acct.irqtime.total.e(), w.v.cpu[0].psi_irq_time.e()));
        } else {
          as.push_back(spec::base_le_total(d, cfg, w).e());
          for (const auto& c : w.v.cpu) as.push_back(z3::ule(c.acct.rq.prev_irq_time.e(), c.acct.irqtime.total.e()));
        }
        const World<S> a = w;
        st.sym(d, cfg, w);
        auto ok = obligation(d, ob, cfg, st, a, w);
        z3::expr all = ok.e();
        for (const auto& o : d.obligations) all = all && !o.violated;
        auto res = solve(ctx, as, !all, timeout_ms);
        if (std::getenv("KACCT_PROOF_TIMES")) fmt::print(stderr, "{} {}: {:.3f}s\n", r.name, st.name, res.seconds);
        r.seconds += res.seconds;
        if (res.verdict == Verdict::Holds) continue;
        if (res.verdict != Verdict::Violated) {
          r.verdict = worst(r.verdict, res.verdict);
          r.detail = fmt::format("{}: {}", st.name, res.reason);
          continue;
        }
        // Replay the model concretely.
        Concrete k;
        auto kw = topo(k);
        if (st.idle_curr) kw.c.curr[0] = 0;
        read_back(*res.model, a.v.now, kw.v.now);
        for (std::size_t i = 0; i < kw.v.cpu.size(); ++i) read_back(*res.model, a.v.cpu[i], kw.v.cpu[i]);
        for (std::size_t g = 0; g < kw.v.gc.size(); ++g)
          for (std::size_t i = 0; i < kw.v.gc[g].size(); ++i) read_back(*res.model, a.v.gc[g][i], kw.v.gc[g][i]);
        const auto ka = kw;
        st.con(k, cfg, kw);
        const bool replays = !obligation(k, ob, cfg, st, ka, kw);
        r.verdict = replays ? Verdict::Violated : Verdict::Error;
        nlohmann::ordered_json state;
        state["now"] = ka.v.now;
        state["cpu0"] = to_json(ka.v.cpu[0]);
        state["irq_full_cpu0"] = nlohmann::ordered_json::array();
        for (const auto& g : ka.v.gc) state["irq_full_cpu0"].push_back(g[0].irq_full);
        r.inputs = {{"version", ver.name}, {"step", st.name}, {"state", state}};
        r.counterexample = fmt::format("step {} on version {} from state {}", st.name, ver.name, state.dump());
        r.detail = replays ? fmt::format("{}: Z3 state replayed concretely breaks it", st.name)
                           : "Z3 counterexample does not replay concretely (domain mismatch)";
        break;
      }
      if (r.verdict == Verdict::Holds)
        r.detail = fmt::format("{} steps from every bounded state satisfying seq_even and base_le_total", steps().size());
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Result> psi_all_jobs(unsigned timeout_ms) { return psi_jobs(timeout_ms, Variant::Faithful, "", ""); }

// ---- patch claims

namespace {

Result from_run(const std::string& name, const Script& s, const PsiCfg& cfg) {
  Result r;
  r.name = name;
  auto rr = run_script(s, cfg);
  Script shown = s;
  shown.version = cfg.ver;
  if (rr.violation) {
    r.verdict = Verdict::Violated;
    r.detail = fmt::format("{} on {} at event {} (line {}): {}", rr.violation->invariant, cfg.ver.str(), *rr.failed_at + 1,
                           rr.line, rr.violation->message);
    shown.events.resize(*rr.failed_at + 1);
    r.counterexample = write_script(shown);
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
  r.approximations = {"judged on three small scenarios (irq while idle, cgroup move with irq pending, irq between ticks), "
                      "not on every run; a difference found is a fact, none found would be unknown"};
  // Three scenarios that separate the versions, each small enough to read.
  const char* idle =
      "psi v1\ncpus 2\ngroup 1 parent 0\ntask 1 group 1\nirq 0 5000\nwakeup 0 by 1\nschedule 0 1\ntick 0\n";
  const char* move =
      "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\n"
      "move 1 2 by 1\ntick 0\n";
  const char* lag = "psi v1\ncpus 1\ngroup 1 parent 0\ntask 1 group 1\nschedule 0 1\ntick 0\nirq 0 3000\nclock_gettime 0\n";
  std::vector<std::string> diffs;
  for (auto [label, text] : {std::pair{"irq while idle", idle}, {"cgroup move with irq pending", move},
                             {"irq between ticks", lag}}) {
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
  r.detail = fmt::format(
      "not the same; exactly how it differs: (1) lag: after the fix irq time waits for the next sched_tick or cross-group "
      "switch of a non-idle task (bounded by the irq time of one tick while ticks run; unbounded on nohz_full, where a "
      "delta >= 2^32 ns wraps the u32 times[]), before it was charged at every rq clock update; (2) irq time while the "
      "CPU idles was consumed uncharged before and is charged after the fix to the next task accounted on that CPU; "
      "(3) irq time pending at a cgroup move goes to the new group after the fix (to the old one at its last clock "
      "update before). Scenarios: {}",
      fmt::join(diffs, "; "));
  return r;
}

const char* model_version(const arch::Patch& p) {
  return p.after >= arch::v(6, 17) ? "6.17" : p.after >= arch::v(6, 12) ? "6.12" : p.after >= arch::v(6, 10) ? "6.10" : "6.1";
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
    for (const auto& a : j.approximations)
      if (std::find(r.approximations.begin(), r.approximations.end(), a) == r.approximations.end()) r.approximations.push_back(a);
  }
  // And every shipped scenario on the release after (the nohz_full wrap is a loss, reported there).
  r.detail = fmt::format("{} on {} (per step, Z3): every ns that leaves the pending irq time is added once to each "
                         "enabled group on the charged task's path", fmt::join(parts, ", "), p.after.str());
  return r;
}

Result lock_held(const arch::Patch& p, const std::vector<Result>& jobs) {
  Result r;
  for (const auto& j : jobs)
    if (j.name.rfind("psi_irq.lock_held", 0) == 0) r = j;
  r.name = "psi_irq.lock_held";
  // The draft that called it before rq_lock in sched_tick, on the race scenario.
  if (p.after >= arch::v(6, 10)) {
    auto s = parse_script(
        "psi v1\ncpus 2\ngroup 1 parent 0\ngroup 2 parent 1\ngroup 3 parent 1\ntask 1 group 2\nschedule 0 1\n"
        "irq 0 300\nrace_tick_move 0 1 3 by 1\n").value();
    PsiCfg cfg;
    cfg.ver = p.after;
    cfg.variant = Variant::NoLock;
    auto draft = from_run("draft", s, cfg);
    r.detail += fmt::format("; the pre-merge draft (psi_account_irqtime before rq_lock in sched_tick) is caught: {}",
                            draft.detail);
    if (!r.counterexample) r.counterexample = draft.counterexample ? "# the draft, variant no-lock:\n" + *draft.counterexample : "";
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

}  // namespace

std::vector<Result> psi_irq_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<Result> out;
  // The release after the patch is judged on the nearest modelled version at or below it.
  const auto jobs = psi_jobs(timeout_ms, Variant::Faithful, model_version(p), "");
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    if (claim == "psi_irq.same_charge") out.push_back(same_charge(p));
    else if (claim == "psi_irq.no_double_count") out.push_back(no_double_count(p, jobs));
    else if (claim == "psi_irq.lock_held") out.push_back(lock_held(p, jobs));
    else if (claim == "psi_irq.seq_even") out.push_back(seq_even(jobs));
    else {
      Result r;
      r.name = std::string(claim);
      r.verdict = Verdict::Error;
      r.detail = "unknown claim";
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace kacct::proofs
