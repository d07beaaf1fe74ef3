// cputime_adjust() calls per second, per ScaleDiv (the concrete domain), on the path that
// scales (utime and stime both non-zero, rtime ahead of prev).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "model/cputime/cputime_adjust.hpp"

namespace {
using namespace kacct;
using model::ScaleDiv;

struct Input {
  std::uint64_t utime, stime, rtime;
};
const std::vector<Input>& inputs() {
  static const std::vector<Input> v = [] {
    std::mt19937_64 rng(1);
    std::vector<Input> out(4096);
    for (auto& x : out) {
      // Realistic magnitudes (up to ~days of ns) and a few wide ones that exercise the slow paths.
      const int bits = 20 + int(rng() % 44);
      const std::uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
      x.utime = (rng() & mask) | 1;
      x.stime = (rng() & mask) | 1;
      x.rtime = (rng() & mask) | 1;
    }
    return out;
  }();
  return v;
}

void BM_CputimeAdjust(benchmark::State& state) {
  Concrete d;
  model::AdjustCfg cfg;
  cfg.era = model::AdjustEra::ClampToRtime;
  cfg.div = ScaleDiv(state.range(0));
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& x = in[i++ & 4095];
    model::PrevCputime<Concrete> prev{0, 0};
    model::TaskCputime<Concrete> cur{x.utime, x.stime, x.rtime};
    auto r = model::cputime_adjust(d, cfg, cur, prev);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()));
  static const char* names[] = {"Loop32", "Exact128", "Generic2020"};
  state.SetLabel(names[state.range(0)]);
}
BENCHMARK(BM_CputimeAdjust)->Arg(int(ScaleDiv::Loop32))->Arg(int(ScaleDiv::Exact128))->Arg(int(ScaleDiv::Generic2020));

}  // namespace

BENCHMARK_MAIN();
