// Z3 jobs for powerpc native vtime (model/native/native.hpp, spec/native_vtime.hpp), at the real
// word widths (32-bit PPC32 with wrap-around, 64-bit PPC64), and the claims of the two Kconfig
// patches (abcff86df2d2, b4645ffc49cf). Every counterexample is replayed concretely, and the
// hazards get a kacct trace (explicit tb= values) that the machine replays to the same finding.
#include <fmt/format.h>

#include <random>

#include "arch/registry.hpp"
#include "model/domain/symbolic.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "proofs/prover.hpp"
#include "proofs/registry.hpp"
#include "spec/native_vtime.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::native;
namespace sn = kacct::spec::native;
using S = Symbolic;

namespace {

constexpr const char* kSeq = "sequential model: each hook runs with interrupts off on its own CPU (no interleaving)";
constexpr const char* kNoSteal = "no SPLPAR steal (steal enters as a free DTL input; see native.steal_clamped)";

NativeCfg base_cfg(unsigned w, bool scaled, bool flush_epoch = true) {
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

std::string wname(unsigned w) { return w == 32 ? "PPC32" : "PPC64"; }

// Fold a solver answer into a Result.
void fold(Result& r, const Solved& s, const std::string& what) {
  r.seconds += s.seconds;
  if (s.verdict == Verdict::Holds) return;
  r.verdict = worst(r.verdict, s.verdict);
  if (r.detail.empty() || s.verdict == Verdict::Violated) r.detail = what + ": " + (s.reason.empty() ? name(s.verdict) : s.reason);
}

// ---- the split, one vtime_delta_scaled() call from any state ----
template <unsigned W> struct SplitSym {
  SymBV<W> ds, s, u, s_sc, u_sc;
  Acct<S, W> a;
};
template <unsigned W> SplitSym<W> split_sym(S& d, const NativeCfg& n) {
  Acct<S, W> a;
  make_fresh(d, a, "acct");
  auto spurr = d.fresh<W>("spurr_now");
  auto s = d.fresh<W>("s");
  Cost k;
  auto a0 = a;
  auto s_sc = delta_scaled<S, W>(d, n, a, spurr, s, k);
  auto ds = d.sub(spurr, a0.startspurr);
  auto u = d.sub(a0.utime, a0.utime_sspurr);
  auto u_sc = d.sub(a.utime_scaled, a0.utime_scaled);
  return {ds, s, u, s_sc, u_sc, a0};
}

template <unsigned W> Result split_job(const std::string& inv, unsigned timeout_ms) {
  Result r;
  r.name = fmt::format("native_vtime.vtime_delta_scaled.{}[{}]", inv, wname(W));
  r.verdict = Verdict::Holds;
  r.approximations = {kSeq, "one call from any state: every W-bit field value"};
  z3::context ctx;
  S d(ctx);
  auto x = split_sym<W>(d, base_cfg(W, true));
  sn::SplitIo<S, W> io{x.ds, x.s, x.u, x.s_sc, x.u_sc};
  SymBool ok = d.lit_bool(true);
  if (inv == "split_sum") ok = sn::split_sum(d, io);
  else if (inv == "split_bounds") ok = sn::split_bounds(d, io);
  else if (inv == "split_identity") ok = sn::split_identity(d, io);
  else if (inv == "split_no_overflow") ok = sn::split_no_overflow(d, io);
  else if (inv == "no_division_by_zero") {
    z3::expr all = ctx.bool_val(true);
    for (const auto& o : d.obligations) all = all && !o.violated;
    ok = SymBool(all);
  }
  auto res = solve(ctx, {}, !ok.e(), timeout_ms);
  r.seconds = res.seconds;
  r.verdict = res.verdict;
  if (res.verdict == Verdict::Holds) {
    r.detail = fmt::format("{} at {} bits: unsat{}", inv, W,
                           inv == "split_sum" || inv == "split_bounds" ? " (under the no-overflow precondition)" : "");
    return r;
  }
  if (res.verdict != Verdict::Violated) {
    r.detail = res.reason;
    return r;
  }
  // Replay concretely: the same inputs through the Concrete step.
  auto ev = [&](const SymBV<W>& v) { return eval_u64(*res.model, v.e()); };
  const std::uint64_t ds = ev(x.ds), s = ev(x.s), u = ev(x.u);
  Concrete k;
  Cost c;
  std::vector<std::array<std::uint64_t, 5>> log;
  c.split_log = &log;
  Acct<Concrete, W> a = zero_acct<Concrete, W>(k);
  a.utime = typename Concrete::template U<W>(u);
  auto s_sc = delta_scaled<Concrete, W>(k, base_cfg(W, true), a, typename Concrete::template U<W>(ds),
                                        typename Concrete::template U<W>(s), c);
  sn::SplitIo<Concrete, W> kio{typename Concrete::template U<W>(ds), typename Concrete::template U<W>(s),
                               typename Concrete::template U<W>(u), s_sc, typename Concrete::template U<W>(log[0][4])};
  bool still = true;
  if (inv == "split_no_overflow") still = !sn::split_no_overflow(k, kio);
  if (inv == "no_division_by_zero") still = !k.ok();
  r.inputs = {{"dS", ds}, {"s", s}, {"u", u}, {"s_scaled", std::uint64_t(s_sc)}};
  if (!still) {
    r.verdict = Verdict::Error;
    r.detail = "Z3 counterexample does not replay concretely (domain mismatch)";
    return r;
  }
  r.detail = fmt::format("{} fails at {} bits for dS={} s={} u={} (replayed concretely)", inv, W, ds, s, u);
  return r;
}

// ---- TB conservation of each hook, from any state where it holds (mod 2^W) ----
enum class Hook { UserEntry, UserExit, Kernel, Guest, Hardirq, Softirq, Idle, Flush, HandOver };
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
  }
  return "?";
}

