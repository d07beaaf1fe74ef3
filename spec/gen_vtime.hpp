// Gen vtime invariants (model/gen/gen.hpp), written once over the value domain. The machine's
// check mode evaluates them after every event on a nohz_full CPU; proofs/jobs_gen.cpp proves the
// state invariants inductive per step at 64 bits. docs/models/gen-vtime.md states them in words.
#pragma once
#include "model/gen/gen.hpp"
#include "spec/invariants.hpp"

namespace kacct::spec::gen {

// Per task, every variant: the clock time vtime consumed for the task is exactly what it handed
// to the account_*() sinks, plus the other time (steal, irq) taken out, plus the residues still
// pending. Nothing is created or lost inside a task's vtime.
template <class D>
boolean<D> gen_task_conserves(D& d, const model::VtimeTask<D>& v) {
  auto rhs = d.add(d.add(v.flushed, v.other), d.add(v.utime, d.add(v.stime, v.gtime)));
  return d.eq(v.consumed, rhs);
}
// Accum: each residue stays below TICK_NSEC (it is flushed when it reaches it); Snapshot and
// Jiffy keep no residues at all.
template <class D>
boolean<D> gen_residues_bounded(D& d, const model::GenCfg& g, const model::TickCfg& tc, const model::VtimeTask<D>& v) {
  if (g.variant != model::GenVariant::Accum) {
    auto z = d.template lit<64>(0);
    return d.band(d.eq(v.utime, z), d.band(d.eq(v.stime, z), d.eq(v.gtime, z)));
  }
  auto t = d.template lit<64>(tc.tick_nsec);
  return d.band(d.ult(v.utime, t), d.band(d.ult(v.stime, t), d.ult(v.gtime, t)));
}
// Per CPU: the clock time the CPU's vtime consumed plus what it lost in switch gaps (the time
// between prev's last read and next's snapshot; Jiffy: whole jiffies) equals the running task's
// snapshot (in ns; Jiffy: jiffies x jiffy_ns), counted from boot.
template <class D>
boolean<D> gen_cpu_conserves(D& d, const model::GenCfg& g, const model::VtimeCpu<D>& vc,
                             const model::VtimeTask<D>& cur) {
  auto snap =
      g.variant == model::GenVariant::Jiffy ? d.mul(cur.starttime, d.template lit<64>(g.jiffy_ns)) : cur.starttime;
  return d.eq(d.add(vc.consumed, vc.lost), snap);
}
// CPU hotplug (checked by the machine backend, model/gen/backend.cpp, against the trace's
// cpu_offline/cpu_online times, which no vtime state holds):
//   gen_vtime.hotplug_offline_not_accounted  no flush after cpu_online consumes offline time;
//   gen_vtime.hotplug_online_time_kept       vtime_init_idle() at bring-up drops no idle time the
//                                            CPU ran before cpu_offline.
// cpu_conserves keeps its meaning over bring-up: what a fresh snapshot skips is in `lost`.

// Seqcount: even between events (no write section left open).
template <class D>
boolean<D> gen_seq_even(D& d, const model::VtimeTask<D>& v) {
  auto w = d.template zext<64>(v.seq);
  return d.eq(d.urem(w, d.template lit<64>(2), "seq parity"), d.template lit<64>(0));
}
// Seqcount: a step advances seq by an even amount, and if any field a reader reads (starttime,
// residues) changed, it advanced (the machine also checks: by exactly 2 per section opened).
template <class D>
boolean<D> gen_seq_brackets(D& d, const model::VtimeTask<D>& a, const model::VtimeTask<D>& b) {
  auto adv = d.template zext<64>(d.template trunc<32>(d.sub(d.template zext<64>(b.seq), d.template zext<64>(a.seq))));
  auto even = d.eq(d.urem(adv, d.template lit<64>(2), "seq advance parity"), d.template lit<64>(0));
  auto same = d.band(d.eq(a.starttime, b.starttime),
                     d.band(d.eq(a.utime, b.utime), d.band(d.eq(a.stime, b.stime), d.eq(a.gtime, b.gtime))));
  return d.band(even, d.bor(same, d.bnot(d.eq(adv, d.template lit<64>(0)))));
}
// The ghosts only grow.
template <class D>
boolean<D> gen_vtime_monotonic(D& d, const model::VtimeTask<D>& a, const model::VtimeTask<D>& b) {
  return d.band(d.ule(a.consumed, b.consumed), d.band(d.ule(a.flushed, b.flushed), d.ule(a.other, b.other)));
}

}  // namespace kacct::spec::gen
