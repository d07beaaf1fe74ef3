// The claims of the kacct-local proposed fixes (arch/patches.hpp rows with `local`, pages in
// docs/findings/): each is judged on its release without and with the fix, on the finding's
// witness (a trace, a script or an input) and on a corpus that shows nothing else changes.
#pragma once
#include <string>
#include <vector>

#include "arch/patches.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// The witness of a finding: what `kacct findings` runs before and after the fix.
struct FixWitness {
  std::string id;       // the local patch row
  std::string page;     // docs/findings/<page>.md
  std::string command;  // how a user replays it (the file named there is `witness` below)
  std::string file;     // test/findings/<file>
  std::string text;     // the trace, script or input
  std::string finding;  // the invariant or finding name it shows
  std::string before;   // what the witness gives without the fix (one line)
  std::string after;    // with it
  bool fixed = false;   // the finding is present before and gone after
};
std::vector<FixWitness> fix_witnesses();

std::vector<Result> gen_vtime_fix_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> psi_irq_fix_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> native_vtime_fix_claims(const arch::Patch&, unsigned timeout_ms);
std::vector<Result> cputime_adjust_fix_claims(const arch::Patch&, unsigned timeout_ms);

}  // namespace kacct::proofs
