// The perf-script converter's state, shared by its two halves: model/trace/perf.cpp (plain
// perf script: one handler per tracepoint) and model/trace/perf_vtime.cpp (the gen vtime kprobe
// overlay). Internal to kacct_trace.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/trace/perf.hpp"
#include "model/trace/perf_vtime.hpp"
#include "model/trace/tracker.hpp"

namespace kacct::trace::perf::detail {

struct Fail {
  Error e;
};
[[noreturn]] void fail(std::uint32_t line, std::size_t col, std::string msg);

// The sample parser over text given in pieces: lines split across pieces are joined, and a
// sample's callchain frames (the lines after it) are gathered before it is given out.
class ScriptReader {
 public:
  explicit ScriptReader(const Source& src) : src_(src) {}
  // The next sample into r (its strings' storage is reused); false at the end. Throws Fail.
  bool next(Record& r);
  std::uint64_t newlines() const { return newlines_; }
  std::size_t bytes() const { return bytes_; }

 private:
  bool line(std::string_view& s);  // the next line without its '\n'; false at the end
  void take(std::string_view s);   // one line: a sample header or a frame of the pending one
  const Source& src_;
  std::string_view piece_;
  std::string carry_;  // a line's start from an earlier piece
  bool end_ = false, pending_ = false, carry_used_ = false;
  Record rec_;  // the sample whose frames are being read
  std::uint32_t line_ = 0;
  std::uint64_t newlines_ = 0;
  std::size_t bytes_ = 0;
  std::unordered_map<std::uint32_t, std::uint64_t> last_ts_;  // cpu -> its last sample's time
};

// perf script can print a stretch of samples twice: two samples on one CPU with the same
// timestamp, task, event, fields and chain are one event (the first is kept).
// The first pass finds them (keeping the samples at each CPU's last timestamp, moved, not
// copied); the later passes skip the samples it found, by their position.
class Dedup {
 public:
  bool dup(const Record& r) const;
  void keep(Record& r);  // remembers r, taking its storage (r is left with storage to reuse)

 private:
  struct Cpu {
    std::vector<Record> at;  // the samples at its last timestamp (storage reused)
    std::size_t n = 0;
  };
  std::unordered_map<std::uint32_t, Cpu> cpus_;
};

// The records a streamed conversion can still look at: from the current one to as far as its
// look-ahead reached. Records keep their addresses while they are in the window.
class Window {
 public:
  // dups: the positions (among all samples) of the duplicates, in order.
  Window(const Source& src, const std::vector<std::uint64_t>& dups) : rd_(src), dups_(dups) {}
  const Record* at(std::size_t i);  // record i (after duplicates are dropped); nullptr past the end
  void drop_before(std::size_t i);  // records before i are no longer looked at
  std::size_t held_max() const { return cap_; }

 private:
  ScriptReader rd_;
  const std::vector<std::uint64_t>& dups_;
  std::size_t dup_next_ = 0;
  std::uint64_t raw_ = 0;  // samples read
  std::vector<std::unique_ptr<Record>> ring_;
  std::size_t head_ = 0, size_ = 0, cap_ = 0;
  bool end_ = false;
};

// The conversion state: a Tracker that every emitted event must satisfy, and the repairs that
// keep the trace consistent with what perf recorded when perf lost or did not record events.
class Converter {
 public:
  Converter(const std::vector<Record>& recs, const Options& o) : recs_(recs), o_(o) {}
  // A streamed conversion: the first pass gave every record to declare_note() and steal_note().
  Converter(Window& w, const Options& o) : recs_(none_), win_(&w), o_(o) {}
  Conversion run();
  // Pass 1 of a streamed conversion, record by record (run() makes it over the whole vector).
  void declare_note(const Record&);
  void steal_note(const Record&);
  bool steal_wanted() const { return !steal_by_now_.empty(); }
  // A thread that pass 1 saw in two thread groups: no header can declare it (run() stops).
  const std::optional<Error>& task_error() const { return task_error_; }
  void steal_tick(const Record&, std::size_t i);  // with steal_wanted(): every tick, in order
  // Pass 2: the header, then each event as it is emitted (not kept in the Conversion).
  Conversion run_stream(const std::function<void(const Header&)>& on_header,
                        const std::function<void(const Event&)>& on_event,
                        const std::function<void(const Stats&)>& on_stats);

  using Handler = void (Converter::*)(const Record&);

 private:
  struct Info {
    std::string comm;
    std::uint64_t tgid = 0;
    bool tgid_shown = false;  // tgid from a sample's own pid/tid (else the tid, until one shows it)
    bool user_evidence = false;
    bool forked = false;
    bool state_known = false;  // declared with the counters and vtime residues of its first probe
  };

  // ---- perf.cpp: the plain perf-script path ----
  void declare();
  void declare_finish();
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
  // The index of the record being converted: every caller passes that one.
  std::size_t index(const Record&) const { return cur_; }
  const Record* rec(std::size_t i) const {
    if (win_) return win_->at(i);
    return i < recs_.size() ? &recs_[i] : nullptr;
  }
  std::size_t nevents() const { return sink_ ? emitted_ : conv_.trace.events.size(); }
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
  void wait_enter(const Record&, std::uint64_t nr);
  std::uint64_t only_reapable_child(std::uint64_t tid) const;
  bool group_dead(std::uint64_t pid) const;
  void syscall_read_runtime(const Record&, std::uint64_t pid);
  void place_syscall_read(Stats::SyscallSeen&, const Record&, bool upper = false);
  void bound_read_across_tick(const Record&);
  void read_before_tick(const Record&);
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

  static inline const std::vector<Record> none_{};
  const std::vector<Record>& recs_;  // whole mode; empty when streamed
  Window* win_ = nullptr;            // streamed mode
  const Options& o_;
  std::size_t cur_ = 0;
  const std::function<void(const Event&)>* sink_ = nullptr;  // streamed: where events go
  std::size_t emitted_ = 0;
  std::uint32_t maxcpu_ = 0;
  std::optional<Error> task_error_;
  bool first_ = true;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> steal_by_now_;  // {cpu, now} -> ns
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
  std::unordered_map<std::uint64_t, std::size_t> upper_read_;  // tid -> its read's upper twin, at sys_exit
  std::set<std::uint32_t> irq_time_pending_;                   // cpus: an irq ended since their last update
  std::set<std::uint64_t> may_stand_still_;                    // tids: their read began on such a cpu
  std::set<std::uint32_t> after_tick_;                         // cpus whose last event was the tick
  std::string last_drop_;                                      // the tracker's reason for the last event dropped
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, long>> syscall_open_;  // tid -> {nr, seen}
  // tid -> {nr, the first five arguments} of its wait4()/waitid() in progress
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::array<std::uint64_t, 5>>> wait_args_;
  std::unordered_map<std::uint64_t, std::uint64_t> last_exit_nr_;  // tid -> its last sys_exit's nr, until a sys_enter
  // Child processes forked in the trace and not yet reaped by their parent's group: child ->
  // the forking task's tgid (the waits that can reap it)
  std::map<std::uint64_t, std::uint64_t> unreaped_children_;
  std::set<std::uint64_t> unnamed_reaps_;  // processes that reaped a child the trace does not name
  std::set<std::uint64_t> arrived_;        // tasks the model has seen switched in
  std::set<std::size_t> early_forks_;      // sched_process_fork records already emitted at a switch before them
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
