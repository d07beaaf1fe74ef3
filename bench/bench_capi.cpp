// The C API's feeds (capi/, include/kacct/kacct.h), as an oracle is driven: events as kacct_event
// structs in batches of 4,096, and trace text in 64 kB chunks, each with or without a query
// after every batch/chunk (every CPU's kcpustat and the read count; /check: kacct_check). Two
// traces on x86-64 6.6-tick-irqtime-steal-hz250: the tick-heavy scenario of bench_tick (4 CPUs)
// and the builder mix (forks, reads, guest, idle; 4 CPUs). items_per_second = events fed,
// bytes_per_second = text fed. The binary links libkacct.so with a RUNPATH, so another build of
// the library (same ABI) can be measured with it through LD_LIBRARY_PATH.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kacct/kacct.h"
#include "model/trace/builder.hpp"
#include "model/trace/scenarios.hpp"

namespace {
using namespace kacct;

constexpr const char* kCpu = "x86-64";
constexpr const char* kCfg = "6.6-tick-irqtime-steal-hz250";
constexpr std::size_t kBatch = 4096;
constexpr std::size_t kChunk = 64 * 1024;

std::size_t events_wanted() {
  if (const char* s = std::getenv("KACCT_BENCH_EVENTS")) return std::strtoull(s, nullptr, 10);
  return 400'000;
}

const trace::Trace& trace_of(int which) {
  static const trace::Trace tick = trace::scenarios::tick_heavy_trace(4, events_wanted());
  static const trace::Trace mix = [] {
    trace::BuildSpec spec;
    spec.cpu_model = kCpu;
    spec.ncpus = 4;
    return trace::random_trace(42, spec, events_wanted());
  }();
  return which == 0 ? tick : mix;
}
const std::string& text_of(int which) {
  static const std::string tick = trace::write(trace_of(0)), mix = trace::write(trace_of(1));
  return which == 0 ? tick : mix;
}

kacct_event to_c(const trace::Event& e) {
  kacct_event c{};
  c.ts = e.ts;
  c.cpu = e.cpu;
  c.kind = std::int32_t(e.kind);
  c.a = e.a;
  c.b = e.b;
  c.prev_state = std::int32_t(e.prev_state);
  c.iowait = e.iowait;
  c.exc_kind = std::int32_t(e.exc_kind);
  c.read_kind = std::int32_t(e.read_kind);
  c.read_id = e.read_id;
  c.fork_pid = e.fork_pid.value_or(0);
  c.fork_kthread = e.fork_kthread;
  c.fork_has_mm = e.fork_mm.has_value();
  c.fork_mm = e.fork_mm.value_or(0);
  c.fork_comm = e.fork_comm.empty() ? nullptr : e.fork_comm.c_str();
  return c;
}

[[noreturn]] void die(kacct_model* m, const char* what) {
  std::fprintf(stderr, "bench_capi: %s: %s\n", what, m ? kacct_error_message(m) : kacct_last_error());
  std::abort();
}

kacct_model* open() {
  kacct_model* m = nullptr;
  if (kacct_open(kCpu, kCfg, &m) != KACCT_OK) die(nullptr, "kacct_open");
  return m;
}

// query: 0 none, 1 kcpustat of every CPU and the read count, 2 kacct_check.
void query(kacct_model* m, int q, std::uint32_t ncpus) {
  if (q == 1) {
    kacct_cpustat cs;
    for (std::uint32_t c = 0; c < ncpus; ++c)
      if (kacct_get_cpustat(m, c, &cs) != KACCT_OK) die(m, "kacct_get_cpustat");
    std::size_t n = 0;
    if (kacct_read_count(m, &n) != KACCT_OK) die(m, "kacct_read_count");
    benchmark::DoNotOptimize(n);
  } else if (q == 2) {
    kacct_verdict v;
    if (kacct_check(m, &v) != KACCT_OK) die(m, "kacct_check");
    benchmark::DoNotOptimize(v.holds);
  }
}

// range(0): trace (0 tick-heavy, 1 builder mix); range(1): query per batch.
void BM_CapiStructs(benchmark::State& state) {
  const auto& t = trace_of(int(state.range(0)));
  const int q = int(state.range(1));
  std::vector<kacct_event> ev;
  ev.reserve(t.events.size());
  for (const auto& e : t.events) ev.push_back(to_c(e));
  for (auto _ : state) {
    kacct_model* m = open();
    if (kacct_set_ncpus(m, t.header.ncpus) != KACCT_OK) die(m, "kacct_set_ncpus");
    for (const auto& d : t.header.tasks) {
      kacct_task k{d.tid, d.pid, d.comm.c_str(), d.nice, d.kthread, d.mm.value_or(0)};
      if (kacct_add_task(m, &k) != KACCT_OK) die(m, "kacct_add_task");
    }
    for (std::size_t i = 0; i < ev.size(); i += kBatch) {
      if (kacct_feed_events(m, ev.data() + i, std::min(kBatch, ev.size() - i)) != KACCT_OK) die(m, "kacct_feed_events");
      query(m, q, t.header.ncpus);
    }
    query(m, q == 0 ? 1 : q, t.header.ncpus);  // the answers at the end, at least once
    kacct_close(m);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * ev.size()));
}
BENCHMARK(BM_CapiStructs)
    ->ArgsProduct({{0, 1}, {0, 1, 2}})
    ->ArgNames({"trace", "query"})
    ->Unit(benchmark::kMillisecond);

void BM_CapiText(benchmark::State& state) {
  const auto& t = trace_of(int(state.range(0)));
  const auto& text = text_of(int(state.range(0)));
  const int q = int(state.range(1));
  // Chunks of whole lines (a query completes an unterminated last line as the trace's last).
  std::vector<std::size_t> cut{0};
  while (cut.back() < text.size()) {
    const std::size_t end = std::min(cut.back() + kChunk, text.size());
    const std::size_t nl = text.rfind('\n', end - 1);
    cut.push_back(nl == std::string::npos || nl < cut.back() ? end : nl + 1);
  }
  for (auto _ : state) {
    kacct_model* m = open();
    for (std::size_t k = 0; k + 1 < cut.size(); ++k) {
      if (kacct_feed_text(m, text.data() + cut[k], cut[k + 1] - cut[k]) != KACCT_OK) die(m, "kacct_feed_text");
      query(m, q, t.header.ncpus);
    }
    query(m, q == 0 ? 1 : q, t.header.ncpus);
    kacct_close(m);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * t.events.size()));
  state.SetBytesProcessed(std::int64_t(state.iterations() * text.size()));
}
BENCHMARK(BM_CapiText)->ArgsProduct({{0, 1}, {0, 1, 2}})->ArgNames({"trace", "query"})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
