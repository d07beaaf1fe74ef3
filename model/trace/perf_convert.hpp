// The perf-script converter's state, shared by its two halves: model/trace/perf.cpp (plain
// perf script: one handler per tracepoint) and model/trace/perf_vtime.cpp (the gen vtime kprobe
// overlay). Internal to kacct_trace.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/trace/perf.hpp"
#include "model/trace/perf_vtime.hpp"
#include "model/trace/tracker.hpp"

namespace kacct::trace::perf::detail {

// The conversion state: a Tracker that every emitted event must satisfy, and the repairs that
// keep the trace consistent with what perf recorded when perf lost or did not record events.
class Converter {
 public:
  Converter(const std::vector<Record>& recs, const Options& o) : recs_(recs), o_(o) {}
  Conversion run();

  using Handler = void (Converter::*)(const Record&);

 private:
  struct Info {
    std::string comm;
    std::uint64_t tgid = 0;
    bool user_evidence = false;
    bool forked = false;
    bool state_known = false;  // declared with the counters and vtime residues of its first probe
  };

  // ---- perf.cpp: the plain perf-script path ----
  void declare();
  static int chain_says_user(const Record&);
  void repair(const char* what, const Record&);
  void bad(const Record&, const char* expected);
  bool emit(Event e, const Record& r) { return emit_at(std::move(e), r, r.ts); }
  bool emit_at(Event, const Record&, std::uint64_t t);
  static Event ev(Kind k, std::uint32_t cpu) {
    Event e;
    e.kind = k;
    e.cpu = cpu;
    return e;
  }
  const CpuContext& cpu(std::uint32_t c) const { return tr_->cpu(c); }
  std::size_t index(const Record& r) const { return std::size_t(&r - recs_.data()); }
  void to_process_context(std::uint32_t c, const Record&);
  bool set_mode(std::uint32_t c, Mode, const Record&, const char* why);
  void switch_out(std::uint32_t c, std::uint64_t next, const Record&);
  bool make_runnable(std::uint64_t tid, std::uint32_t c, const Record&);
  bool ensure_current(std::uint32_t c, std::uint64_t tid, const Record&);
  void final_exit(std::uint32_t c, const Record&);
  bool final_switch_follows(const Record&) const;
  bool tick_in_runtime_update_follows(const Record&) const;
  static std::optional<std::uint64_t> syscall_nr(const Record&);
  void syscall_marker(std::uint64_t tid, std::uint64_t nr);
  std::vector<const ReadSpec*> specs(std::uint64_t marker) const;
  void syscall_read_enter(const Record&, std::uint64_t nr);
  void syscall_read_exit(const Record&);
  void children_at_sys_exit(const Record&);
  void syscall_read_runtime(const Record&, std::uint64_t pid);
  void place_syscall_read(Stats::SyscallSeen&, const Record&);
  bool emit_read(const ReadSpec&, std::uint64_t id, const Record&, std::uint64_t t);

  // Dispatch (perf.cpp: the table from event name to handler).
  void record(const Record&);
  void used(const Record&);
  void on_lost(const Record&);
  void on_switch(const Record&);
  void on_sys_enter(const Record&);
  void on_sys_exit(const Record&);
  void on_irq_entry(const Record&);
  void on_irq_exit(const Record&);
  void on_softirq_entry(const Record&);
  void on_softirq_exit(const Record&);
  void on_local_timer_entry(const Record&);
  void on_hrtimer_expire_entry(const Record&);
  void on_stat_runtime(const Record&);
  void on_process_fork(const Record&);
  void emit_fork(const Record& fork, std::uint32_t c, std::uint64_t t);
  void on_process_exit(const Record&);
  void on_wakeup(const Record&);
  void on_tick_steal(const Record&);

  // Tick steal (Stats::TickSteal): steal for each CPU's next ticks, fed as `steal` events.
  void steal_setup();
  void feed_steal(const Record&);
  bool is_tick(const Record&) const;
  void tick_steal_done(const Record&);
  void on_ignored(const Record&);
  void on_unknown(const Record&);

