// Gen vtime proofs: for each variant era (4.4 snapshot, 4.7 jiffy with irq hooks, 4.9 jiffy with
// other time, 5.4 and 6.1 accumulated ns), each step (user exit/enter, guest enter/exit, the
// <= 4.7 irq exit hook, a context switch for every prev/next kind) and each invariant of
// spec/gen_vtime.hpp: for all 64-bit states satisfying the invariants before, they hold after.
// The claims of the gen vtime patch rows are in proofs/claims_gen.cpp.
#include "proofs/jobs_gen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <unordered_map>

#include "arch/config.hpp"
#include "proofs/memo.hpp"
#include "proofs/registry.hpp"
#include "spec/gen_vtime.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

constexpr std::uint64_t kJiffyBound = std::uint64_t{1} << 40;

using Era = GenEra;
const Era eras[] = {
    {"4.4-snapshot", arch::v(4, 4), false, false}, {"4.7-jiffy", arch::v(4, 7), false, false},
    {"4.9-jiffy", arch::v(4, 9), false, false},    {"5.4-accum", arch::v(5, 4), false, false},
    {"6.1-accum", arch::v(6, 1), false, false},    {"6.1-accum+irqtime+steal", arch::v(6, 1), true, true}};

// CpuOnline: vtime_init_idle() of the idle task at CPU bring-up (eras before 5.14; since then
// bring-up makes no vtime step, so there is nothing to prove).
enum class Step { UserExit, UserEnter, GuestEnter, GuestExit, IrqExitHook, Switch, CpuOnline };
const char* step_name(Step s) {
  constexpr const char* n[] = {"user_exit",     "user_enter",  "guest_enter", "guest_exit",
                               "irq_exit_hook", "task_switch", "cpu_online"};
  return n[int(s)];
}
enum class Inv { TaskConserves, Residues, CpuConserves, SeqEven, SeqBrackets, Monotonic, Steal };
const char* inv_name(Inv i) {
  constexpr const char* n[] = {"task_conserves", "residues_bounded", "cpu_conserves",    "seq_even",
                               "seq_brackets",   "monotonic",        "steal_irq_pending"};
  return n[int(i)];
}
constexpr Inv all_invs[] = {Inv::TaskConserves, Inv::Residues,  Inv::CpuConserves, Inv::SeqEven,
                            Inv::SeqBrackets,   Inv::Monotonic, Inv::Steal};

struct Case {
  std::string name;
  Step step;
  VtimeCtl prev, next;  // prev: the current task (the only one unless Switch)
  std::uint32_t irq_count = 0;
};

std::vector<Case> cases_of(const GenCfg& g) {
  std::vector<Case> out;
  auto ctl = [&](VState st, bool pf, bool idle, bool nice) {
    VtimeCtl c;
    c.state = st;
    c.pf_vcpu = pf;
    c.is_idle = idle;
    c.nice_pos = nice;
    c.cpu = 0;
    return c;
  };
  const VState guest = g.states55 ? VT_GUEST : VT_SYS;
  out.push_back({"user", Step::UserExit, ctl(VT_USER, false, false, false), {}});
  out.push_back({"sys", Step::UserEnter, ctl(VT_SYS, false, false, false), {}});
  out.push_back({"sys", Step::GuestEnter, ctl(VT_SYS, false, false, false), {}});
  out.push_back({"guest", Step::GuestExit, ctl(guest, true, false, false), {}});
  if (g.irq_hooks) {
    out.push_back({"hardirq", Step::IrqExitHook, ctl(VT_SYS, false, false, false), {}, HARDIRQ_OFFSET});
    out.push_back({"softirq", Step::IrqExitHook, ctl(VT_SYS, false, false, false), {}, SOFTIRQ_OFFSET});
  }
  const VState idle = g.states55 ? VT_IDLE : VT_SYS;
  auto inactive = [&](bool pf, bool is_idle) {
    auto c = ctl(VT_INACTIVE, pf, is_idle, false);
    c.cpu = -1;
    return c;
  };
  out.push_back({"sys->task", Step::Switch, ctl(VT_SYS, false, false, false), inactive(false, false)});
  out.push_back({"sys->idle", Step::Switch, ctl(VT_SYS, false, false, false), inactive(false, true)});
  out.push_back({"idle->task", Step::Switch, ctl(idle, false, true, false), inactive(false, false)});
  out.push_back({"guest->vcpu", Step::Switch, ctl(guest, true, false, false), inactive(true, false)});
  out.push_back({"sys->vcpu", Step::Switch, ctl(VT_SYS, false, false, false), inactive(true, false)});
  if (g.idle_init_on_online) out.push_back({"idle", Step::CpuOnline, ctl(idle, false, true, false), {}});
  return out;
}

