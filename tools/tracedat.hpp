// trace-cmd's binary trace.dat (read with Debian's libtracecmd and libtraceevent) as the records of
// `perf script`, for the same converter (model/trace/perf.hpp): docs/perf.md, "trace-cmd input".
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace/perf.hpp"

struct kacct_td;

namespace kacct::tracedat {

// The data starts with trace.dat's magic ("\x17\x08\x44tracing").
bool is_tracedat_data(std::string_view head);

// Every event of every CPU in time order, each a perf::Record: the event's text is the kernel's
// own print format (the format files trace-cmd saved with the data, no trace-cmd plugins) as
// `perf script` prints it; a kernel stack that ftrace's `stacktrace` trigger wrote right after an
// event on its CPU is that event's callchain (symbols from the kallsyms trace-cmd saved); events a
// full buffer dropped become a PERF_RECORD_LOST record before the next one. Thread groups: from
// `PATH.tgids` (PATH without .xz; "tid tgid" lines, tracefs's saved_tgids with
// options/record-tgid), when it exists. Holds one record per CPU, whatever the file's length.
class Input {
 public:
  // A file, or a trace.dat in memory (e.g. decompressed from xz; libtracecmd reads it from an
  // unlinked temporary file): `name` is the input's name in errors, and where .tgids is looked for.
  static trace::Result<std::unique_ptr<Input>> open(const std::string& path);
  static trace::Result<std::unique_ptr<Input>> open_data(std::string_view data, const std::string& name);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // The next record; false at the end. Record::line is the record's 1-based position.
  bool next(trace::perf::Record&);
  void rewind();
  // Every event's text from libtraceevent's own printing, not the fast path for plain print
  // formats (tools/tracedat_c.c): the reference the tests compare the fast path with.
  void library_print(bool on);
  std::uint64_t fast_printed() const;  // events whose text the fast path printed
  // The same records as `perf script --ns -F comm,pid,tid,cpu,time,event,trace,ip,sym` text with
  // callchain frame lines, in pieces, for perf::convert_stream(); an event with no format in the
  // file becomes an event named `unknown:ID` (the converter skips and counts it).
  trace::perf::Source text();

 private:
  explicit Input(::kacct_td*, std::map<std::uint64_t, std::uint64_t> tgids);
  static void render(const trace::perf::Record&, const std::vector<std::uint64_t>& addrs, std::string& out);
  ::kacct_td* td_;
  std::map<std::uint64_t, std::uint64_t> tgid_;
  std::uint32_t n_ = 0;
  bool pending_lost_ = false;
  trace::perf::Record held_, scratch_;
  std::vector<std::uint64_t> addrs_, held_addrs_;  // the callchain's addresses (text())
  std::string text_;
};

// All records of a file (the test compares them with perf script's).
trace::Result<std::vector<trace::perf::Record>> read(const std::string& path, bool library_print = false);
trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& name,
                                                          bool library_print = false);

}  // namespace kacct::tracedat
