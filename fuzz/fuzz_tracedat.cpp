// libFuzzer target: trace-cmd's binary trace.dat -> perf records (libtracecmd/libtraceevent,
// tools/tracedat.cpp) -> kacct trace -> tick model with every invariant checked. Must never
// crash: an unreadable file is a clean error (kacct exits 3), and so is a crash of Debian's
// libtracecmd 3.1.6 / libtraceevent 1.7.1 on a damaged file (they run in the reader's child
// process: a crash inside one of their calls is tracedat::Failure with file_at_fault, as is a
// record kacct's reader refuses); a crash in kacct's own reader code in the child
// (file_at_fault false) aborts here. The fast text of plain
// print formats equals libtraceevent's own on every record, and a conversion either fails with
// a message or yields a trace that validates and replays without a violation.
// libtracecmd and libtraceevent are Debian's shared libraries, not built with the fuzzer's
// instrumentation: their code gives no coverage feedback and no ASan checks of its own reads
// (docs/fuzzing.md). The child's coverage (the fast printer, tools/tracedat_c.c) is counted in
// the child's copy of the counters, not seen by libFuzzer; this process's part (decoding the
// stream, rendering, the converter, the model) is.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "tick_checked.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/perf.hpp"
#include "tracedat.hpp"

// LeakSanitizer: Debian's libtraceevent 1.7.1 keeps a few bytes it strdup()s while parsing the
// saved event formats (not ours; allocated inside the library's format parser).
extern "C" const char* __lsan_default_suppressions() { return "leak:libtraceevent.so\n"; }

// libtracecmd allocates the sizes the file gives (a header's 64-bit length) before it reads them:
// a damaged file asks for terabytes, glibc's malloc returns NULL and libtracecmd fails the open
// cleanly (kacct exits 3). ASan returns NULL as glibc does, instead of stopping; libFuzzer's own
// limit on one allocation is raised to 1 TB (fuzz_tracedat.options, fuzz/CMakeLists.txt).
// max_allocation_size_mb: a size that glibc grants (17 GB here) made ASan poison, then on free
// poison again, its 2 GB of shadow: 8 CPU-s for one input, most of a campaign's time
// (docs/fuzzing.md). Above 64 MB ASan now returns NULL as for terabytes; libtracecmd reads what
// it allocated from the file, so no input of at most 32 kB (max_len) gets further with more.
// kacct's own operator new above it is an ASan error (allocation-size-too-big), not a NULL.
// malloc_context_size=0: no allocation/free stacks are recorded (each forked reader child wrote
// ASan's stack depot, shared copy-on-write with this process); a heap error's report keeps its
// access stack, ASAN_OPTIONS=malloc_context_size=30 on the replay adds the others.
#ifndef KACCT_READER_ASAN_OPTIONS
#define KACCT_READER_ASAN_OPTIONS "quarantine_size_mb=1"
#endif
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:quarantine_size_mb=16:max_allocation_size_mb=64:malloc_context_size=0";
}

// Before libFuzzer loads the corpus and allocates: the reader children are forked from a small
// server process from now on, not from this process (docs/fuzzing.md, "Eighth round"). The
// server is this binary run again (it serves from here, never returning) with a 1 MB quarantine
// instead of 16: a reader lives for a few inputs, and filling 16 MB of quarantine meant fresh
// pages (a fault and ASan's fill each) for most of its allocations. Given up: a use after free in
// the reader's process (kacct's fast printer; the libraries' own are not findings) is seen only
// while the block is among the last 1 MB freed; ASAN_OPTIONS adds to both.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kacct::tracedat::start_reader_server(KACCT_READER_ASAN_OPTIONS);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A name no .tgids file can sit next to (/dev/null is not a directory).
  auto in = tracedat::Input::open_data(bytes, "/dev/null/fuzz.trace.dat");
  if (!in) {
    if (in.error().message.empty()) std::abort();
    return 0;
  }
  trace::Trace t;
  try {
    // The fast path against libtraceevent's printing, record by record.
    // Only fast text is compared: libtraceevent's own text of a record can differ between passes
    // (Input::fast(); regression failed-event-string-flag.dat).
    std::vector<trace::perf::Record> fast;
    std::vector<bool> was_fast;
    for (trace::perf::Record r; in.value()->next(r);)
      fast.push_back(std::move(r)), was_fast.push_back(in.value()->fast());
    in.value()->rewind();
    in.value()->library_print(true);
    std::size_t i = 0;
    for (trace::perf::Record r; in.value()->next(r); ++i) {
      if (i >= fast.size() || (was_fast[i] && fast[i].fields != r.fields) || fast[i].event != r.event ||
          fast[i].chain != r.chain) {
        std::fprintf(stderr, "record %zu: fast '%s' library '%s'\n", i, i < fast.size() ? fast[i].fields.c_str() : "-",
                     r.fields.c_str());
        std::abort();
      }
    }
    if (i != fast.size()) std::abort();
    in.value()->library_print(false);

    trace::perf::Options o;
    o.ncpus = 4;  // bounded: a record on a higher CPU is an error
    auto c = trace::perf::convert_stream(
        in.value()->text(), o, [&](const trace::Header& h) { t.header = h; },
        [&](const trace::Event& e) { t.events.push_back(e); });
    if (!c) {
      if (c.error().message.empty()) std::abort();
      return 0;
    }
  } catch (const tracedat::Failure& f) {
    if (!f.file_at_fault) {  // kacct's own code in the reader's process
      std::fprintf(stderr, "%s\n", f.what());
      std::abort();
    }
    return 0;
  }
  fuzz::run_tick_checked(t);
  return 0;
}