  // ---- perf_vtime.cpp: gen vtime from kprobes ----
  bool vcpu(std::uint32_t c) const { return probes_ && std::binary_search(ann_.cpus.begin(), ann_.cpus.end(), c); }
  void vtime_setup();
  void vtime_declare(TaskDecl&, Info&) const;
  void on_kprobe(const Record&);
  std::uint64_t vtime_switch(const Record&, Event& e);
  bool vtime_hold_runtime(const Event&, const Record&);
  bool vtime_clock_read(const Event&, const Record&);
  void flush_deferred(std::uint64_t tid, const Record&, std::uint64_t t, std::uint64_t upto = ~std::uint64_t{0});
  void vtime_arrive(std::uint64_t tid, const Record&);
  void checkpoint(const Record&, std::size_t i, std::uint64_t t);
  void runtime_check(const Record&, std::size_t i);
  void vtime_probe(const Record&, vtime::Probe);
  void read_probe(const Record&, vtime::Probe);
  void vtime_sys_exit(const Record&);
  void vtime_syscall_read_enter(const Record&);
  void syscall_read_emitted(std::uint64_t id);
  void vtime_fork_before_switch(const Record& sw, std::uint64_t prev);
  void vtime_restore_before_switch(const Record& sw, std::uint64_t prev);

  const std::vector<Record>& recs_;
  const Options& o_;
  Conversion conv_;
  Tracker* tr_ = nullptr;
  std::map<std::uint64_t, Info> info_;
  std::set<std::uint64_t> seen_before_fork_;
  std::set<std::uint64_t> exiting_;  // sched_process_exit seen, counters not yet folded
  std::unordered_map<std::uint64_t, std::uint64_t> marker_, in_read_;
  std::unordered_map<std::uint32_t, int> timer_mode_;
  std::unordered_map<std::uint32_t, int> tick_user_;  // cpu -> its next tick's mode from kacct:tick_steal user=
  std::uint64_t last_ts_ = 0;
  std::set<std::uint64_t> read_done_;  // tids whose current marked read was emitted
  // Recorder-found reads: (tid, nr, seq) -> index in Options::syscall_reads; per (tid, nr) the
  // syscalls seen; per tid the syscall in progress (index in Stats::cputime_syscalls, or -1).
  std::map<std::array<std::uint64_t, 3>, std::size_t> syscall_read_index_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> syscall_seq_;
  std::set<std::uint64_t> in_syscall_;                         // tids between a sys_enter and its sys_exit
  std::unordered_map<std::uint64_t, std::size_t> early_read_;  // tid -> its read placed at its runtime update
  std::set<std::uint32_t> after_tick_;                         // cpus whose last event was the tick
  std::string last_drop_;                                      // the tracker's reason for the last event dropped
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, long>> syscall_open_;  // tid -> {nr, seen}
  std::set<std::uint64_t> arrived_;    // tasks the model has seen switched in
  std::set<std::size_t> early_forks_;  // sched_process_fork records already emitted at a switch before them
  // gen vtime probes
  vtime::Annotations ann_;
  bool probes_ = false;
  std::unordered_map<std::uint64_t, std::vector<std::pair<Event, std::uint64_t>>>
      deferred_;  // runtime events held in a read
  // Recorder-found reads on a probed CPU, read like marked ones (in_read_ holds their id):
  // id -> the read, and its entry in Stats::cputime_syscalls.
  std::unordered_map<std::uint64_t, std::pair<ReadSpec, std::size_t>> vtime_syscall_reads_;
  std::unordered_map<std::uint64_t, std::size_t> foreign_pending_;  // tid -> its read of another process
  std::unordered_map<std::uint64_t, std::pair<const ReadSpec*, std::size_t>>
      upper_;                                                            // tid -> bounds read waiting for its exit
  std::unordered_map<std::uint64_t, std::uint64_t> rt_seen_, rt_since_;  // tid -> probe's rt, runtime events since
  // tick steal: per CPU, the steal of its ticks in order
  struct TickStealIn {
    std::size_t tick = 0;            // record index of the tick
    std::uint64_t ns = 0, left = 0;  // the kernel's, and what is still to be fed
    bool known = false;              // a kacct:tick_steal record names it
  };
  std::unordered_map<std::uint32_t, std::vector<TickStealIn>> steal_q_;
  std::unordered_map<std::uint32_t, std::size_t> steal_next_;       // cpu -> position in steal_q_
  std::set<std::uint32_t> steal_overfed_;                           // cpus whose fed steal a dropped tick left pending
  std::unordered_map<std::uint64_t, std::uint64_t> steal_unknown_;  // tgid -> its ticks with unknown steal
};

}  // namespace kacct::trace::perf::detail