template <unsigned W>
Result conserve_job(Hook h, bool flush_epoch, bool splpar, unsigned timeout_ms) {
  Result r;
  r.name = fmt::format("native_vtime.{}.tb_conserved[{}{}{}]", hook_name(h), wname(W), flush_epoch ? "" : ",<=4.10",
                       splpar ? ",splpar" : "");
  r.verdict = Verdict::Holds;
  r.approximations = {kSeq, "wrap-around arithmetic mod 2^W: conservation is stated mod 2^W"};
  if (!splpar) r.approximations.push_back(kNoSteal);
  z3::context ctx;
  S d(ctx);
  NativeCfg n = base_cfg(W, true, flush_epoch);
  n.splpar = splpar;
  Acct<S, W> a;
  make_fresh(d, a, "acct");
  auto now = d.fresh<W>("now");
  auto spurr = d.fresh<W>("spurr");
  auto steal = splpar ? d.fresh<W>("steal") : d.template lit<W>(0);
  auto sst = splpar ? d.fresh<W>("sst") : d.template lit<W>(0);
  auto ust = splpar ? d.fresh<W>("ust") : d.template lit<W>(0);
  auto t0 = d.fresh<W>("now0");
  auto flushed = d.fresh<W>("flushed");
  auto origin = d.fresh<W>("origin");
  // Before: user side for user entry, kernel side otherwise.
  const bool ks_before = h != Hook::UserEntry;
  const bool ks_after = h != Hook::UserExit;
  std::vector<z3::expr> as = {sn::tb_conserved(d, a, ks_before, t0, flushed, origin).e()};
  // The steal the DTL reports lies within the interval it is taken from (the trace's rule).
  // Without SPLPAR nothing ever adds to steal_time (a state invariant of every hook).
  if (!splpar) as.push_back(d.eq(a.steal_time, d.template lit<W>(0)).e());
  if (splpar) {
    as.push_back(z3::ule(steal.e(), d.sub(now, a.starttime).e()));
    as.push_back(z3::ule(d.add(sst, ust).e(), d.sub(now, a.starttime_user).e()));
  }
  Cost k;
  auto fl = flushed;
  CpuAcct<S> c;
  TaskAcct<S> p;
  Scaled<S> sc;
  make_fresh(d, c, "cpu");
  make_fresh(d, p, "task");
  make_fresh(d, sc, "scaled");
  Acct<S, W> next;
  make_fresh(d, next, "next");
  switch (h) {
    case Hook::UserEntry: user_entry(d, n, a, now, sst, ust, k); break;
    case Hook::UserExit: user_exit(d, a, now, k); break;
    case Hook::Kernel: account_kernel_side(d, n, a, Kctx::Kernel, now, spurr, steal, k); break;
    case Hook::Guest: account_kernel_side(d, n, a, Kctx::Guest, now, spurr, steal, k); break;
    case Hook::Hardirq: account_kernel_side(d, n, a, Kctx::Hardirq, now, spurr, steal, k); break;
    case Hook::Softirq: account_kernel_side(d, n, a, Kctx::Softirq, now, spurr, steal, k); break;
    case Hook::Idle: account_kernel_side(d, n, a, Kctx::Idle, now, spurr, steal, k); break;
    case Hook::Flush: {
      auto before = sn::pending_tb(d, a);
      vtime_flush(d, n, a, c, p, sc, {}, k);
      fl = d.add(fl, d.sub(before, sn::pending_tb(d, a)));
      now = t0;  // no time passes in a flush
      break;
    }
    case Hook::HandOver: {
      // The incoming task continues the outgoing one's clock: conservation moves with it when
      // the incoming task's buckets are empty (every switch flushed it when it left).
      auto z = d.template lit<W>(0);
      for (auto* f : {&next.utime, &next.stime, &next.gtime, &next.hardirq_time, &next.softirq_time, &next.idle_time,
                      &next.steal_time})
        as.push_back(d.eq(*f, z).e());
      as.push_back(sn::flush_zeroes(d, n, a).e());
      hand_over(d, n, a, next, k);
      a = next;
      now = t0;
      break;
    }
  }
  auto ok = sn::tb_conserved(d, a, ks_after, now, fl, origin);
  auto res = solve(ctx, as, !ok.e(), timeout_ms);
  r.seconds = res.seconds;
  r.verdict = res.verdict;
  if (res.verdict == Verdict::Holds) r.detail = "unsat: pending + flushed + open interval == now - boot, after the hook";
  else if (res.verdict == Verdict::Violated) {
    r.inputs = {{"steal", eval_u64(*res.model, steal.e())}, {"sst", eval_u64(*res.model, sst.e())},
                {"ust", eval_u64(*res.model, ust.e())}, {"stime", eval_u64(*res.model, a.stime.e())}};
    r.detail = splpar ? "the DTL steal is subtracted from a bucket that no longer holds it (no clamp): time is created"
                      : "conservation broken";
  } else r.detail = res.reason;
  return r;
}

