// powerpc native vtime (model/native): every step (the kernel-side hooks in every context, user
// entry and exit, vtime_flush, the pre-4.11 immediate flush, the PPC32 hand-over, tb_to_ns) on
// 32- and 64-bit words, in every variant the steps read (scaled x flush epoch x SPLPAR, the
// hand-over flags, every CPU's timebase), concretely and symbolically on the same values
// (props/differential.hpp). Edge values include the scaled split's s + u == 0 (mod 2^W) hazard.
#include <set>
#include <tuple>

#include "arch/registry.hpp"
#include "model/native/native.hpp"
#include "props/differential.hpp"

namespace kacct::props {
namespace {
using namespace model;
using namespace model::native;
using namespace diff;

constexpr int kCases = 20;

// Every combination of the flags the steps branch on, at every modelled timebase frequency.
std::vector<NativeCfg> variants() {
  std::set<std::uint64_t> seen;
  for (const auto& c : arch::combos_of(arch::Accounting::Native)) seen.insert(c.cpu.tb_hz);
  const std::vector<std::uint64_t> hz(seen.begin(), seen.end());
  std::vector<NativeCfg> out;
  for (unsigned w : {32u, 64u})
    for (bool scaled : {false, true})
      for (bool epoch : {false, true})
        for (bool splpar : {false, true}) {
          NativeCfg n;
          n.word_bits = w;
          n.per_task = w == 32;
          n.scaled = scaled;
          n.flush_epoch = epoch;
          n.splpar = splpar;
          n.copy_startspurr = n.per_task && scaled && epoch;
          n.zero_on_switch = n.per_task && !epoch;
          n.tb_hz = *rc::gen::elementOf(hz);
          n.tb_scale = tb_scale_of(n.tb_hz).scale;
          n.tb_shift = tb_scale_of(n.tb_hz).shift;
          out.push_back(n);
        }
  return out;
}
std::string cfg_text(const NativeCfg& n) {
  return "W=" + std::to_string(n.word_bits) + " scaled=" + std::to_string(n.scaled) +
         " flush_epoch=" + std::to_string(n.flush_epoch) + " splpar=" + std::to_string(n.splpar) +
         " copy_startspurr=" + std::to_string(n.copy_startspurr) +
         " zero_on_switch=" + std::to_string(n.zero_on_switch) + " tb_hz=" + std::to_string(n.tb_hz);
}
FlushCtx gen_flush_ctx() { return {*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>()}; }

// A W-bit accounting state; now and then one whose scaled split divides by s + u == 0 (mod 2^W)
// at `now` (u != 0, SPURR delta != s + u).
template <unsigned W>
Acct<Concrete, W> gen_acct(typename Concrete::template U<W> now) {
  using UL = typename Concrete::template U<W>;
  auto a = arbitrary<Acct<Concrete, W>>();
  if (*rc::gen::weightedElement<bool>({{4, false}, {1, true}})) {
    const UL s = UL(now - a.starttime);
    a.utime = UL(a.utime_sspurr - s);
    if (a.utime == a.utime_sspurr) a.utime_sspurr = UL(a.utime - 1);
    a.startspurr = UL(a.startspurr + 1);
  }
  return a;
}

// Run `body.template operator()<W>(cfg)` for every variant, with W the variant's word width.
template <class Body>
void each_variant(Body&& body) {
  for (const auto& n : variants()) {
    if (n.word_bits == 32)
      body.template operator()<32>(n);
    else
      body.template operator()<64>(n);
  }
}

template <class SD>
void kernel_side() {
  each_variant([]<unsigned W>(const NativeCfg& n) {
    using UL = typename Concrete::template U<W>;
    const UL now = *gen_uint<UL>(), spurr = *gen_uint<UL>(), steal = *gen_uint<UL>();
    const auto a = gen_acct<W>(now);
    for (Kctx where : {Kctx::Kernel, Kctx::Guest, Kctx::Hardirq, Kctx::Softirq, Kctx::Idle})
      differential<SD>(
          "account_kernel_side where=" + std::to_string(int(where)) + " " + cfg_text(n),
          [&](auto& d, auto& acct, auto& t, auto& sp, auto& st) {
            Cost k;
            account_kernel_side(d, n, acct, where, t, sp, st, k);
          },
          val("acct", a), val("now", now), val("spurr", spurr), val("steal", steal));
  });
}

template <class SD>
void user_entry_exit() {
  each_variant([]<unsigned W>(const NativeCfg& n) {
    using UL = typename Concrete::template U<W>;
    const UL now = *gen_uint<UL>(), sst = *gen_uint<UL>(), ust = *gen_uint<UL>();
    const auto a = gen_acct<W>(now);
    differential<SD>(
        "user_entry " + cfg_text(n),
        [&](auto& d, auto& acct, auto& t, auto& s1, auto& s2) {
          Cost k;
          user_entry(d, n, acct, t, s1, s2, k);
        },
        val("acct", a), val("now", now), val("sst", sst), val("ust", ust));
    differential<SD>(
        "user_exit " + cfg_text(n),
        [&](auto& d, auto& acct, auto& t) {
          Cost k;
          user_exit(d, acct, t, k);
        },
        val("acct", a), val("now", now));
  });
}

template <class SD>
void flush() {
  each_variant([]<unsigned W>(const NativeCfg& n) {
    const auto a = arbitrary<Acct<Concrete, W>>();
    const auto c = arbitrary<CpuAcct<Concrete>>();
    const auto p = arbitrary<TaskAcct<Concrete>>();
    const auto sp = arbitrary<Scaled<Concrete>>();
    const FlushCtx fx = gen_flush_ctx();
    const std::string ctx = " nice_pos=" + std::to_string(fx.nice_pos) + " nr_iowait=" + std::to_string(fx.nr_iowait);
    differential<SD>(
        "vtime_flush " + cfg_text(n) + ctx,
        [&](auto& d, auto& acct, auto& cpu, auto& task, auto& scaled) {
          Cost k;
          vtime_flush(d, n, acct, cpu, task, scaled, fx, k);
        },
        val("acct", a), val("cpu", c), val("task", p), val("scaled", sp));
    const auto cs = arbitrary<TbSinks<Concrete, W>>();
    const auto ts = arbitrary<TbSinks<Concrete, W>>();
    for (bool user_too : {false, true})
      differential<SD>(
          "flush_immediate user_too=" + std::to_string(user_too) + " " + cfg_text(n) + ctx,
          [&](auto& d, auto& acct, auto& cpu, auto& task, auto& scaled) {
            Cost k;
            flush_immediate(d, n, acct, cpu, task, scaled, fx, user_too, k);
          },
          val("acct", a), val("cpu sinks", cs), val("task sinks", ts), val("scaled", sp));
  });
}

template <class SD>
void hand_over_and_tb_to_ns() {
  each_variant([]<unsigned W>(const NativeCfg& n) {
    const auto prev = arbitrary<Acct<Concrete, W>>();
    const auto next = arbitrary<Acct<Concrete, W>>();
    differential<SD>(
        "hand_over " + cfg_text(n),
        [&](auto& d, auto& p, auto& x) {
          Cost k;
          hand_over(d, n, p, x, k);
        },
        val("prev", prev), val("next", next));
    const std::uint64_t ticks = *gen_u64();
    differential<SD>(
        "tb_to_ns " + cfg_text(n),
        [&](auto& d, auto& t) {
          Cost k;
          return tb_to_ns(d, n, t, k);
        },
        val("ticks", ticks));
  });
}

TEST(NativeDifferential, AccountKernelSide) { check(kernel_side<Symbolic>, kCases); }
TEST(NativeDifferential, UserEntryExit) { check(user_entry_exit<Symbolic>, kCases); }
TEST(NativeDifferential, VtimeFlushAndImmediate) { check(flush<Symbolic>, kCases); }
TEST(NativeDifferential, HandOverAndTbToNs) { check(hand_over_and_tb_to_ns<Symbolic>, kCases); }

// The check can fail: on the state (saturating subtraction) and on the obligations (the scaled
// split's division by s + u == 0 goes unreported).
TEST(NativeDifferential, CatchesSaturatingSub) {
  expect_caught(user_entry_exit<SaturatingSub>, 20, "the domains disagree");
}
TEST(NativeDifferential, CatchesLostObligations) {
  expect_caught(kernel_side<NoObligations>, 20, "field failed obligations");
}

}  // namespace
}  // namespace kacct::props
