// What a gen vtime run leaves besides the common RunResult fields (one alternative of
// sim::RunResult::backend).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "model/gen/gen.hpp"

namespace kacct::model {

struct GenResult {
  std::vector<VtimeTask<Concrete>> vtime;  // per task (same indices as Program::tasks)
  std::vector<VtimeCtl> ctl;
  std::vector<VtimeCpu<Concrete>> vcpu;  // per CPU ghost: consumed, lost in switch gaps
  GenCost cost;
  std::uint64_t switches = 0;            // vtime context switches on nohz_full CPUs
  std::uint64_t exit_lost = 0;           // residues of dead tasks never flushed (ns)
  std::uint64_t exit_unseen = 0;         // residues a dead task's group never saw (ns)
  std::uint64_t fork_inherited = 0;      // parents' residues copied into children at fork (ns, counted twice)
  std::vector<std::uint64_t> inherited;  // per task: the residues it got from its parent (part of its `consumed`)
  std::string fork_finding;              // the first fork that copied residues (kernel finding, not a violation)
  std::uint32_t fork_line = 0;           // its trace line
  // CPU hotplug on nohz_full CPUs (ns): idle time before a CPU died that vtime_init_idle() at its
  // bring-up dropped (< 5.14), and offline time the first idle flush after bring-up counted as
  // idle (5.14+). Each is also a violation in check mode (gen_vtime.hotplug_*).
  std::uint64_t hotplug_online_dropped = 0, hotplug_offline_as_idle = 0;
  // Readers that went backwards (check mode): task_cputime() of a task, kcpustat of a CPU.
  std::uint64_t task_view_backwards = 0, kcpustat_backwards = 0;
  std::uint64_t max_task_view_drop = 0, max_kcpustat_drop = 0;  // largest drop seen (ns)
  std::string first_backwards;                                  // "line N: ..." of the first drop
  struct ProcStat {  // /proc/stat as a reader at a Read event sees it (kcpustat_cpu_fetch per CPU)
    std::uint64_t ts = 0;
    std::vector<std::array<std::uint64_t, NR_STATS>> cpus;
  };
  std::vector<ProcStat> procstat;
};

}  // namespace kacct::model
