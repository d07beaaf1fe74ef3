// Proof model "psi_irq": per-step obligations of PSI irq accounting (model/psi) with Z3, for
// each version's call sites, from every 64-bit state that satisfies the state invariants (the
// patch claims are in proofs/claims_psi.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "proofs/jobs.hpp"
#include "proofs/step_job.hpp"
#include "proofs/registry.hpp"
#include "spec/psi.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::psi;
using S = Symbolic;

namespace {

constexpr const char* kTopoNote =
    "one fixed topology: 2 CPUs; groups root(0) > 1 > 2 and root > 3; tasks 1, 3 in group 2, task 2 in group 3; "
    "steps run on CPU 0 with task 1 current (or idle where the step says)";
constexpr const char* kStatesNote =
    "times[] other than IRQ_FULL and the PSI task state machine are not modelled; record_times only moves state_start";

// The topology of every job.
template <class D>
World<D> topo(D& d) {
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

#define KACCT_STEP(body) [](auto& d, const PsiCfg& cfg, auto& w) { body; }

std::vector<StepCase> steps() {
  auto both = [](auto f) {
    return std::make_pair(std::function<void(S&, const PsiCfg&, World<S>&)>(f),
                          std::function<void(Concrete&, const PsiCfg&, World<Concrete>&)>(f));
  };
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

template <class D>
const u64<D>& base_of(const PsiCfg& cfg, const World<D>& w, int cpu) {
  return cfg.charge_at_tick() ? w.v.cpu[cpu].psi_irq_time : w.v.cpu[cpu].acct.rq.prev_irq_time;
}

// The obligation over a step: `a` before, `b` after. Written once, evaluated symbolically (the
// query) and concretely (the replay of a counterexample).
template <class D>
boolean<D> obligation(D& d, Ob ob, const PsiCfg& cfg, const StepCase& st, const World<D>& a, const World<D>& b) {
  const auto delta = d.sub(base_of(cfg, b, 0), base_of(cfg, a, 0));
  const int charged = cfg.charge_at_tick() ? st.charged_post : cfg.charge_in_clock() ? st.charged_pre : 0;
  switch (ob) {
    case Ob::SeqEven: return spec::psi::seq_even(d, b);
    case Ob::BaseLeTotal: return spec::psi::base_le_total(d, cfg, b);
    case Ob::Monotonic: return spec::psi::monotonic(d, a, b);
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
    case Ob::DeltaFitsU32: return d.ult(delta, d.template lit<64>(std::uint64_t{1} << 32));
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
const Named kVersions[] = {
    {"6.1", arch::v(6, 1)}, {"6.10", arch::v(6, 10)}, {"6.12", arch::v(6, 12)}, {"6.17", arch::v(6, 17)}};

// One step on one version for one obligation, for the harness (proofs/step_job.hpp).
struct PsiCase {
  template <class D>
  using In = World<D>;
  const StepCase& st;
  Ob ob;
  PsiCfg cfg;
  const char* ver;

  template <class D>
  World<D> world(D& d) const {
    auto w = topo(d);
    if (st.idle_curr) w.c.curr[0] = 0;
    return w;
  }
  In<S> fresh(S& d) const {
    auto w = world(d);
    make_fresh(d, w.v.now, "now");
    for (std::size_t i = 0; i < w.v.cpu.size(); ++i) make_fresh(d, w.v.cpu[i], fmt::format("cpu{}", i));
    for (std::size_t g = 0; g < w.v.gc.size(); ++g)
      for (std::size_t i = 0; i < w.v.gc[g].size(); ++i) make_fresh(d, w.v.gc[g][i], fmt::format("g{}c{}", g, i));
    return w;
  }
  void assume(S& d, const In<S>& w, std::vector<z3::expr>& as) const {
    as.push_back(z3::ule(w.v.now.e(), d.ctx().bv_val(kBound62, 64)));
    for (const auto& c : w.v.cpu) bound62(d, c, as);
    for (const auto& g : w.v.gc) bound62(d, g, as);
    as.push_back(spec::psi::seq_even(d, w).e());
    if (ob == Ob::NegGuard) {
      as.push_back(z3::ult(w.v.cpu[0].acct.irqtime.total.e(), w.v.cpu[0].psi_irq_time.e()));
    } else {
      as.push_back(spec::psi::base_le_total(d, cfg, w).e());
      for (const auto& c : w.v.cpu) as.push_back(z3::ule(c.acct.rq.prev_irq_time.e(), c.acct.irqtime.total.e()));
    }
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& w) const {
    const World<D> a = w;
    if constexpr (D::is_symbolic)
      st.sym(d, cfg, w);
    else
      st.con(d, cfg, w);
    return {obligation(d, ob, cfg, st, a, w)};
  }
  In<Concrete> read_back(const z3::model& m, const In<S>& w) const {
    Concrete k;
    auto kw = world(k);
    kacct::read_back(m, w.v.now, kw.v.now);
    for (std::size_t i = 0; i < kw.v.cpu.size(); ++i) kacct::read_back(m, w.v.cpu[i], kw.v.cpu[i]);
    for (std::size_t g = 0; g < kw.v.gc.size(); ++g)
      for (std::size_t i = 0; i < kw.v.gc[g].size(); ++i) kacct::read_back(m, w.v.gc[g][i], kw.v.gc[g][i]);
    return kw;
  }
  nlohmann::ordered_json compact(const In<Concrete>& w) const {
    nlohmann::ordered_json state;
    state["now"] = w.v.now;
    state["cpu0"] = to_json(w.v.cpu[0]);
    state["irq_full_cpu0"] = nlohmann::ordered_json::array();
    for (const auto& g : w.v.gc) state["irq_full_cpu0"].push_back(g[0].irq_full);
    return state;
  }
  nlohmann::ordered_json json(const In<Concrete>& w) const {
    return {{"version", ver}, {"step", st.name}, {"state", compact(w)}};
  }
  nlohmann::ordered_json state(const In<Concrete>& w) const {
    return {{"now", w.v.now}, {"cpu", to_json(w.v.cpu)}, {"gc", to_json(w.v.gc)}};
  }
  std::string counterexample(const In<Concrete>& w) const {
    return fmt::format("step {} on version {} from state {}", st.name, ver, compact(w).dump());
  }
};

}  // namespace

// One job per (version, obligation): one Z3 query per step, plus the concrete lock check.
// The queries of one version share a context: the obligations of one step assume the same
// pre-state, so its vacuity check runs once (SatSets), not once per obligation (the check costs
// about 20 times a query that holds).
std::vector<Result> psi_jobs(unsigned timeout_ms, Variant variant, const std::string& only_ver,
                             const std::vector<std::string>& only_obs) {
  const auto wanted = [&](const char* ob) {
    return only_obs.empty() || std::find(only_obs.begin(), only_obs.end(), ob) != only_obs.end();
  };
  std::vector<Result> out;
  const std::vector<Ob> obs = {Ob::SeqEven, Ob::BaseLeTotal,  Ob::Monotonic, Ob::ChargeExact,
                               Ob::LagZero, Ob::DeltaFitsU32, Ob::NegGuard};
  for (const auto& ver : kVersions) {
    if (!only_ver.empty() && only_ver != ver.name) continue;
    PsiCfg cfg;
    cfg.ver = ver.ver;
    cfg.variant = variant;
    // psi_irq.lock_held: the control structure is concrete, so one run per step decides it for
    // every value.
    if (wanted("lock_held")) {
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
          r.replay = kReplayStep;  // the check itself is the concrete step
          r.inputs = {{"version", ver.name}, {"step", st.name}};
          r.detail = fmt::format("{}: cpu {} wrote {} without rq {}'s lock", st.name, w.c.faults[0].actor,
                                 w.c.faults[0].what, w.c.faults[0].cpu);
          break;
        }
      }
      out.push_back(std::move(r));
    }
    z3::context ctx;
    SatSets sat;
    for (Ob ob : obs) {
      if (!wanted(ob_name(ob))) continue;
      if (ob == Ob::LagZero && !cfg.charge_at_tick()) continue;
      if (ob == Ob::NegGuard && !cfg.charge_at_tick()) continue;
      const std::string name = fmt::format("psi_irq.{}[{}]", ob_name(ob), ver.name);
      StepJob j(name, {kBound62Note, kTopoNote, kStatesNote});
      for (const auto& st : steps()) {
        if (ob == Ob::LagZero && !st.charge_point_post) continue;
        const PsiCase pc{st, ob, cfg, ver.name};
        // With a hint the plain bit-blasting pipeline joins after 3 s of the default solver and 3 s
        // of cofactoring: base_le_total of the 6.1 wakeups takes it ~0.4 s, the default solver
        // ~0.8 s and cofactoring ~12 s (CPU), so under load it came out unknown. A fresh hint per
        // query: the default solver still goes first (what it decides is unchanged).
        SolveHint hint;
        hint.sat = &sat;
        // charge_exact compares each group's times[] with an ite-merged sum: cofactoring first.
        // 6.12's sched_tick took the default solver 5.8M resource units (~6 s), cofactoring 3.2K.
        if (ob == Ob::ChargeExact) hint.last = 1;
        if (!j.add(check_step(pc, {ob_name(ob)}, timeout_ms, fmt::format("{} {}", name, st.name), &ctx, &hint),
                   st.name))
          break;
      }
      auto r = j.done(
          fmt::format("{} steps from every bounded state satisfying seq_even and base_le_total", steps().size()));
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Result> psi_jobs(unsigned timeout_ms, Variant variant, const std::string& only_ver,
                             const std::string& only_ob) {
  return psi_jobs(timeout_ms, variant, only_ver, only_ob.empty() ? std::vector<std::string>{} : std::vector{only_ob});
}

std::vector<Result> psi_all_jobs(unsigned timeout_ms) { return psi_jobs(timeout_ms, Variant::Faithful, "", ""); }

}  // namespace kacct::proofs
