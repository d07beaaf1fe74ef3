// Replay throughput of the gen vtime machine, per variant: the seed's syscall loop on one
// nohz_full CPU and a builder-made 4-CPU mix, with and without invariant checks.
// items_per_second = trace events per second.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "arch/registry.hpp"
#include "model/trace/scenarios.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {
using namespace kacct;

std::size_t events_wanted() {
  if (const char* s = std::getenv("KACCT_BENCH_EVENTS")) return std::strtoull(s, nullptr, 10);
  return 2'000'000;
}
const sim::Program& compiled(const trace::Trace& t) {
  auto r = sim::compile(t);
  if (!r) {
    std::fprintf(stderr, "bench trace invalid: %s\n", r.error().to_string().c_str());
    std::abort();
  }
  return *new sim::Program(std::move(r).value());  // kept for the process lifetime
}
const sim::Program& syscall_program() {
  static const sim::Program& p =
      compiled(trace::load(trace::scenarios::syscall_loop(events_wanted() / 2, 92, 138, 999)).value());
  return p;
}
const sim::Program& builder_program() {
  static const sim::Program& p = []() -> const sim::Program& {
    trace::BuildSpec spec;
    spec.cpu_model = "x86-64";
    spec.ncpus = 4;
    return compiled(trace::random_trace(42, spec, events_wanted() / 4));
  }();
  return p;
}

void replay(benchmark::State& state, const sim::Program& p, const char* cfg_name, bool check) {
  const auto cpu = arch::find_cpu("x86-64");
  const auto cfg = arch::find_config(cfg_name);
  if (!cpu || !cfg || !arch::legal(*cpu, *cfg)) {
    state.SkipWithError("bad config");
    return;
  }
  const auto m = sim::model_cfg(*cpu, *cfg);
  for (auto _ : state) {
    auto r = sim::run(p, m, {.check = check});
    benchmark::DoNotOptimize(r.cpus.data());
    if (r.violation) state.SkipWithError(("violation: " + r.violation->invariant).c_str());
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(p.events.size()));
  state.counters["events"] = double(p.events.size());
}

const char* const kConfigs[] = {"4.4-gen-hz1000", "4.9-gen-hz1000", "6.1-gen-hz1000", "6.1-gen-irqtime-steal-hz1000"};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const char* cfg : kConfigs)
    for (bool check : {false, true}) {
      auto n1 = std::string("gen/syscall_loop/") + cfg + (check ? "/check" : "/nocheck");
      benchmark::RegisterBenchmark(n1.c_str(), [=](benchmark::State& s) {
        replay(s, syscall_program(), cfg, check);
      })->Unit(benchmark::kMillisecond);
      auto n2 = std::string("gen/builder_mix/") + cfg + (check ? "/check" : "/nocheck");
      benchmark::RegisterBenchmark(n2.c_str(), [=](benchmark::State& s) {
        replay(s, builder_program(), cfg, check);
      })->Unit(benchmark::kMillisecond);
    }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
