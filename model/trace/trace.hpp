// kacct trace format v1: data model, parser and canonical writer.
// Spec: docs/trace-format.md.  Semantic checks live in tracker.hpp,
// exact ground-truth accounting in ledger.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace kacct::trace {

enum class Kind : uint8_t {
  SyscallEnter,
  SyscallExit,
  ExcEnter,
  ExcExit,
  IrqEnter,
  IrqExit,
  SoftirqEnter,
  SoftirqExit,
  GuestEnter,
  GuestExit,
  Switch,
  Wakeup,
  IdleEnter,
  IdleExit,
  Tick,
  Steal,
  Fork,
  Exit,
  MmExit,
  Read,
  Runtime,
  CpuOffline,  // the CPU dies (cpuhp_report_idle_dead() in its idle task); no fields
  CpuOnline,   // the CPU is brought back up (start_secondary()); no fields
};
inline constexpr size_t kKindCount = size_t(Kind::CpuOnline) + 1;

enum class PrevState : uint8_t { Runnable, Sleeping, DiskSleep, Dead };  // R S D X
enum class ExcKind : uint8_t { Other, PageFault };                       // other pf
enum class ReadKind : uint8_t {
  ProcStat,
  TaskStat,
  RusageSelf,
  RusageThread,
  ThreadCputime,
  ProcessCputime,
  Taskstats,  // taskstats netlink reply for one thread (TASKSTATS_CMD_ATTR_PID): raw task_cputime()
};
inline constexpr size_t kReadKindCount = size_t(ReadKind::Taskstats) + 1;

// Trace spellings ("syscall_enter", "R", "pf", "proc_stat", ...), indexed by the enum's value.
inline constexpr std::array<std::string_view, kKindCount> kKindNames = {
    "syscall_enter", "syscall_exit", "exc_enter",   "exc_exit",    "irq_enter", "irq_exit",
    "softirq_enter", "softirq_exit", "guest_enter", "guest_exit",  "switch",    "wakeup",
    "idle_enter",    "idle_exit",    "tick",        "steal",       "fork",      "exit",
    "mm_exit",       "read",         "runtime",     "cpu_offline", "cpu_online"};
inline constexpr std::array<std::string_view, 4> kPrevStateNames = {"R", "S", "D", "X"};
inline constexpr std::array<std::string_view, 2> kExcKindNames = {"other", "pf"};
inline constexpr std::array<std::string_view, kReadKindCount> kReadKindNames = {
    "proc_stat", "task_stat", "rusage_self", "rusage_thread", "thread_cputime", "process_cputime", "taskstats"};
std::string_view name(Kind);
std::string_view name(PrevState);
std::string_view name(ExcKind);
std::string_view name(ReadKind);

struct HwCounters {
  std::optional<uint64_t> tb, purr, spurr;
  bool operator==(const HwCounters&) const = default;
};

// One trace event.  Fields a/b are kind-specific:
//   SyscallEnter a=nr | IrqEnter/SoftirqEnter a=vec | Steal a=ns
//   Switch a=prev b=next | Fork a=parent b=child | Wakeup a=tid
//   Read a=tid (0 = the current task) | MmExit a=mm | Runtime a=tid b=ns
// Fields that do not belong to the event's kind must stay at their defaults,
// otherwise write() drops them and the round trip is not exact.
struct Event {
  uint64_t ts = 0;
  uint32_t cpu = 0;
  Kind kind = Kind::Tick;
  uint32_t line = 0;  // source line, 0 if built in code; ignored by ==
  uint64_t a = 0, b = 0;
  PrevState prev_state = PrevState::Runnable;  // Switch
  bool iowait = false;                         // Switch
  std::optional<uint64_t> switch_gap;          // Switch gap=: ns between vtime's two clock reads
  ExcKind exc_kind = ExcKind::Other;           // ExcEnter
  ReadKind read_kind = ReadKind::ProcStat;     // Read
  uint64_t read_id = 0;                        // Read
  std::optional<uint64_t> fork_pid, fork_mm;   // Fork
  bool fork_kthread = false;                   // Fork
  std::string fork_comm;                       // Fork ("" = inherit)
  HwCounters hw;                               // any kind

  friend bool operator==(const Event& x, const Event& y) {
    auto key = [](const Event& e) {
      return std::tie(e.ts, e.cpu, e.kind, e.a, e.b, e.prev_state, e.iowait, e.switch_gap, e.exc_kind, e.read_kind,
                      e.read_id, e.fork_pid, e.fork_mm, e.fork_kthread, e.fork_comm, e.hw);
    };
    return key(x) == key(y);
  }
};

struct TaskDecl {
  uint64_t tid = 0;
  uint64_t pid = 0;  // thread-group id
  bool kthread = false;
  std::string comm;
  int nice = 0;
  std::optional<uint64_t> mm;  // required for user tasks, absent for kthreads
  // State at the start of the trace (default 0): task->utime/stime (ns), and under gen vtime the
  // unflushed residues of struct vtime (utime/stime/gtime, ns), e.g. read by a probe.
  std::optional<uint64_t> utime, stime, vtime_utime, vtime_stime, vtime_gtime;
  bool operator==(const TaskDecl&) const = default;
};

