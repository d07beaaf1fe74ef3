// Trace text throughput: parse (syntax + per-line checks) and load (parse + validate), in
// bytes_per_second of canonical text, plus compile() of the parsed trace and the streaming
// random-trace generator.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "model/trace/scenarios.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {
using namespace kacct;

const std::string& text(int which) {
  static std::string tick, mix;
  auto& s = which == 0 ? tick : mix;
  if (s.empty()) {
    if (which == 0) {
      s = trace::write(trace::scenarios::tick_heavy_trace(4, 1'000'000));
    } else {
      trace::BuildSpec spec;
      spec.ncpus = 4;
      s = trace::write(trace::random_trace(7, spec, 1'000'000));
    }
  }
  return s;
}

void BM_Parse(benchmark::State& state) {
  const auto& s = text(int(state.range(0)));
  std::size_t events = 0;
  for (auto _ : state) {
    auto r = trace::parse(s);
    if (!r) state.SkipWithError(r.error().to_string().c_str());
    events = r.value().events.size();
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(s.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(events));
  state.SetLabel(state.range(0) == 0 ? "tick-heavy" : "builder-mix");
}
BENCHMARK(BM_Parse)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Load(benchmark::State& state) {
  const auto& s = text(int(state.range(0)));
  for (auto _ : state) {
    auto r = trace::load(s);
    if (!r) state.SkipWithError(r.error().to_string().c_str());
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(s.size()));
  state.SetLabel(state.range(0) == 0 ? "tick-heavy" : "builder-mix");
}
BENCHMARK(BM_Load)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Compile(benchmark::State& state) {
  const auto t = trace::parse(text(int(state.range(0)))).value();
  for (auto _ : state) {
    auto p = sim::compile(t);
    benchmark::DoNotOptimize(p.ok());
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(t.events.size()));
  state.SetLabel(state.range(0) == 0 ? "tick-heavy" : "builder-mix");
}
BENCHMARK(BM_Compile)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// `kacct random-trace`'s path: build 1M events from a seed and write their text, streaming
// (random_trace_stream + append_event); events/s here is what --events N costs per event.
void BM_RandomTraceStream(benchmark::State& state) {
  trace::BuildSpec spec;
  spec.ncpus = 2;
  std::size_t n = 0, bytes = 0;
  for (auto _ : state) {
    std::string buf;
    trace::append_header(buf, trace::build_header(spec));
    bytes = 0;
    n = trace::random_trace_stream(1, spec, 1'000'000, 8'000'000, [&](const trace::Event& e) {
      trace::append_event(buf, e);
      if (buf.size() >= (1u << 20)) bytes += buf.size(), buf.clear();
    });
    benchmark::DoNotOptimize(bytes += buf.size());
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(bytes));
}
BENCHMARK(BM_RandomTraceStream)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