// x * K for the literal K = jiffy_ns, distributed over +, -, unary minus and ite inside x, so that
// the delta (j - s) * K of the jiffy variant becomes j * K - s * K: the products are then of
// snapshots alone and the step's effect on ns sums is linear. Exact: each rule is a ring identity
// mod 2^64, proved at 64 bits by the job gen_vtime.mul_distributes[era]. With `generalise`, each
// remaining product x * K is then replaced by a fresh value (one per x): a formula unsatisfiable
// for every value of the products is so for the real ones (Z3 folds -(s * K) into (-K) * s, and
// relating that product to s * K is what its bit-blasting times out on).
class DistributeMul {
 public:
  DistributeMul(z3::context& ctx, std::uint64_t k, bool generalise)
      : ctx_(ctx), k_(ctx.bv_val(k, 64)), kv_(k), generalise_(generalise) {}
  z3::expr operator()(const z3::expr& e) { return walk(e); }
  // Generalised: the product x * K is `value` (not a fresh value).
  void define(const z3::expr& x, const z3::expr& value) { pushed_.emplace(id(x), value); }

 private:
  static unsigned id(const z3::expr& e) { return Z3_get_ast_id(e.ctx(), e); }
  Z3_decl_kind kind(const z3::expr& e) const { return e.decl().decl_kind(); }
  bool is_k(const z3::expr& e) const {
    std::uint64_t v = 0;
    return e.is_numeral() && e.is_numeral_u64(v) && v == kv_;
  }
  z3::expr walk(const z3::expr& e) {
    if (!e.is_app() || e.num_args() == 0) return e;
    if (auto it = walked_.find(id(e)); it != walked_.end()) return it->second;
    z3::expr out = e;
    if (kind(e) == Z3_OP_BMUL && e.num_args() == 2 && e.get_sort().bv_size() == 64 &&
        (is_k(e.arg(0)) || is_k(e.arg(1)))) {
      out = push(is_k(e.arg(1)) ? e.arg(0) : e.arg(1));
    } else {
      z3::expr_vector args(ctx_);
      bool changed = false;
      for (unsigned i = 0; i < e.num_args(); ++i) {
        args.push_back(walk(e.arg(i)));
        changed = changed || id(args.back()) != id(e.arg(i));
      }
      if (changed) out = e.decl()(args);
    }
    walked_.emplace(id(e), out);
    return out;
  }
  z3::expr push(const z3::expr& x) {  // x * K
    if (auto it = pushed_.find(id(x)); it != pushed_.end()) return it->second;
    std::uint64_t v = 0;
    z3::expr out = x;
    if (x.is_numeral() && x.is_numeral_u64(v)) {
      out = ctx_.bv_val(v * kv_, 64);  // wraps like the product
    } else if (x.is_app() && x.num_args() > 0 && kind(x) == Z3_OP_ITE) {
      out = z3::ite(walk(x.arg(0)), push(x.arg(1)), push(x.arg(2)));
    } else if (x.is_app() && x.num_args() > 0 && (kind(x) == Z3_OP_BADD || kind(x) == Z3_OP_BSUB)) {
      out = push(x.arg(0));
      for (unsigned i = 1; i < x.num_args(); ++i)
        out = kind(x) == Z3_OP_BADD ? out + push(x.arg(i)) : out - push(x.arg(i));
    } else if (x.is_app() && x.num_args() == 1 && kind(x) == Z3_OP_BNEG) {
      out = -push(x.arg(0));
    } else if (generalise_) {
      const z3::expr w = walk(x);
      out = ctx_.bv_const(fmt::format("({})*{}!{}", w.to_string(), kv_, id(w)).c_str(), 64);
    } else {
      out = walk(x) * k_;
    }
    pushed_.emplace(id(x), out);
    return out;
  }
  z3::context& ctx_;
  z3::expr k_;
  std::uint64_t kv_;
  bool generalise_;
  std::unordered_map<unsigned, z3::expr> walked_, pushed_;
};

