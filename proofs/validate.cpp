// `kacct prove` and `kacct validate`: proof jobs and per-patch claims, all generated from the
// arch/ table, through the tables of proofs/registry.cpp. Every violated verdict they return
// carries a concretely replayed counterexample (require_replay), or becomes an error.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <stdexcept>

#include "arch/registry.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"
#include "proofs/replay.hpp"

namespace kacct::proofs {
using namespace kacct::model;

Verdict PatchReport::worst() const {
  Verdict w = Verdict::Holds;
  for (const auto& c : claims) w = proofs::worst(w, c.verdict);
  return w;
}
nlohmann::ordered_json PatchReport::json() const {
  nlohmann::ordered_json j;
  j["patch"] = patch;
  j["title"] = title;
  j["before"] = before;
  j["after"] = after;
  j["claims"] = nlohmann::ordered_json::array();
  for (const auto& c : claims) j["claims"].push_back(c.json());
  return j;
}

std::vector<std::string> proof_models() {
  std::vector<std::string> out;
  for (const auto& m : proof_model_table()) out.emplace_back(m.name);
  return out;
}

std::vector<Result> prove(const ProveOptions& o) {
  std::vector<Result> out;
  const std::string model = arch::canonical_name(o.model);  // an old spelling still works
  bool known = model.empty();
  for (const auto& m : proof_model_table()) {
    if (!model.empty() && model != m.name) continue;
    known = true;
    for (auto& r : m.jobs(o.timeout_ms)) {
      require_replay(r);
      derive_command(r);
      r.scope = job_scope(m.name, r.name);
      out.push_back(std::move(r));
    }
  }
  if (!known)
    throw std::invalid_argument("unknown model '" + o.model + "' (" +
                                fmt::format("{}", fmt::join(proof_models(), ", ")) + ")");
  return out;
}

std::vector<Result> tick_all_jobs(unsigned timeout_ms) { return tick_jobs(timeout_ms); }
std::vector<Result> cputime_all_jobs(unsigned timeout_ms) { return cputime_jobs(timeout_ms); }
std::vector<Result> division_all_jobs(unsigned timeout_ms) { return division_jobs(timeout_ms); }

std::vector<PatchReport> validate(const ValidateOptions& o) {
  std::vector<arch::Patch> chosen;
  if (o.patches.empty()) chosen.assign(arch::patches.begin(), arch::patches.end());
  for (const auto& id : o.patches) {
    auto p = arch::find_patch(id);
    if (!p) {
      std::string known;
      for (const auto& q : arch::patches) known += " " + std::string(q.id);
      throw std::invalid_argument("unknown patch '" + id + "'; known:" + known);
    }
    chosen.push_back(*p);
  }
  auto judge_patch = [&](const arch::Patch& p) {
    PatchReport rep{std::string(p.id), std::string(p.title), p.before.str(), p.after.str(), {}};
    const PatchValidator* v = nullptr;
    for (const auto& row : validator_table())
      if (row.mechanism == p.mechanism) v = &row;
    if (!v) {
      Result r;
      r.name = "validator";
      r.verdict = Verdict::Error;
      r.detail = "no validator registered for this patch's mechanism (proofs/registry.cpp)";
      r.scope = claim_scope(p.mechanism, "");
      rep.claims.push_back(std::move(r));
    } else {
      rep.claims = v->claims(p, o.timeout_ms);
      for (auto& c : rep.claims) {
        require_replay(c);
        derive_command(c);
        c.scope = claim_scope(p.mechanism, c.name);
      }
      // Each stable series that carries the patch: the same claims with before = the point
      // release before the backport and after = the one with it, named CLAIM@POINT.
      for (const auto& b : arch::backports) {
        if (b.id != p.id) continue;
        arch::Patch q = p;
        q.before = arch::v(b.first.major, b.first.minor, b.first.point - 1);
        q.after = b.first;
        for (auto& c : v->claims(q, o.timeout_ms)) {
          require_replay(c);
          derive_command(c);
          c.scope = claim_scope(p.mechanism, c.name);
          c.name += "@" + b.first.str();
          c.detail = fmt::format("stable {}.y, {} -> {} ({}): {}", b.first.series().str(), q.before.str(),
                                 q.after.str(), b.source, c.detail);
          rep.claims.push_back(std::move(c));
        }
      }
    }
    return rep;
  };
  // The patches are independent: up to o.threads of them at a time, each report in its place
  // (the output is the same as sequentially; only the solver's wall-clock budgets see the load).
  std::vector<PatchReport> out(chosen.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < chosen.size(); i = next++) out[i] = judge_patch(chosen[i]);
  };
  std::vector<std::future<void>> helpers;
  for (unsigned k = 1; k < std::min<std::size_t>(std::max(o.threads, 1u), chosen.size()); ++k)
    helpers.push_back(std::async(std::launch::async, worker));
  worker();
  for (auto& h : helpers) h.get();
  return out;
}

}  // namespace kacct::proofs
