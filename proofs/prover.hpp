// Z3 driver: one query = "assumptions and not(goal)" under a timeout. Unknown is never holds.
#pragma once
#include <z3++.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proofs/verdict.hpp"

namespace kacct::proofs {

// Budgets are deterministic: a budget of N ms is N * kRlimitPerMs Z3 resource units (rlimit,
// counted in solver steps: the same on every machine with the same Z3, so a verdict does not
// depend on the machine's load). 1100-3700 units are one ms of CPU here: at 4000 a try gets at
// least the units it could spend in its budget as wall time before, so no query that a
// wall-clock budget decided goes undecided (at 1500, gen_vtime.task_switch.monotonic of
// 6.1-accum+irqtime+steal did: its plain bit-blasting try needs more than 54M units). The tick
// jobs keep their measured 1500 (SolveHint::rlimit_per_ms). The wall clock stops a try only at
// kWallBackstop times its budget, and never before kWallFloorMs (at a load average of 16 on 2
// cores a 3 s budget took 25 s of wall time): a last-resort guard against a solver that hangs
// (unknown), not a budget.
inline constexpr unsigned kRlimitPerMs = 4000;
inline constexpr unsigned kWallBackstop = 8;
inline constexpr unsigned kWallFloorMs = 600'000;
// The budget of SolveHint::quick's try.
inline constexpr unsigned kQuickMs = 1000;
// Sets `p` to a budget of `budget_ms` (rlimit, and the wall-clock backstop).
void set_budget(z3::params& p, unsigned budget_ms, unsigned rlimit_per_ms = kRlimitPerMs);
// The resource units a solver's context has counted so far (the difference across a check() is
// what it spent): KACCT_PROOF_RLIMIT=1 prints each try's, to measure what a job needs.
std::uint64_t rlimit_count(const z3::solver& s);

struct Solved {
  Verdict verdict = Verdict::Error;  // Holds: unsat; Violated: sat (model set); Unknown: timeout
  std::optional<z3::model> model;
  std::string reason;
  bool vacuous = false;  // Error because the assumptions alone are unsatisfiable
  double seconds = 0;
  int strategy = -1;         // the strategy that decided (0 default, 1 cofactor, 2 plain, 3 lemmas), -1 none
  bool lemmas = false;       // decided with instances of bv_lemmas() (strategy 3)
  std::uint64_t rlimit = 0;  // resource units spent by every try
};

// Is `violated` satisfiable together with `assumptions`? The assumptions themselves are checked
// first for satisfiability: a vacuous query (assumptions always false) is an error, not a proof.
// A job's queries are alike: with `hint`, a third strategy (plain bit-blasting) joins, and
// `last` (the one that decided the last query, or the one a job sets before a query because it
// measured it deciding such queries) goes first (verdicts do not depend on it, only the time).
// `split`: check_step splits an undecided goal into its conjuncts (worth it with a full budget;
// with a short one the conjuncts only spend it again).
// `lemmas`: strategy 3 joins (Z3's default solver given instances of the proved lemmas below
// over the query's own differences and sums); `lemma_instances` counts the ones it added.
// `split_first`: check_step goes straight to the conjuncts (where the whole goal was measured
// to time out and its parts not).
// `rlimit_per_ms`: Z3 resource units per ms of budget (0: kRlimitPerMs, as without a hint).
// Assumption sets one context has already found satisfiable (a vacuity check passed): a later
// query with exactly the same set skips its own check. Keyed by the sorted AST ids of the set,
// which are exact within one context (Z3 shares equal terms); the stored vectors hold the terms,
// so their ids are never recycled. One per context, used by one thread.
class SatSets {
 public:
  bool known(const std::vector<z3::expr>& as) const { return sets_.count(key(as)) > 0; }
  void add(const std::vector<z3::expr>& as);
  unsigned hits = 0;

 private:
  static std::vector<unsigned> key(const std::vector<z3::expr>& as);
  std::map<std::vector<unsigned>, std::vector<z3::expr>> sets_;
};
struct SolveHint {
  int last = 0;
  bool split = false;
  bool split_first = false;
  unsigned rlimit_per_ms = 0;
  bool lemmas = false;
  unsigned lemma_instances = 0;
  // Sets of assumptions already found satisfiable in the query's context (null: check each).
  SatSets* sat = nullptr;
  // Many small queries in one context (lazy-TLB's ~500 per release): each is first tried on
  // this one incremental solver (push, assumptions, check, goal, check, pop), which decides
  // holds and vacuous without building two solvers and their tactics per query. Anything else
  // (sat, unknown) goes the usual way, so a counterexample's model is the one it always was.
  std::optional<z3::solver> quick;
  unsigned quick_decided = 0;
  // Only `sat` and `quick` are used: the strategies are those of a query without a hint.
  bool quick_only = false;
};
// Two facts of 64-bit unsigned arithmetic, each proved for all a, b (the negation unsat over
// fresh constants, once per process): b <= a -> a-b <= a, and b <= ~a (no carry) -> a <= a+b
// and b <= a+b. Every instance of a proved fact is true, so adding instances as assumptions
// keeps a holds honest; the solver no longer has to rediscover them through the adders.
// Proved: false if either was not (then no strategy uses them); `note`: what was proved, how.
struct LemmaProof {
  bool proved = false;
  double seconds = 0;
  std::string note;
};
const LemmaProof& bv_lemmas();
// How many queries solve() answered from earlier proofs of the same query in the same
// thread (prover.cpp, ProvedQueries; KACCT_PROOF_NO_CACHE=1 turns that off, to measure).
unsigned proved_query_hits();
Solved solve(z3::context& ctx, const std::vector<z3::expr>& assumptions, const z3::expr& violated, unsigned timeout_ms,
             SolveHint* hint = nullptr);

}  // namespace kacct::proofs
