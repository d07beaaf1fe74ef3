// Z3 jobs for powerpc native vtime (model/native/native.hpp, spec/native_vtime.hpp), at the real
// word widths (32-bit PPC32 with wrap-around, 64-bit PPC64), on the step harness: every
// counterexample is replayed concretely. The Kconfig patches' claims are in claims_native.cpp.
#include <fmt/format.h>

#include <random>

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
  std::string inv;  // empty: the obligations alone (no_division_by_zero)

  void assume(S&, const In<S>&, std::vector<z3::expr>&) const {}
  template <class D>
  sn::SplitIo<D, W> run(D& d, In<D>& in) const {
    Cost k;
    const auto a0 = in.acct;
    auto s_sc = delta_scaled<D, W>(d, base_cfg(W, true), in.acct, in.spurr_now, in.s, k);
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

template <unsigned W>
Result split_job(const std::string& inv, unsigned timeout_ms) {
  const std::string name = fmt::format("native_vtime.vtime_delta_scaled.{}[{}]", inv, wname(W));
  const SplitCase<W> c{inv == "no_division_by_zero" ? std::string() : inv};
  return step_job(
      name, c, c.inv.empty() ? std::vector<std::string>{} : std::vector<std::string>{inv},
      {kSeq, "one call from any state: every W-bit field value"}, timeout_ms,
      fmt::format("vtime_delta_scaled at {} bits", W),
      fmt::format("{} at {} bits: unsat{}", inv, W,
                  inv == "split_sum" || inv == "split_bounds" ? " (under the no-overflow precondition)" : ""));
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

// ---- tb_to_ns: never above the exact ns, below it by at most 2^shift + 1 (all 64-bit t) ----
template <class D>
struct TicksIn {
  BOOST_HANA_DEFINE_STRUCT(TicksIn, (u64<D>, ticks));
};
struct ConversionCase {
  template <class D>
  using In = TicksIn<D>;
  NativeCfg n;
  void assume(S& d, const In<S>& in, std::vector<z3::expr>& as) const {
    as.push_back(z3::ult(in.ticks.e(), d.ctx().bv_val(std::uint64_t{1} << (63 - n.tb_shift), 64)));
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    Cost k;
    auto ns = tb_to_ns(d, n, in.ticks, k);
    auto w = [&](std::uint64_t v) { return d.template lit<128>(v); };
    auto T = d.template zext<128>(in.ticks), N = d.template zext<128>(ns);
    // ns * f <= t * 1e9  and  t * 1e9 < (ns + 2^shift + 1) * f
    auto upper = d.ule(d.mul(N, w(n.tb_hz)), d.mul(T, w(1'000'000'000u)));
    auto lower =
        d.ult(d.mul(T, w(1'000'000'000u)), d.mul(d.add(N, w((std::uint64_t{1} << n.tb_shift) + 1)), w(n.tb_hz)));
    return {d.band(upper, lower)};
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const { return {{"ticks", in.ticks}}; }
};

Result conversion_job(std::uint64_t tb_hz, unsigned timeout_ms) {
  NativeCfg n = base_cfg(64, false);
  n.tb_hz = tb_hz;
  n.tb_scale = tb_scale_of(tb_hz).scale;
  n.tb_shift = tb_scale_of(tb_hz).shift;
  return step_job(
      fmt::format("native_vtime.tb_to_ns.bounded[{} Hz, shift {}]", tb_hz, n.tb_shift), ConversionCase{n}, {"bounded"},
      {"t below 2^(64 - shift): beyond it the shifted result wraps (over 500 years of TB)"}, timeout_ms, "tb_to_ns",
      fmt::format("exact - {} < tb_to_ns(t) <= exact: granularity 2^{} ns", (1u << n.tb_shift) + 1, n.tb_shift));
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
          r.replay = kReplayStep;  // found by running the concrete step itself
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
  r.approximations = {
      "edge values and 200000 random t below 2^(63 - shift); no proof (the 128-bit Z3 query times out)"};
  Concrete k;
  std::mt19937_64 rng(tb_hz);
  const std::uint64_t lim = std::uint64_t{1} << (63 - n.tb_shift);
  std::uint64_t worst_loss = 0;
  for (int i = 0; i < 200'000 + 256; ++i) {
    std::uint64_t t =
        i < 256 ? ((std::uint64_t{1} << (i / 4 % 62)) + (i % 4) - 1) % lim : (rng() >> (rng() % 60)) % lim;
    Cost c;
    const auto ns = tb_to_ns(k, n, t, c);
    const unsigned __int128 exact = (unsigned __int128)t * 1'000'000'000u / tb_hz;
    const unsigned __int128 loss = exact - ns;
    if (ns > exact || loss > (std::uint64_t{1} << n.tb_shift)) {
      r.verdict = Verdict::Violated;
      r.replay = kReplayStep;  // found by running the concrete conversion itself
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

}  // namespace kacct::proofs
