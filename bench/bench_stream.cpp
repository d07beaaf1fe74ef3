// Streaming ingestion: trace text fed in 1 MB pieces through trace::StreamLoader, compiled in
// chunks (sim::Compiler) and replayed as it comes (RunOptions::refill), the path of `kacct run`
// and `kacct check`, beside the whole-input path (load, compile, run) they replaced; and
// `perf script` ingestion on sched_switch samples: whole (perf::convert) and streamed
// (perf::convert_stream, the path of `kacct perf-convert`). bytes_per_second is of input text.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "model/trace/perf.hpp"

namespace {
using namespace kacct;

// The builder mix (forks, reads, guest, idle) on 4 CPUs, about 1M events.
const std::string& mix_text() {
  static const std::string s = [] {
    trace::BuildSpec spec;
    spec.cpu_model = "x86-64";
    spec.ncpus = 4;
    return trace::write(trace::random_trace(7, spec, 1'000'000));
  }();
  return s;
}

sim::ModelCfg cfg_named(const char* name) {
  auto cpu = arch::find_cpu("x86-64");
  auto cfg = arch::find_config(name);
  if (!cpu || !cfg || !arch::legal(*cpu, *cfg)) std::abort();
  return sim::model_cfg(*cpu, *cfg);
}

constexpr const char* kCfg = "6.6-tick-irqtime-steal-hz250";

void BM_StreamRun(benchmark::State& state) {
  const auto& text = mix_text();
  const auto mc = cfg_named(kCfg);
  const bool check = state.range(0) != 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    std::unique_ptr<sim::Compiler> comp;
    std::size_t pos = 0;
    trace::StreamLoader loader([&](const trace::Header& h) { comp = std::make_unique<sim::Compiler>(h); },
                               [&](const trace::Event& e, std::string_view) { return comp->add(e); });
    auto feed = [&] {  // one 1 MB piece; false at the end
      if (pos >= text.size()) {
        if (auto e = loader.finish()) state.SkipWithError(e->to_string().c_str());
        return false;
      }
      const auto n = std::min<std::size_t>(1 << 20, text.size() - pos);
      if (auto e = loader.feed(std::string_view(text).substr(pos, n))) state.SkipWithError(e->to_string().c_str());
      pos += n;
      return true;
    };
    while (!comp && feed()) {}
    while (comp->program().events.size() < (1u << 16) && feed()) {}
    sim::RunOptions o{.check = check};
    o.refill = [&](sim::RunResult& r) {
      r.reads.clear();
      comp->next_chunk();
      while (comp->program().events.size() < (1u << 16) && feed()) {}
      return !comp->program().events.empty();
    };
    auto r = sim::run(comp->program(), mc, o);
    events = r.events;
    benchmark::DoNotOptimize(r.cpus.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(events));
  state.SetLabel(check ? "builder-mix streamed, checked" : "builder-mix streamed");
}
BENCHMARK(BM_StreamRun)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The path before streaming: the whole text loaded, compiled, then run.
void BM_WholeRun(benchmark::State& state) {
  const auto& text = mix_text();
  const auto mc = cfg_named(kCfg);
  const bool check = state.range(0) != 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    auto t = trace::load(text);
    if (!t) state.SkipWithError(t.error().to_string().c_str());
    auto p = sim::compile(t.value());
    auto r = sim::run(p.value(), mc, {.check = check});
    events = r.events;
    benchmark::DoNotOptimize(r.cpus.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(events));
  state.SetLabel(check ? "builder-mix whole, checked" : "builder-mix whole");
}
BENCHMARK(BM_WholeRun)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// `perf script` text: two tasks taking turns on CPU 0 (test/cli/gen_perf_switches.py's shape).
const std::string& perf_text() {
  static const std::string s = [] {
    std::string out;
    const char* comm[] = {"alpha", "beta"};
    const int pid[] = {1001, 1002};
    for (std::size_t i = 0; i < 300'000; ++i) {
      const int a = int(i % 2), b = 1 - a;
      const std::uint64_t ns = 1'000'000'000ull + 10'000ull * i;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%16s %d/%d [000] %llu.%09llu:            sched:sched_switch: prev_comm=%s prev_pid=%d "
                    "prev_prio=120 prev_state=R ==> next_comm=%s next_pid=%d next_prio=120\n",
                    comm[a], pid[a], pid[a], (unsigned long long)(ns / 1'000'000'000ull),
                    (unsigned long long)(ns % 1'000'000'000ull), comm[a], pid[a], comm[b], pid[b]);
      out += line;
    }
    return out;
  }();
  return s;
}

void BM_PerfConvert(benchmark::State& state) {
  const auto& text = perf_text();
  trace::perf::Options o;
  std::size_t events = 0;
  for (auto _ : state) {
    auto r = trace::perf::convert(text, o);
    if (!r) state.SkipWithError(r.error().to_string().c_str());
    events = r.value().trace.events.size();
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(events));
}
BENCHMARK(BM_PerfConvert)->Unit(benchmark::kMillisecond);

// The same text through perf::convert_stream (the path of `kacct perf-convert` now): read twice
// in 1 MB pieces, each event given out, none kept.
void BM_PerfConvertStream(benchmark::State& state) {
  const auto& text = perf_text();
  trace::perf::Options o;
  std::size_t events = 0;
  for (auto _ : state) {
    std::size_t pos = 0;
    trace::perf::Source src{[&]() -> std::string_view {
                              const auto n = std::min<std::size_t>(1 << 20, text.size() - pos);
                              const std::string_view v(text.data() + pos, n);
                              pos += n;
                              return v;
                            },
                            [&] { pos = 0; }, text.size()};
    events = 0;
    auto r = trace::perf::convert_stream(
        src, o, [](const trace::Header&) {}, [&](const trace::Event&) { ++events; });
    if (!r) state.SkipWithError(r.error().to_string().c_str());
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(events));
}
BENCHMARK(BM_PerfConvertStream)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
