// A real kernel's mm references against the lazy-TLB model, step by step (docs/conformance.md,
// lazy-TLB section). tools/record-qemu/lazytlb-reduce.py turns a recording into a script and an
// expectation file: after the STEP-th event of the script, CPU's current task is TASK, its
// active_mm is MM (an mm slot, or init_mm) and that mm's mm_users, mm_count and first
// mm_cpumask word are what the kernel showed there. compare() replays the script and checks
// every line against the model's state after the same step.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/lazytlb/script.hpp"

namespace kacct::model::lazytlb {

struct Expectation {
  std::size_t step = 0;  // after this many events (1-based: the first event is step 1)
  bool ipi_row = false;  // `STEP ipis N`: cross-CPU calls sent since the prefix, N in `count`
  int cpu = 0;
  Ref task = kNull;  // an ordinary task slot, or kNull for the CPU's idle task
  Ref mm = kInitMm;  // an mm slot, or kInitMm
  std::uint32_t users = 0, count = 0;
  std::uint64_t mask = 0;  // mm_cpumask bits 0..63
  std::uint32_t line = 0;
  // `exit@S`: taken while a task holding the mm ran on another CPU towards its exit, the model's
  // step S, or while it was preempted inside its exit_mm()/mmput() (S its held-back `mmput`):
  // exit_mm()/mmput() are not atomic there, so the kernel's counters may also be those
  // after S, or one of the two states inside it (after exit_mm()'s lazy mmgrab: count + 1; after
  // mmput()'s decrement, before __mmput()'s mmdrop: S's count + 1).
  std::size_t exit_step = 0;
  // `fork@S`: taken while a task on the mm ran on another CPU towards its CLONE_VM fork, the
  // model's step S (at wake_up_new_task()): copy_mm()'s mmget() comes earlier, so the kernel's
  // mm_users may already be one above the model's at the row (the count unchanged).
  std::size_t fork_step = 0;
};
struct Expected {
  std::size_t prefix = 0;  // events that rebuild the state at the trace's start (not compared)
  std::vector<Expectation> rows;
};
// Format (`lazytlb-expect 1`, '#' comments, `prefix N`, then one row a line:
// STEP CPU TASK|idle MM|init USERS COUNT MASKHEX [exit@S|fork@S], the last three `-` for init; or STEP ipis N:
// the IPIs the kernel's handlers saw since the trace's start). Errors LINE:COL.
script::Result<Expected> parse_expected(std::string_view text);

struct Mismatch {
  Expectation want;
  std::string what;  // which field differs, the model's value and the kernel's
};
struct Comparison {
  std::size_t rows = 0;                     // expectation rows compared (ipi rows included)
  std::size_t place = 0;                    // current task and active_mm both as the kernel's (not ipi rows)
  std::size_t counted = 0;                  // rows on a user mm (mm_users, mm_count compared)
  std::size_t counts_exact = 0;             // both counters equal
  std::size_t counts_bound = 0;             // exit@S/fork@S rows not exact but at one of the exit's/fork's states
  std::size_t mask_exact = 0;               // mask word equal
  std::size_t mask_subset = 0;              // the kernel's bits all set in the model's mask
  std::size_t ipi_rows = 0, ipi_exact = 0;  // `ipis` rows: the model's IPIs since the prefix
  std::vector<Mismatch> off;                // place or counter differences, in order (first 50)
  std::vector<Mismatch> mask_off;           // mask differences (first 50)
  script::RunStatus run;                    // the replay (an event that could not happen, a violation)
  std::vector<spec::lazytlb::Violation> violations;
};
// Replays `s` (invariants checked after every event, as `lazy-tlb run`) and compares every row
// of `e` after its step. A row beyond the events run (the replay stopped) is not compared.
Comparison compare(const Script& s, const Expected& e);

}  // namespace kacct::model::lazytlb
