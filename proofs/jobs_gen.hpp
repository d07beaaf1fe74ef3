// Gen vtime proof jobs (proofs/jobs_gen.cpp): per step, per variant, each invariant of
// spec/gen_vtime.hpp preserved at 64 bits; mutation hooks for the sensitivity tests.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/domain/symbolic.hpp"
#include "model/gen/gen.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// Corrupt the symbolic state after the step (the task the step leaves current, and its CPU).
using GenMutation = std::function<void(Symbolic&, model::VtimeTask<Symbolic>&, model::VtimeCpu<Symbolic>&)>;
// `only_inv` empty: every invariant; with a mutation, one variant and step keep it short.
// `eras` empty: every era ("4.4-snapshot", "4.7-jiffy", "4.9-jiffy", "5.4-accum", "6.1-accum",
// "6.1-accum+irqtime+steal").
std::vector<Result> gen_jobs(unsigned timeout_ms, const GenMutation& mutate = {}, const std::string& only_inv = {},
                             const std::vector<std::string>& eras = {});
// One deliberately broken step per invariant (for test/gen/mutants_test.cpp).
std::vector<std::pair<std::string, GenMutation>> gen_mutations();

}  // namespace kacct::proofs
