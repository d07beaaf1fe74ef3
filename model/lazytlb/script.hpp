// The lazy-TLB event-script format (docs/models/lazy-tlb.md), its parser (errors with
// line:column), canonical writer and runner (checks every invariant after every event).
// The explorer is in explore.hpp, the seed scenario in seed.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/lazytlb/lazytlb.hpp"
#include "spec/lazytlb.hpp"

namespace kacct::lazytlb {

struct Script {
  Sizes sizes;
  Arch arch = Arch::Generic;
  arch::KVersion version = arch::v(6, 12);
  bool debug_shoot_lazies = false;
  std::vector<std::string> mutants;  // "no-lazy-grab", "shoot-skip-cpu", "clear-wrong-cpu"
  std::vector<Event> events;
  std::vector<std::uint32_t> lines;  // source line of each event (0 when generated)
  Cfg cfg() const;                   // config_for(arch, version) + flags
};
inline const std::vector<std::string_view> kMutants = {"no-lazy-grab", "shoot-skip-cpu", "clear-wrong-cpu"};
bool apply_mutant(Cfg&, std::string_view name);

struct ParseError {
  std::uint32_t line = 0, col = 0;
  std::string message;
  std::string str() const { return std::to_string(line) + ":" + std::to_string(col) + ": " + message; }
};
struct Parsed {
  std::optional<Script> script;
  std::optional<ParseError> error;
};
// Never throws on bad input: the first problem comes back with its line and column. Size limits:
// 1..kMaxCpus CPUs, 1..64 tasks, 1..16 mms, 1,000,000 events.
Parsed parse_script(std::string_view text);
// Canonical text: parse(write(s)) == s (lines aside).
std::string write_script(const Script&);

struct RunResult {
  Costs costs;
  std::size_t steps = 0;                        // events run
  std::optional<std::size_t> failed_at;         // index of the event that failed
  std::vector<spec::Violation> violations;      // at failed_at: invariants and obligations
  std::string not_enabled;                      // at failed_at: why the event cannot happen
  World<Concrete> world;                        // the final (or failing) state
  int max_zombies = 0;                          // most mms kept alive only by lazy refs at once
  std::size_t zombie_steps = 0;                 // events after which some zombie mm existed
};
// Runs the script from initial(sizes), checking every invariant after every event.
RunResult run_script(const Script&);

// One event run with its obligations and invariants checked; false (and `bad`) if any failed.
bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  std::vector<spec::Violation>& bad);

}  // namespace kacct::lazytlb
