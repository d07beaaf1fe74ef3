// trace-cmd's binary trace.dat (read with Debian's libtracecmd and libtraceevent) as the records of
// `perf script`, for the same converter (model/trace/perf.hpp): docs/perf.md, "trace-cmd input".
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "model/trace/perf.hpp"

namespace kacct::tracedat {

// The data starts with trace.dat's magic ("\x17\x08\x44tracing").
bool is_tracedat_data(std::string_view head);

// Every event of every CPU in time order, each a perf::Record: the event's text is the kernel's
// own print format (the format files trace-cmd saved with the data, no trace-cmd plugins) as
// `perf script` prints it; a kernel stack that ftrace's `stacktrace` trigger wrote after an event
// is that event's callchain (symbols from the kallsyms trace-cmd saved); events a full buffer
// dropped become a PERF_RECORD_LOST record. Thread groups: from `PATH.tgids` (PATH without .xz;
// "tid tgid" lines,
// tracefs's saved_tgids with options/record-tgid), when it exists. Record::line is the event's
// 1-based position in that order (errors name it as the line). An unreadable file is an error.
trace::Result<std::vector<trace::perf::Record>> read(const std::string& path);
// The same from a trace.dat in memory (e.g. decompressed from xz; libtracecmd reads it from an
// unlinked temporary file); `path` names the input in errors and is where PATH.tgids is looked for.
trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& path);

}  // namespace kacct::tracedat
