// Ground truth: the exact time every CPU and task spent in each state,
// computed directly from the trace (rules in docs/trace-format.md).
#pragma once

#include <array>
#include <map>

#include "model/trace/tracker.hpp"

namespace kacct::trace {

// Same order as the kernel's enum cpu_usage_stat.
enum class Bucket : uint8_t {
  User,
  Nice,
  System,
  Softirq,
  Irq,
  Idle,
  Iowait,
  Steal,
  Guest,
  GuestNice,
  Count,
};
inline constexpr size_t kBuckets = size_t(Bucket::Count);
std::string_view name(Bucket);  // "user", "nice", ..., "guest_nice"

// Time a task was current, split by the CPU context at the time.
struct TaskTruth {
  uint64_t user = 0, system = 0, guest = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t total() const { return user + system + guest + irq + softirq + steal; }
  bool operator==(const TaskTruth&) const = default;
};

struct Ledger {
  uint64_t end_ts = 0;                              // every CPU is charged up to here
  std::vector<std::array<uint64_t, kBuckets>> cpu;  // [cpu][bucket]
  std::map<uint64_t, TaskTruth> task;               // declared/forked tasks; idle tasks excluded
  // [cpu]: ns between cpu_offline and cpu_online (in no bucket): per CPU, the buckets plus
  // this sum to end_ts.
  std::vector<uint64_t> offline;
  uint64_t at(uint32_t c, Bucket b) const { return cpu.at(c)[size_t(b)]; }
  bool operator==(const Ledger&) const = default;
};

// Incremental ground truth, for drivers that compare at `read` events.
class Accountant {
 public:
  explicit Accountant(const Header&);
  std::optional<Error> apply(const Event&);  // validates via Tracker, then charges
  // Ledger with every CPU charged up to ts (ts >= tracker().now()).
  Ledger snapshot(uint64_t ts) const;
  const Tracker& tracker() const { return tracker_; }

 private:
  // Charges dt ns of CPU c in context ctx (steal of it to Steal).
  void charge(Ledger&, uint32_t c, const CpuContext& ctx, uint64_t dt, uint64_t steal) const;
  Tracker tracker_;
  Ledger charged_;  // each CPU charged up to its own last_ts
};

// Validates and returns the ledger with every CPU charged up to the last
// event's ts (0 for an empty trace).
Result<Ledger> ground_truth(const Trace&);

}  // namespace kacct::trace