// An equivalent form of `e`: its ite terms cofactored and its sums normalised (Z3's simplify with
// sum-of-monomials), so that the generalised jiffy goals reduce to the assumed invariant.
z3::expr normalise(const z3::expr& e) {
  z3::context& ctx = e.ctx();
  z3::params som(ctx);
  som.set("som", true);
  z3::goal g(ctx);
  g.add(e);
  const z3::tactic t =
      z3::tactic(ctx, "simplify") & z3::tactic(ctx, "cofactor-term-ite") & z3::with(z3::tactic(ctx, "simplify"), som);
  const z3::apply_result r = t(g);
  if (r.size() != 1) return e;
  return r[0].as_expr();
}

void flatten_and(const z3::expr& e, std::vector<z3::expr>& out) {
  if (e.is_app() && e.decl().decl_kind() == Z3_OP_AND) {
    for (unsigned i = 0; i < e.num_args(); ++i) flatten_and(e.arg(i), out);
  } else if (!e.is_true()) {
    out.push_back(e);
  }
}

// `e` with each maximal subterm whose variables occur nowhere else in `e` replaced by a fresh
// value (the same term, the same value): valid for every value of those terms, `e` is valid.
// prev_steal_time + min(steal_clock - prev_steal_time, delta) <= steal_clock needs nothing of the
// vtime delta, and Z3 times out bit-blasting it with the delta's circuit.
z3::expr generalise_independent(const z3::expr& e) {
  z3::context& ctx = e.ctx();
  auto id = [](const z3::expr& x) { return Z3_get_ast_id(x.ctx(), x); };
  std::unordered_map<unsigned, std::vector<unsigned>> vars_of;  // memo: variable ids below a term
  std::function<const std::vector<unsigned>&(const z3::expr&)> vars = [&](const z3::expr& t) -> const auto& {
    if (auto it = vars_of.find(id(t)); it != vars_of.end()) return it->second;
    std::vector<unsigned> v;
    if (t.is_const() && !t.is_numeral() && !t.is_true() && !t.is_false()) v.push_back(id(t));
    for (unsigned i = 0; t.is_app() && i < t.num_args(); ++i)
      for (unsigned x : vars(t.arg(i)))
        if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
    return vars_of.emplace(id(t), std::move(v)).first->second;
  };
  std::unordered_map<unsigned, bool> cut;  // generalised terms
  // Variables reachable from e without passing through `skip` or a cut term.
  auto outside = [&](unsigned skip) {
    std::vector<unsigned> out, seen;
    std::vector<z3::expr> todo{e};
    while (!todo.empty()) {
      z3::expr t = todo.back();
      todo.pop_back();
      if (id(t) == skip || cut.count(id(t)) || std::find(seen.begin(), seen.end(), id(t)) != seen.end()) continue;
      seen.push_back(id(t));
      if (t.is_const() && !t.is_numeral()) out.push_back(id(t));
      for (unsigned i = 0; t.is_app() && i < t.num_args(); ++i) todo.push_back(t.arg(i));
    }
    return out;
  };
  z3::expr_vector from(ctx), to(ctx);
  std::vector<z3::expr> todo{e};
  std::vector<unsigned> visited;
  while (!todo.empty()) {  // top-down, so that the largest independent terms are cut
    z3::expr t = todo.front();
    todo.erase(todo.begin());
    if (!t.is_app() || t.num_args() == 0 || std::find(visited.begin(), visited.end(), id(t)) != visited.end()) continue;
    visited.push_back(id(t));
    if (id(t) != id(e) && !vars(t).empty() && (t.is_bv() || t.is_bool())) {
      const auto out = outside(id(t));
      bool shared = false;
      for (unsigned x : vars(t)) shared = shared || std::find(out.begin(), out.end(), x) != out.end();
      if (!shared) {
        cut[id(t)] = true;
        from.push_back(t);
        to.push_back(t.is_bool() ? ctx.bool_const(fmt::format("gen!{}", id(t)).c_str())
                                 : ctx.bv_const(fmt::format("gen!{}", id(t)).c_str(), t.get_sort().bv_size()));
        continue;
      }
    }
    for (unsigned i = 0; i < t.num_args(); ++i) todo.push_back(t.arg(i));
  }
  if (from.empty()) return e;
  z3::expr out = e;
  return out.substitute(from, to);
}

