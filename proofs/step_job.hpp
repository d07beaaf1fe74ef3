// The one harness every mechanism's step jobs run on (on the model of Serval's
// verify-refinement: assume, step, assert, for one step written once over the value domain).
//
// What a query proves: for every pre-state and input that satisfies the case's assumptions
// (bounds, the state invariants before the step) and the facts the symbolic domain assumes for
// its abstractions, the step keeps each invariant the job names AND raises none of the safety
// obligations the step records with `d.require` (division by zero, over-wide shifts, quotients
// that must fit, overflow). The obligations are always part of the goal.
//
// What it does with a counterexample: evaluates each invariant and each obligation on the Z3
// model separately, so that the verdict names what breaks; reads the pre-state back; replays it
// through the same step in the Concrete domain. The replay must break exactly the same
// invariants and obligations and reach the same post-state as the symbolic step under the
// model, else the verdict is Error (the domains drifted), never Violated.
//
// What it assumes: the case's assumptions (each job lists them as approximations), a step that
// is deterministic given its pre-state (every model step is), and Z3's model completion for the
// variables the query leaves free.
//
// A case C (a namespace-scope struct) provides
//   template <class D> using In = ...;   the pre-state and the step's inputs, in domain D
//   void assume(Symbolic&, const In<Symbolic>&, std::vector<z3::expr>&) const;
//   template <class D> std::vector<boolean<D>> step(D&, In<D>&) const;  runs the step in place
//       and returns the truth of each invariant, in the order of the job's names
//   nlohmann::ordered_json json(const In<Concrete>&) const;             a counterexample's inputs
// and optionally
//   In<Symbolic> fresh(Symbolic&) const   fresh variables (default: each field of a reflected
//       In named after the field)
//   In<Concrete> read_back(const z3::model&, const In<Symbolic>&) const   (default: reflection)
//   nlohmann::ordered_json state(const In<Concrete>&) const   what the replay compares (default: json)
//   std::string counterexample(const In<Concrete>&) const     a text form of the counterexample
//   bool generalize(Symbolic&, const In<Symbolic>& pre, std::vector<z3::expr>& assumptions,
//                   z3::expr& goal) const
//       a weaker query, tried first (true if it made one): terms replaced by fresh variables,
//       assumptions dropped. Every model of the query is one of the weaker query, so its holds
//       is the query's; any other verdict falls back to the query itself.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <z3++.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/domain/concrete.hpp"
#include "model/domain/reflect.hpp"
#include "model/domain/symbolic.hpp"
#include "proofs/prover.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// ---- shared pieces ----
inline constexpr std::uint64_t kBound62 = std::uint64_t{1} << 62;
inline constexpr const char* kBound62Note = "every counter and clock below 2^62 ns (146 years): no wrap-around";
// How a violated verdict's counterexample was replayed (Result::replay). "concrete step" also
// covers counterexamples found by running the concrete model itself (searches, enumerations).
inline constexpr const char* kReplayStep = "concrete step";
inline constexpr const char* kReplayTrace = "trace via sim::run";
inline constexpr const char* kReplayScript = "script run";
inline constexpr const char* kReplayExplore = "concrete exploration";

// Every 64-bit field of a symbolic state (reflected structs, arrays, vectors of them) below a
// limit, so that no counter or clock wraps.
template <class T>
void bound_u64(Symbolic& d, const T& v, std::uint64_t limit, std::vector<z3::expr>& out) {
  namespace hana = boost::hana;
  if constexpr (is_symbv<T>::value) {
    if constexpr (T::width == 64) out.push_back(z3::ule(v.e(), d.ctx().bv_val(limit, 64)));
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) { bound_u64(d, hana::second(acc)(v), limit, out); });
  } else if constexpr (requires { v.size(); }) {
    for (const auto& x : v) bound_u64(d, x, limit, out);
  }
}

// Every 64-bit field of `v` below 2^62.
template <class T>
void bound62(Symbolic& d, const T& v, std::vector<z3::expr>& out) {
  bound_u64(d, v, kBound62, out);
}

