#include "proofs/prover.hpp"

namespace kacct::proofs {

nlohmann::ordered_json Result::json() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["verdict"] = kacct::proofs::name(verdict);
  j["detail"] = detail;
  j["approximations"] = approximations;
  if (counterexample) j["counterexample"] = *counterexample;
  if (!inputs.is_null()) j["inputs"] = inputs;
  j["seconds"] = seconds;
  return j;
}

Solved solve(z3::context& ctx, const std::vector<z3::expr>& assumptions, const z3::expr& violated,
             unsigned timeout_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Solved out;
  try {
    z3::solver s(ctx);
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    p.set("random_seed", 0u);  // determinism
    s.set(p);
    for (const auto& a : assumptions) s.add(a);
    // Vacuity: the assumptions alone must be satisfiable.
    if (!assumptions.empty()) {
      auto r = s.check();
      if (r == z3::unsat) {
        out.verdict = Verdict::Error;
        out.reason = "the assumptions are contradictory (vacuous query)";
        return out;
      }
    }
    s.add(violated);
    switch (s.check()) {
      case z3::unsat: out.verdict = Verdict::Holds; break;
      case z3::sat:
        out.verdict = Verdict::Violated;
        out.model = s.get_model();
        break;
      case z3::unknown:
        out.verdict = Verdict::Unknown;
        out.reason = "solver: " + s.reason_unknown();
        break;
    }
  } catch (const z3::exception& e) {
    out.verdict = Verdict::Error;
    out.reason = std::string("z3: ") + e.msg();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kacct::proofs