// account_other_time(m) with steal and irq time takes at most m: for all 64-bit steal clock sc,
// prev_steal_time p, irq tick_delta td and m, with s = min(sc - p, m) and i = min(td, m - s),
// s + i <= m (the terms as the model builds them).
z3::expr other_time_le(const z3::expr& sc, const z3::expr& p, const z3::expr& td, const z3::expr& m) {
  const z3::expr st = sc - p;
  const z3::expr s = z3::ite(z3::ult(st, m), st, m);
  const z3::expr i = z3::ite(z3::ult(td, m - s), td, m - s);
  return z3::ule(s + i, m);
}

template <class D>
struct GenIn {
  BOOST_HANA_DEFINE_STRUCT(GenIn, (CpuAcct<D>, cpu), (TaskAcct<D>, task), (VtimeTask<D>, vtime), (VtimeTask<D>, next),
                           (VtimeCpu<D>, vcpu), (u64<D>, now), (u64<D>, jiffies), (u64<D>, now2), (u64<D>, jiffies2));
};

// One step of one case of one era, for the harness (proofs/step_job.hpp).
struct GenCase {
  template <class D>
  using In = GenIn<D>;
  const Case& cs;
  Step kind;
  const std::vector<Inv>& invs;
  GenCfg g;
  TickCfg tc;
  const GenMutation& mutate;
  // Jiffy variant: distribute x * jiffy_ns and generalise the products (DistributeMul); only a
  // holds verdict is taken from such a query.
  bool generalise = false;
  // lo < hi: the goal is only the conjuncts [lo, hi) of the one invariant (its top-level
  // conjunction flattened); the number of conjuncts goes to *conjuncts.
  unsigned lo = 0, hi = 0;
  unsigned* conjuncts = nullptr;
  // With a range: its independent subterms generalised (generalise_independent); only a holds
  // verdict is taken from such a query.
  bool independent = false;

