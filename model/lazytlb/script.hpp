// The lazy-TLB event-script format (docs/models/lazy-tlb.md) on the script runtime
// (model/script): parser, canonical writer, and the runner that checks every invariant after
// every event.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/lazytlb/lazytlb.hpp"
#include "model/script/script.hpp"
#include "spec/lazytlb.hpp"

namespace kacct::model::lazytlb {

struct Script {
  Sizes sizes;
  Arch arch = Arch::Generic;
  arch::KVersion version = arch::v(6, 12);
  bool debug_shoot_lazies = false;
  std::vector<std::string> mutants;  // kMutants
  std::vector<Event> events;
  std::vector<std::uint32_t> lines;         // source line of each event (empty when generated)
  Cfg cfg() const;                          // config_for(arch, version) + flags
  bool operator==(const Script& o) const {  // the program, not where it came from
    return sizes == o.sizes && arch == o.arch && version == o.version && debug_shoot_lazies == o.debug_shoot_lazies &&
           mutants == o.mutants && events == o.events;
  }
};
inline constexpr std::string_view kMutants[] = {"no-lazy-grab",     "shoot-skip-cpu", "clear-wrong-cpu",
                                                "no-force-init-mm", "dead-no-drop",   "offline-clear-all"};
bool apply_mutant(Cfg&, std::string_view name);

inline constexpr std::size_t kMaxEvents = 1'000'000;
// Never throws on bad input: the first problem comes back with its line and column. Size limits:
// 1..kMaxCpus CPUs, 1..64 tasks, 1..16 mms, kMaxEvents events (repeat blocks expanded).
script::Result<Script> parse_script(std::string_view text);
// Canonical text: parse(write(s)) == s (lines aside).
std::string write_script(const Script&);

struct RunResult : script::RunStatus {  // steps, failed_at, its line, error (event not enabled)
  Costs costs;
  std::vector<spec::lazytlb::Violation> violations;  // at failed_at: invariants and obligations
  World<Concrete> world;                             // the final (or failing) state
  int max_zombies = 0;                               // most mms kept alive only by lazy refs at once
  std::size_t zombie_steps = 0;                      // events after which some zombie mm existed
};
// Runs the script from initial(sizes), checking every invariant after every event.
RunResult run_script(const Script&);

// One event run with its obligations and invariants checked; false (and `bad`) if any failed.
bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  std::vector<spec::lazytlb::Violation>& bad);
// The step with its obligations and what the step itself did (the log: own-bit rule, kernel
// WARNs) checked, not the invariants of the state it reaches: the explorer judges each new state
// once (with checked_step) instead of after every transition. false if any of those failed. The
// log lists the records the step wrote (the explorer puts back only those).
bool transition_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                     std::vector<spec::lazytlb::Violation>& bad);
// The same, judged by `checker` (which has judged w before this event): the same verdicts at the
// cost of what the event wrote.
bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  spec::lazytlb::Checker& checker, std::vector<spec::lazytlb::Violation>& bad);

}  // namespace kacct::model::lazytlb