// A deliberately broken model variant for the sensitivity tests: the same corruption in both
// domains, so that its counterexamples replay like any other. Built from a generic lambda.
template <template <class> class... S>
struct Mutation {
  std::function<void(Symbolic&, S<Symbolic>&...)> sym;
  std::function<void(Concrete&, S<Concrete>&...)> con;
  Mutation() = default;
  template <class F>
  requires(!std::is_same_v<std::decay_t<F>, Mutation>) Mutation(F f) : sym(f), con(f) {}
  explicit operator bool() const { return bool(sym); }
  void operator()(Symbolic& d, S<Symbolic>&... s) const { sym(d, s...); }
  void operator()(Concrete& d, S<Concrete>&... s) const { con(d, s...); }
};

// One query's outcome.
struct Check {
  Verdict verdict = Verdict::Error;
  std::string reason;               // unknown or error: why
  std::vector<std::string> broken;  // violated: the invariants and obligations that fail
  nlohmann::ordered_json inputs;    // violated: the concrete pre-state
  std::optional<std::string> counterexample;
  bool vacuous = false;        // the assumptions are contradictory (Solved::vacuous)
  bool replay_failed = false;  // the counterexample did not replay: a tool error
  // Violated by obligations alone: the invariants' verdict with every obligation assumed to
  // hold (what the job said before its obligations were part of the goal).
  std::optional<Verdict> assuming_obligations;
  std::vector<std::string> approximations;  // the symbolic domain's abstractions the step used
  bool lemmas = false;                      // decided with instances of proved lemmas (bv_lemmas)
  double seconds = 0;
};

namespace detail {
template <class C>
auto fresh_in(const C& c, Symbolic& d) {
  if constexpr (requires { c.fresh(d); }) {
    return c.fresh(d);
  } else {
    namespace hana = boost::hana;
    typename C::template In<Symbolic> in;
    hana::for_each(hana::accessors<decltype(in)>(),
                   [&](auto acc) { make_fresh(d, hana::second(acc)(in), hana::to<char const*>(hana::first(acc))); });
    return in;
  }
}
template <class C, class T>
auto read_back_in(const C& c, const z3::model& m, const T& s) {
  using K = typename C::template In<Concrete>;
  if constexpr (requires { c.read_back(m, s); }) {
    return c.read_back(m, s);
  } else {
    K k{};
    read_back(m, s, k);
    return k;
  }
}
template <class C, class K>
nlohmann::ordered_json state_of(const C& c, const K& k) {
  if constexpr (requires { c.state(k); })
    return c.state(k);
  else
    return c.json(k);
}
// The conjuncts of a goal, flattened: A && B holds iff each does, and small queries over one
// counter (e.g. one field's monotonicity) bit-blast where their conjunction times out.
inline void conjuncts(const z3::expr& e, std::vector<z3::expr>& out) {
  if (e.is_app() && e.decl().decl_kind() == Z3_OP_AND) {
    for (unsigned i = 0; i < e.num_args(); ++i) conjuncts(e.arg(i), out);
  } else {
    out.push_back(e);
  }
}
// The goal split into its conjuncts, one query each: holds if every one holds; the first
// violated one gives the model (it violates the whole goal too); else the worst verdict.
inline Solved solve_each(z3::context& ctx, const std::vector<z3::expr>& as, const std::vector<z3::expr>& parts,
                         unsigned timeout_ms, double spent, SolveHint* hint) {
  Solved out;
  out.verdict = Verdict::Holds;
  out.seconds = spent;
  std::size_t undecided = 0;
  for (const auto& p : parts) {
    auto r = solve(ctx, as, !p, timeout_ms, hint);
    out.seconds += r.seconds;
    out.lemmas = out.lemmas || r.lemmas;
    if (r.verdict == Verdict::Violated || r.verdict == Verdict::Error) {
      r.seconds = out.seconds;
      return r;
    }
    if (r.verdict == Verdict::Unknown) {
      ++undecided;
      out.verdict = Verdict::Unknown;
      out.reason = r.reason;
    }
  }
  if (undecided)
    out.reason = fmt::format("{} (split into {} conjuncts: {} undecided)", out.reason, parts.size(), undecided);
  return out;
}
inline std::vector<std::string> failed_sites(const Concrete& k) {
  std::set<std::string> s(k.failed.begin(), k.failed.end());
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back("obligation " + x);
  return out;
}
}  // namespace detail

