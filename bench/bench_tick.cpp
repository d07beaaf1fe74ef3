// Replay throughput of the tick-accounting machine: sim::run on a precompiled Program, with
// and without invariant checks, for several configs. items_per_second = trace events per second.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "arch/registry.hpp"
#include "model/trace/scenarios.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {
using namespace kacct;

std::size_t events_wanted() {
  if (const char* s = std::getenv("KACCT_BENCH_EVENTS")) return std::strtoull(s, nullptr, 10);
  return 4'000'000;
}

const sim::Program& program(std::uint32_t ncpus) {
  static std::map<std::uint32_t, std::unique_ptr<sim::Program>> cache;
  auto& p = cache[ncpus];
  if (!p) {
    auto t = trace::scenarios::tick_heavy_trace(ncpus, events_wanted());
    auto r = sim::compile(t);
    if (!r) {
      std::fprintf(stderr, "bench trace invalid: %s\n", r.error().to_string().c_str());
      std::abort();
    }
    p = std::make_unique<sim::Program>(std::move(r).value());
  }
  return *p;
}

// A builder-made trace (the mix `kacct gen` produces): forks, switches, reads, guest, idle.
const sim::Program& builder_program() {
  static std::unique_ptr<sim::Program> p;
  if (!p) {
    trace::BuildSpec spec;
    spec.cpu_model = "x86-64";
    spec.ncpus = 4;
    auto t = trace::random_trace(42, spec, events_wanted() / 4);
    auto r = sim::compile(t);
    if (!r) std::abort();
    p = std::make_unique<sim::Program>(std::move(r).value());
  }
  return *p;
}

sim::ModelCfg cfg_named(const char* name) {
  auto cpu = arch::find_cpu("x86-64");
  auto cfg = arch::find_config(name);
  if (!cpu || !cfg || !arch::legal(*cpu, *cfg)) {
    std::fprintf(stderr, "bad bench config %s\n", name);
    std::abort();
  }
  return sim::model_cfg(*cpu, *cfg);
}

void replay(benchmark::State& state, const sim::Program& p, const char* cfg_name, bool check) {
  const auto cfg = cfg_named(cfg_name);
  for (auto _ : state) {
    auto r = sim::run(p, cfg, {.check = check});
    benchmark::DoNotOptimize(r.cpus.data());
    if (r.violation) state.SkipWithError(("violation: " + r.violation->invariant).c_str());
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(p.events.size()));
  state.counters["events"] = double(p.events.size());
}

const char* const kConfigs[] = {"6.6-tick-hz250", "6.6-tick-irqtime-hz250", "6.6-tick-irqtime-steal-hz250"};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const char* cfg : kConfigs)
    for (bool check : {false, true})
      for (std::uint32_t ncpus : {1u, 4u}) {
        auto name = std::string("tick/") + cfg + (check ? "/check" : "/nocheck") + "/cpus:" + std::to_string(ncpus);
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
          replay(s, program(ncpus), cfg, check);
        })->Unit(benchmark::kMillisecond);
      }
  for (bool check : {false, true}) {
    auto name = std::string("builder_mix/6.6-tick-irqtime-steal-hz250") + (check ? "/check" : "/nocheck");
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
      replay(s, builder_program(), "6.6-tick-irqtime-steal-hz250", check);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