  void assume(S& d, const In<S>& in, std::vector<z3::expr>& as) const {
    z3::context& ctx = d.ctx();
    bound62(d, in.cpu, as);
    bound62(d, in.task, as);
    bound62(d, in.vtime, as);
    bound62(d, in.next, as);
    bound62(d, in.vcpu, as);
    for (auto* x : {&in.now, &in.now2}) as.push_back(z3::ule(x->e(), ctx.bv_val(kBound62, 64)));
    for (auto* x : {&in.jiffies, &in.jiffies2, &in.vtime.starttime})
      as.push_back(z3::ule(x->e(), ctx.bv_val(kJiffyBound, 64)));
    as.push_back(z3::ule(in.now.e(), in.now2.e()));
    as.push_back(z3::ule(in.jiffies.e(), in.jiffies2.e()));
    // invariants before the step
    as.push_back(spec::tick::steal_accounted(d, in.cpu).e());
    as.push_back(spec::tick::irqtime_pending_bounded(d, in.cpu).e());
    for (auto* v : {&in.vtime, &in.next}) {
      as.push_back(spec::gen::gen_task_conserves(d, *v).e());
      as.push_back(spec::gen::gen_residues_bounded(d, g, tc, *v).e());
      as.push_back(spec::gen::gen_seq_even(d, *v).e());
    }
    // (generalised: the definition of the snapshot's product, in step())
    if (!generalise) as.push_back(spec::gen::gen_cpu_conserves(d, g, in.vcpu, in.vtime).e());
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    auto& c = in.cpu;
    auto& pt = in.task;
    auto& pv = in.vtime;
    auto& nv = in.next;
    auto& vc = in.vcpu;
    const auto c0 = c;
    const auto pt0 = pt;
    const auto pv0 = pv, nv0 = nv;
    const auto vc0 = vc;
    GenNow<D> n{in.now, in.jiffies}, n2{in.now2, in.jiffies2};
    GenCost cost;
    VtimeCtl ps = cs.prev, ns = cs.next;
    GenStep<D> st{d, tc, g, c, vc, cost};
    GenCtx gx;
    gx.irq_count = cs.irq_count;
    switch (kind) {
      case Step::UserExit: st.user_exit(pv, pt, ps, gx, n); break;
      case Step::UserEnter: st.user_enter(pv, pt, ps, gx, n); break;
      case Step::GuestEnter: st.guest_enter(pv, pt, ps, gx, n); break;
      case Step::GuestExit: st.guest_exit(pv, pt, ps, gx, n); break;
      case Step::IrqExitHook: st.irq_exit_hook(pv, pt, ps, gx, n); break;
      case Step::Switch: st.task_switch(pv, pt, ps, nv, ns, gx, n, n2, 0); break;
      case Step::CpuOnline: st.init_idle(pv, ps, n, 0); break;
    }
    VtimeTask<D>& curv = kind == Step::Switch ? nv : pv;
    if (mutate) mutate(d, curv, vc);
    auto both = [&](auto&& f) { return d.band(f(pv0, pv), f(nv0, nv)); };
    std::vector<boolean<D>> oks;
    for (Inv only : invs) switch (only) {
        case Inv::TaskConserves:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_task_conserves(d, v); }));
          break;
        case Inv::Residues:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_residues_bounded(d, g, tc, v); }));
          break;
        case Inv::CpuConserves: oks.push_back(spec::gen::gen_cpu_conserves(d, g, vc, curv)); break;
        case Inv::SeqEven:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_seq_even(d, v); }));
          break;
        case Inv::SeqBrackets:
          oks.push_back(both([&](const auto& a, const auto& b) { return spec::gen::gen_seq_brackets(d, a, b); }));
          break;
        case Inv::Monotonic:
          oks.push_back(d.band(
              d.band(d.band(spec::tick::monotonic(d, c0, c), spec::tick::monotonic(d, pt0, pt)),
                     both([&](const auto& a, const auto& b) { return spec::gen::gen_vtime_monotonic(d, a, b); })),
              d.ule(vc0.consumed, vc.consumed)));
          break;
        case Inv::Steal:
          oks.push_back(d.band(spec::tick::steal_accounted(d, c), spec::tick::irqtime_pending_bounded(d, c)));
          break;
      }
    if constexpr (D::is_symbolic) {
      // monotonic with steal and irq time: the flushed amount delta - other does not wrap because
      // other <= delta; an instance of the lemma other_time_le (job gen_vtime.other_time_le[era])
      // for the step's first flush, from the state before the step, as a fact.
      if (tc.steal && tc.irq_time && g.variant == GenVariant::Accum && invs.size() == 1 && invs[0] == Inv::Monotonic) {
        const z3::expr m =
            z3::ite(z3::ult(in.now.e(), pv0.starttime.e()), d.ctx().bv_val(0, 64), in.now.e() - pv0.starttime.e());
        d.assumptions.push_back(
            other_time_le(c0.steal_clock.e(), c0.prev_steal_time.e(), c0.irqtime.tick_delta.e(), m));
      }
      if (generalise) {  // the same formulas, x * jiffy_ns distributed and generalised, normalised
        DistributeMul dm(d.ctx(), g.jiffy_ns, true);
        // cpu_conserves before the step, as the definition of the snapshot's product
        dm.define(pv0.starttime.e(), d.add(vc0.consumed, vc0.lost).e());
        for (auto& ok : oks) ok = boolean<D>(normalise(dm(ok.e())));
        for (auto& o : d.obligations) o.violated = dm(o.violated);
        for (auto& a : d.assumptions) a = normalise(dm(a));
      }
      // task_conserves is an equation of sums over ite-merged states: cofactored and normalised
      // (equivalent), the default strategy decides it (else it takes the 3 s budget first).
      if (g.variant == GenVariant::Accum && invs.size() == 1 && invs[0] == Inv::TaskConserves)
        oks[0] = boolean<D>(normalise(oks[0].e()));
      if (lo < hi && oks.size() == 1) {
        std::vector<z3::expr> parts;
        flatten_and(oks[0].e(), parts);
        if (conjuncts) *conjuncts = parts.size();
        z3::expr part = d.ctx().bool_val(true);
        for (unsigned i = lo; i < hi && i < parts.size(); ++i) part = i == lo ? parts[i] : part && parts[i];
        oks[0] = boolean<D>(part);
        if (independent) oks[0] = boolean<D>(generalise_independent(oks[0].e().simplify()));
      }
    }
    return oks;
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const { return {{"case", cs.name}, {"state", to_json(in)}}; }
  nlohmann::ordered_json state(const In<Concrete>& in) const { return to_json(in); }
};

