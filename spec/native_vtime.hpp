// Invariants of powerpc native vtime (model/native/native.hpp), as domain templates: the
// concrete run checks them after every event (check mode), the prover asks Z3 for a state and
// input that break them (proofs/jobs_native.cpp). Names are stable: they appear in verdicts.
//
//  native_vtime.tb_conserved       every TB tick since boot is in exactly one place: handed to the
//                                  generic sinks, pending in a bucket, or in the open interval
//                                  (mod 2^W; holds without SPLPAR steal, see native_vtime.steal_clamped)
//  native_vtime.ns_bounded         flushed ns vs the exact ns of the flushed TB ticks: never more, and
//                                  less by at most (2^shift + 1) ns per conversion (tb_to_ns truncation);
//                                  not after a bucket wrapped (native_vtime.word_wrap, steal_clamped):
//                                  RunResult::unjudged says from where, `kacct check` prints it
//  native_vtime.snapshots_monotone starttime / starttime_user move forward, never past now
//  native_vtime.split_sum          stime_scaled + utime_scaled == SPURR delta (when the product fits)
//  native_vtime.split_bounds       each share <= SPURR delta (when the product fits)
//  native_vtime.split_identity     SPURR delta == s + u  ->  shares == (s, u)
//  native_vtime.split_no_overflow  s + u < 2^W, and dS * s < 2^W when it divides: the hazard, exact bounds
//  native_vtime.flush_zeroes       after vtime_flush every bucket (and utime_sspurr) is 0
//  native_vtime.flush_attribution  a flush charges the task that was running while the time accrued
//  native_vtime.hotplug_offline_not_accounted  no delta after cpu_online includes TB ticks the CPU was
//                                  offline (checked by the machine backend against the trace's
//                                  cpu_offline/cpu_online: it needs their TB values, not a state)
//  native_vtime.hotplug_online_time_kept  vtime_reset() at bring-up skips no TB tick of online time
//                                  (the interval from the last hook to cpu_offline); likewise
#pragma once
#include "model/native/native.hpp"

namespace kacct::spec::native {

// Sum of the TB buckets pending in a context (W-bit wrap-around, as the kernel would add them).
template <class D, unsigned W>
ulong_t<D, W> pending_tb(D& d, const model::native::Acct<D, W>& a) {
  auto s = d.add(a.utime, a.stime);
  s = d.add(s, a.gtime);
  s = d.add(s, a.hardirq_time);
  s = d.add(s, a.softirq_time);
  s = d.add(s, a.idle_time);
  return d.add(s, a.steal_time);
}
// The open interval: since starttime_user in user mode, since starttime on the kernel side.
template <class D, unsigned W>
ulong_t<D, W> open_tb(D& d, const model::native::Acct<D, W>& a, bool kernel_side, const ulong_t<D, W>& now) {
  return d.sub(now, kernel_side ? a.starttime : a.starttime_user);
}
template <class D, unsigned W>
boolean<D> tb_conserved(D& d, const model::native::Acct<D, W>& a, bool kernel_side, const ulong_t<D, W>& now,
                        const ulong_t<D, W>& flushed, const ulong_t<D, W>& origin) {
  auto have = d.add(d.add(pending_tb(d, a), flushed), open_tb(d, a, kernel_side, now));
  return d.eq(have, d.sub(now, origin));
}

// exact_ns(t) = floor(t * 1e9 / tb_hz) in 128 bits; flushed ns in [exact - k*(2^shift+1), exact].
template <class D>
boolean<D> ns_bounded(D& d, const model::native::NativeCfg& cfg, const u64<D>& ns, const u64<D>& flushed_tb,
                      const u64<D>& conversions) {
  auto w = [&](std::uint64_t v) { return d.template lit<128>(v); };
  auto exact = d.udiv(d.mul(d.template zext<128>(flushed_tb), w(1'000'000'000u)), w(cfg.tb_hz), "ns_bounded.div");
  auto n = d.template zext<128>(ns);
  auto slack = d.mul(d.template zext<128>(conversions), w((std::uint64_t{1} << cfg.tb_shift) + 1));
  return d.band(d.ule(n, exact), d.ule(exact, d.add(n, slack)));
}

template <class D, unsigned W>
boolean<D> snapshots_monotone(D& d, const model::native::Acct<D, W>& before, const model::native::Acct<D, W>& after,
                              const ulong_t<D, W>& now) {
  auto fwd = [&](const ulong_t<D, W>& a, const ulong_t<D, W>& b) { return d.ule(d.sub(b, a), d.sub(now, a)); };
  return d.band(fwd(before.starttime, after.starttime), fwd(before.starttime_user, after.starttime_user));
}

// The split's inputs and outputs (one vtime_delta_scaled call).
template <class D, unsigned W>
struct SplitIo {
  ulong_t<D, W> ds, s, u, s_sc, u_sc;
};
// The hazards: s + u wraps at W bits (then the identity test and the divisor are wrong, down to
// a division by zero), or the kernel divides (dS != s + u and u != 0) and the product dS * s
// wraps. Exact bounds: s + u >= 2^W; dS * s >= 2^W.
template <class D, unsigned W>
boolean<D> split_no_overflow(D& d, const SplitIo<D, W>& x) {
  auto divides = d.band(d.bnot(d.eq(x.ds, d.add(x.s, x.u))), d.bnot(d.eq(x.u, d.template lit<W>(0))));
  auto fits = d.bnot(d.add_overflows(x.s, x.u));
  return d.band(fits, d.implies(divides, d.bnot(d.mul_overflows(x.ds, x.s))));
}
template <class D, unsigned W>
boolean<D> split_sum(D& d, const SplitIo<D, W>& x) {
  return d.implies(split_no_overflow(d, x), d.eq(d.add(x.s_sc, x.u_sc), x.ds));
}
template <class D, unsigned W>
boolean<D> split_bounds(D& d, const SplitIo<D, W>& x) {
  return d.implies(split_no_overflow(d, x), d.band(d.ule(x.s_sc, x.ds), d.ule(x.u_sc, x.ds)));
}
template <class D, unsigned W>
boolean<D> split_identity(D& d, const SplitIo<D, W>& x) {
  return d.implies(d.eq(x.ds, d.add(x.s, x.u)), d.band(d.eq(x.s_sc, x.s), d.eq(x.u_sc, x.u)));
}

template <class D, unsigned W>
boolean<D> flush_zeroes(D& d, const model::native::NativeCfg& cfg, const model::native::Acct<D, W>& a) {
  auto z = d.template lit<W>(0);
  auto r = d.band(d.eq(a.utime, z), d.eq(a.stime, z));
  r = d.band(r, d.band(d.eq(a.gtime, z), d.eq(a.idle_time, z)));
  r = d.band(r, d.band(d.eq(a.hardirq_time, z), d.eq(a.softirq_time, z)));
  if (cfg.splpar) r = d.band(r, d.eq(a.steal_time, z));
  if (cfg.scaled)
    r = d.band(r, d.band(d.eq(a.utime_scaled, z), d.band(d.eq(a.stime_scaled, z), d.eq(a.utime_sspurr, z))));
  return r;
}

}  // namespace kacct::spec::native
