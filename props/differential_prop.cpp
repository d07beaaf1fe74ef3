// Whole-step differential: each model step run in the concrete domain equals the same step run
// in the symbolic domain on the same inputs (bound to Z3 constants with kacct::bind), with every
// output field read back through Z3's simplifier; the failed obligations agree too. Covers
// account_process_tick, account_idle_ticks, irqtime_account_irq, update_rq_clock, update_curr
// and cputime_adjust in every AdjustEra x ScaleDiv (Abstract is proof-only).
#include <boost/hana.hpp>

#include "model/cputime/cputime_adjust.hpp"
#include "model/domain/symbolic.hpp"
#include "model/tick/tick.hpp"
#include "props/props.hpp"

namespace kacct::props {
namespace {
namespace hana = boost::hana;
using namespace model;
using C = Concrete;
using S = Symbolic;

// Values near the edges as well as realistic ones (ns counters, wrap-around, 32-bit limits).
rc::Gen<std::uint64_t> gen_u64() {
  return rc::gen::weightedOneOf<std::uint64_t>(
      {{3, rc::gen::inRange<std::uint64_t>(0, 4'000'000'000ull)},
       {2, rc::gen::arbitrary<std::uint64_t>()},
       {1, rc::gen::element<std::uint64_t>(0, 1, 2, 0xffffffffull, 1ull << 32, 1ull << 62, 1ull << 63, ~0ull, ~0ull - 1)}});
}
// Fill every u64 of a reflected concrete struct from gen_u64().
template <class T> void fill(T& v) {
  if constexpr (std::is_same_v<T, std::uint64_t>) {
    v = *gen_u64();
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) { fill(hana::second(acc)(v)); });
  } else {
    for (auto& x : v) fill(x);
  }
}
template <template <class> class T> T<C> random_state() {
  T<C> v;
  fill(v);
  return v;
}
template <template <class> class T> T<S> to_sym(const S& s, const T<C>& c) {
  T<S> out;
  bind(s, c, out);
  return out;
}
// Symbolic -> concrete by simplification (inputs are constants, so every field must fold).
template <class SV, class CV> void from_sym(const SV& s, CV& c) {
  if constexpr (is_symbv<SV>::value) {
    const z3::expr e = s.e().simplify();
    std::uint64_t v = 0;
    if (!e.is_numeral_u64(v)) RC_FAIL("did not fold to a numeral: " + e.to_string());
    c = static_cast<CV>(v);
  } else if constexpr (Reflected<SV>) {
    zip_fields(s, c, [&](const char*, const auto& sf, auto& cf) { from_sym(sf, cf); });
  } else {
    for (std::size_t i = 0; i < s.size(); ++i) from_sym(s[i], c[i]);
  }
}
template <class T, class SV> void expect_same(const char* what, const T& concrete, const SV& symbolic) {
  T back{};
  from_sym(symbolic, back);
  C d;
  if (!equal(d, concrete, back))
    RC_FAIL(std::string(what) + ": concrete " + to_json(concrete).dump() + " != symbolic " + to_json(back).dump());
}
// The symbolic obligations that are violated, found with one simplify per 64 obligations (they
// share their path conditions, and Z3 caches only within one call).
void expect_same_obligations(const C& c, const S& s) {
  std::vector<std::string> sym;
  const auto& obs = s.obligations;
  for (std::size_t base = 0; base < obs.size(); base += 64) {
    const std::size_t n = std::min<std::size_t>(64, obs.size() - base);
    z3::expr bits = s.ctx().bv_val(std::uint64_t{0}, 64);
    for (std::size_t i = 0; i < n; ++i)
      bits = bits | z3::ite(obs[base + i].violated, s.ctx().bv_val(std::uint64_t{1} << i, 64),
                            s.ctx().bv_val(std::uint64_t{0}, 64));
    std::uint64_t v = 0;
    const z3::expr folded = bits.simplify();
    if (!folded.is_numeral_u64(v)) RC_FAIL("obligations did not fold: " + folded.to_string());
    for (std::size_t i = 0; i < n; ++i)
      if (v >> i & 1) sym.push_back(obs[base + i].site);
  }
  std::vector<std::string> con(c.failed.begin(), c.failed.end());
  RC_ASSERT(con == sym);
}

TickCfg gen_tick_cfg() {
  TickCfg cfg;
  cfg.irq_time = *rc::gen::arbitrary<bool>();
  cfg.steal = *rc::gen::arbitrary<bool>();
  cfg.tick_nsec = *rc::gen::weightedOneOf<std::uint64_t>(
      {{4, rc::gen::element(arch::tick_nsec(100), arch::tick_nsec(250), arch::tick_nsec(300), arch::tick_nsec(1000))},
       {1, gen_u64()}});
  return cfg;
}
TickCtx gen_tick_ctx() {
  TickCtx x;
  x.user_tick = *rc::gen::arbitrary<bool>();
  x.preempt_count = *rc::gen::element(HARDIRQ_OFFSET, 2 * HARDIRQ_OFFSET, HARDIRQ_OFFSET + SOFTIRQ_OFFSET,
                                      3 * HARDIRQ_OFFSET + SOFTIRQ_OFFSET, 0u, SOFTIRQ_OFFSET);
  x.is_idle = *rc::gen::arbitrary<bool>();
  x.is_ksoftirqd = *rc::gen::arbitrary<bool>();
  x.pf_vcpu = *rc::gen::arbitrary<bool>();
  x.nice_pos = *rc::gen::arbitrary<bool>();
  x.nr_iowait = *rc::gen::arbitrary<bool>();
  return x;
}

constexpr int kCases = 30;

TEST(Differential, AccountProcessTick) {
  z3::context ctx;
  check(
      [&] {
        const TickCfg cfg = gen_tick_cfg();
        const TickCtx x = gen_tick_ctx();
        auto c = random_state<CpuAcct>();
        auto p = random_state<TaskAcct>();
        S s(ctx);
        auto sc = to_sym(s, c);
        auto sp = to_sym(s, p);
        C d;
        account_process_tick(d, cfg, c, p, x);
        account_process_tick(s, cfg, sc, sp, x);
        expect_same("cpu", c, sc);
        expect_same("task", p, sp);
        expect_same_obligations(d, s);
      },
      kCases);
}

TEST(Differential, AccountIdleTicks) {
  z3::context ctx;
  check(
      [&] {
        const TickCfg cfg = gen_tick_cfg();
        TickCtx x = gen_tick_ctx();
        x.preempt_count = 0;
        x.is_idle = true;
        const std::uint64_t ticks = *rc::gen::weightedOneOf<std::uint64_t>(
            {{4, rc::gen::inRange<std::uint64_t>(1, 10'000)}, {1, gen_u64()}});
        auto c = random_state<CpuAcct>();
        auto p = random_state<TaskAcct>();
        S s(ctx);
        auto sc = to_sym(s, c);
        auto sp = to_sym(s, p);
        C d;
        account_idle_ticks(d, cfg, c, p, x, ticks);
        account_idle_ticks(s, cfg, sc, sp, x, s.lit<64>(ticks));
        expect_same("cpu", c, sc);
        expect_same("idle task", p, sp);
        expect_same_obligations(d, s);
      },
      kCases);
}

TEST(Differential, IrqtimeAccountIrq) {
  z3::context ctx;
  check(
      [&] {
        const TickCfg cfg = gen_tick_cfg();
        const auto cls = *rc::gen::element(IrqClass::None, IrqClass::Hardirq, IrqClass::Softirq);
        auto c = random_state<CpuAcct>();
        const std::uint64_t now = *rc::gen::arbitrary<bool>() ? c.irqtime.irq_start_time + *gen_u64() % 10'000'000
                                                              : *gen_u64();
        S s(ctx);
        auto sc = to_sym(s, c);
        C d;
        irqtime_account_irq(d, cfg, c, now, cls);
        irqtime_account_irq(s, cfg, sc, s.lit<64>(now), cls);
        expect_same("cpu", c, sc);
        expect_same_obligations(d, s);
      },
      kCases);
}

TEST(Differential, UpdateRqClockAndCurr) {
  z3::context ctx;
  check(
      [&] {
        const TickCfg cfg = gen_tick_cfg();
        auto c = random_state<CpuAcct>();
        auto p = random_state<TaskAcct>();
        if (*rc::gen::arbitrary<bool>()) p.exec_start = c.rq.clock_task - *gen_u64() % 10'000'000;
        const std::uint64_t now = *rc::gen::arbitrary<bool>() ? c.rq.clock + *gen_u64() % 10'000'000 : *gen_u64();
        S s(ctx);
        auto sc = to_sym(s, c);
        auto sp = to_sym(s, p);
        C d;
        update_rq_clock(d, cfg, c, now);
        update_rq_clock(s, cfg, sc, s.lit<64>(now));
        expect_same("cpu after update_rq_clock", c, sc);
        update_curr(d, c, p);
        update_curr(s, sc, sp);
        expect_same("task after update_curr", p, sp);
        expect_same_obligations(d, s);
      },
      kCases);
}

TEST(Differential, UpdateCurr) {
  z3::context ctx;
  check(
      [&] {
        auto c = random_state<CpuAcct>();
        auto p = random_state<TaskAcct>();
        if (*rc::gen::arbitrary<bool>()) p.exec_start = c.rq.clock_task - *gen_u64() % 10'000'000;
        S s(ctx);
        auto sc = to_sym(s, c);
        auto sp = to_sym(s, p);
        C d;
        update_curr(d, c, p);
        update_curr(s, sc, sp);
        expect_same("task", p, sp);
        expect_same_obligations(d, s);
      },
      kCases);
}

// cputime_adjust in every era for one division routine (one test per routine: Loop32's 192
// merged rounds make it the slow one).
void adjust_differential(ScaleDiv div, int cases) {
  check(
      [&] {
        z3::context ctx;  // per case: a context that keeps growing slows every Z3 call
        auto curr = random_state<TaskCputime>();
        auto prev = random_state<PrevCputime>();
        if (*rc::gen::arbitrary<bool>()) {  // realistic: prev below rtime, counters of similar size
          curr.sum_exec_runtime = prev.utime / 2 + prev.stime / 2 + *gen_u64() % 1'000'000'000;
          curr.utime %= 1ull << 40;
          curr.stime %= 1ull << 40;
        }
        for (auto era : {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways, AdjustEra::ClampToRtime}) {
          const AdjustCfg cfg{era, div};
          S s(ctx);
          auto scurr = to_sym(s, curr);
          auto sprev = to_sym(s, prev);
          auto cprev = prev;
          C d;
          const auto out = cputime_adjust(d, cfg, curr, cprev);
          const auto sout = cputime_adjust(s, cfg, scurr, sprev);
          expect_same("output", out, sout);
          expect_same("prev", cprev, sprev);
          expect_same_obligations(d, s);
        }
      },
      cases);
}
TEST(Differential, CputimeAdjustLoop32) { adjust_differential(ScaleDiv::Loop32, kCases); }
TEST(Differential, CputimeAdjustExact128) { adjust_differential(ScaleDiv::Exact128, kCases); }
TEST(Differential, CputimeAdjustGeneric2020) { adjust_differential(ScaleDiv::Generic2020, kCases); }

}  // namespace
}  // namespace kacct::props