// One query: assumptions && !(every invariant && no obligation), then the replay.
// `shared`: a context to reuse across many small queries (else one of its own).
template <class C>
Check check_step(const C& c, const std::vector<std::string>& names, unsigned timeout_ms,
                 const std::string& timing_label, z3::context* shared = nullptr, SolveHint* hint = nullptr) {
  std::optional<z3::context> own;
  z3::context& ctx = shared ? *shared : own.emplace();
  Symbolic d(ctx);
  auto in = detail::fresh_in(c, d);
  const auto pre = in;
  std::vector<z3::expr> as;
  c.assume(d, in, as);
  auto oks = c.step(d, in);
  for (const auto& a : d.assumptions) as.push_back(a);
  z3::expr all = ctx.bool_val(true);
  for (const auto& ok : oks) all = all && ok.e();
  for (const auto& o : d.obligations) all = all && !o.violated;  // a failing obligation fails the job
  Solved res;
  bool decided = false;
  double general_s = 0;
  if constexpr (requires(std::vector<z3::expr> & v, z3::expr & g) { c.generalize(d, pre, v, g); }) {
    auto gas = as;
    z3::expr gall = all;
    if (c.generalize(d, pre, gas, gall)) {
      res = solve(ctx, gas, !gall, timeout_ms, hint);
      general_s = res.seconds;
      if (res.verdict == Verdict::Holds) {
        decided = true;
        // the query's own assumptions must be satisfiable too (a vacuous query proves nothing)
        const auto v = solve(ctx, as, ctx.bool_val(false), timeout_ms);
        if (v.verdict != Verdict::Holds) res = v;
        res.seconds = general_s + v.seconds;
      }
    }
  }
  const auto split_parts = [&] {
    std::vector<z3::expr> parts;
    for (const auto& ok : oks) detail::conjuncts(ok.e(), parts);
    for (const auto& o : d.obligations) parts.push_back(!o.violated);
    return parts;
  };
  bool split_done = false;
  if (!decided && hint && hint->split_first) {
    const auto parts = split_parts();
    if (parts.size() > 1) {
      res = detail::solve_each(ctx, as, parts, timeout_ms, general_s, hint);
      decided = split_done = true;
    }
  }
  if (!decided) {
    const unsigned used = unsigned(general_s * 1000);
    res = solve(ctx, as, !all, timeout_ms > used + 1000 ? timeout_ms - used : 1000, hint);
    res.seconds += general_s;
  }
  if (res.verdict == Verdict::Unknown && hint && hint->split && !split_done) {
    const auto parts = split_parts();
    if (parts.size() > 1) res = detail::solve_each(ctx, as, parts, timeout_ms, res.seconds, hint);
  }
  if (std::getenv("KACCT_PROOF_TIMES"))
    fmt::print(stderr, "{}: {:.3f}s {} s{}\n", timing_label, res.seconds, name(res.verdict), res.strategy);
  Check out;
  out.verdict = res.verdict;
  out.reason = res.reason;
  out.vacuous = res.vacuous;
  out.seconds = res.seconds;
  out.lemmas = res.lemmas;
  out.approximations = d.approximations;
  if (res.verdict != Verdict::Violated) return out;
  // Name what breaks, each on its own.
  const z3::model& m = *res.model;
  for (std::size_t i = 0; i < oks.size(); ++i)
    if (m.eval(oks[i].e(), true).is_false()) out.broken.push_back(names.at(i));
  std::set<std::string> sites;
  for (const auto& o : d.obligations)
    if (m.eval(o.violated, true).is_true()) sites.insert(o.site);
  for (const auto& s : sites) out.broken.push_back("obligation " + s);
  // Replay: the pre-state, concretely, through the same step.
  auto k_in = detail::read_back_in(c, m, pre);
  out.inputs = c.json(k_in);
  if constexpr (requires { c.counterexample(k_in); }) out.counterexample = c.counterexample(k_in);
  auto k_post = k_in;
  Concrete k;
  auto koks = c.step(k, k_post);
  std::vector<std::string> kbroken;
  for (std::size_t i = 0; i < koks.size(); ++i)
    if (!koks[i]) kbroken.push_back(names.at(i));
  for (auto& s : detail::failed_sites(k)) kbroken.push_back(std::move(s));
  const auto sym_post = detail::read_back_in(c, m, in);
  std::string mismatch;
  if (kbroken != out.broken)
    mismatch =
        fmt::format("Z3 breaks [{}], the concrete replay [{}]", fmt::join(out.broken, ", "), fmt::join(kbroken, ", "));
  else if (out.broken.empty())
    mismatch = "Z3 model breaks nothing it names";
  else if (detail::state_of(c, sym_post) != detail::state_of(c, k_post))
    mismatch = "the concrete post-state differs from the symbolic one under the model";
  if (!mismatch.empty()) {
    out.verdict = Verdict::Error;
    out.replay_failed = true;
    out.reason = "Z3 counterexample does not replay concretely (domain mismatch): " + mismatch;
    return out;
  }
  if (!oks.empty() && out.broken.back().rfind("obligation ", 0) == 0 &&
      out.broken.front().rfind("obligation ", 0) == 0) {
    auto with = as;
    for (const auto& o : d.obligations) with.push_back(!o.violated);
    z3::expr inv = ctx.bool_val(true);
    for (const auto& ok : oks) inv = inv && ok.e();
    const auto again = solve(ctx, with, !inv, timeout_ms);
    out.seconds += again.seconds;
    out.assuming_obligations = again.verdict;
  }
  return out;
}

