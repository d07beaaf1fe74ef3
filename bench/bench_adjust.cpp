// cputime_adjust() calls per second on the path that scales (utime and stime both non-zero,
// rtime ahead of prev): per ScaleDiv (the concrete domain), and per Debian tree and division
// flavour the model beside the kernel's own C (test/kernel_diff builds it from the Debian
// sources; label kernel-diff) on the same inputs in this process. Both sides are called through
// a function that is not inlined, with the same arguments; the model's AdjustCfg is the one
// model::adjust_cfg() gives the tree, as kernel_diff_test uses.
//   model / kernel ratio: adjust/<tree>/<flavour>/model time over .../kernel time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "arch/version.hpp"
#include "model/cputime/cputime_adjust.hpp"
#ifdef KACCT_BENCH_KERNEL
#include "test/kernel_diff/kdiff.h"
#endif

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

// flatten: cputime_adjust() inlined into the loop, the shape this benchmark had at 7b75005 (the
// issue's numbers). Out of line, the call costs more than the work: the function's SLP-vectorised
// 16-byte load of curr.stime/sum_exec_runtime spans two of the loop's stores just before it, a
// failed store forward that took half the samples (2.4x per call; docs/performance.md).
[[gnu::flatten]] void BM_CputimeAdjust(benchmark::State& state) {
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

#ifdef KACCT_BENCH_KERNEL
// The model with the kernel side's signature (curr = {utime, stime, sum_exec_runtime}, prev =
// {utime, stime} in/out, out = {*ut, *st}). The kernel's glue has cputime_adjust() inlined into
// its wrapper (one translation unit); flatten does the same here, so both sides are one call.
[[gnu::noinline, gnu::flatten]] void model_adjust(Concrete& d, const model::AdjustCfg& cfg, const std::uint64_t curr[3],
                                                  std::uint64_t prev[2], std::uint64_t out[2]) {
  model::PrevCputime<Concrete> p{prev[0], prev[1]};
  const auto r = model::cputime_adjust(d, cfg, model::TaskCputime<Concrete>{curr[0], curr[1], curr[2]}, p);
  prev[0] = p.utime;
  prev[1] = p.stime;
  out[0] = r.utime;
  out[1] = r.stime;
}
struct Side {
  const kd_api* k;
  model::AdjustCfg cfg;
};

template <bool Kernel>
void BM_Adjust(benchmark::State& state, Side s) {
  Concrete d;
  const auto& in = inputs();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& x = in[i++ & 4095];
    const std::uint64_t curr[3] = {x.utime, x.stime, x.rtime};
    std::uint64_t prev[2] = {0, 0}, out[2];
    if constexpr (Kernel)
      s.k->cputime_adjust_bare(curr, prev, out);
    else
      model_adjust(d, s.cfg, curr, prev, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()));
}

// The two sides agree on every input (else the comparison is of different work).
void agree_or_abort(const Side& s, const char* name) {
  Concrete d;
  for (const auto& x : inputs()) {
    const std::uint64_t curr[3] = {x.utime, x.stime, x.rtime};
    std::uint64_t kp[2] = {0, 0}, mp[2] = {0, 0}, ko[2], mo[2];
    s.k->cputime_adjust_bare(curr, kp, ko);
    model_adjust(d, s.cfg, curr, mp, mo);
    if (ko[0] != mo[0] || ko[1] != mo[1] || kp[0] != mp[0] || kp[1] != mp[1]) {
      std::fprintf(stderr, "bench_adjust: model and kernel %s disagree on utime=%llu stime=%llu rtime=%llu\n", name,
                   (unsigned long long)x.utime, (unsigned long long)x.stime, (unsigned long long)x.rtime);
      std::abort();
    }
  }
}

void register_kernel_pairs() {
  struct Tree {
    const char* name;
    std::size_t build;  // arch::distro_builds index
    const kd_api* x86;
    const kd_api* gen;
  };
  static const Tree trees[] = {{"6.1", 0, &k61x86_api, &k61gen_api}, {"6.12", 1, &k612x86_api, &k612gen_api}};
  for (const auto& t : trees)
    for (bool x86 : {true, false}) {
      const Side s{x86 ? t.x86 : t.gen, model::adjust_cfg(arch::distro_build(t.build), x86)};
      const std::string base = std::string("adjust/") + t.name + (x86 ? "/x86-64" : "/generic");
      agree_or_abort(s, base.c_str());
      benchmark::RegisterBenchmark((base + "/model").c_str(), BM_Adjust<false>, s);
      benchmark::RegisterBenchmark((base + "/kernel").c_str(), BM_Adjust<true>, s);
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
#ifdef KACCT_BENCH_KERNEL
  register_kernel_pairs();
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
