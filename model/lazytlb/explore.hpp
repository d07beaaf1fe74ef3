// The bounded exhaustive explorer of the lazy-TLB model: every event enabled in every reachable
// state of a small world, each checked; a violation comes back as the shortest event script.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/lazytlb/script.hpp"

namespace kacct::model::lazytlb {

struct ExploreOptions {
  Script header;                       // sizes, arch, version, flags, mutants (its events are ignored)
  std::size_t max_states = 2'000'000;  // stop (truncated = true) beyond this many states
  bool hotplug = false;                // CPUs other than 0 go offline and come back (CLI, proofs: on)
  int max_offline = 1;                 // at most this many CPUs not online at once
  bool stop_at_violation = true;       // false: note the first violation, explore the rest
  // Stop once max_states states are kept (truncated): the same states as without (BFS keeps the
  // first ones it meets), but the transitions out of those not yet expanded are not checked. For
  // callers that want a sample of reachable states, not a verdict.
  bool stop_when_full = false;
  // Keep one state per class of states equal up to renaming CPUs other than 0, ordinary task
  // slots and mm slots (the model treats them alike; with mutants that single out a CPU by its
  // number, CPUs are not renamed). States, transitions and zombie states then count classes.
  bool symmetry = false;
  // Called every progress_every expanded states with (states, expanded, depth): the CLI's
  // states/s line. The explorer keeps no clock itself.
  std::function<void(std::size_t states, std::size_t expanded, std::size_t depth)> progress;
  std::size_t progress_every = 50'000;
};
struct ExploreResult {
  std::size_t states = 0, transitions = 0, depth = 0;  // depth: longest shortest path (BFS levels)
  bool truncated = false;
  std::size_t zombie_states = 0;    // states with an mm kept alive only by lazy references
  std::size_t frees = 0;            // transitions that freed an mm
  std::uint64_t max_ipis_step = 0;  // most IPIs one event sent
  std::optional<spec::lazytlb::Violation> violation;
  std::optional<Script> counterexample;  // shortest event script to the violation (replays; `violation`
                                         // is what its last event shows)
  std::vector<World<Concrete>> sample;   // with keep_states: every visited state (with symmetry, its
                                         // class's representative), in BFS order
};
// Breadth-first over every event enabled in every reachable state (fork/exec use the lowest
// free slot; outside holders are bounded at one mmget and one mmgrab per mm; with hotplug, any
// CPU but 0 goes offline, dies and comes back, at most max_offline of them out at once).
ExploreResult explore(const ExploreOptions&, bool keep_states = false);
// Every event that could be tried in w (enabled or not is decided by not_enabled()); hotplug
// events only when asked.
std::vector<Event> candidate_events(const World<Concrete>& w, const Cfg& cfg, bool hotplug = false,
                                    int max_offline = 1);
// The same into `out` (cleared first): a caller asking at every step (fuzz_lazytlb) reuses one
// buffer instead of growing a new vector each time.
void candidate_events_into(std::vector<Event>& out, const World<Concrete>& w, const Cfg& cfg, bool hotplug = false,
                           int max_offline = 1);
// The explorer's state key: exact (state_key) or the least key over every renaming that keeps
// the signature order of CPUs, tasks and mms (canonical_key; equal exactly for states that are
// renamings of each other). rename_cpus = false keeps CPU numbers.
std::string state_key(const World<Concrete>& w);
std::string canonical_key(const World<Concrete>& w, bool rename_cpus = true);
// Whether a configuration's step treats CPUs other than 0 alike (a mutant may not).
bool cpus_symmetric(const Cfg& cfg);

}  // namespace kacct::model::lazytlb