// A declaration without starting state.
inline TaskDecl task_decl(uint64_t tid, uint64_t pid, bool kthread, std::string comm, int nice,
                          std::optional<uint64_t> mm) {
  TaskDecl d;
  d.tid = tid;
  d.pid = pid;
  d.kthread = kthread;
  d.comm = std::move(comm);
  d.nice = nice;
  d.mm = mm;
  return d;
}

struct Header {
  uint32_t version = 1;
  std::string cpu_model;
  uint32_t ncpus = 1;
  // `rtime events`: sum_exec_runtime is observed (runtime events, e.g. from the kernel's
  // sched_stat_runtime), not computed from the rq clock by the model.
  bool rtime_events = false;
  std::vector<TaskDecl> tasks;
  bool operator==(const Header&) const = default;
};

struct Trace {
  Header header;
  std::vector<Event> events;
  bool operator==(const Trace&) const = default;
};

struct Error {
  uint32_t line = 0;    // 1-based; 0 = not from text
  uint32_t column = 0;  // 1-based byte column; 0 = unknown
  std::string message;
  std::string field;              // semantic errors: "ts", "cpu", "event" (the kind), a key, "header"
  std::string to_string() const;  // "line 12, column 7: expected ..."
  bool operator==(const Error&) const = default;
};

// Minimal expected-like result.
template <class T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}
  Result(Error e) : v_(std::move(e)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Syntax, header and per-line checks (including cpu < ncpus, duplicate
// declared tids).  Never throws on bad input.
Result<Trace> parse(std::string_view text);

// Canonical text.  parse(write(t)) == t for every t that parse can produce.
std::string write(const Trace&);
// The same text in pieces, for writers that stream: the header (through "events") and one
// event line, appended to `out`.
void append_header(std::string& out, const Header&);
void append_event(std::string& out, const Event&);

// Header consistency checks for traces built in code (parse guarantees them).
std::optional<Error> check_header(const Header&);

// Semantic checks (event order, contexts, tasks) via Tracker.  Error.column
// is 0 because there is no text; use load() to get columns.
std::optional<Error> validate(const Trace&);

// Column of the field a semantic Error names (Error::field: "ts", "cpu", a key; anything else:
// the kind token) on line `line` of `text`; 1 if the line or field is not found.
uint32_t field_column(std::string_view text, uint32_t line, std::string_view field);

// Line n (1-based) of text without its end of line ("" if there is none); for quoting the
// line an error or a violation names.
std::string source_line(std::string_view text, uint32_t n);

// parse + validate; semantic errors get the column of the offending field.
Result<Trace> load(std::string_view text);

// The parser one line at a time (parse() runs on it), so that a stream need not be held whole.
// Lines come in order, numbered from 1, without their end of line.
struct ParseScratch;
class Parser {
 public:
  Parser();
  ~Parser();
  Parser(Parser&&) noexcept;
  Parser& operator=(Parser&&) noexcept;
  // An event line fills `ev` and gives true; header, blank and comment lines give false; a
  // syntax or header error is returned.
  Result<bool> line(std::string_view text, uint32_t lineno, Event& ev);
  // The end of the input after line `last`: an error if the header is not complete.
  std::optional<Error> finish(uint32_t last) const;
  bool in_events() const { return stage_ == kEvents; }
  const Header& header() const { return header_; }

 private:
  enum Stage { kMagic, kCpu, kNcpus, kClock, kTasks, kEvents } stage_ = kMagic;
  Header header_;
  std::set<uint64_t> tids_;
  std::map<uint64_t, std::size_t> first_of_pid_;  // index in header_.tasks
  std::unique_ptr<ParseScratch> scratch_;         // per-line buffers (parse.cpp)
};

// load() on text fed in pieces of any size: memory is the longest line plus what `on_event`
// keeps, not the input. Each event, once parsed, goes to `on_event` (the caller's validator,
// e.g. a Tracker, sim::Compiler or Accountant), which returns its semantic error if any; the
// header goes to `on_header` at the `events` line (check_header() is applied first). Errors are
// the ones load() gives on the same text: a syntax error anywhere wins over an earlier semantic
// error, so after a semantic error the rest is still parsed, and no longer handed over.
class StreamLoader {
 public:
  using OnHeader = std::function<void(const Header&)>;
  // The event and its line's text (valid during the call).
  using OnEvent = std::function<std::optional<Error>(const Event&, std::string_view line)>;
  StreamLoader(OnHeader on_header, OnEvent on_event);
  // Feeds the next piece; a syntax error ends the input (returned; stop feeding).
  std::optional<Error> feed(std::string_view piece);
  // The end of the input: the error load() would give, if any.
  std::optional<Error> finish();
  bool in_events() const { return parser_.in_events(); }
  const Header& header() const { return parser_.header(); }
  // A semantic error was seen (events are no longer handed over).
  bool failed() const { return semantic_.has_value(); }
  // The text of the line of the error finish() or feed() returned ("" if that line does not exist).
  const std::string& error_line() const { return error_line_; }

 private:
  std::optional<Error> line(std::string_view text);
  Parser parser_;
  OnHeader on_header_;
  OnEvent on_event_;
  std::string partial_;  // an incomplete last line
  uint32_t lineno_ = 0;
  bool ended_ = false;  // a syntax error was returned
  std::optional<Error> semantic_;
  std::string semantic_line_, error_line_;
  Event ev_;
};

}  // namespace kacct::trace
