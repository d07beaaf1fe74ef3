// Ingestion of `perf script` text (a real kernel's tracepoints) into a kacct trace.
// Spec and the facts it relies on: docs/perf.md. Pure: text in, trace and statistics out.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "arch/syscalls.hpp"
#include "model/trace/trace.hpp"

namespace kacct::trace::perf {

// A read the workload announced with the invalid syscall marker_base + marker just before it.
struct ReadSpec {
  ReadKind kind = ReadKind::ProcStat;
  std::uint64_t tid = 0;  // task_stat / thread_cputime / taskstats target; 0 = the marking thread
  std::uint64_t marker = 0;
};
// "proc_stat@3", "task_stat:1234@2", "rusage_self@1"; nullopt and a message on error.
std::optional<ReadSpec> parse_read_spec(std::string_view, std::string* error);

// A CPU-time read the traced program made, found by the recorder (tools/record-reads/) with no
// help from the program: the seq-th (1-based) syscall `nr` of thread `tid`. The read is placed
// at that syscall's sys_exit, like a marked read, or, when it brings the reader's runtime up to
// date, right after that update (docs/perf.md).
struct SyscallRead {
  std::uint64_t tid = 0, nr = 0, seq = 0;
  ReadKind kind{};
  std::uint64_t target = 0;  // the tid read (a thread group's leader for group reads); 0: the reader
  std::uint64_t id = 0;      // the read's id in the trace (kSyscallReadBase + index)
  // false: counted, but no read event: the kernel computed nothing the model keeps (no
  // cputime_adjust(), so no prev_cputime update), e.g. RUSAGE_CHILDREN or an EINVAL.
  bool place = true;
  // The read reports the reader's reaped children's times (signal->cutime/cstime):
  // getrusage(RUSAGE_CHILDREN), times(). Its sys_exit is located (SyscallSeen::exit_at).
  bool children = false;
};
// x86-64 syscall numbers of the CPU-time reads (arch::syscall_numbers(), the default).
inline constexpr arch::SyscallNumbers kSyscallsX86_64 = *arch::syscall_numbers(arch::Isa::X86_64);
inline constexpr std::uint64_t kNrRead = kSyscallsX86_64.read, kNrPread64 = kSyscallsX86_64.pread64,
                               kNrGetrusage = kSyscallsX86_64.getrusage, kNrTimes = kSyscallsX86_64.times,
                               kNrClockGettime = kSyscallsX86_64.clock_gettime;
// The waits that reap a child (wait_task_zombie()): wait4 returns its pid, waitid 0.
inline constexpr std::uint64_t kNrWait4 = kSyscallsX86_64.wait4, kNrWaitid = kSyscallsX86_64.waitid;
// getrusage(), times(), or clock_gettime() on a CPU-time clock (CLOCK_PROCESS/THREAD_CPUTIME_ID
// or a clock id made from a pid), from the syscall number and its first argument.
bool is_cputime_syscall(std::uint64_t nr, std::uint64_t arg0, const arch::SyscallNumbers& s = kSyscallsX86_64);

struct Options {
  // Called every 8 MB of perf text parsed with (bytes done, bytes in all): the CLI's MB/s line.
  std::function<void(std::size_t done, std::size_t total)> progress;
  std::string cpu_model = "x86-64";
  // The trace's syscall numbers (the recorded reads and the reaps are found by them).
  arch::SyscallNumbers syscalls = kSyscallsX86_64;
  std::uint32_t ncpus = 0;  // 0: highest CPU seen + 1
  std::uint64_t marker_base = 100000;
  // hrtimer functions that are the scheduler tick (tick_nohz_handler from 6.10 on; before,
  // tick_sched_timer): only their expiries call update_process_times().
  std::vector<std::string> tick_functions = {"tick_nohz_handler", "tick_sched_timer"};
  std::vector<ReadSpec> reads;
  std::vector<SyscallRead> syscall_reads;
  // The threads the recorder followed: every CPU-time syscall of theirs in the trace is listed
  // in Stats::cputime_syscalls, so that one the recorder missed is found.
  std::set<std::uint64_t> read_tids;
  // Where an exiting task's times join its group (__exit_signal(), which no event marks): the
  // converter's inference, or either end of what the trace allows (sched_process_exit, or its
  // final switch with every runtime update before it). The two ends bound a group read.
  enum class ExitAt : std::uint8_t { Inferred, ProcessExit, FinalSwitch };
  ExitAt exit_at = ExitAt::Inferred;
  // Kernel function -> the [lo, hi) address ranges in it where a read had already sampled the
  // times (tools/record-qemu/read-sites.py of the recorded kernel's vmlinux; parse_read_sites).
  // A read with no runtime update of its own whose syscall a tick interrupted there is placed
  // before that tick; empty: at its sys_exit, after any tick inside it.
  std::map<std::string, std::vector<std::array<std::uint64_t, 2>>, std::less<>> read_sites;
};
// read-sites.py's text: "FUNCTION SAMPLER[,SAMPLER...] LO-HI [LO-HI...]" per line (hex, LO < HI),
// '#' comments and blank lines; a bad line is an error with its line and column.
Result<std::map<std::string, std::vector<std::array<std::uint64_t, 2>>, std::less<>>> parse_read_sites(
    std::string_view text);

// One `perf script` sample.
struct Record {
  std::uint32_t line = 0;
  std::string comm;
  std::optional<std::uint64_t> pid;  // thread group; only with -F pid,tid
  std::uint64_t tid = 0;
  bool tid_known = true;  // perf prints -1 for threads it lost track of
  std::uint32_t cpu = 0;
  std::uint64_t ts = 0;            // ns (perf's clock)
  std::string event;               // "sched:sched_switch"
  std::string fields;              // the tracepoint's text
  std::vector<std::string> chain;  // kernel callchain symbols, innermost first
  std::uint64_t irq_ip = 0;        // the interrupted frame's address (the frame after the first asm_ stub); 0: none
  std::uint32_t irq_frame = 0;     // its index in chain
  std::uint32_t cpu_col = 0, ts_col = 0, fields_col = 0;  // 1-based columns, for errors about their values
  std::uint32_t ids_col = 0;                              // of "pid/tid" (or "tid")
};
// Parses every sample; a line that is not a sample header or a callchain frame is an error
// with its line number and column, and so is a value no kernel prints: a CPU number of 4096 or
// more, a timestamp before the previous one on the same CPU, a sched_stat_runtime `runtime=` or
// a raw_syscalls `NR` that is not a decimal number below 2^63 (NR -1 stays: the kernel prints it).
Result<std::vector<Record>> parse_script(std::string_view text,
                                         const std::function<void(std::size_t, std::size_t)>& progress = {});

struct Stats {
  std::uint64_t lines = 0, records = 0, duplicates = 0;                    // duplicates: repeated samples dropped
  std::map<std::string, std::uint64_t> used;                               // events turned into trace events
  std::map<std::string, std::uint64_t> ignored;                            // known events the models do not need
  std::map<std::string, std::uint64_t> unknown;                            // skipped, by name
  std::uint64_t ticks_user = 0, ticks_kernel = 0, ticks_mode_unknown = 0;  // by callchain
  // Repairs: what the trace needed that perf did not record (lost or unrecorded events).
  std::map<std::string, std::uint64_t> repairs;
  std::uint64_t markers = 0, reads = 0, base_ns = 0;
  std::map<std::uint64_t, std::uint64_t> marker_ids;  // marker K (syscall marker_base+K) -> times seen
  std::uint64_t lost_events = 0, lost_records = 0;    // PERF_RECORD_LOST (perf script --show-lost-events)
  std::vector<std::uint64_t> lost_before_read;        // per emitted read, in order: lost_events so far
  std::map<std::uint64_t, std::array<std::uint64_t, 2>> task_ticks;  // tid -> {user, kernel} ticks emitted
  std::vector<std::string> notes;                                    // first few anomalies, with perf line numbers

