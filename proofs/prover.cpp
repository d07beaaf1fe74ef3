#include "proofs/prover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <set>
#include <unordered_map>
#include <utility>

namespace kacct::proofs {

nlohmann::ordered_json Result::json() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["verdict"] = kacct::proofs::name(verdict);
  j["detail"] = detail;
  j["approximations"] = approximations;
  j["scope"] = scope.json();
  if (counterexample) j["counterexample"] = *counterexample;
  if (!inputs.is_null()) j["inputs"] = inputs;
  if (!replay.empty()) j["replay"] = replay;
  if (!command.empty()) j["command"] = command.json();
  j["seconds"] = seconds;
  return j;
}

void require_replay(Result& r) {
  if (r.verdict != Verdict::Violated) return;
  if (!r.replay.empty() && (r.counterexample || !r.inputs.is_null())) return;
  r.verdict = Verdict::Error;
  r.detail = "violated, but the counterexample was not replayed concretely: " + r.detail;
}

namespace {
z3::params som_params(z3::context& ctx) {
  z3::params p(ctx);
  p.set("som", true);
  return p;
}
z3::expr sub_lemma(const z3::expr& a, const z3::expr& b) { return z3::implies(z3::ule(b, a), z3::ule(a - b, a)); }
z3::expr add_lemma(const z3::expr& a, const z3::expr& b) {
  return z3::implies(z3::ule(b, ~a), z3::ule(a, a + b) && z3::ule(b, a + b));
}
// Instances of both lemmas over every binary 64-bit difference and sum in `e` (once per term).
void lemma_instances(const z3::expr& e, std::set<unsigned>& seen, std::vector<z3::expr>& out) {
  if (!e.is_app() || !seen.insert(e.id()).second) return;
  const auto k = e.decl().decl_kind();
  if ((k == Z3_OP_BSUB || k == Z3_OP_BADD) && e.num_args() == 2 && e.get_sort().bv_size() == 64)
    out.push_back(k == Z3_OP_BSUB ? sub_lemma(e.arg(0), e.arg(1)) : add_lemma(e.arg(0), e.arg(1)));
  for (unsigned i = 0; i < e.num_args(); ++i) lemma_instances(e.arg(i), seen, out);
}

// Queries already proved in this thread (any context): Z3's simplify of the conjunction of the
// assumptions and of the negated goal (an equivalence), as terms of one context of its own,
// plus the budget and the strategy order. The same terms are the same formula under the same
// tries, so it is unsat again, and its assumptions satisfiable (a holds passed the vacuity
// check). Many step queries of different cases are one query once the parts a case does not
// touch are simplified away (gen vtime's monotonic and steal_irq_pending steps of 6.1 with
// steal and irq time: 7 of 9 cases each).
struct Proved {
  int strategy = 0;
  unsigned lemma_instances = 0;
};
// One per thread: its own context (new terms in a query's context would change what Z3 does
// there: its models, the units it spends), which keeps every formula it has keyed alive, so a
// term's id names one formula for good (Z3 shares equal terms) and the same query built again
// is the same term again.
struct ProvedQueries {
  z3::context kc;
  std::vector<z3::expr> alive;
  std::unordered_map<std::string, Proved> map;
};
std::atomic<unsigned> proved_hits{0};
ProvedQueries& proved_queries() {
  thread_local ProvedQueries q;
  return q;
}
std::string query_key(z3::context& ctx, const std::vector<z3::expr>& assumptions, const z3::expr& violated,
                      const std::string& tries) {
  auto& pq = proved_queries();
  z3::context& kc = pq.kc;
  auto keep = [&](const z3::expr& e) {
    pq.alive.push_back(e);
    return e;
  };
  auto to_kc = [&](const z3::expr& e) { return keep(z3::expr(kc, Z3_translate(ctx, e, kc))); };
  z3::expr all = kc.bool_val(true);
  for (const auto& a : assumptions) all = all && to_kc(a);
  const z3::expr as = keep(keep(all).simplify()), v = keep(to_kc(violated).simplify());
  return fmt::format("{} | {} {}", tries, as.id(), v.id());
}
}  // namespace

std::vector<unsigned> SatSets::key(const std::vector<z3::expr>& as) {
  std::vector<unsigned> k;
  k.reserve(as.size());
  for (const auto& a : as) k.push_back(a.id());
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}
void SatSets::add(const std::vector<z3::expr>& as) { sets_.emplace(key(as), as); }

