// Proof model "lazy_tlb" (docs/models/lazy-tlb.md); the LazyTlb patch validator is in
// proofs/claims_lazytlb.cpp.
//
// Step jobs: for every structural state the explorer reaches in a small world (2 CPUs, 2
// tasks, 1 mm), every enabled event and every outcome of its atomic_dec_and_test decisions,
// Z3 checks at full 32-bit width that, from ANY counter values consistent with the accounting
// relation (plus any number of references held outside the modelled tasks), the step's
// obligations hold (no mm_users/mm_count underflow, no decrement of a freed mm) and the
// relation holds again afterwards (on the step harness: every counterexample is replayed).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/script.hpp"
#include "model/lazytlb/seed.hpp"
#include "proofs/memo.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"
#include "spec/lazytlb.hpp"

namespace kacct::proofs {
namespace {
using namespace kacct::model::lazytlb;

struct ModeCase {
  const char* name;
  Arch arch;
  arch::KVersion ver;
  bool hotplug_only = false;  // only the hotplug events (offline, dead, online)
};
// shootdown-6.12: shootdown before the hotplug fix 21641bd9a7a7, its hotplug events only (the
// other events' shapes that satisfy the strengthened invariant are those of 6.14, whose jobs
// cover them).
constexpr ModeCase kModes[] = {{"refcount", Arch::Generic, {6, 12}},
                               {"pre-6.4", Arch::PpcRadix, {6, 3}},
                               {"shootdown", Arch::PpcRadix, {6, 14}},
                               {"shootdown-6.12", Arch::PpcRadix, {6, 12}, true}};

constexpr std::uint32_t kOutsideMax = 0x7fffffc0u;  // outside references: below 2^31 - 64

// Structural key: the world without its counters.
std::string shape(const World<Concrete>& w) {
  std::string k;
  for (const auto& c : w.cpus) k += fmt::format("{},{},{}{};", c.curr, c.prev_mm, int(c.irqs_off), int(c.hp));
  for (const auto& t : w.tasks)
    k += fmt::format("{}{}{}{}{},{};", int(t.st), int(t.kthread), int(t.idle), int(t.exiting), t.mm, t.active_mm);
  for (const auto& m : w.mms)
    k += fmt::format("{}{:x}{}{};", int(m.st), m.mask.w[0], int(m.ext_users), int(m.ext_grabs));
  return k;
}

// One (state, event, decision path), for the harness (proofs/step_job.hpp): the structure is
// concrete, the counters and the references held outside the modelled tasks are free.
template <class D>
struct LtIn {
  World<D> w;
  std::vector<u32<D>> xu, xc;  // outside mmget / mmgrab references per mm
};
struct LtCase {
  template <class D>
  using In = LtIn<D>;
  const World<Concrete>& cw;
  const Cfg& cfg;
  const Event& e;
  std::vector<bool> decisions;  // the path: outcome of each atomic_dec_and_test, in order

