// `kacct prove` and `kacct validate`: proof jobs and per-patch claims, all generated from the
// arch/ table, through the tables of proofs/registry.cpp. Every violated verdict they return
// carries a concretely replayed counterexample (require_replay), or becomes an error.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <set>
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

namespace {
// Rough seconds of the claims that take more than a few (kacct validate --profile, 2 cores), for
// the order of the work only (the costliest first): a claim not listed costs 1.
double claim_cost(std::string_view claim) {
  static const std::pair<std::string_view, double> costs[] = {
      {"psi_irq.no_double_count", 30},
      {"cputime_adjust.sum_is_rtime", 30},
      {"cputime_adjust.stime_le_rtime", 30},
      {"cputime_adjust.monotonic", 25},
      {"lazy_tlb.as_safe_as_before", 30},
      {"lazy_tlb.shootdown_as_safe_as_refcount", 25},
      {"gen_vtime.no_time_lost", 20},
      {"lazy_tlb.", 15},
      {"psi_irq.seq_even", 3},
  };
  for (const auto& [prefix, s] : costs)
    if (claim.rfind(prefix, 0) == 0) return s;
  return 1;
}
}  // namespace

Result unknown_claim(std::string_view claim) {
  Result r;
  r.name = std::string(claim);
  r.verdict = Verdict::Error;
  r.detail = "no judge for this claim in its mechanism's validator (proofs/claims_*.cpp)";
  return r;
}

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
  // One unit of work per claim (a patch row with that claim alone: every validator judges its
  // claims independently, and shares per-version work through per-process memos), so that the
  // threads stay busy to the end; the costliest claims go first.
  struct Unit {
    std::size_t patch, slot;
    const PatchValidator* v;
    arch::Patch row;
    double cost;
    const arch::Backport* backport;  // judged on this stable series; null: on mainline
  };
  std::vector<PatchReport> out;
  std::vector<Unit> units;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto& p = chosen[i];
    out.push_back({std::string(p.id), std::string(p.title), p.before.str(), p.after.str(), {}});
    const PatchValidator* v = nullptr;
    for (const auto& row : validator_table())
      if (row.mechanism == p.mechanism) v = &row;
    if (!v) {
      Result r;
      r.name = "validator";
      r.verdict = Verdict::Error;
      r.detail = "no validator registered for this patch's mechanism (proofs/registry.cpp)";
      r.scope = claim_scope(p.mechanism, "");
      out[i].claims.push_back(std::move(r));
      continue;
    }
    for (auto claim : p.claims) {
      if (claim.empty()) continue;
      arch::Patch row = p;
      row.claims = {};
      row.claims[0] = claim;
      // The same claim on the same releases (another patch of the series) reuses the first one's
      // work: cheap, and better not run at the same time (it would wait for the first).
      const bool again = !seen.insert(fmt::format("{}|{}|{}", claim, p.before.str(), p.after.str())).second;
      units.push_back({i, out[i].claims.size(), v, row, again ? 1.0 : claim_cost(claim), nullptr});
      out[i].claims.emplace_back();
    }
    // Each stable series that carries the patch: the same claims with before = the point
    // release before the backport and after = the one with it, named CLAIM@POINT.
    for (const auto& b : arch::backports) {
      if (b.id != p.id) continue;
      for (auto claim : p.claims) {
        if (claim.empty()) continue;
        arch::Patch row = p;
        row.claims = {};
        row.claims[0] = claim;
        row.before = arch::v(b.first.major, b.first.minor, b.first.point - 1);
        row.after = b.first;
        units.push_back({i, out[i].claims.size(), v, row, claim_cost(claim), &b});
        out[i].claims.emplace_back();
      }
    }
  }
  std::vector<std::size_t> order(units.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return units[a].cost > units[b].cost; });
  auto judge = [&](const Unit& u) {
    auto rs = u.v->claims(u.row, o.timeout_ms);
    Result r;
    if (rs.size() == 1) {
      r = std::move(rs[0]);
    } else {
      r.name = std::string(u.row.claims[0]);
      r.verdict = Verdict::Error;
      r.detail = fmt::format("the validator returned {} results for one claim", rs.size());
    }
    require_replay(r);
    derive_command(r);
    r.scope = claim_scope(u.row.mechanism, r.name);
    if (const auto* b = u.backport) {
      r.name += "@" + b->first.str();
      r.detail = fmt::format("stable {}.y, {} -> {} ({}): {}", b->first.series().str(), u.row.before.str(),
                             u.row.after.str(), b->source, r.detail);
    }
    return r;
  };
  // Each result lands in its place: the output is the same as sequentially (only the solver's
  // wall-clock budgets see the load).
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < order.size(); i = next++) {
      const auto& u = units[order[i]];
      out[u.patch].claims[u.slot] = judge(u);
    }
  };
  std::vector<std::future<void>> helpers;
  for (unsigned k = 1; k < std::min<std::size_t>(std::max(o.threads, 1u), units.size()); ++k)
    helpers.push_back(std::async(std::launch::async, worker));
  worker();
  for (auto& h : helpers) h.get();
  return out;
}

}  // namespace kacct::proofs