constexpr const char* kGeneralised =
    "jiffy variant: x * jiffy_ns distributed over +, - and ite (gen_vtime.mul_distributes) and each product of a "
    "snapshot then generalised to any value (the pre-step snapshot's: consumed + lost, as cpu_conserves says): "
    "unsat for every value of the products, so for the real ones";

constexpr const char* kSplit =
    "where the whole conjunction timed out, its conjuncts in halves, halved again while a part times out "
    "(steal_irq_pending: each part first with every subterm whose variables occur nowhere else in it generalised "
    "to any value, valid for all values so for the real ones; else exactly)";

// The rewrite rules of DistributeMul for K = jiffy_ns, each at 64 bits for all operands.
Result mul_lemma(const Era& era, unsigned timeout_ms) {
  const GenCfg g = gen_cfg(era.ver, 250);
  z3::context ctx;
  const z3::expr a = ctx.bv_const("a", 64), b = ctx.bv_const("b", 64), k = ctx.bv_val(g.jiffy_ns, 64);
  const z3::expr c = ctx.bool_const("c");
  const z3::expr rules = (a + b) * k == a * k + b * k && (a - b) * k == a * k - b * k && (-a) * k == -(a * k) &&
                         z3::ite(c, a, b) * k == z3::ite(c, a * k, b * k);
  const auto res = solve(ctx, {}, !rules, timeout_ms);
  Result r;
  r.name = fmt::format("gen_vtime.mul_distributes[{}]", era.name);
  r.verdict = res.verdict == Verdict::Violated ? Verdict::Error : res.verdict;  // a ring identity cannot fail
  r.seconds = res.seconds;
  r.detail = r.verdict == Verdict::Holds
                 ? fmt::format(
                       "for all 64-bit a, b and boolean c, with K = jiffy_ns = {}: (a + b) * K == a * K + b * K, "
                       "(a - b) * K == a * K - b * K, (-a) * K == -(a * K), ite(c, a, b) * K == ite(c, a * K, "
                       "b * K) (unsat); the jiffy-era step jobs rewrite with these",
                       g.jiffy_ns)
                 : res.reason;
  return r;
}

// The lemma other_time_le at 64 bits for all operands (the monotonic jobs of the eras with steal
// and irq time assume its instance for the step's flush).
Result other_time_lemma(const Era& era, unsigned timeout_ms) {
  z3::context ctx;
  const z3::expr sc = ctx.bv_const("sc", 64), p = ctx.bv_const("p", 64), td = ctx.bv_const("td", 64),
                 m = ctx.bv_const("m", 64);
  const auto res = solve(ctx, {}, !other_time_le(sc, p, td, m), timeout_ms);
  Result r;
  r.name = fmt::format("gen_vtime.other_time_le[{}]", era.name);
  r.verdict = res.verdict == Verdict::Violated ? Verdict::Error : res.verdict;  // proved by hand: s <= m, i <= m - s
  r.seconds = res.seconds;
  r.detail = r.verdict == Verdict::Holds
                 ? "for all 64-bit sc, p, td, m: s = min(sc - p, m), i = min(td, m - s): s + i <= m (unsat): "
                   "account_other_time(m) takes at most m; the monotonic jobs of this era assume it for the step's "
                   "flush"
                 : res.reason;
  return r;
}

