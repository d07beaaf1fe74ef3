// Lazy-TLB model speed: events/s of the checked runner on the seed scenario (N CPUs and threads
// through idle), events/s of the bare step, and states/s of the exhaustive explorer.
//   bench/bench_lazytlb --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/seed.hpp"

namespace {
using namespace kacct::model::lazytlb;

// Checked: every invariant after every event (what `kacct lazy-tlb run` does).
void BM_RunChecked(benchmark::State& st) {
  const Arch a = st.range(1) ? Arch::PpcRadix : Arch::Generic;
  auto seed = seed_scenario(int(st.range(0)), 20, a, kacct::arch::v(6, 12));
  std::size_t events = 0;
  for (auto _ : st) {
    auto r = run_script(seed.script);
    benchmark::DoNotOptimize(r.costs.switches);
    events += r.steps;
  }
  st.counters["events/s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RunChecked)->Args({8, 0})->Args({8, 1})->Args({64, 1})->Unit(benchmark::kMillisecond);

// The bare step (no invariant checks), on the same events.
void BM_StepOnly(benchmark::State& st) {
  const Arch a = st.range(1) ? Arch::PpcRadix : Arch::Generic;
  auto seed = seed_scenario(int(st.range(0)), 20, a, kacct::arch::v(6, 12));
  const Cfg cfg = seed.script.cfg();
  std::size_t events = 0;
  for (auto _ : st) {
    auto w = initial(seed.script.sizes);
    Costs c;
    StepLog log;
    kacct::Concrete d;
    Decider<kacct::Concrete> dec;
    Stepper<kacct::Concrete> step(d, cfg, w, c, log, dec);
    for (const auto& e : seed.script.events) step.run(e);
    benchmark::DoNotOptimize(c.switches);
    events += seed.script.events.size();
  }
  st.counters["events/s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StepOnly)->Args({8, 0})->Args({8, 1})->Args({64, 1})->Unit(benchmark::kMillisecond);

void BM_Explore(benchmark::State& st) {
  ExploreOptions o;
  o.header.sizes = {2, 2, 2};
  o.header.arch = st.range(0) ? Arch::PpcRadix : Arch::Generic;
  o.header.version = kacct::arch::v(6, 12);
  std::size_t states = 0;
  for (auto _ : st) {
    auto r = explore(o);
    states += r.states;
  }
  st.counters["states/s"] = benchmark::Counter(double(states), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Explore)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

// With symmetry reduction (classes of states up to renaming), 2 CPUs / 3 tasks / 2 mms, no
// hotplug: 463,345 classes.
void BM_ExploreSymmetry(benchmark::State& st) {
  ExploreOptions o;
  o.header.sizes = {2, 3, 2};
  o.header.arch = Arch::PpcRadix;
  o.header.version = kacct::arch::v(6, 12);
  o.symmetry = true;
  o.max_states = 100'000'000;
  std::size_t states = 0;
  for (auto _ : st) {
    auto r = explore(o);
    states += r.states;
  }
  st.counters["states/s"] = benchmark::Counter(double(states), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ExploreSymmetry)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