  // Tick steal (tools/record-perf/steal.bt): a `kacct:tick_steal now=N steal=S` record names the
  // ns account_process_tick() took out of the tick hrtimer expiry with now=N on its CPU (the
  // kernel's rq->prev_steal_time across the expiry). It becomes `steal` events on that CPU
  // since its previous tick, at most the time between events each, so that the model's tick
  // takes out exactly S. Without such records steal is not known (0).
  struct TickSteal {
    std::uint64_t records = 0;                 // kacct:tick_steal records
    std::uint64_t ticks = 0, ticks_steal = 0;  // emitted ticks with a record; of them with S > 0
    // Emitted ticks with no record (in a trace that has records), or after a dropped tick whose
    // steal was already fed (the model's next tick would take both).
    std::uint64_t ticks_without = 0;
    std::uint64_t ns = 0, max_ns = 0;  // steal fed to the model (sum, largest one tick)
    // Steal that did not fit between the tick and the previous one on its CPU (the model's
    // tick then takes out less than the kernel's): reads of affected tasks may be off.
    std::uint64_t ticks_unplaced = 0, unplaced_ns = 0;
  } tick_steal;
  // Per emitted read, in order: emitted ticks whose steal was unknown or did not fit so far.
  std::vector<std::uint64_t> steal_unknown_before_read;

