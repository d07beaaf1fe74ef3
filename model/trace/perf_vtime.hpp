// Gen vtime from kprobes (tools/record-qemu/probes.sh): the kernel's own clock values.
// Each probe on vtime_user_exit / vtime_user_enter / vtime_task_switch_generic records the
// task's `struct vtime` and cputime fields on entry, i.e. the state left by the task's previous
// transition: its starttime is the sched_clock() value that transition read (6.1
// kernel/sched/cputime.c: get_vtime_delta() moves starttime to the clock it read). So the clock
// of every transition is known exactly once the same task probes again. docs/conformance.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/trace/perf.hpp"

namespace kacct::trace::perf::vtime {

enum class Probe : std::uint8_t { None, UserExit, UserEnter, Switch, CputimeAdjust, BacctAddTsk };
Probe probe_of(std::string_view event);

// enum vtime_state (6.1 include/linux/sched.h).
inline constexpr std::uint64_t kInactive = 0, kIdle = 1, kSys = 2, kUser = 3, kGuest = 4;

// A task probe's fields (pid = the task the probe's argument points to: for the switch probe
// that is prev, while the sample's tid is already next).
struct TaskFields {
  std::uint64_t pid = 0, st = 0, vs = 0, vu = 0, vst = 0, tu = 0, ts = 0, rt = 0;
  std::optional<std::uint64_t> off;  // x86: __sched_clock_offset
  // task_cputime() of this task in state SYS at its starttime (6.1 reader: the user residue is
  // not added outside state USER).
  std::uint64_t utime_sys() const { return tu; }
  std::uint64_t stime_sys() const { return ts + vst; }
};
std::optional<TaskFields> task_fields(std::string_view text);
// cputime_adjust(curr, prev, ...) probe: the raw task_cputime a reader adjusts.
struct AdjustFields {
  std::uint64_t cs = 0, cu = 0, cr = 0, pu = 0, ps = 0;
};
std::optional<AdjustFields> adjust_fields(std::string_view text);

// What the probes say about each record (indices into the record vector). Clocks are in perf's
// clock domain (sched_clock + offset).
struct Annotations {
  std::uint64_t offset = 0;  // perf clock - sched_clock (mod 2^64)
  bool offset_varies = false;
  std::vector<std::uint32_t> cpus;                                  // CPUs with vtime probes (nohz_full)
  std::unordered_map<std::size_t, TaskFields> task;                 // probe index -> fields
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> seq;  // pid -> its probe indices, in order
  // Probe index -> the clock of the transition it starts (user exit / user enter), when the
  // task probes again.
  std::unordered_map<std::size_t, std::uint64_t> clock;
  // Probe index -> the task's task_cputime() {utime, stime} right after that transition
  // (for the switch probe: right after prev's flush), from its next probe.
  std::unordered_map<std::size_t, std::array<std::uint64_t, 2>> expect;
  struct Switch {
    std::size_t probe = 0;                // the vtime_task_switch probe that follows
    std::optional<std::uint64_t> c1, c2;  // prev's flush clock, next's starttime
  };
  std::unordered_map<std::size_t, Switch> switches;  // sched_switch index -> clocks

  // The fields of `pid`'s first probe after record i, or its last before when `before`.
  const TaskFields* after(std::uint64_t pid, std::size_t i) const;
  const TaskFields* before(std::uint64_t pid, std::size_t i) const;
  std::optional<std::size_t> index_after(std::uint64_t pid, std::size_t i) const;
};
Annotations annotate(const std::vector<Record>&, std::uint64_t nr_wait4);  // wait4's syscall number

}  // namespace kacct::trace::perf::vtime
