// Shared helpers of the kacct subcommands: exit codes, trace loading, CPU/config resolution,
// aligned text tables.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"

namespace kacct::cli {

// Exit codes: 0 ok / holds, 1 violation, 2 unknown (proofs), 3 usage or input error.
inline constexpr int kExitOk = 0, kExitViolation = 1, kExitUnknown = 2, kExitUsage = 3;

// Thrown by subcommands for a user-facing error; main prints "kacct: <msg>" and exits `code`.
struct Failure : std::runtime_error {
  int code;
  explicit Failure(std::string msg, int c = kExitUsage) : std::runtime_error(std::move(msg)), code(c) {}
};
// Thrown when the message was already printed (e.g. trace errors with their own format).
struct Exit {
  int code;
};

// A trace as read from a path or "-" (stdin): the text (kept for quoting lines) and its name.
struct Loaded {
  std::string name;  // path, or "<stdin>"
  std::string text;
  trace::Trace trace;
  std::string line(std::uint32_t n) const;  // source line n (1-based), without "\n"; "" if none
};
// A whole input file, or standard input for "-". Every command reads its inputs through these,
// so a missing file, a directory or a read error is worded one way: "NAME: cannot open: REASON"
// (Failure). read_input() also decompresses xz data (detected by its magic bytes).
std::string read_file(const std::string& path);
std::string read_input(const std::string& path);
std::string input_name(const std::string& path);  // "<stdin>" for "-"
// A piece of user input quoted in a message: at most `max` bytes, then "... (N bytes)".
std::string cut(std::string_view s, std::size_t max = 200);

// A path or "-" (stdin) read in pieces, for commands that stream their input: the same
// "NAME: cannot open: REASON" errors as read_file(). xz data (magic bytes) is decompressed
// whole first, so only plain text streams in bounded memory.
class InputStream {
 public:
  explicit InputStream(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;
  const std::string& name() const { return name_; }
  // The next piece (at most 1 MB); empty at the end of the input.
  std::string_view next();

 private:
  std::string name_;
  int fd_ = -1;
  std::string buf_;
  std::string whole_;  // decompressed xz data
  std::size_t whole_pos_ = 0;
  bool first_ = true, xz_ = false;
};

// Quotes a source line for a message: cut(), with non-printable bytes as '?'.
std::string quote_line(std::string_view line);

// A trace streamed from a path or "-": parsed and validated as load_trace() does (the same
// errors, printed the same way), compiled by sim::Compiler in chunks that sim::run() takes
// through RunOptions::refill. Memory: one chunk of events plus the tasks, not the input.
class TraceStream {
 public:
  static constexpr std::size_t kChunk = 1 << 16;  // events per chunk (at least)
  // `on_event`: every validated event, in order (e.g. the ground-truth Accountant); `on_header`
  // when the header is complete. keep_text: keep the current chunk's lines for line().
  TraceStream(const std::string& path, std::function<void(const trace::Header&)> on_header = nullptr,
              std::function<void(const trace::Event&)> on_event = nullptr, bool keep_text = false);
  const std::string& name() const { return in_.name(); }
  // Reads up to the end of the header and the first chunk. False if the input has an error
  // (report() prints it) before the header is complete.
  bool start();
  const trace::Header& header() const { return loader_.header(); }
  sim::Program& program() { return compiler_->program(); }
  // RunOptions::refill: the next chunk; false at the end of the input or at an error.
  bool refill();
  // Reads the rest of the input (validated, not run) and prints its error as load_trace() does,
  // throwing Exit{3}, if it has one.
  void finish();
  // Source line n if it is in the current chunk (keep_text), quoted as Loaded::line(); else "".
  std::string line(std::uint32_t n) const;

 private:
  bool feed_piece();  // false at the end of the input or at an error
  InputStream in_;
  std::function<void(const trace::Header&)> on_header_;
  std::function<void(const trace::Event&)> on_event_;
  bool keep_text_;
  trace::StreamLoader loader_;
  std::unique_ptr<sim::Compiler> compiler_;
  std::optional<trace::Error> error_;
  bool done_ = false;
  std::string text_;                   // keep_text: the chunk's event lines
  std::vector<std::size_t> text_pos_;  // offset of each event's line in text_
};

// Reads and loads (parse + validate) the trace (plain or xz). On error prints "NAME:LINE:COL: message" to
// stderr and throws Exit{3}.
Loaded load_trace(const std::string& path);

// --cpu / --config resolution with Kconfig reasons.
arch::CpuFacts resolve_cpu(const std::string& name);
arch::Config resolve_config(const std::string& name);
// Why `cfg` is not legal on `cpu` (empty if it is legal).
std::string illegal_reason(const arch::CpuFacts& cpu, const arch::Config& cfg);
void require_legal(const arch::CpuFacts& cpu, const arch::Config& cfg);

std::string_view isa_name(arch::Isa);
std::string_view platform_name(arch::Platform);
std::string_view mechanism_name(arch::Mechanism);
std::string_view accounting_name(arch::Accounting);
// A mechanism's own subcommand name (arch/mechanisms.hpp).
std::string command_name(arch::Mechanism);
// The mechanisms' old subcommand names as aliases of their subcommands (after those are added).
void add_legacy_aliases(CLI::App&);

// Aligned text table (right-aligned columns are the numeric ones).
class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::vector<bool> right = {});
  void row(std::vector<std::string> cells);
  std::string str(std::string_view indent = "") const;
  // For tables too long to hold: measure() every row first (widths only), then head() and
  // line() for each row give what str() would.
  void measure(const std::vector<std::string>& cells);
  std::string head(std::string_view indent = "") const;
  std::string line(const std::vector<std::string>& cells, std::string_view indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::size_t> w_;
  std::vector<std::vector<std::string>> rows_;
};

void print_json(const nlohmann::ordered_json&);

// Progress of long work on stderr: one line rewritten in place, only when stderr is a terminal
// and not --quiet (so pipes, files and tests see nothing extra). Cleared before results print.
class Progress {
 public:
  explicit Progress(bool quiet);
  ~Progress() { clear(); }
  bool on() const { return on_; }
  void show(const std::string& text);
  void clear();

 private:
  bool on_ = false, shown_ = false;
};

// Subcommand registration (each file owns one group).
void add_list(CLI::App&);
void add_run(CLI::App&);           // run + check
void add_proofs(CLI::App&);        // prove + validate
void add_findings(CLI::App&);      // findings (cmd_findings.cpp)
void add_psi(CLI::App&);           // psi-irq run + psi-irq seed
void add_random_trace(CLI::App&);  // random-trace (alias gen)
void add_perf(CLI::App&);          // perf-convert + perf-replay
void add_lazytlb(CLI::App&);       // lazy-tlb explore / run / seed
void add_native(CLI::App&);        // native-vtime cost / seed-trace (cmd_native.cpp)
void add_gen_vtime(CLI::App&);     // gen-vtime cost
void add_identify(CLI::App&);      // identify (cmd_identify.cpp)

}  // namespace kacct::cli
