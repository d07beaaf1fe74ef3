// Concrete vs symbolic on every native step: random W-bit states and inputs (edge values
// included) run through the same template in both domains; the symbolic result, evaluated,
// must equal the concrete one bit for bit, obligations included.
#include <gtest/gtest.h>

#include <random>

#include "model/domain/symbolic.hpp"
#include "spec/native_vtime.hpp"

namespace kacct {
namespace {
using namespace model::native;
using C = Concrete;
using S = Symbolic;

template <unsigned W> typename C::template U<W> pick(std::mt19937_64& rng) {
  using T = typename C::template U<W>;
  switch (rng() % 6) {
    case 0: return T(0);
    case 1: return T(~T(0));
    case 2: return T(rng() % 1000);
    case 3: return T(T(~T(0)) - T(rng() % 1000));
    default: return T(rng() >> (rng() % 64));
  }
}

template <unsigned W> void run_case(std::mt19937_64& rng, int hook, bool scaled, bool flush_epoch) {
  NativeCfg n;
  n.scaled = scaled;
  n.flush_epoch = flush_epoch;
  n.splpar = rng() % 2;
  n.tb_hz = 8'312'500;
  n.tb_scale = tb_scale_of(n.tb_hz).scale;
  n.tb_shift = tb_scale_of(n.tb_hz).shift;
  C k;
  Acct<C, W> a;
  hana::for_each(hana::accessors<Acct<C, W>>(), [&](auto acc) { hana::second(acc)(a) = pick<W>(rng); });
  auto now = pick<W>(rng), spurr = pick<W>(rng), steal = pick<W>(rng), sst = pick<W>(rng), ust = pick<W>(rng);
  z3::context ctx;
  S d(ctx);
  Acct<S, W> sa;
  bind(d, a, sa);
  auto L = [&](auto v) { return d.template lit<W>(std::uint64_t(v)); };
  Cost kc, sc;
  const Kctx where = Kctx(rng() % 5);
  switch (hook) {
    case 0: user_entry(k, n, a, now, sst, ust, kc); user_entry(d, n, sa, L(now), L(sst), L(ust), sc); break;
    case 1: user_exit(k, a, now, kc); user_exit(d, sa, L(now), sc); break;
    default:
      account_kernel_side(k, n, a, where, now, spurr, steal, kc);
      account_kernel_side(d, n, sa, where, L(now), L(spurr), L(steal), sc);
      break;
  }
  z3::solver s(ctx);
  ASSERT_EQ(s.check(), z3::sat);
  auto m = s.get_model();
  Acct<C, W> back;
  read_back(m, sa, back);
  EXPECT_EQ(to_json(back), to_json(a)) << "hook " << hook << " where " << int(where) << " W=" << W;
  // Obligations: the concrete run failed one iff a symbolic obligation evaluates violated.
  bool sym_failed = false;
  for (const auto& o : d.obligations) sym_failed = sym_failed || m.eval(o.violated, true).is_true();
  EXPECT_EQ(sym_failed, !k.ok());
}

TEST(NativeConformance, EveryHookBothWidthsAgree) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i)
    for (int hook = 0; hook < 3; ++hook) {
      run_case<32>(rng, hook, i % 2, i % 3 != 0);
      run_case<64>(rng, hook, i % 2, i % 3 != 0);
    }
}

TEST(NativeConformance, TbToNsAgrees) {
  std::mt19937_64 rng(9);
  NativeCfg n;
  for (std::uint64_t hz : {8'312'500ull, 512'000'000ull, 33'333'333ull}) {
    n.tb_hz = hz;
    n.tb_scale = tb_scale_of(hz).scale;
    n.tb_shift = tb_scale_of(hz).shift;
    for (int i = 0; i < 40; ++i) {
      const std::uint64_t t = pick<64>(rng);
      C k;
      Cost c;
      const auto want = tb_to_ns(k, n, t, c);
      z3::context ctx;
      S d(ctx);
      auto got = tb_to_ns(d, n, d.lit<64>(t), c);
      z3::solver s(ctx);
      ASSERT_EQ(s.check(), z3::sat);
      EXPECT_EQ(eval_u64(s.get_model(), got.e()), want) << t;
    }
  }
}

}  // namespace
}  // namespace kacct
