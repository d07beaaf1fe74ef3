// Replay throughput of the native vtime backend: sim::run on a precompiled Program, with and
// without invariant checks, for native configs across word widths, epochs and scaled code.
// items_per_second = trace events per second. Traces: the tick-heavy bench trace (4 CPUs) and
// the MPC8xx sched_yield seed scenario.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "arch/registry.hpp"
#include "model/trace/scenarios.hpp"
#include "model/native/seed.hpp"
#include "model/sim/machine.hpp"

namespace {
using namespace kacct;

std::size_t events_wanted() {
  if (const char* s = std::getenv("KACCT_BENCH_EVENTS")) return std::strtoull(s, nullptr, 10);
  return 2'000'000;
}

const sim::Program& heavy() {
  static std::unique_ptr<sim::Program> p;
  if (!p)
    p = std::make_unique<sim::Program>(
        sim::compile(trace::scenarios::tick_heavy_trace(4, events_wanted(), "POWER9")).value());
  return *p;
}
const sim::Program& seed() {
  static std::unique_ptr<sim::Program> p;
  if (!p)
    p = std::make_unique<sim::Program>(
        sim::compile(trace::scenarios::yield_pingpong(std::uint32_t(events_wanted() / 3), arch::tick_nsec(250)))
            .value());
  return *p;
}

sim::ModelCfg cfg(const char* cpu, const char* config) {
  auto c = arch::find_cpu(cpu);
  auto k = arch::find_config(config);
  if (!c || !k || !arch::legal(*c, *k)) {
    std::fprintf(stderr, "bad bench config %s on %s\n", config, cpu);
    std::abort();
  }
  return sim::model_cfg(*c, *k);
}

void run(benchmark::State& st, const sim::Program& p, const sim::ModelCfg& m, bool check) {
  for (auto _ : st) {
    auto r = sim::run(p, m, {.check = check});
    if (r.violation) st.SkipWithError(r.violation->invariant.c_str());
    benchmark::DoNotOptimize(r.events);
  }
  st.SetItemsProcessed(std::int64_t(st.iterations()) * std::int64_t(p.events.size()));
}

#define NATIVE_BENCH(name, prog, cpu, config)                                             \
  void name##_nocheck(benchmark::State& st) { run(st, prog(), cfg(cpu, config), false); } \
  void name##_check(benchmark::State& st) { run(st, prog(), cfg(cpu, config), true); }    \
  BENCHMARK(name##_nocheck)->Unit(benchmark::kMillisecond);                               \
  BENCHMARK(name##_check)->Unit(benchmark::kMillisecond)

NATIVE_BENCH(POWER9_6_12_native, heavy, "POWER9", "6.12-native-hz250");
NATIVE_BENCH(POWER9_6_12_native_steal, heavy, "POWER9", "6.12-native-steal-hz250");
NATIVE_BENCH(POWER9_4_9_native, heavy, "POWER9", "4.9-native-hz250");
NATIVE_BENCH(MPC8xx_4_19_native_scaled, seed, "MPC8xx", "4.19-native-hz250");
NATIVE_BENCH(MPC8xx_4_20_native, seed, "MPC8xx", "4.20-native-hz250");
NATIVE_BENCH(MPC8xx_4_19_tick, seed, "MPC8xx", "4.19-tick-hz250");

}  // namespace

BENCHMARK_MAIN();
