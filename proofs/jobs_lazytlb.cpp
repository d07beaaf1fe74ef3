// Proof model "lazytlb" and the LazyTlb patch validator (docs/models/lazy-tlb.md).
//
// Step jobs: for every structural state the explorer reaches in a small world (2 CPUs, 2
// tasks, 1 mm), every enabled event and every outcome of its atomic_dec_and_test decisions,
// Z3 checks at full 32-bit width that, from ANY counter values consistent with the accounting
// relation (plus any number of references held outside the modelled tasks), the step's
// obligations hold (no mm_users/mm_count underflow, no decrement of a freed mm) and the
// relation holds again afterwards. Patch claims combine exhaustive exploration with these jobs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "model/domain/symbolic.hpp"
#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/seed.hpp"
#include "proofs/prover.hpp"
#include "proofs/registry.hpp"
#include "spec/lazytlb.hpp"

namespace kacct::proofs {
namespace {
using namespace kacct::lazytlb;

struct ModeCase {
  const char* name;
  Arch arch;
  arch::KVersion ver;
};
constexpr ModeCase kModes[] = {{"refcount", Arch::Generic, {6, 12}},
                               {"pre-6.4", Arch::PpcRadix, {6, 3}},
                               {"shootdown", Arch::PpcRadix, {6, 12}}};

constexpr std::uint32_t kOutsideMax = 0x7fffffc0u;  // outside references: below 2^31 - 64

// Structural key: the world without its counters.
std::string shape(const World<Concrete>& w) {
  std::string k;
  for (const auto& c : w.cpus) k += fmt::format("{},{},{};", c.curr, c.prev_mm, int(c.irqs_off));
  for (const auto& t : w.tasks) k += fmt::format("{}{}{}{}{},{};", int(t.st), int(t.kthread), int(t.idle), int(t.exiting), t.mm, t.active_mm);
  for (const auto& m : w.mms) k += fmt::format("{}{:x}{}{};", int(m.st), m.mask.w[0], int(m.ext_users), int(m.ext_grabs));
  return k;
}

struct StepStats {
  std::size_t queries = 0, paths = 0, infeasible = 0;  // verdict: worst, Violated before Unknown
  Verdict verdict = Verdict::Holds;
  std::string first_bad;
  double seconds = 0;
};

// One (state, event): every decision path, one query per path (an infeasible path is one whose
// assumptions are contradictory: solve() reports it as vacuous).
void prove_step(z3::context& ctx, const World<Concrete>& cw, const Cfg& cfg, const Event& e, unsigned timeout_ms,
                StepStats& st) {
  std::vector<std::vector<bool>> todo{{}};
  while (!todo.empty()) {
    const std::vector<bool> prefix = todo.back();
    todo.pop_back();
    Symbolic d(ctx);
    World<Symbolic> w;
    w.cpus = cw.cpus;
    w.tasks = cw.tasks;
    w.mms = cw.mms;
    w.ntasks = cw.ntasks;
    w.cnt.resize(cw.cnt.size());
    std::vector<u32<Symbolic>> xu, xc;
    std::vector<z3::expr> assume;
    for (std::size_t m = 0; m < cw.mms.size(); ++m) {
      make_fresh(d, w.cnt[m], fmt::format("mm{}", m));
      xu.push_back(d.fresh<32>(fmt::format("outside_users{}", m)));
      xc.push_back(d.fresh<32>(fmt::format("outside_grabs{}", m)));
      if (cw.mms[m].st != MmState::Live) {  // no outside holders of an unborn or freed mm
        assume.push_back(xu[m].e() == ctx.bv_val(0, 32));
        assume.push_back(xc[m].e() == ctx.bv_val(0, 32));
      }
      assume.push_back(z3::ule(xu[m].e(), ctx.bv_val(kOutsideMax, 32)));
      assume.push_back(z3::ule(xc[m].e(), ctx.bv_val(kOutsideMax, 32)));
      assume.push_back(spec::accounting(d, w, cfg, Ref(m), xu[m], xc[m]).e());
    }
    Costs cost;
    StepLog log;
    Decider<Symbolic> dec;
    dec.oracle = prefix;
    Stepper<Symbolic>(d, cfg, w, cost, log, dec).run(e);
    if (dec.next > prefix.size()) {  // more decisions than decided: split
      auto f = prefix, t = prefix;
      f.push_back(false);
      t.push_back(true);
      todo.push_back(f);
      todo.push_back(t);
      continue;
    }
    ++st.paths;
    // The structure after this path is concrete: its invariants are checked directly.
    World<Concrete> post;
    post.cpus = w.cpus;
    post.tasks = w.tasks;
    post.mms = w.mms;
    post.ntasks = w.ntasks;
    post.cnt.resize(w.cnt.size(), Counters<Concrete>{1, 1});
    auto structural = spec::check(post, cfg, log, false);
    for (const auto& p : dec.path) assume.push_back(p.e());
    z3::expr bad = ctx.bool_val(false);
    for (const auto& o : d.obligations) bad = bad || o.violated;
    for (std::size_t m = 0; m < cw.mms.size(); ++m) bad = bad || !spec::accounting(d, w, cfg, Ref(m), xu[m], xc[m]).e();
    auto s = solve(ctx, assume, bad, timeout_ms);
    st.seconds += s.seconds;
    if (s.verdict == Verdict::Error && s.reason.find("vacuous") != std::string::npos) {
      ++st.infeasible;
      continue;
    }
    ++st.queries;
    if (!structural.empty() && st.verdict != Verdict::Violated) {
      st.verdict = Verdict::Violated;
      st.first_bad = fmt::format("{}: {}: {}", event_text(e), structural.front().invariant, structural.front().detail);
    }
    if (s.verdict != Verdict::Holds && (st.verdict == Verdict::Holds || int(s.verdict) < int(st.verdict))) {
      st.verdict = s.verdict;
      std::string what = s.reason;
      if (s.model) {
        for (const auto& o : d.obligations)
          if (s.model->eval(o.violated, true).is_true()) what = "obligation " + o.site;
        if (what.empty()) what = "accounting relation not preserved";
      }
      st.first_bad = fmt::format("{} (decisions {}): {}", event_text(e), dec.path.size(), what);
    }
  }
}

// 2 CPUs, 3 tasks, 2 mms (so that fork and exec happen), the first kProofStates states in BFS order.
Sizes proof_sizes() { return {2, 3, 2}; }
constexpr std::size_t kProofStates = 30'000;
constexpr std::size_t kStatesPerOp = 10;  // structural states checked per event kind and mode

std::vector<Result> step_jobs(const ModeCase& mc, unsigned timeout_ms, const std::vector<std::string>& mutants = {}) {
  Script h;
  h.sizes = proof_sizes();
  h.arch = mc.arch;
  h.version = mc.ver;
  h.mutants = mutants;
  const Cfg cfg = h.cfg();
  ExploreOptions o;
  o.header = h;
  o.header.mutants.clear();  // the shapes come from the real code; a mutant only changes the step
  o.max_states = kProofStates;
  auto ex = explore(o, true);
  // Distinct shapes in BFS order, and for each op the first kStatesPerOp shapes enabling it.
  std::set<std::string> shapes;
  std::map<int, std::vector<std::pair<const World<Concrete>*, Event>>> per_op;
  std::map<int, std::size_t> shapes_per_op;
  for (const auto& w : ex.sample) {
    if (!shapes.insert(shape(w)).second) continue;
    std::set<int> counted;
    for (const auto& e : candidate_events(w, cfg)) {
      if (!not_enabled(w, cfg, e).empty()) continue;
      int op = int(e.op);
      if (!counted.count(op)) {
        counted.insert(op);
        ++shapes_per_op[op];
      }
      else continue;  // one instance of each event kind per shape
      if (shapes_per_op[op] <= kStatesPerOp) per_op[op].push_back({&w, e});
    }
  }
  std::vector<Result> out;
  for (auto& [op, items] : per_op) {
    Result r;
    r.name = fmt::format("lazytlb.step[{},{}]", op_name(Op(op)), mc.name);
    StepStats st;
    z3::context ctx;
    for (const auto& [w, e] : items) prove_step(ctx, *w, cfg, e, timeout_ms, st);
    r.verdict = st.verdict;
    r.seconds = st.seconds;
    const std::size_t total = shapes_per_op[op];
    r.detail = fmt::format("{} {} {}: {} queries over {} event instances in {} of {} reachable shapes ({} paths, {} infeasible){}",
                           arch_name(mc.arch), mc.ver.str(), mode_name(cfg), st.queries, items.size(),
                           std::min(total, kStatesPerOp), total, st.paths, st.infeasible,
                           st.first_bad.empty() ? "" : "; first failure: " + st.first_bad);
    r.approximations = {
        fmt::format("structure: the first {} reachable states (BFS) of a {}-CPU, {}-task, {}-mm world{}", ex.states,
                    h.sizes.cpus, h.sizes.tasks, h.sizes.mms,
                    total > kStatesPerOp ? fmt::format(", first {} shapes per event kind", kStatesPerOp) : ""),
        "mm_users/mm_count: any 32-bit values satisfying the accounting relation, with up to 2^31-64 outside references",
        "each event atomic; IPIs delivered synchronously in the sender's event"};
    out.push_back(std::move(r));
  }
  return out;
}

// Exhaustive exploration as one Result (zombies: states with an mm pinned only lazily).
Result explored(const std::string& title, Arch a, arch::KVersion ver, Sizes s, std::size_t* zombies = nullptr,
                std::size_t max_states = 1'500'000) {
  ExploreOptions o;
  o.header.sizes = s;
  o.header.arch = a;
  o.header.version = ver;
  o.max_states = max_states;
  const auto t0 = std::chrono::steady_clock::now();
  auto ex = explore(o);
  if (zombies) *zombies = ex.zombie_states;
  Result r;
  r.name = title;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.verdict = ex.violation ? Verdict::Violated : ex.truncated ? Verdict::Unknown : Verdict::Holds;
  r.detail = fmt::format("{} {} ({}): {} states, {} transitions, depth {}, {} frees, {} zombie states, <= {} IPIs per event{}",
                         arch_name(a), ver.str(), mode_name(o.header.cfg()), ex.states, ex.transitions, ex.depth, ex.frees,
                         ex.zombie_states, ex.max_ipis_step,
                         ex.violation ? "; " + ex.violation->invariant + ": " + ex.violation->detail : "");
  if (ex.counterexample) r.counterexample = write_script(*ex.counterexample);
  r.approximations = {fmt::format("bounded world: {} CPUs, {} tasks, {} mms, one outside mmget and mmgrab per mm", s.cpus,
                                  s.tasks, s.mms),
                      "each event atomic; IPIs delivered synchronously in the sender's event"};
  return r;
}

Result combine(const std::string& title, const std::vector<Result>& parts, const std::string& prefix) {
  Result r;
  r.name = title;
  r.verdict = Verdict::Holds;
  std::vector<std::string> details;
  for (const auto& p : parts) {
    r.verdict = worst(r.verdict, p.verdict);
    r.seconds += p.seconds;
    if (!r.counterexample && p.counterexample) r.counterexample = p.counterexample;
    if (p.verdict != Verdict::Holds || details.size() < 8) details.push_back(p.name + " " + name(p.verdict) + " [" + p.detail + "]");
    for (const auto& a : p.approximations)
      if (std::find(r.approximations.begin(), r.approximations.end(), a) == r.approximations.end()) r.approximations.push_back(a);
  }
  r.detail = prefix + fmt::format("{}", fmt::join(details, "; "));
  return r;
}

}  // namespace

std::vector<Result> lazytlb_all_jobs(unsigned timeout_ms) {
  std::vector<Result> out;
  for (const auto& mc : kModes)
    for (auto& r : step_jobs(mc, timeout_ms)) out.push_back(std::move(r));
  return out;
}

// A mutant must make some step job fail (test hook for test/lazytlb/).
std::vector<Result> lazytlb_mutant_jobs(const std::string& mutant, bool shootdown, unsigned timeout_ms) {
  return step_jobs(shootdown ? kModes[2] : kModes[0], timeout_ms, {mutant});
}

namespace {

Sizes claim_sizes() { return {2, 2, 2}; }

Result steps_in_both_modes(arch::KVersion before, arch::KVersion after, unsigned timeout_ms) {
  std::vector<Result> parts;
  for (const auto& mc : {ModeCase{"before", Arch::PpcRadix, before}, ModeCase{"after", Arch::PpcRadix, after}})
    for (auto& r : step_jobs(mc, timeout_ms)) parts.push_back(std::move(r));
  return combine("z3 steps", parts, "");
}

// The mm is freed at the last real reference under shootdown; under refcounting a lazy CPU
// pins it for as long as it stays lazy. Observed on a script (docs: "pin").
Result free_timing(const arch::Patch& p) {
  Result r;
  r.name = "lazytlb.free_timing";
  auto pin = [](Arch a, arch::KVersion v, int spins) {
    Script s;
    s.sizes = {2, 2, 1};
    s.arch = a;
    s.version = v;
    auto ev = [&](Op op, int c, int arg = 0) { s.events.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
    ev(Op::Switch, 1, 0); ev(Op::Finish, 1); ev(Op::Idle, 1); ev(Op::Finish, 1);
    ev(Op::Switch, 0, 0); ev(Op::Finish, 0); ev(Op::Exit, 0); ev(Op::Switch, 0, 1); ev(Op::Finish, 0);
    for (int i = 0; i < spins; ++i) { ev(Op::Idle, 0); ev(Op::Finish, 0); ev(Op::Switch, 0, 1); ev(Op::Finish, 0); }
    return run_script(s);
  };
  auto before = pin(Arch::PpcRadix, p.before, 250);
  auto after = pin(Arch::PpcRadix, p.after, 250);
  auto exb = explored("before", Arch::PpcRadix, p.before, claim_sizes());
  std::size_t zombies_after = 1;
  auto exa = explored("after", Arch::PpcRadix, p.after, claim_sizes(), &zombies_after);
  const bool changed = !before.failed_at && !after.failed_at && before.world.mms[0].st == MmState::Live &&
                       before.zombie_steps >= 1000 && after.world.mms[0].st == MmState::Freed && after.zombie_steps == 0;
  const bool no_zombie_after = exa.verdict == Verdict::Holds && zombies_after == 0;
  r.verdict = changed && no_zombie_after ? Verdict::Holds : (exa.verdict == Verdict::Unknown ? Verdict::Unknown : Verdict::Violated);
  r.detail = fmt::format(
      "before ({}): after the exit the dead mm stays allocated for all {} further events while CPU 1 idles lazily on it "
      "(zombie in {} events; pinned until that CPU next runs a user task, execs or goes offline: unbounded); "
      "after ({}): freed by the exit's last mmdrop, {} IPI(s) shoot CPU 1 to init_mm, never a zombie in any of the "
      "explored states [{}] (before: [{}])",
      p.before.str(), 1000, before.zombie_steps, p.after.str(), after.costs.ipis, exa.detail, exb.detail);
  r.approximations = exa.approximations;
  r.seconds = exa.seconds + exb.seconds;
  return r;
}

Result ipi_cost(const arch::Patch& p) {
  Result r;
  r.name = "lazytlb.ipi_cost";
  auto seed_costs = [](arch::KVersion v, int n) {
    auto seed = seed_scenario(n, 4, Arch::PpcRadix, v);
    Script loop = seed.script;
    loop.events.resize(seed.loop_end);
    auto l = run_script(loop).costs;
    loop.events.resize(seed.loop_begin);
    auto b = run_script(loop).costs;
    auto all = run_script(seed.script).costs;
    return std::array<double, 4>{double(l.count_atomics - b.count_atomics) / double(l.switches - b.switches),
                                 double(l.ipis - b.ipis), double(all.ipis - l.ipis), double(all.frees)};
  };
  const int n = 16;
  auto b = seed_costs(p.before, n), a = seed_costs(p.after, n);
  auto exa = explored("after", Arch::PpcRadix, p.after, claim_sizes());
  auto exb = explored("before", Arch::PpcRadix, p.before, claim_sizes());
  const bool as_claimed = a[1] == 0 && a[0] <= b[0];
  r.verdict = exa.verdict == Verdict::Unknown ? Verdict::Unknown : as_claimed ? Verdict::Holds : Verdict::Violated;
  r.detail = fmt::format(
      "seed scenario, {} CPUs/threads, 4 trips through idle each, then exit (ppc64-radix): before {}: {:.2f} mm_count "
      "atomics per switch, {} IPIs in the loop, {} IPIs at exit; after {}: {:.2f} atomics per switch, {} IPIs in the loop, "
      "{} IPIs at exit (one per other CPU still lazy on or trimmed from the mm). Most IPIs sent by one event in the "
      "explored worlds: before [{}], after [{}]",
      n, p.before.str(), b[0], b[1], b[2], p.after.str(), a[0], a[1], a[2], exb.detail, exa.detail);
  r.approximations = exa.approximations;
  r.seconds = exa.seconds + exb.seconds;
  return r;
}

}  // namespace

std::vector<Result> lazytlb_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<Result> out;
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    const std::string c(claim);
    if (c == "lazytlb.shootdown_as_safe_as_refcount" || c == "lazytlb.as_safe_as_before") {
      std::vector<Result> parts;
      parts.push_back(explored("explore before", Arch::PpcRadix, p.before, claim_sizes()));
      parts.push_back(explored("explore after", Arch::PpcRadix, p.after, claim_sizes()));
      if (c == "lazytlb.shootdown_as_safe_as_refcount") {
        parts.push_back(explored("explore after (hash)", Arch::PpcHash, p.after, claim_sizes()));
        parts.push_back(explored("explore refcount arches", Arch::Generic, p.after, claim_sizes()));
      }
      parts.push_back(steps_in_both_modes(p.before, p.after, timeout_ms));
      auto r = combine(c, parts,
                       "same invariants (no dangling active_mm, no underflow, accounting, no leak, mask covers users, "
                       "own-bit clears) checked on every reachable state and by Z3 per step: ");
      out.push_back(std::move(r));
    } else if (c == "lazytlb.free_timing") {
      out.push_back(free_timing(p));
    } else if (c == "lazytlb.ipi_cost") {
      out.push_back(ipi_cost(p));
    } else {
      Result r;
      r.name = c;
      r.verdict = Verdict::Error;
      r.detail = "unknown lazytlb claim";
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace kacct::proofs
