// The cputime_adjust patch validator: each claim on the release after the patch, on each CPU
// class whose code differs (exact or generic 64-bit division), with the release before given
// for contrast (the per-era proof is adjust_claim, proofs/jobs_cputime.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "arch/registry.hpp"
#include "proofs/jobs.hpp"
#include "proofs/memo.hpp"
#include "proofs/claims_fixes.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model;

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
      r.replay = kReplayStep;  // found by running the routine itself
      r.inputs = {{"stime", s}, {"utime", u}, {"rtime", rt}, {"got", got}, {"exact", want}};
      r.detail = fmt::format("returns {} where floor(stime*rtime/(stime+utime)) = {} (concrete search)", got, want);
      return r;
    }
  }
  r.verdict = Verdict::Unknown;
  r.detail = "no difference from exact division found by a 100000-input search";
  return r;
}

Result judge_uncached(const std::string& claim, const AdjustCfg& cfg, unsigned timeout_ms) {
  if (claim == "cputime_adjust.exact_ratio") return exact_ratio(cfg.div);
  return adjust_claim(claim, cfg, timeout_ms);
}

// The verdict depends on the claim, era and division routine only: the releases before and after
// a patch, and neighbouring patches, share most of them. Computed once per process; a reused copy
// reports 0 s.
Result judge(const std::string& claim, const AdjustCfg& cfg, unsigned timeout_ms) {
  static Memo<Result> memo;
  bool fresh = false;
  Result r = memo.get(
      fmt::format("{}/{}/{}/{}", claim, int(cfg.era), int(cfg.div), timeout_ms),
      [&] { return judge_uncached(claim, cfg, timeout_ms); }, &fresh);
  if (!fresh) r.seconds = 0;
  return r;
}

}  // namespace

// cputime_adjust patches: each claim on the release after the patch, on each CPU class whose
// code differs (exact or generic 64-bit division), with the release before for contrast.
std::vector<Result> cputime_adjust_claims(const arch::Patch& p, unsigned timeout_ms) {
  if (p.local) return cputime_adjust_fix_claims(p, timeout_ms);  // a kacct-local fix (claims_fixes.cpp)
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
      if (int(after.verdict) > int(agg.verdict) ||
          (after.verdict == agg.verdict && !agg.counterexample && after.counterexample)) {
        agg.verdict = after.verdict;
        agg.counterexample = after.counterexample;
        agg.inputs = after.inputs;
        agg.replay = after.replay;
        agg.command = after.command;
      }
    }
    agg.detail = fmt::format("{}", fmt::join(parts, "; "));
    out.push_back(std::move(agg));
  }
  return out;
}

}  // namespace kacct::proofs
