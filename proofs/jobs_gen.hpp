// Gen vtime proof jobs (proofs/jobs_gen.cpp): per step, per variant, each invariant of
// spec/gen_vtime.hpp preserved at 64 bits; mutation hooks for the sensitivity tests.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/domain/symbolic.hpp"
#include "model/gen/gen.hpp"
#include "proofs/step_job.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// Corrupt the state after the step (the task the step leaves current, and its CPU), in both
// domains (a generic lambda), so that the counterexamples replay.
using GenMutation = Mutation<model::VtimeTask, model::VtimeCpu>;
// `only_inv` empty: every invariant, and for the jiffy eras the lemma job
// gen_vtime.mul_distributes[era] (also alone as "mul_distributes"); with a mutation, the user
// exit step of 6.1-accum (or of `eras`) keeps it short.
// `eras` empty: every era ("4.4-snapshot", "4.7-jiffy", "4.9-jiffy", "5.4-accum", "6.1-accum",
// "6.1-accum+irqtime+steal").
std::vector<Result> gen_jobs(unsigned timeout_ms, const GenMutation& mutate = {}, const std::string& only_inv = {},
                             const std::vector<std::string>& eras = {});
// The variant eras the jobs cover (the claims pick theirs by release).
struct GenEra {
  const char* name;
  arch::KVersion ver;
  bool irq_time, steal;
};
std::span<const GenEra> gen_eras();
// One deliberately broken step per invariant (for test/gen/mutants_test.cpp).
std::vector<std::pair<std::string, GenMutation>> gen_mutations();

}  // namespace kacct::proofs
