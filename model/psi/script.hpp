// PSI event scripts (docs/models/psi-irq.md): the cgroup tree, tasks, and the events of
// several CPUs with their rq locks -- what the accounting trace format cannot express.
// The format on the script runtime (model/script: errors at line:column, canonical writer,
// parse(write(s)) == s), and a runner that drives model/psi concretely, checks spec/psi.hpp
// after every event and counts costs.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/psi/psi.hpp"
#include "model/script/script.hpp"
#include "spec/psi.hpp"

namespace kacct::model::psi {

enum class Ev : std::uint8_t {
  Wait,
  IrqEnter,
  IrqExit,
  Irq,
  Tick,
  Schedule,
  ClockGettime,
  Wakeup,
  Move,
  Pressure,
  RaceTickMove
};
struct Event {
  Ev kind = Ev::Wait;
  std::uint64_t a = 0, b = 0, c = 0, by = 0;  // operands, by kind (see the grammar in script.cpp)
  bool soft = false;                          // irq: softirq instead of hardirq
  bool operator==(const Event&) const = default;
};
struct Script {
  std::optional<arch::KVersion> version;
  std::optional<bool> irqtime;
  std::optional<Variant> variant;
  int cpus = 1;
  std::vector<int> parent{-1};              // group 0 = root
  std::vector<int> task_group;              // task i+1's initial group
  std::vector<Event> events;                // repeat blocks expanded
  std::vector<std::uint32_t> lines;         // source line of each event (empty when built in code)
  bool operator==(const Script& o) const {  // the program, not where it came from
    return version == o.version && irqtime == o.irqtime && variant == o.variant && cpus == o.cpus &&
           parent == o.parent && task_group == o.task_group && events == o.events;
  }
};

inline constexpr std::size_t kMaxEvents = 1'000'000;
inline constexpr int kMaxCpus = 16, kMaxGroups = 64, kMaxTasks = 256;

// Never throws on bad input: the first problem comes back with its line and column.
// `max_events`: the limit after repeat blocks are expanded.
script::Result<Script> parse_script(std::string_view text, std::size_t max_events = kMaxEvents);
std::string write_script(const Script&);
std::string_view event_name(Ev);

// The script's config over a default (the script's own lines win unless `override`).
PsiCfg script_cfg(const Script&, PsiCfg base = {});

struct KindCosts {
  std::uint64_t calls = 0;
  Costs costs;
};
struct RunResult : script::RunStatus {  // steps, failed_at (the violating event), its line, error
  std::optional<spec::psi::Violation> violation;
  std::map<std::string, KindCosts> per_kind;  // by event name
  World<Concrete> world;
  std::vector<std::uint64_t> accrued, charged;  // per CPU
  std::uint64_t max_pending = 0;
  std::uint64_t idle_irq_charged = 0;  // irq time that ran while a CPU idled, charged to a task's group
  std::string idle_irq_finding;        // the first such charge
  nlohmann::ordered_json json(const PsiCfg&) const;
};
// Runs the script. An event that cannot happen (a task on two CPUs, irq_exit outside an irq,
// ...) stops the run with `error` at its line. With check, stops at the first violated invariant.
// `incremental` false: every event judged in full (spec::psi::Checker; the same verdicts).
RunResult run_script(const Script&, const PsiCfg&, bool check = true, bool incremental = true);

// The shipped seed scenario (test/psi/seed.psi): one CPU, a task in a 3-level cgroup path
// calling clock_gettime(CLOCK_THREAD_CPUTIME_ID) in a loop at 243 ns per call, HZ=250.
std::string seed_script_text(unsigned calls_per_tick = 1000, unsigned ticks = 4);

}  // namespace kacct::model::psi
