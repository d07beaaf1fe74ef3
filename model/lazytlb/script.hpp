// The lazy-TLB event-script format (docs/models/lazy-tlb.md), its parser (errors with
// line:column), canonical writer, runner (checks every invariant after every event),
// bounded exhaustive explorer and the seed scenario generator.
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

struct ExploreOptions {
  Script header;  // sizes, arch, version, flags, mutants (its events are ignored)
  std::size_t max_states = 2'000'000;  // stop (truncated = true) beyond this many states
};
struct ExploreResult {
  std::size_t states = 0, transitions = 0, depth = 0;  // depth: longest shortest path (BFS levels)
  bool truncated = false;
  std::size_t zombie_states = 0;     // states with an mm kept alive only by lazy references
  std::size_t frees = 0;             // transitions that freed an mm
  std::uint64_t max_ipis_step = 0;   // most IPIs one event sent
  std::optional<spec::Violation> violation;
  std::optional<Script> counterexample;  // shortest event script to the violation (replays)
  std::vector<World<Concrete>> sample;   // with keep_states: every visited state, in BFS order
};
// Breadth-first over every event enabled in every reachable state (fork/exec use the lowest
// free slot; outside holders are bounded at one mmget and one mmgrab per mm).
ExploreResult explore(const ExploreOptions&, bool keep_states = false);
// Every event that could be tried in w (enabled or not is decided by not_enabled()).
std::vector<Event> candidate_events(const World<Concrete>& w, const Cfg& cfg);

// The seed scenario: N CPUs, one process with N threads, each thread leaves its CPU for idle and
// comes back `rounds` times, then the process exits. `loop_begin/loop_end` delimit the loop.
struct Seed {
  Script script;
  std::size_t loop_begin = 0, loop_end = 0;
};
Seed seed_scenario(int ncpus, int rounds, Arch arch, arch::KVersion ver);

}  // namespace kacct::lazytlb