  template <class D>
  World<D> shape_of() const {
    World<D> w;
    w.cpus = cw.cpus;
    w.tasks = cw.tasks;
    w.mms = cw.mms;
    w.ntasks = cw.ntasks;
    w.cnt.resize(cw.cnt.size());
    return w;
  }
  In<Symbolic> fresh(Symbolic& d) const {
    In<Symbolic> in{shape_of<Symbolic>(), {}, {}};
    for (std::size_t m = 0; m < cw.mms.size(); ++m) {
      make_fresh(d, in.w.cnt[m], fmt::format("mm{}", m));
      in.xu.push_back(d.fresh<32>(fmt::format("outside_users{}", m)));
      in.xc.push_back(d.fresh<32>(fmt::format("outside_grabs{}", m)));
    }
    return in;
  }
  void assume(Symbolic& d, const In<Symbolic>& in, std::vector<z3::expr>& as) const {
    z3::context& ctx = d.ctx();
    for (std::size_t m = 0; m < cw.mms.size(); ++m) {
      if (cw.mms[m].st != MmState::Live) {  // no outside holders of an unborn or freed mm
        as.push_back(in.xu[m].e() == ctx.bv_val(0, 32));
        as.push_back(in.xc[m].e() == ctx.bv_val(0, 32));
      }
      as.push_back(z3::ule(in.xu[m].e(), ctx.bv_val(kOutsideMax, 32)));
      as.push_back(z3::ule(in.xc[m].e(), ctx.bv_val(kOutsideMax, 32)));
      as.push_back(spec::lazytlb::accounting(d, in.w, cfg, Ref(m), in.xu[m], in.xc[m]).e());
    }
  }
  // Symbolically the decisions follow `decisions` and are assumed (an infeasible path is a
  // vacuous query); concretely they follow the counters. Returns how many the step took.
  template <class D>
  std::size_t run(D& d, World<D>& w, StepLog& log) const {
    Costs cost;
    Decider<D> dec;
    if constexpr (D::is_symbolic) dec.oracle = decisions;
    Stepper<D>(d, cfg, w, cost, log, dec).run(e);
    if constexpr (D::is_symbolic) {
      for (const auto& p : dec.path) d.assumptions.push_back(p.e());
      return dec.next;
    }
    return 0;
  }
  // Invariants: the structure after the step (concrete in both domains), then the accounting
  // relation of each mm.
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    StepLog log;
    run(d, in.w, log);
    World<Concrete> post;
    post.cpus = in.w.cpus;
    post.tasks = in.w.tasks;
    post.mms = in.w.mms;
    post.ntasks = in.w.ntasks;
    post.cnt.resize(in.w.cnt.size(), Counters<Concrete>{1, 1});
    std::vector<boolean<D>> out = {d.lit_bool(spec::lazytlb::check(post, cfg, log, false, true).empty())};
    for (std::size_t m = 0; m < cw.mms.size(); ++m)
      out.push_back(spec::lazytlb::accounting(d, in.w, cfg, Ref(m), in.xu[m], in.xc[m]));
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> n = {"structure"};
    for (std::size_t m = 0; m < cw.mms.size(); ++m) n.push_back(fmt::format("accounting[mm {}]", m));
    return n;
  }
  In<Concrete> read_back(const z3::model& m, const In<Symbolic>& in) const {
    In<Concrete> k{{}, std::vector<std::uint32_t>(in.xu.size()), std::vector<std::uint32_t>(in.xc.size())};
    k.w.cpus = in.w.cpus;  // the structure of `in` (before or after the step), concrete in both
    k.w.tasks = in.w.tasks;
    k.w.mms = in.w.mms;
    k.w.ntasks = in.w.ntasks;
    k.w.cnt.resize(in.w.cnt.size());
    kacct::read_back(m, in.w.cnt, k.w.cnt);
    kacct::read_back(m, in.xu, k.xu);
    kacct::read_back(m, in.xc, k.xc);
    return k;
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const {
    return {{"event", event_text(e)},
            {"shape", shape(in.w)},
            {"counters", to_json(in.w.cnt)},
            {"outside_users", in.xu},
            {"outside_grabs", in.xc}};
  }
};

// One (state, event): every decision path, one query per path (an infeasible path is one whose
// assumptions are contradictory: the prover reports it as vacuous, and it is skipped).
bool prove_step(z3::context& ctx, SolveHint& hint, const World<Concrete>& cw, const Cfg& cfg, const Event& e,
                unsigned timeout_ms, StepJob& job, std::size_t& paths) {
  std::vector<std::vector<bool>> todo{{}};
  while (!todo.empty()) {
    LtCase c{cw, cfg, e, todo.back()};
    todo.pop_back();
    {  // more decisions than decided: split
      Symbolic d(ctx);
      auto in = c.fresh(d);
      StepLog log;
      if (c.run(d, in.w, log) > c.decisions.size()) {
        auto f = c.decisions, t = c.decisions;
        f.push_back(false);
        t.push_back(true);
        todo.push_back(f);
        todo.push_back(t);
        continue;
      }
    }
    ++paths;
    const std::string where = fmt::format("{} (decisions {})", event_text(e), c.decisions.size());
    if (!job.add(check_step(c, c.names(), timeout_ms, "lazytlb " + event_text(e), &ctx, &hint), where)) return false;
  }
  return true;
}

// 2 CPUs, 3 tasks, 2 mms (so that fork and exec happen), the first kProofStates states in BFS order.
Sizes proof_sizes() { return {2, 3, 2}; }
constexpr std::size_t kProofStates = 30'000;
constexpr std::size_t kStatesPerOp = 10;  // structural states checked per event kind and mode
// Plus, per event kind, the first shapes with a CPU not online: kLazyHotplugPerOp of them with
// that CPU still on a user mm (the window between __cpu_disable and its death), kHotplugPerOp
// others.
constexpr std::size_t kLazyHotplugPerOp = 1, kHotplugPerOp = 1;
enum class HpShape { None, Plain, Lazy };
HpShape hotplug_shape(const World<Concrete>& w, const Event& e) {
  if (e.op == Op::Offline)  // going offline from a user mm or from init_mm
    return w.tasks[w.cpus[e.cpu].curr].active_mm >= 0 ? HpShape::Lazy : HpShape::Plain;
  HpShape k = HpShape::None;
  for (const auto& c : w.cpus) {
    if (c.hp == Hp::Online) continue;
    if (w.tasks[c.curr].active_mm >= 0) return HpShape::Lazy;
    k = HpShape::Plain;
  }
  return k;
}

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
  o.hotplug = true;
  o.stop_at_violation = false;  // shapes past a violation too (pre-fix hotplug)
  // The shapes depend on the arch and release only (not on a mutant): explored once per process.
  static Memo<std::shared_ptr<const ExploreResult>> shapes_memo;
  const auto exp = shapes_memo.get(fmt::format("{}/{}", arch_name(mc.arch), mc.ver.str()),
                                   [&] { return std::make_shared<const ExploreResult>(explore(o, true)); });
  const ExploreResult& ex = *exp;
  // Distinct shapes in BFS order, and for each op the first kStatesPerOp shapes enabling it.
  std::set<std::string> shapes;
  std::map<int, std::vector<std::pair<const World<Concrete>*, Event>>> per_op;
  std::map<int, std::size_t> shapes_per_op, plain_per_op, lazy_per_op;
  std::size_t outside = 0;  // reachable shapes outside the strengthened invariant (none once fixed)
  for (const auto& w : ex.sample) {
    if (!shapes.insert(shape(w)).second) continue;
    // Induction: only shapes that satisfy the structural invariants, strengthening included
    // (before the hotplug fix some reachable ones do not; the explorer judges those).
    if (!spec::lazytlb::check(w, cfg, StepLog{}, false, true).empty()) {
      ++outside;
      continue;
    }
    std::set<int> counted;
    for (const auto& e : candidate_events(w, cfg, true)) {
      if (!not_enabled(w, cfg, e).empty()) continue;
      const bool hp_event = e.op == Op::Offline || e.op == Op::Dead || e.op == Op::Online;
      const HpShape hs = hotplug_shape(w, e);
      if (mc.hotplug_only && !hp_event) continue;
      int op = int(e.op);
      if (!counted.count(op)) {
        counted.insert(op);
        ++shapes_per_op[op];
      } else
        continue;  // one instance of each event kind per shape
      const bool first = shapes_per_op[op] <= kStatesPerOp && (!mc.hotplug_only || hp_event);
      const bool lazy = hs == HpShape::Lazy && ++lazy_per_op[op] <= kLazyHotplugPerOp;
      const bool plain = hs == HpShape::Plain && ++plain_per_op[op] <= kHotplugPerOp;
      if (first || lazy || plain) per_op[op].push_back({&w, e});
    }
  }
  std::vector<Result> out;
  for (auto& [op, items] : per_op) {
    const std::size_t total = shapes_per_op[op];
    StepJob job(fmt::format("lazy_tlb.step[{},{}]", op_name(Op(op)), mc.name),
                {fmt::format("structure: the first {} reachable states (BFS) of a {}-CPU, {}-task, {}-mm world with "
                             "CPU 1 going offline and back{}{}",
                             ex.states, h.sizes.cpus, h.sizes.tasks, h.sizes.mms,
                             mc.hotplug_only        ? ", hotplug events only"
                             : total > kStatesPerOp ? fmt::format(", first {} shapes per event kind", kStatesPerOp)
                                                    : "",
                             fmt::format(", plus the first {} shape(s) with CPU 1 offline (offline: going offline) "
                                         "on a user mm and {} on init_mm",
                                         kLazyHotplugPerOp, kHotplugPerOp)),
                 "mm_users/mm_count: any 32-bit values satisfying the accounting relation, with up to 2^31-64 outside "
                 "references",
                 "each event atomic; IPIs delivered synchronously in the sender's event"},
                true);
    std::size_t paths = 0;
    z3::context ctx;  // one for the many small queries of the job, tried first on one solver
    SolveHint hint;
    hint.quick_only = true;
    hint.quick.emplace(ctx);
    for (const auto& [w, e] : items)
      if (!prove_step(ctx, hint, *w, cfg, e, timeout_ms, job, paths)) break;
    const Verdict v = job.verdict();
    auto r = job.done("");
    const std::string failure = v == Verdict::Holds ? "" : "; first failure: " + r.detail;
    r.detail = fmt::format(
        "{} {} {}: {} queries over {} event instances in {} reachable shapes ({} paths, {} infeasible){}{}",
        arch_name(mc.arch), mc.ver.str(), mode_name(cfg), job.queries, items.size(), total, paths, job.infeasible,
        outside ? fmt::format("; {} reachable shapes break the strengthening and are left to the explorer", outside)
                : "",
        failure);
    out.push_back(std::move(r));
  }
  return out;
}

// Releases whose code is the same configuration (config_for: 6.4 and 6.5, 6.6 and 6.13 on
// radix) explore the same worlds and prove the same steps: the work is keyed by the first
// release seen with that configuration, and its results relabelled with the release asked for
// (only the text names it; the explorer and the step jobs read the release through Cfg alone).
arch::KVersion same_code_as(Arch a, arch::KVersion ver) {
  static std::mutex mu;
  static std::vector<std::pair<Cfg, arch::KVersion>> seen;
  const Cfg c = config_for(a, ver);
  std::lock_guard<std::mutex> l(mu);
  for (const auto& [k, v] : seen)
    if (k == c) return v;
  seen.emplace_back(c, ver);
  return ver;
}
// `s` with its leading `from` replaced by `to` (nothing else: other text does not name the release).
std::string relabel(std::string s, const std::string& from, const std::string& to) {
  if (from != to && s.rfind(from, 0) == 0) s.replace(0, from.size(), to);
  return s;
}

// One exhaustive exploration, before it is told as a Result (the sample is not kept).
struct Explored {
  ExploreResult ex;
  double seconds = 0;
  bool replayed = false;  // the counterexample script runs concretely to the same violation
};
Explored explore_world(Arch a, arch::KVersion ver, Sizes s, bool whole, std::size_t max_states = 1'500'000) {
  ExploreOptions o;
  o.header.sizes = s;
  o.header.arch = a;
  o.header.version = ver;
  o.max_states = max_states;
  o.hotplug = true;
  o.stop_at_violation = !whole;
  const auto t0 = std::chrono::steady_clock::now();
  Explored e;
  e.ex = explore(o);
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (e.ex.counterexample && !whole) {
    // Replayed: the script runs concretely to the same violation.
    const auto rr = run_script(*e.ex.counterexample);
    for (const auto& v : rr.violations)
      if (rr.failed_at && e.ex.violation && v.invariant == e.ex.violation->invariant) e.replayed = true;
  }
  return e;
}

// Exhaustive exploration as one Result (zombies: states with an mm pinned only lazily). whole:
// every reachable state whatever fails (the counts are complete; the verdict only says whether
// the space was exhausted, the safety claims judge the violation).
Result explored_result(const std::string& title, Arch a, arch::KVersion ver, Sizes s, bool whole, const Explored& e) {
  const ExploreResult& ex = e.ex;
  Result r;
  r.name = title;
  r.seconds = e.seconds;
  r.verdict = ex.violation && !whole ? Verdict::Violated : ex.truncated ? Verdict::Unknown : Verdict::Holds;
  r.detail = fmt::format(
      "{} {} ({}): {} states, {} transitions, depth {}, {} frees, {} zombie states, <= {} IPIs per event{}",
      arch_name(a), ver.str(), mode_name(config_for(a, ver)), ex.states, ex.transitions, ex.depth, ex.frees,
      ex.zombie_states, ex.max_ipis_step,
      !ex.violation ? ""
      : whole ? "; every state counted past a violation (" + ex.violation->invariant + ", judged by the safety claims)"
              : "; " + ex.violation->invariant + ": " + ex.violation->detail);
  if (ex.counterexample && !whole) {
    Script cex = *ex.counterexample;
    cex.version = ver;  // the same code (same_code_as): the same run
    r.counterexample = write_script(cex);
    if (e.replayed) r.replay = kReplayScript;
  }
  r.approximations = {fmt::format("bounded world: {} CPUs, {} tasks, {} mms, one outside mmget and mmgrab per mm, "
                                  "CPUs but 0 go offline and back, one at a time",
                                  s.cpus, s.tasks, s.mms),
                      "each event atomic; IPIs delivered synchronously in the sender's event"};
  return r;
}

// The claims of several patches explore the same worlds and prove the same releases' steps;
// each is computed once per process (validate runs claims on several threads; a second caller
// waits for the first). A reused copy reports 0 s (the time was spent, and reported, where it
// was first computed).
Result explored_cached(const std::string& title, Arch a, arch::KVersion ver, Sizes s, std::size_t* zombies,
                       bool whole) {
  static Memo<std::shared_ptr<const Explored>> memo;
  const arch::KVersion code = same_code_as(a, ver);
  auto get = [&](bool w, bool* fresh) {
    const std::string key = fmt::format("{}/{}/{}x{}x{}/{}", arch_name(a), code.str(), s.cpus, s.tasks, s.mms, w);
    return memo.get(
        key, [&] { return std::make_shared<const Explored>(explore_world(a, code, s, w)); }, fresh);
  };
  bool fresh = false;
  // Every world explored whole is also explored up to its first violation (the safety claims);
  // without one, the two explorations are the same (states, counts, verdict, detail).
  auto e = get(false, &fresh);
  bool w = false;
  if (whole && e->ex.violation) {
    e = get(true, &fresh);
    w = true;
  }
  Result r = explored_result(title, a, ver, s, w, *e);
  if (!fresh) r.seconds = 0;
  if (zombies) *zombies = e->ex.zombie_states;
  return r;
}

std::vector<Result> step_jobs_cached(const ModeCase& mc, unsigned timeout_ms) {
  static Memo<std::vector<Result>> memo;
  ModeCase code = mc;
  code.ver = same_code_as(mc.arch, mc.ver);
  const std::string key = fmt::format("{}/{}/{}/{}", arch_name(mc.arch), code.ver.str(), mc.hotplug_only, timeout_ms);
  bool fresh = false;
  auto rs = memo.get(
      key, [&] { return step_jobs(code, timeout_ms); }, &fresh);
  // Each detail opens with "ARCH RELEASE MODE:" (step_jobs).
  const std::string from = fmt::format("{} {} ", arch_name(mc.arch), code.ver.str()),
                    to = fmt::format("{} {} ", arch_name(mc.arch), mc.ver.str());
  for (auto& r : rs) {  // lazy_tlb.step[OP,MODE]
    r.name = r.name.substr(0, r.name.rfind(',') + 1) + mc.name + "]";
    r.detail = relabel(r.detail, from, to);
    if (!fresh) r.seconds = 0;
  }
  return rs;
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
    if (p.verdict == Verdict::Violated && r.replay.empty()) {  // the first violated part's replay
      r.replay = p.replay;
      if (!r.counterexample) r.counterexample = p.counterexample;
      if (r.inputs.is_null()) r.inputs = p.inputs;
    }
    if (p.verdict != Verdict::Holds || details.size() < 8)
      details.push_back(p.name + " " + name(p.verdict) + " [" + p.detail + "]");
    for (const auto& a : p.approximations)
      if (std::find(r.approximations.begin(), r.approximations.end(), a) == r.approximations.end())
        r.approximations.push_back(a);
  }
  r.detail = prefix + fmt::format("{}", fmt::join(details, "; "));
  return r;
}

}  // namespace

