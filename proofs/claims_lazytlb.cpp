// The LazyTlb patch validator (claims of arch/patches.hpp): exhaustive exploration of small
// worlds before and after the patch, the Z3 step jobs of proofs/jobs_lazytlb.cpp in both modes,
// and scripts for the claims about when the mm is freed and what it costs.
#include <fmt/format.h>

#include <array>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/script.hpp"
#include "model/lazytlb/seed.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model::lazytlb;

namespace {

Sizes claim_sizes() { return {2, 2, 2}; }

Result steps_in_both_modes(arch::KVersion before, arch::KVersion after, unsigned timeout_ms) {
  std::vector<Result> parts;
  struct ModeCase {
    const char* name;
    Arch arch;
    arch::KVersion ver;
  };
  for (const auto& mc : {ModeCase{"before", Arch::PpcRadix, before}, ModeCase{"after", Arch::PpcRadix, after}})
    for (auto& r : lazytlb_step_jobs(mc.name, mc.arch, mc.ver, timeout_ms)) parts.push_back(std::move(r));
  return combine_results("z3 steps", parts, "");
}

// The mm is freed at the last real reference under shootdown; under refcounting a lazy CPU
// pins it for as long as it stays lazy. Observed on a script (docs: "pin").
Result free_timing(const arch::Patch& p) {
  Result r;
  r.name = "lazy_tlb.free_timing";
  Script shown;
  auto pin = [&](Arch a, arch::KVersion v, int spins) {
    Script s;
    s.sizes = {2, 2, 1};
    s.arch = a;
    s.version = v;
    auto ev = [&](Op op, int c, int arg = 0) { s.events.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
    ev(Op::Switch, 1, 0);
    ev(Op::Finish, 1);
    ev(Op::Idle, 1);
    ev(Op::Finish, 1);
    ev(Op::Switch, 0, 0);
    ev(Op::Finish, 0);
    ev(Op::Exit, 0);
    ev(Op::Switch, 0, 1);
    ev(Op::Finish, 0);
    for (int i = 0; i < spins; ++i) {
      ev(Op::Idle, 0);
      ev(Op::Finish, 0);
      ev(Op::Switch, 0, 1);
      ev(Op::Finish, 0);
    }
    shown = s;
    return run_script(s);
  };
  auto before = pin(Arch::PpcRadix, p.before, 250);
  auto after = pin(Arch::PpcRadix, p.after, 250);
  // Every reachable state, past any violation (the safety claims judge those): zombies only.
  auto exb = lazytlb_explored("before", Arch::PpcRadix, p.before, claim_sizes(), nullptr, true);
  std::size_t zombies_after = 1;
  auto exa = lazytlb_explored("after", Arch::PpcRadix, p.after, claim_sizes(), &zombies_after, true);
  const bool changed = !before.failed_at && !after.failed_at && before.world.mms[0].st == MmState::Live &&
                       before.zombie_steps >= 1000 && after.world.mms[0].st == MmState::Freed &&
                       after.zombie_steps == 0;
  const bool no_zombie_after = exa.verdict == Verdict::Holds && zombies_after == 0;
  r.verdict = changed && no_zombie_after ? Verdict::Holds
                                         : (exa.verdict == Verdict::Unknown ? Verdict::Unknown : Verdict::Violated);
  r.detail = fmt::format(
      "before ({}): after the exit the dead mm stays allocated for all {} further events while CPU 1 idles lazily on "
      "it "
      "(zombie in {} events; pinned until that CPU next runs a user task, execs or goes offline: unbounded); "
      "after ({}): freed by the exit's last mmdrop, {} IPI(s) shoot CPU 1 to init_mm, never a zombie in any of the "
      "explored states [{}] (before: [{}])",
      p.before.str(), 1000, before.zombie_steps, p.after.str(), after.costs.ipis, exa.detail, exb.detail);
  r.approximations = exa.approximations;
  r.seconds = exa.seconds + exb.seconds;
  if (r.verdict == Verdict::Violated) {  // the evidence: the exploration's script, else the pin script after
    r.counterexample = exa.counterexample ? *exa.counterexample : write_script(shown);
    r.replay = kReplayScript;
  }
  return r;
}

Result ipi_cost(const arch::Patch& p) {
  Result r;
  r.name = "lazy_tlb.ipi_cost";
  auto seed_costs = [](arch::KVersion v, int n) {
    auto seed = seed_scenario(n, 4, Arch::PpcRadix, v);
    Script loop = seed.script;
    loop.events.resize(seed.loop_end);
    auto l = run_script(loop).costs;
    loop.events.resize(seed.loop_begin);
    auto b = run_script(loop).costs;
    auto all = run_script(seed.script).costs;
    return std::array<double, 4>{double(l.count_atomics - b.count_atomics) / double(l.switches - b.switches),
                                 double(l.ipis - b.ipis), double(all.ipis - l.ipis), double(all.frees)};
  };
  const int n = 16;
  auto b = seed_costs(p.before, n), a = seed_costs(p.after, n);
  auto exa = lazytlb_explored("after", Arch::PpcRadix, p.after, claim_sizes(), nullptr, true);
  auto exb = lazytlb_explored("before", Arch::PpcRadix, p.before, claim_sizes(), nullptr, true);
  const bool as_claimed = a[1] == 0 && a[0] <= b[0];
  r.verdict = exa.verdict == Verdict::Unknown ? Verdict::Unknown : as_claimed ? Verdict::Holds : Verdict::Violated;
  r.detail = fmt::format(
      "seed scenario, {} CPUs/threads, 4 trips through idle each, then exit (ppc64-radix): before {}: {:.2f} mm_count "
      "atomics per switch, {} IPIs in the loop, {} IPIs at exit; after {}: {:.2f} atomics per switch, {} IPIs in the "
      "loop, "
      "{} IPIs at exit (one per other CPU still lazy on or trimmed from the mm). Most IPIs sent by one event in the "
      "explored worlds: before [{}], after [{}]",
      n, p.before.str(), b[0], b[1], b[2], p.after.str(), a[0], a[1], a[2], exb.detail, exa.detail);
  r.approximations = exa.approximations;
  r.seconds = exa.seconds + exb.seconds;
  if (r.verdict == Verdict::Violated) {  // the evidence: the seed scenario after the patch, run as a script
    r.counterexample = write_script(seed_scenario(n, 4, Arch::PpcRadix, p.after).script);
    r.replay = kReplayScript;
  }
  return r;
}

// as_safe_as_before with both releases violated: the same invariant first fails in both
// explorations, and every step job violated after is violated before (same event kind).
bool no_new_violation(const std::vector<Result>& parts) {
  auto inv = [](const Result& r) {
    const auto i = r.detail.find("; lazy_tlb.");
    return i == std::string::npos ? std::string() : r.detail.substr(i + 2, r.detail.find(':', i) - i - 2);
  };
  const Result *eb = nullptr, *ea = nullptr, *steps = nullptr;
  for (const auto& p : parts) {
    if (p.name == "explore before") eb = &p;
    if (p.name == "explore after") ea = &p;
    if (p.name == "z3 steps") steps = &p;
  }
  if (!eb || !ea || !steps) return false;
  if (ea->verdict == Verdict::Violated && (eb->verdict != Verdict::Violated || inv(*ea) != inv(*eb))) return false;
  // steps detail: "lazy_tlb.step[OP,after] violated [..." must come with "lazy_tlb.step[OP,before] violated".
  const std::string& d = steps->detail;
  for (std::size_t i = d.find(",after] violated"); i != std::string::npos; i = d.find(",after] violated", i + 1)) {
    const auto b = d.rfind("lazy_tlb.step[", i);
    const std::string op = d.substr(b, i - b);
    if (d.find(op + ",before] violated") == std::string::npos) return false;
  }
  return true;
}

// The hotplug fix: after it every reachable state of the hotplug worlds is safe (radix and hash)
// and every step preserves the invariants on the hotplug shapes; before it the explorer reaches
// the use-after-free it fixes (an mm freed while the outgoing CPU still runs lazily on it) and
// the step jobs break the strengthening (an offline CPU on a user mm).
Result hotplug_safe(const arch::Patch& p, unsigned timeout_ms) {
  Result r;
  r.name = "lazy_tlb.hotplug_safe";
  std::vector<Result> after = {
      lazytlb_explored("explore after", Arch::PpcRadix, p.after, claim_sizes(), nullptr),
      lazytlb_explored("explore after (hash)", Arch::PpcHash, p.after, claim_sizes(), nullptr)};
  for (auto& j : lazytlb_hotplug_step_jobs("after", Arch::PpcRadix, p.after, timeout_ms)) after.push_back(std::move(j));
  auto a = combine_results("after", after, "");
  auto b = lazytlb_explored("explore before", Arch::PpcRadix, p.before, claim_sizes(), nullptr);
  std::vector<Result> bsteps = lazytlb_hotplug_step_jobs("before", Arch::PpcRadix, p.before, timeout_ms);
  auto bs = combine_results("before steps", bsteps, "");
  const bool race_before = b.verdict == Verdict::Violated && !b.replay.empty() &&
                           b.detail.find("no_dangling_active_mm") != std::string::npos;
  r.seconds = a.seconds + b.seconds + bs.seconds;
  r.approximations = a.approximations;
  if (a.verdict == Verdict::Holds && race_before) {
    r.verdict = Verdict::Holds;
  } else if (a.verdict == Verdict::Violated) {
    r.verdict = Verdict::Violated;
    r.counterexample = a.counterexample;
    r.replay = a.replay;
    r.inputs = a.inputs;
  } else if (a.verdict != Verdict::Holds) {
    r.verdict = a.verdict;
  } else {
    r.verdict = b.verdict == Verdict::Unknown ? Verdict::Unknown : Verdict::Violated;  // no race to fix
  }
  r.detail = fmt::format(
      "after {}: [{}]; before {} (ppc64-radix, the race: CPU 1 offline while still lazy on a user mm, the mm's last "
      "user exits on CPU 0 and no shootdown IPI reaches CPU 1): [{}]; before, steps on the hotplug shapes: {} [{}]",
      p.after.str(), a.detail, p.before.str(), b.detail, name(bs.verdict), bs.detail);
  return r;
}

}  // namespace

std::vector<Result> lazytlb_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<Result> out;
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    const std::string c(claim);
    if (c == "lazy_tlb.shootdown_as_safe_as_refcount" || c == "lazy_tlb.as_safe_as_before") {
      std::vector<Result> parts;
      parts.push_back(lazytlb_explored("explore before", Arch::PpcRadix, p.before, claim_sizes(), nullptr));
      parts.push_back(lazytlb_explored("explore after", Arch::PpcRadix, p.after, claim_sizes(), nullptr));
      if (c == "lazy_tlb.shootdown_as_safe_as_refcount") {
        parts.push_back(lazytlb_explored("explore after (hash)", Arch::PpcHash, p.after, claim_sizes(), nullptr));
        parts.push_back(lazytlb_explored("explore refcount arches", Arch::Generic, p.after, claim_sizes(), nullptr));
      }
      parts.push_back(steps_in_both_modes(p.before, p.after, timeout_ms));
      auto r = combine_results(
          c, parts,
          "same invariants (no dangling active_mm, no underflow, accounting, no leak, mask covers users, "
          "own-bit clears) checked on every reachable state and by Z3 per step: ");
      if (c == "lazy_tlb.as_safe_as_before" && r.verdict == Verdict::Violated && no_new_violation(parts)) {
        // Both releases fail the same way (the hotplug race of 6.4..6.13): the patch adds nothing.
        r.verdict = Verdict::Holds;
        r.counterexample.reset();
        r.replay.clear();
        r.inputs = nullptr;
        r.detail =
            "no violation after that is not there before (both releases share it: the CPU hotplug race fixed "
            "by 21641bd9a7a7, counterexample in the parts); " +
            r.detail;
      }
      out.push_back(std::move(r));
    } else if (c == "lazy_tlb.hotplug_safe") {
      out.push_back(hotplug_safe(p, timeout_ms));
    } else if (c == "lazy_tlb.free_timing") {
      out.push_back(free_timing(p));
    } else if (c == "lazy_tlb.ipi_cost") {
      out.push_back(ipi_cost(p));
    } else {
      out.push_back(unknown_claim(c));
    }
  }
  return out;
}

}  // namespace kacct::proofs