unsigned proved_query_hits() { return proved_hits.load(); }

void set_budget(z3::params& p, unsigned budget_ms, unsigned rlimit_per_ms) {
  const std::uint64_t units = std::uint64_t(budget_ms) * (rlimit_per_ms ? rlimit_per_ms : kRlimitPerMs);
  p.set("rlimit", unsigned(std::min<std::uint64_t>(units, UINT32_MAX)));
  const std::uint64_t wall = std::max<std::uint64_t>(std::uint64_t(budget_ms) * kWallBackstop, kWallFloorMs);
  p.set("timeout", unsigned(std::min<std::uint64_t>(wall, UINT32_MAX)));
}

std::uint64_t rlimit_count(const z3::solver& s) {
  const z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i)
    if (st.key(i) == "rlimit count") return st.is_uint(i) ? st.uint_value(i) : std::uint64_t(st.double_value(i));
  return 0;
}

const LemmaProof& bv_lemmas() {
  static const LemmaProof proof = [] {
    LemmaProof out;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      z3::context ctx;
      const z3::expr a = ctx.bv_const("a", 64), b = ctx.bv_const("b", 64);
      z3::solver s(ctx, "QF_BV");
      z3::params p(ctx);
      p.set("timeout", 60000u);
      s.set(p);
      s.add(!(sub_lemma(a, b) && add_lemma(a, b)));
      const auto r = s.check();
      out.proved = r == z3::unsat;
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      out.note =
          fmt::format("lemmas b <= a -> a-b <= a and b <= ~a -> a <= a+b, b <= a+b: {} for all 64-bit a, b ({:.2f} s)",
                      out.proved ? "proved (unsat)" : (r == z3::sat ? "REFUTED" : "undecided"), out.seconds);
    } catch (const z3::exception& e) { out.note = std::string("lemmas: z3: ") + e.msg(); }
    return out;
  }();
  return proof;
}