std::vector<Result> lazytlb_step_jobs(const char* mode, Arch a, arch::KVersion ver, unsigned timeout_ms) {
  return step_jobs_cached({mode, a, ver}, timeout_ms);
}
std::vector<Result> lazytlb_hotplug_step_jobs(const char* mode, Arch a, arch::KVersion ver, unsigned timeout_ms) {
  return step_jobs_cached({mode, a, ver, true}, timeout_ms);
}
Result lazytlb_explored(const std::string& title, Arch a, arch::KVersion ver, Sizes s, std::size_t* zombies,
                        bool whole) {
  return explored_cached(title, a, ver, s, zombies, whole);
}
Result combine_results(const std::string& title, const std::vector<Result>& parts, const std::string& prefix) {
  return combine(title, parts, prefix);
}

std::vector<Result> lazytlb_all_jobs(unsigned timeout_ms) {
  std::vector<Result> out;
  for (const auto& mc : kModes)
    for (auto& r : step_jobs(mc, timeout_ms)) out.push_back(std::move(r));
  return out;
}
std::vector<std::string> lazytlb_modes() {
  std::vector<std::string> out;
  for (const auto& mc : kModes) out.emplace_back(mc.name);
  return out;
}
std::vector<Result> lazytlb_mode_jobs(const std::string& mode, unsigned timeout_ms) {
  for (const auto& mc : kModes)
    if (mode == mc.name) return step_jobs(mc, timeout_ms);
  throw std::invalid_argument("unknown lazy_tlb mode '" + mode + "'");
}

// A mutant must make some step job fail (test hook for test/lazytlb/).
std::vector<Result> lazytlb_mutant_jobs(const std::string& mutant, bool shootdown, unsigned timeout_ms) {
  return step_jobs(shootdown ? kModes[2] : kModes[0], timeout_ms, {mutant});
}

}  // namespace kacct::proofs
