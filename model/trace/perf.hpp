// Ingestion of `perf script` text (a real kernel's tracepoints) into a kacct trace.
// Spec and the facts it relies on: docs/perf.md. Pure: text in, trace and statistics out.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

struct Options {
  std::string cpu_model = "x86-64";
  std::uint32_t ncpus = 0;  // 0: highest CPU seen + 1
  std::uint64_t marker_base = 100000;
  // hrtimer functions that are the scheduler tick (tick_nohz_handler from 6.10 on; before,
  // tick_sched_timer): only their expiries call update_process_times().
  std::vector<std::string> tick_functions = {"tick_nohz_handler", "tick_sched_timer"};
  std::vector<ReadSpec> reads;
};

// One `perf script` sample.
struct Record {
  std::uint32_t line = 0;
  std::string comm;
  std::optional<std::uint64_t> pid;  // thread group; only with -F pid,tid
  std::uint64_t tid = 0;
  bool tid_known = true;  // perf prints -1 for threads it lost track of
  std::uint32_t cpu = 0;
  std::uint64_t ts = 0;  // ns (perf's clock)
  std::string event;     // "sched:sched_switch"
  std::string fields;    // the tracepoint's text
  std::vector<std::string> chain;  // kernel callchain symbols, innermost first
};
// Parses every sample; a line that is not a sample header or a callchain frame is an error
// with its line number and column.
Result<std::vector<Record>> parse_script(std::string_view text);

struct Stats {
  std::uint64_t lines = 0, records = 0, duplicates = 0;  // duplicates: repeated samples dropped
  std::map<std::string, std::uint64_t> used;     // events turned into trace events
  std::map<std::string, std::uint64_t> ignored;  // known events the models do not need
  std::map<std::string, std::uint64_t> unknown;  // skipped, by name
  std::uint64_t ticks_user = 0, ticks_kernel = 0, ticks_mode_unknown = 0;  // by callchain
  // Repairs: what the trace needed that perf did not record (lost or unrecorded events).
  std::map<std::string, std::uint64_t> repairs;
  std::uint64_t markers = 0, reads = 0, base_ns = 0;
  std::uint64_t lost_events = 0, lost_records = 0;      // PERF_RECORD_LOST (perf script --show-lost-events)
  std::vector<std::uint64_t> lost_before_read;          // per emitted read, in order: lost_events so far
  std::map<std::uint64_t, std::array<std::uint64_t, 2>> task_ticks;  // tid -> {user, kernel} ticks emitted
  std::vector<std::string> notes;  // first few anomalies, with perf line numbers
};
struct Conversion {
  Trace trace;
  Stats stats;
};
// The kacct trace (header `rtime events`: sum_exec_runtime from sched_stat_runtime) of the
// recorded system, with timestamps relative to the first sample (stats.base_ns).
Result<Conversion> convert(std::string_view text, const Options&);
Conversion convert(const std::vector<Record>&, const Options&);

}  // namespace kacct::trace::perf
