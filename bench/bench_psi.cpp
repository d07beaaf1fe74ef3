// PSI irq model throughput: the seed scenario (test/psi/seed.psi) run through model/psi, with
// and without the spec/psi.hpp checks, on the versions before and after ddae0ca2a8fe.
// items_per_second = script events per second. Also the parser on the expanded seed.
#include <benchmark/benchmark.h>

#include "model/psi/script.hpp"

namespace {
using namespace kacct;
using namespace kacct::model::psi;

const Script& seed() {
  static const Script s = parse_script(seed_script_text(4000, 50)).value();
  return s;
}

void BM_PsiSeed(benchmark::State& st) {
  PsiCfg cfg;
  cfg.ver = st.range(0) == 0 ? arch::v(6, 1) : st.range(0) == 1 ? arch::v(6, 10) : arch::v(6, 17);
  const bool check = st.range(1) != 0;
  const auto& s = seed();
  for (auto _ : st) {
    auto r = run_script(s, cfg, check);
    benchmark::DoNotOptimize(r.world.v.gc[2][0].irq_full);
    if (r.violation) st.SkipWithError(r.violation->invariant.c_str());
  }
  st.SetItemsProcessed(std::int64_t(st.iterations()) * std::int64_t(s.events.size()));
  st.SetLabel(cfg.ver.str() + (check ? " checked" : " unchecked"));
}
BENCHMARK(BM_PsiSeed)->ArgsProduct({{0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_PsiParse(benchmark::State& st) {
  const auto text = write_script(seed());
  for (auto _ : st) benchmark::DoNotOptimize(parse_script(text).value().events.size());
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(text.size()));
}
BENCHMARK(BM_PsiParse)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
