// `kacct prove` and `kacct validate`: proof jobs and per-patch claims, all generated from the
// arch/ table. A claim is judged on the release after the patch, on each CPU class whose code
// differs (exact or generic 64-bit division), with the release before given for contrast.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>
#include <stdexcept>

#include "arch/registry.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"

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
  bool known = o.model.empty();
  for (const auto& m : proof_model_table()) {
    if (!o.model.empty() && o.model != m.name) continue;
    known = true;
    for (auto& r : m.jobs(o.timeout_ms)) out.push_back(std::move(r));
  }
  if (!known) throw std::invalid_argument("unknown model '" + o.model + "' (" + fmt::format("{}", fmt::join(proof_models(), ", ")) + ")");
  return out;
}

std::vector<Result> tick_all_jobs(unsigned timeout_ms) { return tick_jobs(timeout_ms); }
std::vector<Result> cputime_all_jobs(unsigned timeout_ms) { return cputime_jobs(timeout_ms); }
std::vector<Result> division_all_jobs(unsigned timeout_ms) { return division_jobs(timeout_ms); }

namespace {

// exact_ratio: the routine returns floor(stime * rtime / total) for every input.
Result exact_ratio(ScaleDiv how) {
  Result r;
  r.name = "cputime_adjust.exact_ratio";
  if (how == ScaleDiv::Exact128) {
    r.verdict = Verdict::Holds;
    r.detail = "128-bit multiply and divide (x86-64 mulq/divq; generic C from 6.12) is floor(a*b/c) by construction";
    return r;
  }
  Concrete k;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t s = rng() >> (rng() % 40), u = (rng() >> (rng() % 60)) | 1, rt = rng() >> (rng() % 40);
    if (s == 0 || s + u < s) continue;
    auto got = scale(k, how, s, rt, s + u);
    auto want = static_cast<std::uint64_t>((unsigned __int128)s * rt / (s + u));
    if (got != want) {
      r.verdict = Verdict::Violated;
      r.inputs = {{"stime", s}, {"utime", u}, {"rtime", rt}, {"got", got}, {"exact", want}};
      r.detail = fmt::format("returns {} where floor(stime*rtime/(stime+utime)) = {} (concrete search)", got, want);
      return r;
    }
  }
  r.verdict = Verdict::Unknown;
  r.detail = "no difference from exact division found by a 100000-input search";
  return r;
}

Result judge(const std::string& claim, const AdjustCfg& cfg, unsigned timeout_ms) {
  if (claim == "cputime_adjust.exact_ratio") return exact_ratio(cfg.div);
  return adjust_claim(claim, cfg, timeout_ms);
}

}  // namespace

// cputime_adjust patches: each claim on the release after the patch, on each CPU class whose
// code differs (exact or generic 64-bit division), with the release before for contrast.
std::vector<Result> cputime_adjust_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<arch::CpuFacts> classes;
  for (const auto& c : arch::cpus()) {
    bool seen = false;
    for (const auto& k : classes) seen = seen || k.exact_mul_u64_u64_div_u64 == c.exact_mul_u64_u64_div_u64;
    if (!seen) classes.push_back(c);
  }
  std::vector<Result> out;
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    Result agg;
    agg.name = std::string(claim);
    agg.verdict = Verdict::Holds;
    std::vector<std::string> parts;
    for (const auto& cpu : classes) {
      auto after = judge(agg.name, adjust_cfg(p.after, cpu.exact_mul_u64_u64_div_u64), timeout_ms);
      auto before = judge(agg.name, adjust_cfg(p.before, cpu.exact_mul_u64_u64_div_u64), timeout_ms);
      parts.push_back(fmt::format("{} ({}): {} after [{}], {} before", cpu.name,
                                  cpu.exact_mul_u64_u64_div_u64 ? "exact division" : "generic division",
                                  name(after.verdict), after.detail, name(before.verdict)));
      agg.seconds += after.seconds + before.seconds;
      for (const auto& a : after.approximations)
        if (std::find(agg.approximations.begin(), agg.approximations.end(), a) == agg.approximations.end())
          agg.approximations.push_back(a);
      if (int(after.verdict) > int(agg.verdict) || (after.verdict == agg.verdict && !agg.counterexample && after.counterexample)) {
        agg.verdict = after.verdict;
        agg.counterexample = after.counterexample;
        agg.inputs = after.inputs;
      }
    }
    agg.detail = fmt::format("{}", fmt::join(parts, "; "));
    out.push_back(std::move(agg));
  }
  return out;
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
      rep.claims.push_back(std::move(r));
    } else {
      rep.claims = v->claims(p, o.timeout_ms);
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
