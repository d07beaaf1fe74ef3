#include "proofs/prover.hpp"

#include <algorithm>
#include <cstdlib>

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
}  // namespace

Solved solve(z3::context& ctx, const std::vector<z3::expr>& assumptions, const z3::expr& violated,
             unsigned timeout_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Solved out;
  try {
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    p.set("random_seed", 0u);  // determinism
    // Vacuity: the assumptions alone must be satisfiable. A separate solver keeps the main
    // query non-incremental, so that Z3's QF_BV tactic (bit-blast + SAT) handles it.
    if (!assumptions.empty()) {
      z3::solver v(ctx, "QF_BV");
      v.set(p);
      for (const auto& a : assumptions) v.add(a);
      if (v.check() == z3::unsat) {
        out.verdict = Verdict::Error;
        out.vacuous = true;
        out.reason = "the assumptions are contradictory (vacuous query)";
        return out;
      }
    }
    // Strategy 1: Z3's default solver, on a short budget: most step queries take ~0.1 s.
    // Strategy 2: cofactor the ite terms that branch merging creates, normalise sums (so that
    // re-associated adder trees become identical), then bit-blast. An equality of two 64-bit
    // sums that differ only in association takes the default solver ~40 s, this ~0.1 s.
    const unsigned first = std::min(timeout_ms, 3000u);
    z3::params p1(ctx);
    p1.set("timeout", first);
    p1.set("random_seed", 0u);
    z3::solver s(ctx);
    s.set(p1);
    for (const auto& a : assumptions) s.add(a);
    s.add(violated);
    auto r = s.check();
    if (r == z3::sat) out.model = s.get_model();
    if (r == z3::unknown && timeout_ms > first) {
      z3::params p2(ctx);
      p2.set("timeout", timeout_ms - first);
      p2.set("random_seed", 0u);
      z3::tactic pipeline = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "cofactor-term-ite") &
                            z3::with(z3::tactic(ctx, "simplify"), som_params(ctx)) & z3::tactic(ctx, "elim-uncnstr") &
                            z3::tactic(ctx, "solve-eqs") & z3::tactic(ctx, "bit-blast") & z3::tactic(ctx, "sat");
      z3::solver t = pipeline.mk_solver();
      t.set(p2);
      for (const auto& a : assumptions) t.add(a);
      t.add(violated);
      r = t.check();
      if (r == z3::sat) out.model = t.get_model();
      if (r == z3::unknown) out.reason = "solver: " + t.reason_unknown() + " (after both strategies)";
    } else if (r == z3::unknown) {
      out.reason = "solver: " + s.reason_unknown();
    }
    if (const char* dump = std::getenv("KACCT_DUMP_SMT")) {  // diagnostics: the last query as SMT-LIB
      if (std::FILE* f = std::fopen(dump, "w")) {
        std::fputs(s.to_smt2().c_str(), f);
        std::fclose(f);
      }
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
