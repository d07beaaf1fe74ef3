// Z3 jobs for powerpc native vtime (model/native/native.hpp, spec/native_vtime.hpp), at the real
// word widths (32-bit PPC32 with wrap-around, 64-bit PPC64), on the step harness: every
// counterexample is replayed concretely. The Kconfig patches' claims are in claims_native.cpp.
#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <random>
#include <set>

#include "arch/registry.hpp"
#include "proofs/jobs.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"
#include "spec/native_vtime.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::native;
namespace sn = kacct::spec::native;
using S = Symbolic;

namespace {

constexpr const char* kSeq = kNativeSeqNote;
constexpr const char* kNoSteal = "no SPLPAR steal (steal enters as a free DTL input; see native_vtime.steal_clamped)";

NativeCfg base_cfg(unsigned w, bool scaled, bool flush_epoch = true) { return native_base_cfg(w, scaled, flush_epoch); }

}  // namespace

NativeCfg native_base_cfg(unsigned w, bool scaled, bool flush_epoch) {
  NativeCfg n;
  n.word_bits = w;
  n.scaled = scaled;
  n.flush_epoch = flush_epoch;
  n.source = ScaledSource::Spurr;
  n.tb_hz = 512'000'000;
  n.tb_scale = tb_scale_of(n.tb_hz).scale;
  n.tb_shift = tb_scale_of(n.tb_hz).shift;
  return n;
}

namespace {

std::string wname(unsigned w) { return w == 32 ? "PPC32" : "PPC64"; }

// ---- the split, one vtime_delta_scaled() call from any state ----
template <class D, unsigned W>
struct SplitIn {
  using A = Acct<D, W>;
  using UL = ulong_t<D, W>;
  BOOST_HANA_DEFINE_STRUCT(SplitIn, (A, acct), (UL, spurr_now), (UL, s));
};

template <unsigned W>
struct SplitCase {
  template <class D>
  using In = SplitIn<D, W>;
  std::string inv;      // empty: the obligations alone (no_division_by_zero)
  bool broken = false;  // sensitivity test: the system share reported one too high

