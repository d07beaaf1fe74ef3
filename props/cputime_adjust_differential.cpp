// cputime_adjust (model/cputime): the whole step in every AdjustEra x ScaleDiv, and the three
// division routines on their own (edge values reach their obligations: division by zero, the
// quotient not fitting), concretely and symbolically on the same values (props/differential.hpp).
// ScaleDiv::Abstract is the proofs' abstraction (a fresh value), not a kernel routine.
#include "model/cputime/cputime_adjust.hpp"
#include "props/differential.hpp"

namespace kacct::props {
namespace {
using namespace model;
using namespace diff;

constexpr int kCases = 30;
constexpr AdjustEra kEras[] = {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways,
                               AdjustEra::ClampToRtime};

template <class SD>
void adjust(ScaleDiv div) {
  auto curr = arbitrary<TaskCputime<Concrete>>();
  const auto prev = arbitrary<PrevCputime<Concrete>>();
  if (*rc::gen::arbitrary<bool>()) {  // realistic: prev below rtime, counters of similar size
    curr.sum_exec_runtime = prev.utime / 2 + prev.stime / 2 + *gen_u64() % 1'000'000'000;
    curr.utime %= 1ull << 40;
    curr.stime %= 1ull << 40;
  }
  for (auto era : kEras) {
    const AdjustCfg cfg{era, div};
    differential<SD>(
        "cputime_adjust era=" + std::to_string(int(era)) + " div=" + std::to_string(int(div)),
        [&](auto& d, auto& c, auto& p) { return cputime_adjust(d, cfg, c, p); }, val("curr", curr), val("prev", prev));
  }
}

// stime * rtime / total by one routine; total is 0 now and then.
template <class SD>
void scale_only(ScaleDiv div) {
  const std::uint64_t stime = *gen_u64(), rtime = *gen_u64();
  std::uint64_t total = *rc::gen::weightedOneOf<std::uint64_t>(
      {{1, rc::gen::just<std::uint64_t>(0)}, {2, rc::gen::just(stime + *gen_u64() % 1'000'000)}, {3, gen_u64()}});
  differential<SD>(
      "scale div=" + std::to_string(int(div)),
      [&](auto& d, auto& s, auto& r, auto& t) { return scale(d, div, s, r, t); }, val("stime", stime),
      val("rtime", rtime), val("total", total));
}

TEST(CputimeAdjustDifferential, Loop32) {
  check([] { adjust<Symbolic>(ScaleDiv::Loop32); }, kCases);
}
TEST(CputimeAdjustDifferential, Exact128) {
  check([] { adjust<Symbolic>(ScaleDiv::Exact128); }, kCases);
}
TEST(CputimeAdjustDifferential, Generic2020) {
  check([] { adjust<Symbolic>(ScaleDiv::Generic2020); }, kCases);
}
TEST(CputimeAdjustDifferential, ScaleRoutines) {
  check(
      [] {
        for (auto div : {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020}) scale_only<Symbolic>(div);
      },
      kCases);
}

// The drift this differential found (fixed in Symbolic::mul_u64_u64_div_u64): dividing by 0
// must fail div_nonzero alone in both domains, not also quotient_fits symbolically.
TEST(CputimeAdjustDifferential, MulDivByZeroFailsOnlyDivNonzero) {
  check(
      [] {
        differential<Symbolic>(
            "mul_u64_u64_div_u64(a, b, 0)",
            [](auto& d, auto& a, auto& b, auto& c) { return scale(d, ScaleDiv::Exact128, a, b, c); },
            val("stime", *gen_u64()), val("rtime", *gen_u64()), val("total", std::uint64_t{0}));
      },
      kCases);
}

// The check can fail: on the state (saturating subtraction) and on the obligations (a domain
// that records none: total == 0 and quotients beyond 64 bits go unreported).
TEST(CputimeAdjustDifferential, CatchesSaturatingSub) {
  expect_caught([] { adjust<SaturatingSub>(ScaleDiv::Exact128); }, 30, "the domains disagree");
}
TEST(CputimeAdjustDifferential, CatchesLostObligations) {
  expect_caught(
      [] {
        for (auto div : {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020}) scale_only<NoObligations>(div);
      },
      30, "field failed obligations");
}

}  // namespace
}  // namespace kacct::props
