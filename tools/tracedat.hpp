// trace-cmd's binary trace.dat (read with Debian's libtracecmd and libtraceevent) as the records of
// `perf script`, for the same converter (model/trace/perf.hpp): docs/perf.md, "trace-cmd input".
#pragma once
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace/perf.hpp"

struct kacct_td_where;

namespace kacct::tracedat {

// The data starts with trace.dat's magic ("\x17\x08\x44tracing").
bool is_tracedat_data(std::string_view head);

// The reader's process died or failed in the middle of a pass (Input::next(), rewind(), text()):
// the message says where (the library call, CPU, file offset, records given so far); the
// records given before are a partial trace, not to be used.
struct Failure : std::runtime_error {
  Failure(std::string m, bool file) : std::runtime_error(std::move(m)), file_at_fault(file) {}
  // The file is damaged: a libtracecmd/libtraceevent call died or failed on it, or kacct's reader
  // refused it. false: kacct's own reader code died (a bug), or the reader could not start.
  bool file_at_fault;
};

// Every event of every CPU in time order, each a perf::Record: the event's text is the kernel's
// own print format (the format files trace-cmd saved with the data, no trace-cmd plugins) as
// `perf script` prints it; a kernel stack that ftrace's `stacktrace` trigger wrote right after an
// event on its CPU is that event's callchain (symbols from the kallsyms trace-cmd saved); events a
// full buffer dropped become a PERF_RECORD_LOST record before the next one. Thread groups: from
// `PATH.tgids` (PATH without .xz; "tid tgid" lines, tracefs's saved_tgids with
// options/record-tgid), when it exists. Holds one record per CPU, whatever the file's length.
// libtracecmd 3.1.6 and libtraceevent 1.7.1 crash on some damaged files (segfaults in
// tracecmd_open() and tep_parse_event(), a division by zero in tep_print_event(): found by
// fuzz_tracedat), so all their work (open, read, print) runs in a child process that opens the
// file once and streams the records of each pass through a socket (bounded: the socket's buffer
// and one record); this process never calls them. A child that dies is an error naming where it
// was (Failure), never a shorter trace. A finished Input leaves its child, file closed, to the
// next one (one fork per process, not per file, while nothing crashes and the child holds at most
// 64 handles libtracecmd could not finish opening: tools/tracedat.cpp, kAbandonedKept).
class Input {
 public:
  // A file, or a trace.dat in memory (e.g. decompressed from xz; libtracecmd reads it from an
  // unlinked temporary file): `name` is the input's name in errors, and where .tgids is looked for.
  static trace::Result<std::unique_ptr<Input>> open(const std::string& path);
  static trace::Result<std::unique_ptr<Input>> open_data(std::string_view data, const std::string& name);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // The next record; false at the end of the pass. Record::line is the record's 1-based position.
  // Throws Failure.
  bool next(trace::perf::Record&);
  void rewind();  // the next pass (a new child if the pass was left in the middle); throws Failure
  // Every event's text from libtraceevent's own printing, not the fast path for plain print
  // formats (tools/tracedat_c.c): the reference the tests compare the fast path with. From the
  // next pass on.
  void library_print(bool on);
  std::uint64_t fast_printed() const;  // events whose text the fast path printed
  // Whether the last record next() gave has its text from the fast path (else from
  // tep_print_event(), or none). libtraceevent's own text of a record can change between passes:
  // for an event whose format failed to parse it prints the fields raw, and once it finds a char
  // array field unprintable it prints that field as ARRAY[..] from then on (1.7.1 clears the
  // field's string flag), so only fast text is compared with the library's (fuzz_tracedat).
  bool fast() const;
  // The same records as `perf script --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym` text with
  // callchain frame lines, in pieces, for perf::convert_stream(); an event with no format in the
  // file becomes an event named `unknown:ID` (the converter skips and counts it). Its next() and
  // rewind() throw Failure.
  trace::perf::Source text();

 private:
  Input(int fd, std::map<std::uint64_t, std::uint64_t> tgids);
  bool spawn();  // false: the child could not open the file
  void stop(bool keep);
  [[noreturn]] void fail(const char* what);
  bool fill(std::size_t n);
  std::uint32_t frame();  // the next frame's kind; its payload at rbuf_[rpos_ - len_, rpos_)
  static void render(const trace::perf::Record&, const std::vector<std::uint64_t>& addrs, std::string& out);

  int fd_ = -1;  // the file (open_data(): an unlinked temporary file), passed to the child
  std::map<std::uint64_t, std::uint64_t> tgid_;
  int pid_ = -1, sock_ = -1;
  ::kacct_td_where* where_ = nullptr;  // shared with the child
  enum class State { Idle, Streaming, Ended } state_ = State::Idle;
  bool library_print_ = false;
  std::uint64_t fast_n_ = 0;
  std::string rbuf_;
  std::size_t rpos_ = 0, rend_ = 0, len_ = 0;
  std::uint32_t n_ = 0;
  std::uint64_t max_records_ = ~std::uint64_t{0};  // a pass's records at most (the constructor)
  std::uint64_t file_bytes_ = 0;                   // the file's size (its message)
  bool pending_lost_ = false, fast_ = false, held_fast_ = false;
  trace::perf::Record held_, scratch_;
  std::vector<std::uint64_t> addrs_, held_addrs_;  // the callchain's addresses (text())
  std::string text_;
};

// For a process that opens many files while it grows large (fuzz_tracedat: libFuzzer's 70 MB):
// starts a small process now that forks every later reader (Input) for it, so a reader's fork
// copies that small process, not this one, and this one takes no copy-on-write faults after it
// (docs/fuzzing.md, "Eighth round"). Call it once, early, before the memory grows; this process
// becomes a child subreaper (PR_SET_CHILD_SUBREAPER: the readers are its children, waited for as
// before). Without it (false: it could not start; or never called, as in kacct itself), or when
// the server fails, each reader is forked from this process. reader_asan_options (an ASan
// build's options string, e.g. a smaller quarantine): the server is this executable run again
// with ASAN_OPTIONS plus these; the executable must call start_reader_server() early in that run
// too (there it serves and never returns).
bool start_reader_server(const char* reader_asan_options = nullptr);

// All records of a file (the test compares them with perf script's).
trace::Result<std::vector<trace::perf::Record>> read(const std::string& path, bool library_print = false);
trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& name,
                                                          bool library_print = false);

}  // namespace kacct::tracedat