// One job: the conjunction of `invs` for one step of one era, one Z3 query per case.
Result era_job(const Era& era, Step step, const std::vector<Inv>& invs, unsigned timeout_ms,
               const GenMutation& mutate) {
  std::string inv_names;
  std::vector<std::string> names;
  for (Inv i : invs) {
    inv_names += (inv_names.empty() ? "" : "+") + std::string(inv_name(i));
    names.push_back(inv_name(i));
  }
  const std::string name = invs.size() == 1 ? fmt::format("gen_vtime.{}.{}[{}]", step_name(step), inv_names, era.name)
                                            : fmt::format("gen_vtime.{}[{}]", step_name(step), era.name);
  StepJob j(name, {kBound62Note, "jiffies below 2^40: no wrap-around",
                   "sequential model: one CPU's vtime step runs with irqs off, readers see it whole",
                   "the vtime state, PF_VCPU, idle and nice are enumerated per case (concrete)"});
  const GenCfg g = gen_cfg(era.ver, 250);
  const TickCfg tc{era.irq_time, era.steal, arch::tick_nsec(250)};
  if (tc.steal && tc.irq_time && g.variant == GenVariant::Accum && invs.size() == 1 && invs[0] == Inv::Monotonic)
    j.note(
        fmt::format("assumes an instance of the lemma job gen_vtime.other_time_le[{}] for the step's flush", era.name));
  for (const auto& cs : cases_of(g)) {
    if (cs.step != step) continue;
    const GenCase gc{cs, step, invs, g, tc, mutate};
    Check chk;
    double tried = 0;
    // cpu_conserves in the jiffy eras: the generalised query first; only its holds is taken
    if (g.variant == GenVariant::Jiffy && std::find(invs.begin(), invs.end(), Inv::CpuConserves) != invs.end()) {
      GenCase gen = gc;
      gen.generalise = true;
      chk = check_step(gen, names, timeout_ms, fmt::format("{} {} (generalised)", name, cs.name));
      tried = chk.seconds;
      if (chk.verdict == Verdict::Holds) j.note(kGeneralised);
    }
    // The conjunctions over every counter (monotonic, steal_irq_pending): the whole query on a
    // short budget, then one query per conjunct (measured: a whole query either holds in under
    // 3 s or times out at 20 s; its conjuncts hold in 0.1-2 s each).
    const bool splittable = invs.size() == 1 && (invs[0] == Inv::Monotonic || invs[0] == Inv::Steal);
    // Measured (KACCT_PROOF_RLIMIT=1): the idle->task switch's monotonicity with steal and irq
    // time times out whole (20M units), its halves hold (5M + 11M): straight to the halves.
    const bool split_first = splittable && invs[0] == Inv::Monotonic && tc.steal && tc.irq_time &&
                             step == Step::Switch && cs.prev.is_idle && !mutate;
    if (split_first) {
      chk.verdict = Verdict::Unknown;
    } else if (chk.verdict != Verdict::Holds) {  // else the exact query decides (a counterexample replays)
      chk = check_step(gc, names, splittable ? std::min(timeout_ms, 5000u) : timeout_ms,
                       fmt::format("{} {}", name, cs.name));
      chk.seconds += tried;
    }
    if (chk.verdict == Verdict::Unknown && splittable) {
      tried = chk.seconds;
      unsigned n = 0;
      GenCase part = gc;
      {  // the number of conjuncts: the step once, symbolically
        z3::context ctx;
        Symbolic d(ctx);
        auto in = detail::fresh_in(part, d);
        part.conjuncts = &n;
        part.lo = 0;
        part.hi = 1;
        part.step(d, in);
        part.conjuncts = nullptr;
      }
      // Halves of the conjunction, each on the short budget, halved again while unknown; single
      // conjuncts get the full budget.
      std::vector<std::pair<unsigned, unsigned>> todo{{(n + 1) / 2, n}, {0, (n + 1) / 2}};
      while (!todo.empty()) {
        auto [lo, hi] = todo.back();
        todo.pop_back();
        if (lo >= hi) continue;
        part.lo = lo;
        part.hi = hi;
        const std::string where = fmt::format("{} {} (conjuncts {}..{})", name, cs.name, lo, hi - 1);
        if (invs[0] == Inv::Steal) {  // (a generalised monotonic conjunct frees the amount added)
          part.independent = true;
          chk = check_step(part, names, timeout_ms, where + " generalised");
          tried += chk.seconds;
          part.independent = false;
          if (chk.verdict == Verdict::Holds) continue;
        }
        // A single conjunct (full budget) with a fresh hint: the plain bit-blasting pipeline joins
        // after the default solver and cofactoring (chains of clamped differences, as in the tick's
        // monotonicity with irq time and steal); the default solver still goes first.
        SolveHint hint;
        chk = check_step(part, names, hi - lo > 1 ? std::min(timeout_ms, 5000u) : timeout_ms, where, nullptr,
                         hi - lo > 1 ? nullptr : &hint);
        tried += chk.seconds;
        if (chk.verdict == Verdict::Unknown && hi - lo > 1) {
          todo.push_back({lo + (hi - lo + 1) / 2, hi});
          todo.push_back({lo, lo + (hi - lo + 1) / 2});
          continue;
        }
        if (chk.verdict != Verdict::Holds) break;
      }
      chk.seconds = tried;
      if (chk.verdict == Verdict::Holds) j.note(kSplit);
    }
    if (!j.add(chk, fmt::format("{} in case {}{}", step_name(step), cs.name, mutate ? " (mutated model)" : ""))) break;
  }
  return j.done(fmt::format("{}: {} queries at 64 bits, all unsat", inv_names, j.queries));
}

}  // namespace

