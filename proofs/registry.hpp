// The mechanisms' proof entry points, in one table each (proofs/registry.cpp): `kacct prove
// --model NAME` runs a model's jobs; `kacct validate ID` judges a patch's claims with the
// validator of the patch's mechanism (arch/patches.hpp). A new mechanism adds one row to each.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/patches.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

struct ProofModel {
  std::string_view name;  // "tick", "cputime_adjust", ...
  std::vector<Result> (*jobs)(unsigned timeout_ms);
};
struct PatchValidator {
  arch::Mechanism mechanism;
  // One Result per claim named in the patch's row (empty names skipped), in that order.
  std::vector<Result> (*claims)(const arch::Patch&, unsigned timeout_ms);
};

std::span<const ProofModel> proof_model_table();
std::span<const PatchValidator> validator_table();

// The scope of a proof job of `model` or a claim of mechanism `m` (proofs/scope.cpp): the rows of
// the model or mechanism, then those whose key is a prefix of the job's or claim's name.
Scope job_scope(std::string_view model, std::string_view job);
Scope claim_scope(arch::Mechanism m, std::string_view claim);

// Per-mechanism entry points: jobs in proofs/jobs_<mechanism>.cpp, claims in
// proofs/claims_<mechanism>.cpp (all step jobs on the harness of proofs/step_job.hpp).
std::vector<Result> tick_all_jobs(unsigned timeout_ms);
std::vector<Result> cputime_all_jobs(unsigned timeout_ms);
std::vector<Result> division_all_jobs(unsigned timeout_ms);
std::vector<Result> cputime_adjust_claims(const arch::Patch&, unsigned timeout_ms);
// Tick (108ad0999085), proofs/claims_tick.cpp.
std::vector<Result> tick_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> lazytlb_all_jobs(unsigned timeout_ms);
// The modes lazytlb_all_jobs covers ("refcount", "pre-6.4", ...), and one mode's jobs alone.
std::vector<std::string> lazytlb_modes();
std::vector<Result> lazytlb_mode_jobs(const std::string& mode, unsigned timeout_ms);
std::vector<Result> lazytlb_claims(const arch::Patch&, unsigned timeout_ms);
// Test hook: the step jobs of one mode with a mutant of model/lazytlb (they must fail).
std::vector<Result> lazytlb_mutant_jobs(const std::string& mutant, bool shootdown, unsigned timeout_ms);
std::vector<Result> psi_all_jobs(unsigned timeout_ms);
std::vector<Result> psi_irq_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> native_all_jobs(unsigned timeout_ms);
std::vector<Result> native_vtime_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> gen_all_jobs(unsigned timeout_ms);
std::vector<Result> gen_vtime_claims(const arch::Patch&, unsigned timeout_ms);

}  // namespace kacct::proofs
