// Mutation testing hooks (tools/mutation/, docs/testing.md). A mutant is a plausible fault
// written next to the code it changes:
//   KACCT_MUTANT(id, original, mutated)   an expression: `original`, or `mutated` when mutant id is on;
//   KACCT_MUTANT_DROP(id, statement...)   a statement: run, or skipped when mutant id is on.
// In every normal build the macros expand to the original code alone: no cost, no global, and
// model/ stays pure. Only a build with -DKACCT_MUTATION=ON (CMake option of the same name; the
// `mutation` preset) compiles the mutants in: then one process-wide mutant id, read once from
// the environment variable KACCT_MUTANT (unset or 0: none), selects at most one of them. That
// build alone breaks the "no globals" rule of model/, on purpose, so that one build serves every
// mutant. Mutants are plain C++ selections, so they act in both value domains (Concrete and
// Symbolic) alike. Ids are unique; tools/mutation/catalogue.tsv describes each one.
#pragma once

#ifdef KACCT_MUTATION
#include <cstdlib>
#include <type_traits>

namespace kacct::mutation {
// The selected mutant (0: none), read once. A malformed value selects none.
inline int active_id() {
  static const int id = [] {
    const char* s = std::getenv("KACCT_MUTANT");
    return s ? std::atoi(s) : 0;
  }();
  return id;
}
// Constant evaluation (constexpr callers, static_assert) always sees the original code.
constexpr bool on(int id) {
  if (std::is_constant_evaluated()) return false;
  return active_id() == id;
}
}  // namespace kacct::mutation

#define KACCT_MUTANT(id, original, ...) (::kacct::mutation::on(id) ? (__VA_ARGS__) : (original))
#define KACCT_MUTANT_DROP(id, ...) \
  if (!::kacct::mutation::on(id)) { __VA_ARGS__; }
#else
#define KACCT_MUTANT(id, original, ...) (original)
#define KACCT_MUTANT_DROP(id, ...) __VA_ARGS__;
#endif
