// Proof jobs, generated from the arch/ table. Each job is named "<model>.<invariant>[<case>]".
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/cputime/cputime_adjust.hpp"
#include "model/lazytlb/script.hpp"
#include "model/native/native.hpp"
#include "model/psi/psi.hpp"
#include "model/tick/tick.hpp"
#include "proofs/step_job.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// Test hook: corrupt the state after the step (a deliberately broken model variant, in both
// domains: its counterexamples replay); the jobs must then come out violated.
using CpuMutation = Mutation<model::CpuAcct>;
using AdjustMutation = Mutation<model::PrevCputime>;

// `hzs` empty: every HZ value of the table; `only_step` empty: every step (else e.g.
// "account_process_tick"); `only_inv` empty: every invariant (else e.g. "tick_conserves").
// want: if set, only the jobs whose name it accepts are run (the others are not built at all).
std::vector<Result> tick_jobs(unsigned timeout_ms, const CpuMutation& mutate = {}, std::vector<unsigned> hzs = {},
                              const std::string& only_step = {}, const std::string& only_inv = {},
                              const std::function<bool(const std::string&)>& want = {});
std::vector<Result> cputime_jobs(unsigned timeout_ms, const AdjustMutation& mutate = {});
std::vector<Result> division_jobs(unsigned timeout_ms);
// The 4 obligation jobs of cputime_jobs alone (a test runs them apart from the claims).
std::vector<Result> cputime_obligation_jobs(unsigned timeout_ms);
// The facts of exact floor division that the symbolic domain's abstraction assumes
// (Symbolic::exact_div_facts), over integers a, b, c and q = floor(a*b/c), each named;
// division.exact_facts[64-bit] proves them (a broken list given instead must come out violated).
using DivFacts = std::vector<std::pair<std::string, z3::expr>>;
using DivFactsFn = std::function<DivFacts(const z3::expr&, const z3::expr&, const z3::expr&, const z3::expr&)>;
DivFacts exact_div_facts_int(const z3::expr& a, const z3::expr& b, const z3::expr& c, const z3::expr& q);
Result exact_facts_64(unsigned timeout_ms, const DivFactsFn& facts_of);
// PSI irq (jobs_psi.cpp): every obligation per modelled version ("6.1", "6.10", "6.12", "6.17";
// `only_ver` empty: all), with the model variant given (mutants must come out violated).
// `only_ob` empty: every obligation, else one ("charge_exact", "lock_held", ...).
std::vector<Result> psi_jobs(unsigned timeout_ms, model::psi::Variant variant, const std::string& only_ver,
                             const std::string& only_ob = {});
// The same for a list of obligations (empty: every one), in psi_jobs' order.
std::vector<Result> psi_jobs(unsigned timeout_ms, model::psi::Variant variant, const std::string& only_ver,
                             const std::vector<std::string>& only_obs);

// One cputime_adjust claim for one era and division routine: Z3 over one call from any prev
// state (with the division abstracted), then bounded model checking from prev = 0 for a
// reachable counterexample, replayed concretely with the era's real division routine.
Result adjust_claim(const std::string& claim, const model::AdjustCfg& cfg, unsigned timeout_ms,
                    const AdjustMutation& mutate = {});

// Deterministic concrete search for inputs where the routine's quotient exceeds rtime
// (stime > 0, utime > 0). Returns (stime, utime, rtime) or nothing.
struct AdjustInput {
  std::uint64_t stime, utime, rtime;
};
std::optional<AdjustInput> search_scale_overshoot(model::ScaleDiv how);

// Lazy-TLB (jobs_lazytlb.cpp, for claims_lazytlb.cpp): the step jobs of one mode; exhaustive
// exploration as one Result (zombies: states with an mm pinned only lazily); results combined
// into one (worst verdict, the first violated part's counterexample).
std::vector<Result> lazytlb_step_jobs(const char* mode, model::lazytlb::Arch a, arch::KVersion ver,
                                      unsigned timeout_ms);
// The same on the shapes with a CPU not online only (claims about the hotplug fix).
std::vector<Result> lazytlb_hotplug_step_jobs(const char* mode, model::lazytlb::Arch a, arch::KVersion ver,
                                              unsigned timeout_ms);
// whole: count every reachable state past a violation (verdict: exhausted or not); cached per
// process, like the step jobs.
Result lazytlb_explored(const std::string& title, model::lazytlb::Arch a, arch::KVersion ver, model::lazytlb::Sizes s,
                        std::size_t* zombies, bool whole = false);
Result combine_results(const std::string& title, const std::vector<Result>& parts, const std::string& prefix);

// Native vtime (jobs_native.cpp, claims_native.cpp): the configuration every job and claim
// starts from (512 MHz TB, SPURR as the scaled source).
model::native::NativeCfg native_base_cfg(unsigned word_bits, bool scaled, bool flush_epoch = true);
// tb_to_ns's bound at one TB rate (a job of native_all_jobs); `slack` replaces the bound 2^shift
// (the sensitivity test tightens it).
Result native_tb_to_ns_job(std::uint64_t tb_hz, unsigned timeout_ms, std::uint64_t slack = 0);
// One split job (split_sum, split_bounds, ...) at 32 or 64 bits; `broken` reports the system
// share one too high (the sensitivity test of the abstracted division).
Result native_split_job(const std::string& inv, unsigned word_bits, unsigned timeout_ms, bool broken = false);
inline constexpr const char* kNativeSeqNote =
    "sequential model: each hook runs with interrupts off on its own CPU (no interleaving)";

}  // namespace kacct::proofs