// ---- tb_to_ns: never above the exact ns, below it by at most 2^shift + 1 (all 64-bit t) ----
Result conversion_job(std::uint64_t tb_hz, unsigned timeout_ms) {
  Result r;
  NativeCfg n = base_cfg(64, false);
  n.tb_hz = tb_hz;
  n.tb_scale = tb_scale_of(tb_hz).scale;
  n.tb_shift = tb_scale_of(tb_hz).shift;
  r.name = fmt::format("native_vtime.tb_to_ns.bounded[{} Hz, shift {}]", tb_hz, n.tb_shift);
  r.approximations = {"t below 2^(64 - shift): beyond it the shifted result wraps (over 500 years of TB)"};
  z3::context ctx;
  S d(ctx);
  auto t = d.fresh<64>("ticks");
  Cost k;
  auto ns = tb_to_ns(d, n, t, k);
  auto w = [&](std::uint64_t v) { return ctx.bv_val(v, 128); };
  z3::expr T = z3::zext(t.e(), 64), N = z3::zext(ns.e(), 64);
  // ns * f <= t * 1e9  and  t * 1e9 < (ns + 2^shift + 1) * f
  z3::expr upper = z3::ule(N * w(tb_hz), T * w(1'000'000'000u));
  z3::expr lower = z3::ult(T * w(1'000'000'000u), (N + w((std::uint64_t{1} << n.tb_shift) + 1)) * w(tb_hz));
  std::vector<z3::expr> as = {z3::ult(t.e(), ctx.bv_val(std::uint64_t{1} << (63 - n.tb_shift), 64))};
  auto res = solve(ctx, as, !(upper && lower), timeout_ms);
  r.seconds = res.seconds;
  r.verdict = res.verdict;
  r.detail = res.verdict == Verdict::Holds
                 ? fmt::format("exact - {} < tb_to_ns(t) <= exact: granularity 2^{} ns", (1u << n.tb_shift) + 1, n.tb_shift)
                 : res.verdict == Verdict::Violated ? fmt::format("bound fails for t={}", eval_u64(*res.model, t.e())) : res.reason;
  return r;
}

// A trace whose scaled split sees (dS, s, u) = (k + u + s, s, u) with the TB as the SPURR
// source: k TB ticks in the kernel, u in user, s in the kernel, then a tick.
std::string split_trace(const char* cpu, std::uint64_t k, std::uint64_t u, std::uint64_t s, std::uint64_t tb_hz) {
  auto ns = [&](std::uint64_t tb) { return std::uint64_t((unsigned __int128)tb * 1'000'000'000u / tb_hz) + 1; };
  std::uint64_t t1 = k, t2 = k + u, t3 = k + u + s;
  return fmt::format(
      "kacct-trace 1\ncpu {}\nncpus 1\nclock ns\ntask 100 pid=100 comm=cex nice=0 mm=1\nevents\n"
      "0 0 switch prev=0 next=100 tb=0\n{} 0 syscall_exit tb={}\n{} 0 syscall_enter nr=0 tb={}\n{} 0 tick tb={}\n",
      cpu, ns(t1), t1, ns(t2), t2, ns(t3), t3);
}
bool replays_finding(const std::string& text, const char* cpu, arch::Config cfg, const std::string& inv) {
  auto t = trace::load(text);
  if (!t) return false;
  auto p = sim::compile(t.value());
  if (!p) return false;
  auto r = sim::run(p.value(), sim::model_cfg(*arch::find_cpu(cpu), cfg), {.check = true});
  if (!r.backend_result<model::native::NativeResult>()) return false;
  for (const auto& f : r.backend_result<model::native::NativeResult>()->findings)
    if (f.invariant == inv) return true;
  return false;
}

// The split's bounds exhaustively at 8 bits (every dS, s, u), the same template at W = 8.
Result split_bounds_exhaustive() {
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
          r.inputs = {{"dS", ds}, {"s", s}, {"u", u}};
          r.detail = fmt::format("fails at dS={} s={} u={}", ds, s, u);
          return r;
        }
      }
  r.detail = fmt::format("split_bounds, split_sum, split_identity hold for all {} 8-bit inputs", cases);
  return r;
}

// tb_to_ns against the exact ns on edge values and a deterministic random sample, per TB rate.
Result conversion_search(std::uint64_t tb_hz) {
  Result r;
  NativeCfg n = base_cfg(64, false);
  n.tb_hz = tb_hz;
  n.tb_scale = tb_scale_of(tb_hz).scale;
  n.tb_shift = tb_scale_of(tb_hz).shift;
  r.name = fmt::format("native_vtime.tb_to_ns.bounded[{} Hz, concrete search]", tb_hz);
  r.approximations = {"edge values and 200000 random t below 2^(63 - shift); no proof (the 128-bit Z3 query times out)"};
  Concrete k;
  std::mt19937_64 rng(tb_hz);
  const std::uint64_t lim = std::uint64_t{1} << (63 - n.tb_shift);
  std::uint64_t worst_loss = 0;
  for (int i = 0; i < 200'000 + 256; ++i) {
    std::uint64_t t = i < 256 ? ((std::uint64_t{1} << (i / 4 % 62)) + (i % 4) - 1) % lim : (rng() >> (rng() % 60)) % lim;
    Cost c;
    const auto ns = tb_to_ns(k, n, t, c);
    const unsigned __int128 exact = (unsigned __int128)t * 1'000'000'000u / tb_hz;
    const unsigned __int128 loss = exact - ns;
    if (ns > exact || loss > (std::uint64_t{1} << n.tb_shift)) {
      r.verdict = Verdict::Violated;
      r.inputs = {{"ticks", t}, {"ns", ns}};
      r.detail = fmt::format("tb_to_ns({}) = {} vs exact {}", t, ns, std::uint64_t(exact));
      return r;
    }
    worst_loss = std::max<std::uint64_t>(worst_loss, std::uint64_t(loss));
  }
  r.verdict = Verdict::Unknown;  // a search, not a proof
  r.detail = fmt::format("no t with tb_to_ns(t) > exact or exact - tb_to_ns(t) > 2^{} found; largest loss {} ns",
                         n.tb_shift, worst_loss);
  return r;
}

}  // namespace

std::vector<Result> native_all_jobs(unsigned timeout_ms) {
  const unsigned t = std::min(timeout_ms, 20000u);
  std::vector<Result> out;
  for (const char* inv : {"split_sum", "split_identity", "split_no_overflow", "no_division_by_zero", "split_bounds"}) {
    // The bounds need the division's semantics: measured > 20 s at 32 and 64 bits (unknown).
    const unsigned tt = std::string(inv) == "split_bounds" ? std::min(t, 5000u) : t;
    out.push_back(split_job<32>(inv, tt));
    out.push_back(split_job<64>(inv, tt));
  }
  out.push_back(split_bounds_exhaustive());
  for (Hook h : {Hook::UserEntry, Hook::UserExit, Hook::Kernel, Hook::Guest, Hook::Hardirq, Hook::Softirq, Hook::Idle,
                 Hook::Flush}) {
    out.push_back(conserve_job<32>(h, true, false, t));
    out.push_back(conserve_job<64>(h, true, false, t));
  }
  out.push_back(conserve_job<32>(Hook::HandOver, true, false, t));
  out.push_back(conserve_job<32>(Hook::Kernel, false, false, t));
  out.push_back(conserve_job<64>(Hook::Kernel, false, false, t));
  out.push_back(conserve_job<64>(Hook::UserEntry, true, true, t));
  out.push_back(conserve_job<64>(Hook::Kernel, true, true, t));
  std::vector<std::uint64_t> hz;
  for (const auto& c : arch::cpus())
    if (c.tb_hz && std::find(hz.begin(), hz.end(), c.tb_hz) == hz.end()) hz.push_back(c.tb_hz);
  for (auto f : hz) out.push_back(conversion_search(f));
  // One Z3 attempt at full width (the 8xx rate); measured: timeout at 20 s.
  out.push_back(conversion_job(8'312'500, std::min(t, 5000u)));
  return out;
}

// abcff86df2d2 (4.20: PPC32) and b4645ffc49cf (5.4: Book3E-64): on every CPU the new rule
// drops, judge each claim of the patch row.
std::vector<Result> native_vtime_claims(const arch::Patch& patch, unsigned timeout_ms) {
  std::vector<arch::CpuFacts> dropped;
  for (const auto& c : arch::cpus())
    if (arch::have_virt_cpu_accounting(c, patch.before) && arch::native_scaled_cputime(c, patch.before) &&
        !arch::native_scaled_cputime(c, patch.after))
      dropped.push_back(c);
  const arch::Config before{patch.before, arch::Accounting::Native, false, false, 250};
  const arch::Config after{patch.after, arch::Accounting::Native, false, false, 250};
  std::vector<Result> out;
  for (auto claim : patch.claims) {
    if (claim.empty()) continue;
    Result r;
    r.name = std::string(claim);
    r.verdict = Verdict::Holds;
    r.approximations = {kSeq};
    std::vector<std::string> parts;
    if (claim == "native.unscaled_unchanged") {
      // (1) Z3: every hook from the same state gives the same unscaled fields with and without
      // the scaled code; (2) concrete: generated traces replay to identical unscaled outputs.
      for (unsigned w : {32u, 64u}) {
        bool any = false;
        for (const auto& c : dropped) any = any || c.word_bits == w;
        if (!any) continue;
        for (Kctx where : {Kctx::Kernel, Kctx::Guest, Kctx::Hardirq, Kctx::Softirq, Kctx::Idle}) {
          z3::context ctx;
          S d(ctx);
          auto run = [&](auto wtag, bool scaled) {
            constexpr unsigned W = decltype(wtag)::value;
            Acct<S, W> a;
            make_fresh(d, a, "acct");
            Cost k;
            account_kernel_side(d, base_cfg(W, scaled), a, where, d.fresh<W>("now"), d.fresh<W>("spurr"),
                                d.template lit<W>(0), k);
            z3::expr e = ctx.bool_val(true);
            int i = 0;
            for (auto* f : {&a.utime, &a.stime, &a.gtime, &a.hardirq_time, &a.softirq_time, &a.idle_time, &a.steal_time,
                            &a.starttime, &a.starttime_user})
              e = e && (f->e() == ctx.bv_const(("out_" + std::to_string(i++)).c_str(), W));
            return e;
          };
          z3::expr same = w == 32 ? (run(std::integral_constant<unsigned, 32>{}, true) &&
                                     !run(std::integral_constant<unsigned, 32>{}, false))
                                  : (run(std::integral_constant<unsigned, 64>{}, true) &&
                                     !run(std::integral_constant<unsigned, 64>{}, false));
          fold(r, solve(ctx, {}, same, timeout_ms), fmt::format("hook {} at {} bits", int(where), w));
        }
      }
      std::uint64_t traces = 0;
      for (const auto& c : dropped)
        for (std::uint64_t seed = 1; seed <= 25; ++seed) {
          trace::BuildSpec s;
          s.cpu_model = std::string(c.name);
          auto tr = trace::random_trace(seed, s, 500);
          auto p = sim::compile(tr).value();
          auto a = sim::run(p, sim::model_cfg(c, before), {});
          auto b = sim::run(p, sim::model_cfg(c, after), {});
          ++traces;
          if (to_json(a.cpus) != to_json(b.cpus) || to_json(a.tasks) != to_json(b.tasks)) {
            r.verdict = Verdict::Violated;
            r.counterexample = trace::write(tr);
            parts.push_back(fmt::format("{}: outputs differ on seed {}", c.name, seed));
          }
        }
      parts.push_back(fmt::format("Z3: each kernel-side hook's unscaled fields equal with and without the scaled code; "
                                  "{} generated traces replay to identical kcpustat and task times", traces));
    } else if (claim == "native.scaled_equals_unscaled") {
      // The dropped CPUs have no SPURR/PURR: read_spurr() returns the TB. Is the removed code's
      // output equal to the unscaled one? Not per call: the SPURR delta also spans the kernel
      // time before the user stretch, which the split redistributes in the s:u ratio.
      for (const auto& c : dropped) {
        const std::uint64_t k = 1000, u = 3000, s = 2000;
        const auto text = split_trace(std::string(c.name).c_str(), k, u, s, c.tb_hz);
        const bool found = replays_finding(text, std::string(c.name).c_str(), before, "native.scaled_equals_unscaled");
        parts.push_back(fmt::format("{} ({}): {}", c.name, before.name(),
                                    found ? "differs (replayed): with k TB ticks of kernel time before a user stretch, "
                                            "stime_scaled = (k+u+s)*s/(s+u) != s"
                                          : "no difference found"));
        if (found) {
          r.verdict = Verdict::Violated;
          if (!r.counterexample) r.counterexample = text;
          r.inputs = {{"cpu", c.name}, {"k", k}, {"u", u}, {"s", s}};
        }
      }
      parts.push_back("the sums agree: utimescaled + stimescaled == the TB ticks split (native.split_sum), so the removed "
                      "code moved time between the scaled user and system figures and computed nothing new in total");
    } else if (claim == "native.split_no_overflow") {
      for (const auto& c : dropped) {
        const bool w32 = c.word_bits == 32;
        // First overflow: dS * s >= 2^W with dS = k + u + s; the smallest square: s = dS ~ 2^(W/2).
        const std::uint64_t s = w32 ? 65'536 : std::uint64_t{1} << 32, u = 1, k = 1;
        const double secs = double(s) / double(c.tb_hz);
        const auto text = split_trace(std::string(c.name).c_str(), k, u, s, c.tb_hz);
        const bool found = replays_finding(text, std::string(c.name).c_str(), before, "native.split_no_overflow");
        parts.push_back(fmt::format("{}: before the patch dS*s wraps at {} bits from s ~ dS = {} TB ticks ({:.4g} s of "
                                    "kernel time without a vtime_delta at {} Hz){}; after: no split",
                                    c.name, c.word_bits, s, secs, c.tb_hz, found ? ", replayed" : ", NOT replayed"));
        if (found) {
          r.verdict = Verdict::Violated;
          if (!r.counterexample) r.counterexample = text;
        } else {
          r.verdict = worst(r.verdict, Verdict::Error);
        }
      }
      parts.push_back("the patch removes the hazard on these CPUs (the split is no longer compiled)");
    }
    r.detail = fmt::format("{}", fmt::join(parts, "; "));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kacct::proofs