std::vector<Result> gen_jobs(unsigned timeout_ms, const GenMutation& mutate, const std::string& only_inv,
                             const std::vector<std::string>& only_eras) {
  // A job of the faithful model depends on its era, step, invariant and budget only: the patch
  // claims of one variant (proofs_claim in claims_gen.cpp) and a test that also checks the era's
  // jobs share them. Computed once per process; a reused copy reports 0 s.
  static Memo<Result> memo;
  auto once = [&](const std::string& key, const std::function<Result()>& make) {
    if (mutate) return make();
    bool fresh = false;
    Result r = memo.get(fmt::format("{}/{}", key, timeout_ms), make, &fresh);
    if (!fresh) r.seconds = 0;
    return r;
  };
  std::vector<Result> out;
  for (const auto& era : eras) {
    if (!only_eras.empty() && std::find(only_eras.begin(), only_eras.end(), era.name) == only_eras.end()) continue;
    if (mutate && only_eras.empty() && std::string(era.name) != "6.1-accum") continue;
    const GenCfg g = gen_cfg(era.ver, 250);
    if (g.variant == GenVariant::Jiffy && !mutate && (only_inv.empty() || only_inv == "mul_distributes"))
      out.push_back(once(fmt::format("mul_distributes[{}]", era.name), [&] { return mul_lemma(era, timeout_ms); }));
    if (era.steal && era.irq_time && !mutate && (only_inv.empty() || only_inv == "other_time_le"))
      out.push_back(
          once(fmt::format("other_time_le[{}]", era.name), [&] { return other_time_lemma(era, timeout_ms); }));
    for (Step step : {Step::UserExit, Step::UserEnter, Step::GuestEnter, Step::GuestExit, Step::IrqExitHook,
                      Step::Switch, Step::CpuOnline}) {
      if (step == Step::IrqExitHook && !g.irq_hooks) continue;
      if (step == Step::CpuOnline && !g.idle_init_on_online) continue;
      if (mutate && step != Step::UserExit) continue;
      std::vector<Inv> invs;
      for (Inv inv : all_invs) {
        if (!only_inv.empty() && only_inv != inv_name(inv)) continue;
        if (inv == Inv::Steal && !(era.irq_time || era.steal)) continue;
        invs.push_back(inv);
      }
      // One invariant per query: the conjunction times out on the jiffy eras (measured: 20 s
      // per case, unknown) where each invariant alone takes ~0.2 s.
      for (Inv inv : invs)
        out.push_back(once(fmt::format("{}.{}[{}]", step_name(step), inv_name(inv), era.name),
                           [&] { return era_job(era, step, {inv}, timeout_ms, mutate); }));
    }
  }
  return out;
}

std::vector<std::pair<std::string, GenMutation>> gen_mutations() {
  return {
      {"task_conserves", [](auto& d, auto& v, auto&) { v.flushed = d.add(v.flushed, d.template lit<64>(1)); }},
      {"residues_bounded", [](auto& d, auto& v, auto&) { v.utime = d.add(v.utime, d.template lit<64>(4'000'000)); }},
      {"cpu_conserves", [](auto& d, auto&, auto& c) { c.lost = d.add(c.lost, d.template lit<64>(1)); }},
      {"seq_even",
       [](auto& d, auto& v, auto&) {
         v.seq = d.template trunc<32>(d.add(d.template zext<64>(v.seq), d.template lit<64>(1)));
       }},
      {"seq_brackets",
       [](auto& d, auto& v, auto&) {
         v.seq = d.template trunc<32>(d.sub(d.template zext<64>(v.seq), d.template lit<64>(2)));
       }},
      {"monotonic", [](auto& d, auto& v, auto&) { v.consumed = d.sub(v.consumed, d.template lit<64>(1)); }},
  };
}

std::vector<Result> gen_all_jobs(unsigned timeout_ms) { return gen_jobs(timeout_ms); }

std::span<const GenEra> gen_eras() { return eras; }

}  // namespace kacct::proofs
