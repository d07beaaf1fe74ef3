// Verdicts, honest by construction: holds / violated (with a counterexample that was replayed
// concretely, and `replay` says how) / unknown (solver timeout or unsupported) / error (tool
// failure).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kacct::proofs {

enum class Verdict { Holds, Violated, Unknown, Error };
inline const char* name(Verdict v) {
  switch (v) {
    case Verdict::Holds: return "holds";
    case Verdict::Violated: return "violated";
    case Verdict::Unknown: return "unknown";
    case Verdict::Error: return "error";
  }
  return "error";
}
// Exit status of a run: the worst verdict (0 holds, 1 violated, 2 unknown, 3 error).
inline int exit_code(Verdict v) { return int(v); }
inline Verdict worst(Verdict a, Verdict b) { return int(a) > int(b) ? a : b; }

// What the model behind a verdict ranges over (`covers`: events, behaviours, inputs) and what
// it leaves out (`omits`), so that "holds" never reads wider than it is. Bounds and reduced
// widths stay in `approximations`. Text in proofs/scope.cpp, one table for every mechanism.
struct Scope {
  std::vector<std::string> covers;
  std::vector<std::string> omits;
  nlohmann::ordered_json json() const { return {{"covers", covers}, {"omits", omits}}; }
};

// A command line that replays a counterexample with the kacct CLI.
struct Replay {
  std::string line;       // "kacct check --cpu x86-64 --config 6.12-tick-hz1000 FILE"
  std::string invariant;  // what it reports violated; empty: it reports none
  int exit = 0;           // its exit status
  std::string note;       // why this config (e.g. "a combination no release shipped")
  std::string ext;        // the file's extension: trace, psi, lts
  bool empty() const { return line.empty(); }
  // The line with FILE replaced by `file`.
  std::string with_file(const std::string& file) const {
    auto at = line.rfind("FILE");
    return at == std::string::npos ? line : line.substr(0, at) + file + line.substr(at + 4);
  }
  nlohmann::ordered_json json() const {
    return {{"line", line}, {"invariant", invariant}, {"exit", exit}, {"note", note}, {"ext", ext}};
  }
};

struct Result {
  std::string name;  // obligation or claim name
  Verdict verdict = Verdict::Error;
  std::string detail;                         // one or two sentences
  std::vector<std::string> approximations;    // abstractions, bounds, reduced widths used
  Scope scope;                                // set by prove() and validate() from the scope table
  std::optional<std::string> counterexample;  // kacct trace text (replays concretely)
  nlohmann::ordered_json inputs;              // the counterexample's raw values, when any
  // Violated: how the counterexample was replayed concretely ("concrete step": the symbolic
  // counterexample's pre-state through the same model step in the Concrete domain; "trace via
  // sim::run": a kacct trace through the simulator; ...). Empty: not replayed.
  std::string replay;
  // The kacct command that replays `counterexample` (its last argument, FILE, is the file it is
  // saved to), and what that command must report: the invariant it trips (empty: none, the
  // scenario only shows a difference) and its exit status. Empty: no CLI replay (inputs only).
  Replay command;
  // For a counterexample trace: the configuration it was judged on (`kacct list configs`; the
  // CPU is the trace's cpu line), from which validate() and prove() derive `command`.
  std::string replay_config;
  double seconds = 0;
  nlohmann::ordered_json json() const;
};
// A violated verdict stands only with a counterexample (text or inputs) that was replayed
// concretely; without, it becomes an error. Applied to every job and claim `prove` and
// `validate` return.
void require_replay(Result& r);
// A claim its mechanism's validator has no judge for (a name in arch/patches.hpp it does not
// know): an error verdict, never silently skipped.
Result unknown_claim(std::string_view claim);

struct ProveOptions {
  std::string model;  // "" = all; else "tick", "cputime_adjust", "division"
  unsigned timeout_ms = 30000;
};
// Every proof job generated from the table (arch/) for the selected model.
std::vector<Result> prove(const ProveOptions&);
std::vector<std::string> proof_models();
// The scope every job of a proof model shares (`kacct prove` prints it once per model); a job's
// own Result::scope may add to it.
Scope model_scope(std::string_view model);

struct PatchReport {
  std::string patch, title, before, after;
  std::vector<Result> claims;
  Verdict worst() const;
  nlohmann::ordered_json json() const;
};
struct ValidateOptions {
  std::vector<std::string> patches;  // "" = all in arch/patches.hpp; prefixes of >= 7 hex digits
  unsigned timeout_ms = 30000;
  unsigned threads = 1;  // patches judged in parallel (each Z3 query has its own context)
};
// Throws std::invalid_argument for an unknown patch id.
std::vector<PatchReport> validate(const ValidateOptions&);

}  // namespace kacct::proofs