  // dS and u as variables of their own (spurr_now = startspurr + dS, utime = utime_sspurr + u:
  // a change of variables that still covers every pre-state), so that the differences are one
  // adder each after simplification, not differently associated sums the SAT solver must prove
  // equal. Measured at 64 bits, the abstracted split_bounds query: 5.4 s before, 0.2 s after.
  In<S> fresh(S& d) const {
    In<S> in;
    make_fresh(d, in.acct, "acct");
    in.s = d.template fresh<W>("s");
    in.spurr_now = d.add(in.acct.startspurr, d.template fresh<W>("dS"));
    in.acct.utime = d.add(in.acct.utime_sspurr, d.template fresh<W>("u"));
    return in;
  }
  void assume(S&, const In<S>&, std::vector<z3::expr>&) const {}
  template <class D>
  sn::SplitIo<D, W> run(D& d, In<D>& in) const {
    Cost k;
    const auto a0 = in.acct;
    auto s_sc = delta_scaled<D, W>(d, base_cfg(W, true), in.acct, in.spurr_now, in.s, k);
    if (broken) s_sc = d.add(s_sc, d.template lit<W>(1));
    return {d.sub(in.spurr_now, a0.startspurr), in.s, d.sub(a0.utime, a0.utime_sspurr), s_sc,
            d.sub(in.acct.utime_scaled, a0.utime_scaled)};
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    const auto io = run(d, in);
    if (inv == "split_sum") return {sn::split_sum(d, io)};
    if (inv == "split_bounds") return {sn::split_bounds(d, io)};
    if (inv == "split_identity") return {sn::split_identity(d, io)};
    if (inv == "split_no_overflow") return {sn::split_no_overflow(d, io)};
    return {};
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const {
    Concrete k;
    auto copy = in;
    const auto io = run(k, copy);
    return {{"dS", io.ds}, {"s", io.s}, {"u", io.u}, {"s_scaled", io.s_sc}};
  }
  nlohmann::ordered_json state(const In<Concrete>& in) const { return to_json(in); }
};

// ---- the split where every obligation holds: the division abstracted, with a lemma ----
// The W-bit quotient udiv(dS * s, s + u) and the product's overflow test make the bit-vector
// query hard (a W-bit divider and multiplier; unknown at 20 s). Where the obligations hold, each
// quotient udiv(a * b, c) becomes a fresh value and each test bvumul_noovfl(a, b) a fresh
// Boolean, with the fact c != 0 && a * b fits && b <= c -> q <= a (the lemma job below). This
// only widens the query (the real terms are one choice of the fresh ones): unsat proves the
// statement; a model is replayed concretely and is a counterexample only if the replay breaks
// an invariant with every obligation met, else the query is asked again with real terms.
constexpr const char* kLemma = "native_vtime.lemma.udiv_product_le[every width]";

void collect_div_terms(const z3::expr& e, z3::expr_vector& divs, z3::expr_vector& tests, std::set<unsigned>& seen) {
  if (!e.is_app() || !seen.insert(e.id()).second) return;
  for (unsigned i = 0; i < e.num_args(); ++i) collect_div_terms(e.arg(i), divs, tests, seen);
  const auto k = e.decl().decl_kind();
  if (k == Z3_OP_BUDIV || k == Z3_OP_BUDIV_I) divs.push_back(e);
  if (k == Z3_OP_BUMUL_NO_OVFL) tests.push_back(e);
}
z3::expr udiv_product_fact(const z3::expr& q) {
  const auto x = q.arg(0), c = q.arg(1);
  auto& ctx = q.ctx();
  if (!x.is_app() || x.decl().decl_kind() != Z3_OP_BMUL || x.num_args() != 2) return ctx.bool_val(true);
  const auto a = x.arg(0), b = x.arg(1);
  return z3::implies(c != ctx.bv_val(0, c.get_sort().bv_size()) && z3::bvmul_no_overflow(a, b, false) && z3::ule(b, c),
                     z3::ule(q, a));
}

template <class C>
Check invariants_where_obligations_hold(const C& c, const std::vector<std::string>& names, unsigned timeout_ms) {
  z3::context ctx;
  Symbolic d(ctx);
  auto in = detail::fresh_in(c, d);
  const auto pre = in;
  std::vector<z3::expr> as;
  c.assume(d, in, as);
  auto oks = c.step(d, in);
  for (const auto& a : d.assumptions) as.push_back(a);
  for (const auto& o : d.obligations) as.push_back(!o.violated);
  z3::expr inv = ctx.bool_val(true);
  for (const auto& ok : oks) inv = inv && ok.e();
  z3::expr_vector divs(ctx), tests(ctx);
  std::set<unsigned> seen;
  collect_div_terms(inv, divs, tests, seen);
  for (const auto& a : as) collect_div_terms(a, divs, tests, seen);
  const unsigned nd = divs.size();
  for (unsigned i = 0; i < nd; ++i) {
    as.push_back(udiv_product_fact(divs[i]));
    collect_div_terms(as.back(), divs, tests, seen);  // the fact's overflow test
  }
  // abstract(n): the quotients, and with n == 2 also the overflow tests, as fresh values.
  auto ask = [&](int n) {
    z3::expr_vector src(ctx), dst(ctx);
    for (unsigned i = 0; i < divs.size() && n >= 1; ++i) {
      src.push_back(divs[i]);
      dst.push_back(ctx.bv_const(fmt::format("udiv!{}", i).c_str(), divs[i].get_sort().bv_size()));
    }
    for (unsigned i = 0; i < tests.size() && n >= 2; ++i) {
      src.push_back(tests[i]);
      dst.push_back(ctx.bool_const(fmt::format("mul_fits!{}", i).c_str()));
    }
    std::vector<z3::expr> abs;
    for (auto a : as) abs.push_back(a.substitute(src, dst));
    return solve(ctx, abs, (!inv).substitute(src, dst), timeout_ms);
  };
  Check out;
  out.approximations = d.approximations;
  // A counterexample only if the concrete step breaks an invariant and no obligation.
  auto replays = [&](const z3::model& m) {
    auto k_in = detail::read_back_in(c, m, pre);
    Concrete k;
    auto k_post = k_in;
    const auto koks = c.step(k, k_post);
    out.broken.clear();
    for (std::size_t i = 0; i < koks.size(); ++i)
      if (!koks[i]) out.broken.push_back(names.at(i));
    out.inputs = c.json(k_in);
    return !out.broken.empty() && k.failed.empty();
  };
  // A model whose fresh values are not the real ones is asked again with fewer of them (a model
  // is easier to find than a proof): the overflow tests real, then the quotients too. Measured
  // on a split broken on purpose at 64 bits: 8.3 s with the second step left out, 1.5 s with it.
  Solved res;
  for (int n = 2; n >= 0; --n) {
    res = ask(n);
    out.seconds += res.seconds;
    if (res.verdict != Verdict::Violated || replays(*res.model)) break;
    if (n == 0) {
      res.verdict = Verdict::Error;
      res.reason = "Z3 counterexample does not replay concretely (domain mismatch)";
    }
  }
  out.verdict = res.verdict;
  out.reason = res.reason;
  if (out.verdict != Verdict::Violated) out.broken.clear();
  return out;
}

// udiv(a * b, c) <= a when c != 0, the product fits and b <= c, for W-bit a, b, c at every W.
// SMT-LIB's bvmul of a product that fits is the integer product, bvudiv by c != 0 the floor
// quotient q, so q * c <= a * b: the statement follows from the nonlinear real one
// a >= 0, c >= 1, b <= c, q * c <= a * b -> q <= a (integers are reals), which Z3's nlsat (a
// decision procedure for nonlinear real arithmetic) proves. Checked once more as the bit-vector
// statement itself at 8 and 10 bits (bit-blasted).
Result udiv_product_lemma(unsigned timeout_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  r.name = kLemma;
  r.approximations = {};
  try {
    z3::context c;
    z3::params p(c);
    set_budget(p, timeout_ms);
    auto a = c.real_const("a"), b = c.real_const("b"), cc = c.real_const("c"), q = c.real_const("q");
    z3::solver s = z3::tactic(c, "qfnra-nlsat").mk_solver();
    s.set(p);
    s.add(a >= 0 && cc >= 1 && b <= cc && q * cc <= a * b && q > a);
    const auto real = s.check();
    std::vector<std::string> bv;
    for (unsigned w : {8u, 10u}) {  // 12 bits: 1.6 s more
      auto x = c.bv_const(fmt::format("a{}", w).c_str(), w), y = c.bv_const(fmt::format("b{}", w).c_str(), w),
           z = c.bv_const(fmt::format("c{}", w).c_str(), w);
      z3::solver t = (z3::tactic(c, "simplify") & z3::tactic(c, "bit-blast") & z3::tactic(c, "sat")).mk_solver();
      t.set(p);
      t.add(!udiv_product_fact(z3::udiv(x * y, z)));
      const auto v = t.check();
      bv.push_back(fmt::format("{} bits: {}", w, v == z3::unsat ? "unsat" : v == z3::sat ? "sat" : "unknown"));
      if (v == z3::sat) {
        r.verdict = Verdict::Error;  // the real-arithmetic proof and the bit-vector check disagree
        r.detail = fmt::format("the bit-vector statement fails at {} bits: the translation is wrong", w);
        break;
      }
    }
    if (r.detail.empty()) {
      r.verdict = real == z3::unsat ? Verdict::Holds : Verdict::Unknown;
      r.detail = fmt::format(
          "c != 0 && a * b < 2^W && b <= c -> udiv(a * b, c) <= a: {} (real arithmetic, nlsat; bvmul and bvudiv are "
          "the integer product and floor quotient there); the bit-vector statement at {}",
          real == z3::unsat ? "unsat" : "solver: " + s.reason_unknown(), fmt::join(bv, ", "));
    }
  } catch (const z3::exception& e) {
    r.verdict = Verdict::Error;
    r.detail = std::string("z3: ") + e.msg();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// split_sum, split_bounds, split_identity: the obligations alone first (the division by zero
// is found there), then the invariant where every obligation holds, with the division
// abstracted; no_division_by_zero and split_no_overflow: one query of the whole step.
template <unsigned W>
Result split_job(const std::string& inv, unsigned timeout_ms, bool lemma_holds, bool broken = false) {
  const std::string name = fmt::format("native_vtime.vtime_delta_scaled.{}[{}]", inv, wname(W));
  const SplitCase<W> c{inv == "no_division_by_zero" ? std::string() : inv, broken};
  const std::string where = fmt::format("vtime_delta_scaled at {} bits", W);
  const std::string holds =
      fmt::format("{} at {} bits: unsat{}", inv, W,
                  inv == "split_sum" || inv == "split_bounds" ? " (under the no-overflow precondition)" : "");
  std::vector<std::string> approx = {kSeq, "one call from any state: every W-bit field value"};
  if (c.inv.empty() || c.inv == "split_no_overflow")
    return step_job(name, c, c.inv.empty() ? std::vector<std::string>{} : std::vector<std::string>{inv}, approx,
                    timeout_ms, where, holds);
  StepJob j(name, approx);
  auto obl = check_step(SplitCase<W>{"", broken}, {}, timeout_ms, name);
  if (obl.verdict == Verdict::Violated || obl.verdict == Verdict::Holds) {
    auto q = invariants_where_obligations_hold(c, {inv}, timeout_ms);
    if (q.verdict == Verdict::Holds && !lemma_holds) {  // a proof from an unproved fact is none
      q.verdict = Verdict::Unknown;
      q.reason = fmt::format("{} does not hold", kLemma);
    }
    j.note(fmt::format(
        "where the obligations hold: udiv(dS * s, s + u) and the product's overflow test abstracted as fresh values, "
        "with the fact c != 0 && a * b fits && b <= c -> udiv(a * b, c) <= a ({})",
        kLemma));
    if (obl.verdict == Verdict::Violated) {
      obl.assuming_obligations = q.verdict;
      obl.seconds += q.seconds;
    } else {
      obl = q;  // no obligation can fail: the invariant query is the whole job
    }
  }
  j.add(obl, where);
  return j.done(holds);
}

// ---- TB conservation of each hook, from any state where it holds (mod 2^W) ----
// Reset: vtime_reset() at CPU bring-up (6.12.101+, secondary_cpu_time_init()), on the idle
// context: the TB it skips goes to the ghost origin (what no bucket will ever hold).
enum class Hook { UserEntry, UserExit, Kernel, Guest, Hardirq, Softirq, Idle, Flush, HandOver, Reset };
const char* hook_name(Hook h) {
  switch (h) {
    case Hook::UserEntry: return "account_cpu_user_entry";
    case Hook::UserExit: return "account_cpu_user_exit";
    case Hook::Kernel: return "vtime_account_kernel";
    case Hook::Guest: return "vtime_account_kernel(PF_VCPU)";
    case Hook::Hardirq: return "vtime_account_hardirq";
    case Hook::Softirq: return "vtime_account_softirq";
    case Hook::Idle: return "vtime_account_idle";
    case Hook::Flush: return "vtime_flush";
    case Hook::HandOver: return "vtime_task_switch(PPC32 hand-over)";
    case Hook::Reset: return "vtime_reset(bring-up)";
  }
  return "?";
}

template <class D, unsigned W>
struct ConserveIn {
  using UL = ulong_t<D, W>;
  using A = Acct<D, W>;
  BOOST_HANA_DEFINE_STRUCT(ConserveIn, (A, acct), (UL, now), (UL, spurr), (UL, steal), (UL, sst), (UL, ust), (UL, now0),
                           (UL, flushed), (UL, origin), (CpuAcct<D>, cpu), (TaskAcct<D>, task), (Scaled<D>, scaled),
                           (A, next));
};

template <unsigned W>
struct ConserveCase {
  template <class D>
  using In = ConserveIn<D, W>;
  Hook h;
  NativeCfg n;

  In<S> fresh(S& d) const {
    In<S> in;
    make_fresh(d, in.acct, "acct");
    in.now = d.fresh<W>("now");
    in.spurr = d.fresh<W>("spurr");
    in.steal = n.splpar ? d.fresh<W>("steal") : d.template lit<W>(0);
    in.sst = n.splpar ? d.fresh<W>("sst") : d.template lit<W>(0);
    in.ust = n.splpar ? d.fresh<W>("ust") : d.template lit<W>(0);
    in.now0 = d.fresh<W>("now0");
    in.flushed = d.fresh<W>("flushed");
    in.origin = d.fresh<W>("origin");
    make_fresh(d, in.cpu, "cpu");
    make_fresh(d, in.task, "task");
    make_fresh(d, in.scaled, "scaled");
    make_fresh(d, in.next, "next");
    return in;
  }
  void assume(S& d, const In<S>& in, std::vector<z3::expr>& as) const {
    const auto& a = in.acct;
    // Before: user side for user entry, kernel side otherwise.
    as.push_back(sn::tb_conserved(d, a, h != Hook::UserEntry, in.now0, in.flushed, in.origin).e());
    // The steal the DTL reports lies within the interval it is taken from (the trace's rule).
    // Without SPLPAR nothing ever adds to steal_time (a state invariant of every hook).
    if (!n.splpar) as.push_back(d.eq(a.steal_time, d.template lit<W>(0)).e());
    if (n.splpar) {
      as.push_back(z3::ule(in.steal.e(), d.sub(in.now, a.starttime).e()));
      as.push_back(z3::ule(d.add(in.sst, in.ust).e(), d.sub(in.now, a.starttime_user).e()));
    }
    if (h == Hook::HandOver) {
      // The incoming task continues the outgoing one's clock: conservation moves with it when
      // the incoming task's buckets are empty (every switch flushed it when it left).
      auto z = d.template lit<W>(0);
      const auto& x = in.next;
      for (auto* f : {&x.utime, &x.stime, &x.gtime, &x.hardirq_time, &x.softirq_time, &x.idle_time, &x.steal_time})
        as.push_back(d.eq(*f, z).e());
      as.push_back(sn::flush_zeroes(d, n, a).e());
    }
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    Cost k;
    auto& a = in.acct;
    switch (h) {
      case Hook::UserEntry: user_entry(d, n, a, in.now, in.sst, in.ust, k); break;
      case Hook::UserExit: user_exit(d, a, in.now, k); break;
      case Hook::Kernel: account_kernel_side(d, n, a, Kctx::Kernel, in.now, in.spurr, in.steal, k); break;
      case Hook::Guest: account_kernel_side(d, n, a, Kctx::Guest, in.now, in.spurr, in.steal, k); break;
      case Hook::Hardirq: account_kernel_side(d, n, a, Kctx::Hardirq, in.now, in.spurr, in.steal, k); break;
      case Hook::Softirq: account_kernel_side(d, n, a, Kctx::Softirq, in.now, in.spurr, in.steal, k); break;
      case Hook::Idle: account_kernel_side(d, n, a, Kctx::Idle, in.now, in.spurr, in.steal, k); break;
      case Hook::Flush: {
        auto before = sn::pending_tb(d, a);
        vtime_flush(d, n, a, in.cpu, in.task, in.scaled, {}, k);
        in.flushed = d.add(in.flushed, d.sub(before, sn::pending_tb(d, a)));
        in.now = in.now0;  // no time passes in a flush
        break;
      }
      case Hook::HandOver:
        hand_over(d, n, a, in.next, k);
        a = in.next;
        in.now = in.now0;
        break;
      case Hook::Reset: in.origin = d.add(in.origin, vtime_reset(d, n, a, in.now, in.spurr, k)); break;
    }
    return {sn::tb_conserved(d, a, h != Hook::UserExit, in.now, in.flushed, in.origin)};
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const { return to_json(in); }
};

template <unsigned W>
Result conserve_job(Hook h, bool flush_epoch, bool splpar, unsigned timeout_ms) {
  const std::string name = fmt::format("native_vtime.{}.tb_conserved[{}{}{}]", hook_name(h), wname(W),
                                       flush_epoch ? "" : ",<=4.10", splpar ? ",splpar" : "");
  std::vector<std::string> approx = {kSeq, "wrap-around arithmetic mod 2^W: conservation is stated mod 2^W"};
  if (!splpar) approx.push_back(kNoSteal);
  NativeCfg n = base_cfg(W, true, flush_epoch);
  n.splpar = splpar;
  auto r = step_job(name, ConserveCase<W>{h, n}, {"tb_conserved"}, approx, timeout_ms, hook_name(h),
                    "unsat: pending + flushed + open interval == now - boot, after the hook");
  if (r.verdict == Verdict::Violated && splpar && r.detail.find("breaks tb_conserved") != std::string::npos)
    r.detail += " (the DTL steal is subtracted from a bucket that no longer holds it, no clamp: time is created)";
  return r;
}

// ---- tb_to_ns: never above the exact ns, below it by at most 2^shift, proved over the integers ----
// The kernel's mulhdu(t, scale) << shift and the exact ns, stated by the defining inequalities
// of the operations (SMT-LIB's bvmul, bvlshr and bvshl are these functions of the unsigned
// values, so the statement is the bit-vector one):
//   hi = floor(t * scale / 2^64)  iff  hi * 2^64 <= t * scale < (hi + 1) * 2^64
//   ns = (hi * 2^shift) mod 2^64  iff  ns = hi * 2^shift - k * 2^64 and 0 <= ns < 2^64
//   ex = floor(t * 1e9 / f)       iff  ex * f <= t * 1e9 < (ex + 1) * f
// scale, shift and f are constants per rate: linear integer arithmetic, which Z3 decides in
// milliseconds (the 128-bit bit-vector query times out).
struct TbVars {
  z3::expr t, hi, k, ns, ex;
};
z3::expr big(z3::context& c, unsigned __int128 v) {  // an integer literal of up to 128 bits
  std::string s;
  do {
    s.insert(s.begin(), char('0' + unsigned(v % 10)));
    v /= 10;
  } while (v != 0);
  return c.int_val(s.c_str());
}
constexpr unsigned __int128 kTwo64 = (unsigned __int128)1 << 64;
TbVars tb_vars(z3::context& c) {
  return {c.int_const("t"), c.int_const("hi"), c.int_const("k"), c.int_const("ns"), c.int_const("exact")};
}
z3::expr tb_defs(z3::context& c, const NativeCfg& n, const TbVars& v) {
  const auto two64 = big(c, kTwo64), p = v.t * big(c, n.tb_scale);
  const auto f = big(c, n.tb_hz), g = big(c, 1'000'000'000u);
  return 0 <= v.t && v.t < two64 && v.hi * two64 <= p && p < (v.hi + 1) * two64 &&
         v.ns == v.hi * big(c, std::uint64_t{1} << n.tb_shift) - v.k * two64 && 0 <= v.ns && v.ns < two64 &&
         v.ex * f <= v.t * g && v.t * g < (v.ex + 1) * f;
}
std::uint64_t tb_concrete(const NativeCfg& n, std::uint64_t t) {
  Concrete k;
  Cost c;
  return tb_to_ns(k, n, t, c);
}

// The translation, checked both ways on edge values and a sample: the model's tb_to_ns, run
// concretely and as the symbolic domain's bit-vector term, is the one ns the integer statement
// allows, and the exact ns is the 128-bit quotient. Returns the first mismatch.
std::optional<std::string> tb_translation_mismatch(z3::context& c, const NativeCfg& n, const TbVars& v,
                                                   const z3::expr& defs, unsigned& checked) {
  std::vector<std::uint64_t> ts = {0, 1, 2, 3, ~std::uint64_t{0}, ~std::uint64_t{0} - 1};
  for (unsigned i = 1; i < 64; i += 3)
    for (std::uint64_t d : {std::uint64_t{0}, std::uint64_t{1}}) ts.push_back((std::uint64_t{1} << i) - d);
  // Around the last t whose exact ns fits in 64 bits.
  const auto t_fit = std::uint64_t(((kTwo64 - 1) * n.tb_hz) / 1'000'000'000u);
  for (std::uint64_t d = 0; d < 3; ++d) ts.insert(ts.end(), {t_fit - d, t_fit + d + 1});
  std::mt19937_64 rng(n.tb_hz);
  for (int i = 0; i < 24; ++i) ts.push_back(rng() >> (rng() % 64));
  z3::solver s(c, "QF_LIA");
  s.add(defs);
  for (auto t : ts) {
    const std::uint64_t ns = tb_concrete(n, t);
    const auto ex = (unsigned __int128)t * 1'000'000'000u / n.tb_hz;
    Symbolic d(c);
    Cost k;
    const auto bv = tb_to_ns(d, n, d.lit<64>(t), k).e().simplify();
    std::uint64_t sym = 0;
    if (!bv.is_numeral_u64(sym) || sym != ns)
      return fmt::format("the symbolic tb_to_ns({}) is {}, the concrete one {}", t, bv.to_string(), ns);
    s.push();
    s.add(v.t == big(c, t));
    s.push();
    s.add(v.ns != big(c, ns) || v.ex != big(c, ex));
    const auto other = s.check();
    s.pop();
    s.add(v.ns == big(c, ns) && v.ex == big(c, ex));
    const auto same = s.check();
    s.pop();
    if (other != z3::unsat || same != z3::sat)
      return fmt::format("at t = {} the integer statement does not give exactly the model's tb_to_ns {}", t, ns);
    ++checked;
  }
  return std::nullopt;
}

Result tb_to_ns_job(std::uint64_t tb_hz, unsigned timeout_ms, std::uint64_t slack) {
  const auto t0 = std::chrono::steady_clock::now();
  NativeCfg n = base_cfg(64, false);
  n.tb_hz = tb_hz;
  n.tb_scale = tb_scale_of(tb_hz).scale;
  n.tb_shift = tb_scale_of(tb_hz).shift;
  if (slack == 0) slack = std::uint64_t{1} << n.tb_shift;
  Result r;
  r.name = fmt::format("native_vtime.tb_to_ns.bounded[{} Hz, shift {}]", tb_hz, n.tb_shift);
  r.approximations = {
      "t: every 64-bit value whose exact ns fits in 64 bits (t * 1e9 / f < 2^64 ns, 584 years); beyond it no u64 "
      "holds the exact value and the shifted result wraps"};
  auto done = [&]() -> Result {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  try {
    z3::context c;
    const TbVars v = tb_vars(c);
    const auto defs = tb_defs(c, n, v);
    unsigned checked = 0;
    if (auto bad = tb_translation_mismatch(c, n, v, defs, checked)) {
      r.verdict = Verdict::Error;
      r.detail = *bad;
      return done();
    }
    z3::params p(c);
    set_budget(p, timeout_ms);
    p.set("random_seed", 0u);
    z3::solver s(c, "QF_LIA");
    s.set(p);
    s.add(defs && v.ex < big(c, kTwo64));
    s.add(v.ns > v.ex || v.ex - v.ns > big(c, slack));
    switch (s.check()) {
      case z3::unsat:
        r.verdict = Verdict::Holds;
        r.detail = fmt::format(
            "exact - {} <= tb_to_ns(t) <= exact (granularity 2^{} ns): unsat in linear integer arithmetic, the "
            "128-bit multiply, the shifts and the exact quotient stated by their defining inequalities; the "
            "statement gives exactly the model's tb_to_ns (concrete and bit-vector) at {} values, extremes included",
            slack, n.tb_shift, checked);
        break;
      case z3::sat: {
        const std::uint64_t t = s.get_model().eval(v.t, true).get_numeral_uint64();
        const std::uint64_t ns = tb_concrete(n, t);
        const auto ex = (unsigned __int128)t * 1'000'000'000u / tb_hz;
        r.inputs = {{"ticks", t}, {"ns", ns}, {"exact", std::uint64_t(ex)}};
        if (ex < kTwo64 && (ns > ex || ex - ns > slack)) {
          r.verdict = Verdict::Violated;
          r.replay = kReplayStep;
          r.detail = fmt::format("tb_to_ns({}) = {} vs exact {} (bound {}); replayed concretely", t, ns,
                                 std::uint64_t(ex), slack);
        } else {
          r.verdict = Verdict::Error;
          r.detail = fmt::format("the integer counterexample t = {} does not replay concretely", t);
        }
        break;
      }
      case z3::unknown:
        r.verdict = Verdict::Unknown;
        r.detail = "solver: " + s.reason_unknown();
        break;
    }
  } catch (const z3::exception& e) {
    r.verdict = Verdict::Error;
    r.detail = std::string("z3: ") + e.msg();
  }
  return done();
}

// The split's bounds exhaustively at 8 bits (every dS, s, u), the same template at W = 8.
Result split_bounds_exhaustive() {
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  r.name = "native_vtime.vtime_delta_scaled.split_bounds[8-bit, exhaustive]";
  r.verdict = Verdict::Holds;
  r.approximations = {"8-bit words: the full-width query is the Z3 job of the same name"};
  Concrete k;
  NativeCfg n = base_cfg(8, true);
  std::uint64_t cases = 0;
  for (unsigned ds = 0; ds < 256; ++ds)
    for (unsigned s = 0; s < 256; ++s)
      for (unsigned u = 0; u < 256; ++u) {
        Cost c;
        std::vector<std::array<std::uint64_t, 5>> log;
        c.split_log = &log;
        Acct<Concrete, 8> a = zero_acct<Concrete, 8>(k);
        a.utime = std::uint8_t(u);
        auto s_sc = delta_scaled<Concrete, 8>(k, n, a, std::uint8_t(ds), std::uint8_t(s), c);
        sn::SplitIo<Concrete, 8> io{std::uint8_t(ds), std::uint8_t(s), std::uint8_t(u), s_sc, std::uint8_t(log[0][4])};
        ++cases;
        if (!sn::split_bounds(k, io) || !sn::split_sum(k, io) || !sn::split_identity(k, io)) {
          r.verdict = Verdict::Violated;
          r.replay = kReplayStep;  // found by running the concrete step itself
          r.inputs = {{"dS", ds}, {"s", s}, {"u", u}};
          r.detail = fmt::format("fails at dS={} s={} u={}", ds, s, u);
          return r;
        }
      }
  r.detail = fmt::format("split_bounds, split_sum, split_identity hold for all {} 8-bit inputs", cases);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

Result native_tb_to_ns_job(std::uint64_t tb_hz, unsigned timeout_ms, std::uint64_t slack) {
  return tb_to_ns_job(tb_hz, timeout_ms, slack);
}

Result native_split_job(const std::string& inv, unsigned word_bits, unsigned timeout_ms, bool broken) {
  static const bool lemma = udiv_product_lemma(timeout_ms).verdict == Verdict::Holds;  // once per process
  return word_bits == 32 ? split_job<32>(inv, timeout_ms, lemma, broken)
                         : split_job<64>(inv, timeout_ms, lemma, broken);
}

std::vector<Result> native_all_jobs(unsigned timeout_ms) {
  const unsigned t = std::min(timeout_ms, 20000u);
  std::vector<Result> out;
  auto lemma = udiv_product_lemma(t);  // the split jobs use it as a fact
  const bool lemma_holds = lemma.verdict == Verdict::Holds;
  for (const char* inv : {"split_sum", "split_identity", "split_no_overflow", "no_division_by_zero", "split_bounds"}) {
    out.push_back(split_job<32>(inv, t, lemma_holds));
    out.push_back(split_job<64>(inv, t, lemma_holds));
  }
  out.push_back(split_bounds_exhaustive());
  out.push_back(lemma);
  for (Hook h : {Hook::UserEntry, Hook::UserExit, Hook::Kernel, Hook::Guest, Hook::Hardirq, Hook::Softirq, Hook::Idle,
                 Hook::Flush}) {
    out.push_back(conserve_job<32>(h, true, false, t));
    out.push_back(conserve_job<64>(h, true, false, t));
  }
  out.push_back(conserve_job<32>(Hook::HandOver, true, false, t));
  out.push_back(conserve_job<32>(Hook::Reset, true, false, t));
  out.push_back(conserve_job<64>(Hook::Reset, true, false, t));
  out.push_back(conserve_job<32>(Hook::Kernel, false, false, t));
  out.push_back(conserve_job<64>(Hook::Kernel, false, false, t));
  out.push_back(conserve_job<64>(Hook::UserEntry, true, true, t));
  out.push_back(conserve_job<64>(Hook::Kernel, true, true, t));
  std::vector<std::uint64_t> hz;
  for (const auto& c : arch::cpus())
    if (c.tb_hz && std::find(hz.begin(), hz.end(), c.tb_hz) == hz.end()) hz.push_back(c.tb_hz);
  for (auto f : hz) out.push_back(tb_to_ns_job(f, t, 0));
  return out;
}

}  // namespace kacct::proofs
