// What a native vtime run leaves besides the common RunResult fields (one alternative of
// sim::RunResult::backend).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model/native/native.hpp"

namespace kacct::model::native {

// Per CPU / per task, same indices as the common outputs.
struct NativeResult {
  std::vector<Scaled<Concrete>> task_scaled;  // utimescaled / stimescaled, ns
  std::vector<nlohmann::ordered_json> acct;   // cpu_accounting_data per context at the end
  std::vector<std::uint64_t> tb_elapsed;      // per CPU: TB ticks from boot to the last event
  std::vector<std::uint64_t> tb_flushed;      // per CPU: TB ticks handed to the generic sinks
  std::uint64_t flushes = 0;                  // bucket conversions (tb_to_ns calls at flush)
  // CPU hotplug (TB ticks): online time vtime_reset() at bring-up dropped (6.12.101+), offline
  // time the first delta after bring-up counted (before). Violations in check mode too.
  std::uint64_t hotplug_online_lost_tb = 0, hotplug_offline_tb = 0;
  Cost cost;  // operation counts of the whole run
  // Known kernel hazards the run reached (first occurrence of each): reported, not violations.
  struct Finding {
    std::string invariant;
    std::size_t event = 0;
    std::uint32_t line = 0;
    std::string detail;
  };
  std::vector<Finding> findings;
};

}  // namespace kacct::model::native