// A job: one Result over several queries (cases, HZ values, ...). Violated as soon as one query
// is (with its replayed counterexample), else the worst verdict; a vacuous query is an error,
// or with `vacuous_is_infeasible` an infeasible path that is skipped and counted.
class StepJob {
 public:
  StepJob(std::string name, std::vector<std::string> approximations, bool vacuous_is_infeasible = false)
      : infeasible_ok_(vacuous_is_infeasible) {
    r_.name = std::move(name);
    r_.verdict = Verdict::Holds;
    r_.approximations = std::move(approximations);
  }
  // Fold one query at `where`; false once the job is decided (violated, or a replay error).
  bool add(const Check& c, const std::string& where) {
    r_.seconds += c.seconds;
    lemmas = lemmas || c.lemmas;
    for (const auto& a : c.approximations) note(a);
    if (c.vacuous && infeasible_ok_) {
      ++infeasible;
      return true;
    }
    ++queries;
    switch (c.verdict) {
      case Verdict::Holds: return true;
      case Verdict::Violated:
        r_.verdict = Verdict::Violated;
        r_.inputs = c.inputs;
        r_.counterexample = c.counterexample;
        r_.replay = kReplayStep;
        r_.detail = fmt::format("{} breaks {}; replayed concretely", where, fmt::join(c.broken, ", "));
        if (c.assuming_obligations)
          r_.detail +=
              fmt::format("; where every obligation holds, the invariants: {}",
                          *c.assuming_obligations == Verdict::Holds ? "hold (unsat)" : name(*c.assuming_obligations));
        return false;
      default:
        if (r_.verdict == Verdict::Violated) return false;
        r_.verdict = worst(r_.verdict, c.verdict);
        r_.detail = fmt::format("{}: {}", where, c.reason);
        return !c.replay_failed;
    }
  }
  bool violated() const { return r_.verdict == Verdict::Violated; }
  Verdict verdict() const { return r_.verdict; }
  // The Result; `holds_detail` when every query held.
  Result done(const std::string& holds_detail) {
    if (r_.verdict == Verdict::Holds) r_.detail = holds_detail;
    return std::move(r_);
  }
  void note(const std::string& approximation) {
    if (std::find(r_.approximations.begin(), r_.approximations.end(), approximation) == r_.approximations.end())
      r_.approximations.push_back(approximation);
  }
  unsigned queries = 0, infeasible = 0;
  bool lemmas = false;  // some query was decided with instances of bv_lemmas()

 private:
  Result r_;
  bool infeasible_ok_;
};

// One job of one query.
template <class C>
Result step_job(const std::string& name, const C& c, const std::vector<std::string>& invariants,
                std::vector<std::string> approximations, unsigned timeout_ms, const std::string& where,
                const std::string& holds_detail) {
  StepJob j(name, std::move(approximations));
  j.add(check_step(c, invariants, timeout_ms, name), where);
  return j.done(holds_detail);
}

}  // namespace kacct::proofs