  // Gen vtime from kprobes (tools/record-qemu/probes.sh, model/trace/perf_vtime.hpp).
  struct Vtime {
    bool active = false;                                   // the trace has vtime probes: transitions come from them
    std::vector<std::uint32_t> cpus;                       // where they fired (nohz_full)
    std::uint64_t offset = 0;                              // perf clock - sched_clock
    std::uint64_t transitions = 0, transitions_exact = 0;  // user exit/enter, with the kernel's clock
    std::uint64_t switches = 0, switches_exact = 0;        // with both clocks (prev's flush, next's start)
    std::uint64_t clamped = 0, max_clamp_ns = 0;           // events moved later to keep time monotonic
    // se.sum_exec_runtime in the probes vs the runtime events: restored when perf dropped some,
    // excess when the events add up to more than the kernel's counter.
    std::uint64_t runtime_restored = 0, runtime_restored_ns = 0, runtime_excess = 0;
  } vtime;
  // Expected task_cputime() of the current task right at a transition, from the task's next
  // probe: the trace carries a `read kind=taskstats id=<id>` there (id >= kCheckpointBase).
  struct Checkpoint {
    std::uint64_t id = 0, tid = 0, utime = 0, stime = 0;  // ns
    std::uint32_t line = 0;                               // perf line of the probe
  };
  std::vector<Checkpoint> checkpoints;
  // How the kernel's clock at each marked read is known (vtime traces).
  struct ReadClock {
    std::uint64_t marker = 0, tid = 0;
    ReadKind kind{};
    std::string how;               // "inferred" (from cputime_adjust), "bounds" (lo/hi reads), "syscall_exit"
    std::uint64_t lo = 0, hi = 0;  // perf clock; equal when inferred
    bool raw = false;              // the cputime_adjust probe's inputs, when it fired
    std::uint64_t cs = 0, cu = 0, cr = 0, pu = 0, ps = 0;
    std::uint64_t model_utime_in = 0;  // the utime the probes' fields predict for cu (a check)
  };
  std::vector<ReadClock> read_clocks;
  // The syscalls of Options::read_tids that read CPU time (is_cputime_syscall) and those that
  // Options::syscall_reads names, in trace order.
  struct SyscallSeen {
    std::uint64_t tid = 0, nr = 0, seq = 0, arg0 = 0;
    std::uint32_t line = 0;  // perf line of the sys_enter
    std::uint64_t id = 0;    // the emitted read's id; 0: none (not requested, or not emitted)
    std::string why;         // requested but not emitted: the reason
    // Where its sys_exit is: the number of trace events before it (reads of the reaped
    // children's times are predicted there: nothing else changes them); nullopt: not seen.
    std::optional<std::uint64_t> exit_at;
  };
  std::vector<SyscallSeen> cputime_syscalls;
  // The successful waits (sys_exit of wait4 > 0, waitid == 0), which reap a child unless it was
  // a ptrace reap or a stop/continue report (the model tells: its group still lives): at the
  // number of trace events before the sys_exit. A waitid's child is not in the raw syscall's
  // result: its arguments name it (P_PID with WEXITED alone), or, with WEXITED alone and no pid,
  // it is the only child its process could reap then (a process forked in the trace), else
  // child 0 (unknown). A waitid without WEXITED or with WNOWAIT reaps nothing (counted in
  // waits_not_reaping; listed with may_reap false when it asked for a named child's rusage).
  struct Reap {
    std::uint64_t at = 0, reaper = 0, child = 0;
    std::uint64_t seq = 0;   // the reaper's seq-th call of that wait syscall (0: not counted)
    std::uint32_t line = 0;  // perf line of the sys_exit
    bool rusage = true;      // the wait asked for the child's rusage (true when its arguments are not known)
    bool may_reap = true;    // false: only the rusage of a child the wait could not reap
  };
  std::vector<Reap> reaps;
  std::uint64_t waits_not_reaping = 0;
  std::uint64_t repeated_sys_exits = 0;  // a sys_exit of the call the task's last sys_exit ended (no reap)
  // Group reads of another process (/proc/PID/stat of a child): the trace format's group reads
  // are of the reader's own process, so these are placed beside the trace, at the number of
  // trace events before them (thread_group_cputime_adjusted() of `target`'s process).
  struct ForeignRead {
    std::uint64_t at = 0, reader = 0, target = 0, id = 0;
  };
  std::vector<ForeignRead> foreign_reads;
};
inline constexpr std::uint64_t kCheckpointBase = std::uint64_t{1} << 40;
// A `bounds` read's upper twin has id marker + kUpperReadBit.
inline constexpr std::uint64_t kUpperReadBit = std::uint64_t{1} << 39;
// Reads found by the recorder have ids from here on (below kUpperReadBit).
inline constexpr std::uint64_t kSyscallReadBase = std::uint64_t{1} << 36;
struct Conversion {
  Trace trace;
  Stats stats;
};
// The kacct trace (header `rtime events`: sum_exec_runtime from sched_stat_runtime) of the
// recorded system, with timestamps relative to the first sample (stats.base_ns). With
// Options::ncpus set, a sample on a CPU beyond it is an error.
Result<Conversion> convert(std::string_view text, const Options&);
// An error: a thread shown in two thread groups (the header lists each tid once, in one process).
Result<Conversion> convert(const std::vector<Record>&, const Options&);

// `perf script` text read in pieces, twice: convert_stream() reads it through to validate it and
// collect what the header needs, then rewinds and converts.
struct Source {
  std::function<std::string_view()> next;  // the next piece; empty at the end
  std::function<void()> rewind;            // back to the first piece
  std::size_t size = 0;                    // bytes in all, when known (progress)
};
// convert() in bounded memory: the same trace and statistics, given as the header (once, before
// any event) and each event in order; Conversion::trace comes back without events. Errors are
// convert()'s, found in the first pass, before anything is given. Holds the tasks, the records
// its look-ahead reaches (a few on each CPU), per tick when the trace has kacct:tick_steal
// records, and per read; a trace with gen vtime probes (a few MB from a guest: the probes'
// annotations pair records across the whole trace) is converted whole.
// `on_stats`, if set, is called once before `on_header` with the statistics as they grow while
// the events are given (valid until convert_stream() returns; the positions they record only grow,
// and each is recorded before the event at that position is given).
Result<Conversion> convert_stream(const Source&, const Options&, const std::function<void(const Header&)>& on_header,
                                  const std::function<void(const Event&)>& on_event,
                                  const std::function<void(const Stats&)>& on_stats = {});

}  // namespace kacct::trace::perf