Solved solve(z3::context& ctx, const std::vector<z3::expr>& assumptions, const z3::expr& violated, unsigned timeout_ms,
             SolveHint* hint) {
  const auto t0 = std::chrono::steady_clock::now();
  Solved out;
  std::string dumped;
  try {
    z3::params p(ctx);
    set_budget(p, timeout_ms, hint ? hint->rlimit_per_ms : 0);
    p.set("random_seed", 0u);  // determinism
    SatSets* sat = hint ? hint->sat : nullptr;
    // The quick try (SolveHint::quick): one incremental solver of the context, one scope per
    // query. unsat with the assumptions alone: vacuous; unsat with the goal's negation: holds.
    if (hint && hint->quick) {
      z3::solver& q = *hint->quick;
      z3::params qp(ctx);  // a short budget: what it leaves undecided goes the usual way
      set_budget(qp, std::min(timeout_ms, kQuickMs));
      qp.set("random_seed", 0u);
      q.set(qp);
      q.push();
      for (const auto& a : assumptions) q.add(a);
      const auto qa = q.check();
      const auto qr = qa == z3::sat ? (q.add(violated), q.check()) : qa;
      q.pop();
      if (qa == z3::unsat || qr == z3::unsat) {
        ++hint->quick_decided;
        out.verdict = qa == z3::unsat ? Verdict::Error : Verdict::Holds;
        out.vacuous = qa == z3::unsat;
        if (out.vacuous) out.reason = "the assumptions are contradictory (vacuous query)";
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
      }
    }
    if (hint && hint->quick_only) hint = nullptr;
    // (strategy: 0 default, 1 cofactor, 2 plain; cap in ms, 0: what is left)
    // Without a hint: strategies 1 and 2 only, as every job but the tick's was measured with.
    // One conjunct of a split goal that is a single unsigned bound (the rq clock's
    // prev_steal_time_rq <= steal_clock, a counter's monotonicity): plain bit-blasting first,
    // whatever decided the conjunct before it (the rq clock's equality of sums, normalising).
    // The steal bound of rq_clock_split[noirqtime+steal] took 10.6M resource units normalised,
    // 3.7M with the default solver, 1.9M plain (0.7 s of CPU).
    const bool bound = violated.is_app() && violated.decl().decl_kind() == Z3_OP_NOT && violated.arg(0).is_app() &&
                       violated.arg(0).decl().decl_kind() == Z3_OP_ULEQ;
    const int first = !hint ? 0 : hint->split_first && bound ? 2 : hint->last;
    std::vector<std::pair<int, unsigned>> order = {{0, 3000}, {1, 0}};
    if (hint) order = {{0, 3000}, {1, 3000}, {2, 0}, {1, 0}};
    if (hint && first == 2) order = {{2, 0}, {0, 3000}, {1, 0}};
    if (hint && first == 1) order = {{1, 0}, {0, 3000}, {2, 0}};
    // Strategy 3 (default solver + lemma instances) only where the lemmas were proved.
    const bool lemmas = hint && hint->lemmas && bv_lemmas().proved;
    if (lemmas && first == 3) order = {{3, 0}, {0, 3000}, {1, 0}};
    if (lemmas && first != 3) order.insert(order.begin() + 1, {3, 0});
    if (!lemmas && hint && first == 3) order = {{0, 3000}, {1, 3000}, {2, 0}, {1, 0}};
    // A query proved before with the same tries (ProvedQueries): holds again, without solving.
    std::string key;
    if (!std::getenv("KACCT_PROOF_NO_CACHE")) {
      std::string tries = fmt::format("{} {} {}", timeout_ms, hint ? hint->rlimit_per_ms : 0u, lemmas);
      for (const auto& [st, cap] : order) tries += fmt::format(" {}:{}", st, cap);
      key = query_key(ctx, assumptions, violated, tries);
      auto& pq = proved_queries();
      std::optional<Proved> hit;
      if (auto it = pq.map.find(key); it != pq.map.end()) hit = it->second;
      if (hit) {
        ++proved_hits;
        if (std::getenv("KACCT_PROOF_RLIMIT")) fmt::print(stderr, "rlimit: proved before (same query): 0 units\n");
        if (sat) sat->add(assumptions);
        if (hint) {
          hint->last = hit->strategy;
          hint->lemma_instances += hit->lemma_instances;
        }
        out.verdict = Verdict::Holds;
        out.strategy = hit->strategy;
        out.lemmas = hit->strategy == 3;
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
      }
    }
    const unsigned lemma_base = hint ? hint->lemma_instances : 0u;
    // Vacuity: the assumptions alone must be satisfiable. A separate solver keeps the main
    // query non-incremental, so that Z3's QF_BV tactic (bit-blast + SAT) handles it.
    if (sat && sat->known(assumptions)) {
      ++sat->hits;
    } else if (!assumptions.empty()) {
      z3::solver v(ctx, "QF_BV");
      v.set(p);
      for (const auto& a : assumptions) v.add(a);
      const std::uint64_t before = rlimit_count(v);
      const auto vr = v.check();
      if (std::getenv("KACCT_PROOF_RLIMIT"))
        fmt::print(stderr, "rlimit: vacuity check: {} units\n", rlimit_count(v) - before);
      if (vr == z3::unsat) {
        out.verdict = Verdict::Error;
        out.vacuous = true;
        out.reason = "the assumptions are contradictory (vacuous query)";
        return out;
      }
      if (sat && vr == z3::sat) sat->add(assumptions);
    }
    // Strategy 1: Z3's default solver, on a short budget: most step queries take ~0.1 s.
    // Strategy 2: cofactor the ite terms that branch merging creates, normalise sums (so that
    // re-associated adder trees become identical), then bit-blast. An equality of two 64-bit
    // sums that differ only in association takes the default solver ~40 s, this ~0.1 s.
    // Strategy 3: propagate values and solve equations, then bit-blast without cofactoring:
    // the tick's monotonicity with irq time and steal (chains of clamped differences) takes
    // 1-4 s this way, where the first two time out at 30 s. Then strategy 2 gets the rest.
    // With a hint, strategy 3 joins, and the hint's strategy (the job's choice, else the last
    // winner) goes first with two thirds of the budget.
    auto elapsed_ms = [&] {
      return unsigned(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    };
    const z3::tactic cofactor = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "cofactor-term-ite") &
                                z3::with(z3::tactic(ctx, "simplify"), som_params(ctx)) &
                                z3::tactic(ctx, "elim-uncnstr") & z3::tactic(ctx, "solve-eqs") &
                                z3::tactic(ctx, "bit-blast") & z3::tactic(ctx, "sat");
    const z3::tactic plain = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") &
                             z3::tactic(ctx, "solve-eqs") & z3::tactic(ctx, "elim-uncnstr") &
                             z3::tactic(ctx, "simplify") & z3::tactic(ctx, "bit-blast") & z3::tactic(ctx, "sat");
    z3::check_result r = z3::unknown;
    unsigned tried = 0;
    // Budget used by earlier tries: the tick jobs (their own measured rate) count what was given,
    // the others what was spent (as the wall clock did), so that a later try gets no less.
    unsigned used_ms = 0;
    const unsigned rate = hint && hint->rlimit_per_ms ? hint->rlimit_per_ms : kRlimitPerMs;
    const bool report = std::getenv("KACCT_PROOF_RLIMIT");
    std::string why;
    for (std::size_t i = 0; i < order.size() && r == z3::unknown; ++i) {
      const unsigned used = used_ms;
      if (i > 0 && used + 100 >= timeout_ms) break;
      unsigned budget = timeout_ms > used ? timeout_ms - used : 1;
      if (order[i].second) budget = std::min(budget, order[i].second);
      // an uncapped try that is not the last one leaves a third for the others
      if (!order[i].second && i + 1 < order.size() && budget > 3000) budget = budget * 2 / 3;
      z3::params pi(ctx);
      set_budget(pi, budget, hint ? hint->rlimit_per_ms : 0);
      pi.set("random_seed", 0u);
      const int st = order[i].first;
      z3::solver t = st == 0 || st == 3 ? z3::solver(ctx) : (st == 1 ? cofactor : plain).mk_solver();
      t.set(pi);
      for (const auto& a : assumptions) t.add(a);
      t.add(violated);
      if (st == 3) {
        std::set<unsigned> seen;
        std::vector<z3::expr> inst;
        for (const auto& a : assumptions) lemma_instances(a, seen, inst);
        lemma_instances(violated, seen, inst);
        for (const auto& l : inst) t.add(l);
        hint->lemma_instances += unsigned(inst.size());
      }
      if (i == 0 && std::getenv("KACCT_DUMP_SMT")) dumped = t.to_smt2();
      const std::uint64_t before = rlimit_count(t);
      const auto ts = elapsed_ms();
      r = t.check();
      const std::uint64_t spent = rlimit_count(t) - before;
      out.rlimit += spent;
      used_ms += hint && hint->rlimit_per_ms ? budget : unsigned((spent + rate - 1) / rate);
      if (report)
        fmt::print(stderr, "rlimit: strategy {} budget {} ms ({} units): {} units, {} ms, {}\n", st, budget,
                   std::uint64_t(budget) * rate, spent, elapsed_ms() - ts,
                   r == z3::sat     ? "sat"
                   : r == z3::unsat ? "unsat"
                                    : "unknown");
      ++tried;
      if (r == z3::sat) out.model = t.get_model();
      if (r != z3::unknown) out.strategy = st;
      if (r != z3::unknown) out.lemmas = st == 3;
      if (r != z3::unknown && hint) hint->last = order[i].first;
      if (r == z3::unknown) why = t.reason_unknown();
    }
    if (r == z3::unknown)
      out.reason = tried > 1 ? fmt::format("solver: {} (after {} strategies)", why, tried) : "solver: " + why;
    // Diagnostics: the query as SMT-LIB (the last one; with a '%' in the path, every undecided
    // one, numbered in order).
    if (const char* dump = std::getenv("KACCT_DUMP_SMT")) {
      static std::atomic<unsigned> n{0};
      std::string path = dump;
      const auto pct = path.find('%');
      if (pct != std::string::npos) path.replace(pct, 1, std::to_string(r == z3::unknown ? n++ : n.load()));
      std::FILE* f = pct == std::string::npos || r == z3::unknown ? std::fopen(path.c_str(), "w") : nullptr;
      if (f) {
        std::fputs(dumped.c_str(), f);
        std::fclose(f);
      }
    }
    if (r == z3::unsat && !key.empty()) {
      proved_queries().map.emplace(std::move(key),
                                   Proved{out.strategy, hint ? hint->lemma_instances - lemma_base : 0u});
    }
    switch (r) {
      case z3::unsat: out.verdict = Verdict::Holds; break;
      case z3::sat: out.verdict = Verdict::Violated; break;
      case z3::unknown: out.verdict = Verdict::Unknown; break;
    }
  } catch (const z3::exception& e) {
    out.verdict = Verdict::Error;
    out.reason = std::string("z3: ") + e.msg();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kacct::proofs
