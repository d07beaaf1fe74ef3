// Concrete invariants of the simulator's outcome, over every legal CPU x config, checked
// against facts computed independently from the trace (Tracker, ground-truth Accountant):
//  - per CPU: tick-charged buckets (time buckets minus irq time measured at boundaries) are at
//    most the credited ticks (tick events + idle ticks credited at idle_exit) * TICK_NSEC, and
//    with the steal and irq time taken out they cover them; exact when neither is configured;
//    steal_clock == the trace's steal; STEAL <= it; irq time <= ledger irq+softirq+steal; with
//    IRQ_TIME_ACCOUNTING on the tick backend, per category: ledger irq <= IRQ <= ledger irq +
//    steal (an irq open at the end aside), SOFTIRQ <= ledger softirq + steal + ksoftirqd ticks;
//    GUEST <= USER, GUEST_NICE <= NICE;
//  - per task: utime+stime <= ticks while current * TICK_NSEC; gtime <= utime;
//    sum_exec_runtime <= ground-truth on-CPU time minus its steal (when steal is configured);
//  - reads: a thread reading its own rtime sees exactly its ground truth (without
//    IRQ_TIME_ACCOUNTING, whose irq-exit lag makes rtime approximate) and every read is
//    bounded by the truth of its target (thread or thread group); utime, stime and rtime never
//    decrease per (target, kind); when rtime grew, utime + stime == rtime, else the previous
//    pair is returned; taskstats reads (raw task_cputime, not adjusted) never exceed the
//    target's final counters.
#include <map>
#include <set>

#include "model/trace/ledger.hpp"
#include "props/props.hpp"
#include "spec/invariants.hpp"

namespace kacct::props {
namespace {

using trace::Kind;

struct ReadFact {
  bool self = false;              // the reader reads its own thread (thread kinds only)
  bool group = false;             // a thread-group read
  uint64_t tid = 0;               // target
  uint64_t steal = 0, total = 0;  // ground truth of the target (summed over the group) at the read
};
struct TraceFacts {
  trace::Ledger ledger;
  std::vector<uint64_t> steal_ns;                                // per CPU, sum of steal events
  std::vector<uint64_t> tick_events;                             // per CPU
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> idle;  // per CPU: nohz (enter, exit) ts
  std::map<uint64_t, uint64_t> task_ticks;                       // tid -> tick events while it was current
  std::vector<uint64_t> irq_tail;  // per CPU: ns since its last irq boundary if it ends inside one
  uint64_t ksoftirqd_ticks = 0;    // tick events while a ksoftirqd thread was current
  std::vector<ReadFact> reads;
};

bool group_kind(trace::ReadKind k) {
  return k == trace::ReadKind::ProcStat || k == trace::ReadKind::RusageSelf || k == trace::ReadKind::ProcessCputime;
}
bool adjusted_kind(trace::ReadKind k) {
  return k != trace::ReadKind::ThreadCputime && k != trace::ReadKind::ProcessCputime && k != trace::ReadKind::Taskstats;
}

TraceFacts facts_of(const trace::Trace& t) {
  TraceFacts f;
  const auto n = t.header.ncpus;
  f.steal_ns.assign(n, 0);
  f.tick_events.assign(n, 0);
  f.idle.resize(n);
  std::vector<uint64_t> idle_enter(n, 0), last_boundary(n, 0);
  std::set<uint64_t> ksoftirqd;
  for (const auto& d : t.header.tasks)
    if (d.kthread && d.comm.rfind("ksoftirqd/", 0) == 0) ksoftirqd.insert(d.tid);  // as model/sim/machine.cpp
  trace::Accountant acc(t.header);
  for (const auto& e : t.events) {
    const auto& tr = acc.tracker();
    const uint64_t cur = tr.cpu(e.cpu).current;
    switch (e.kind) {
      case Kind::Tick:
        ++f.tick_events[e.cpu];
        if (cur != 0) ++f.task_ticks[cur];
        f.ksoftirqd_ticks += ksoftirqd.count(cur);
        break;
      case Kind::IrqEnter:
      case Kind::IrqExit:
      case Kind::SoftirqEnter:
      case Kind::SoftirqExit: last_boundary[e.cpu] = e.ts; break;
      case Kind::Steal: f.steal_ns[e.cpu] += e.a; break;
      case Kind::IdleEnter: idle_enter[e.cpu] = e.ts; break;
      case Kind::IdleExit: f.idle[e.cpu].push_back({idle_enter[e.cpu], e.ts}); break;
      case Kind::Read: {
        ReadFact r;
        r.tid = e.a != 0 ? e.a : cur;
        r.group = group_kind(e.read_kind);
        r.self = !r.group && r.tid == cur;
        const trace::Ledger l = acc.snapshot(e.ts);
        const uint64_t pid = tr.task(r.tid)->pid;
        for (const auto& [tid, truth] : l.task)
          if (r.group ? tr.task(tid)->pid == pid : tid == r.tid) {
            r.total += truth.total();
            r.steal += truth.steal;
          }
        f.reads.push_back(r);
        break;
      }
      default: break;
    }
    if (auto err = acc.apply(e)) throw std::logic_error("builder produced an invalid trace: " + err->to_string());
  }
  f.ledger = acc.snapshot(acc.tracker().now());
  f.irq_tail.assign(n, 0);
  for (uint32_t c = 0; c < n; ++c) {
    const auto& x = acc.tracker().cpu(c);
    if (x.irq_depth > 0 || x.in_softirq) f.irq_tail[c] = acc.tracker().now() - last_boundary[c];
  }
  return f;
}

// The first broken outcome invariant, or "".
std::string outcome_error(const trace::Trace& t, const sim::Program& p, const TraceFacts& f, const sim::ModelCfg& m,
                          const sim::RunResult& r) {
  using namespace model;
  Concrete d;
  const uint64_t tn = m.tick.tick_nsec;
  auto fail = [](std::string what, auto a, auto b) {
    return what + " (" + std::to_string(a) + " vs " + std::to_string(b) + ")";
  };
  for (uint32_t c = 0; c < t.header.ncpus; ++c) {
    const auto& x = r.cpus[c];
    const std::string at = "cpu" + std::to_string(c) + ": ";
    uint64_t credited = f.tick_events[c];
    for (auto [enter, exit] : f.idle[c]) credited += exit / tn - enter / tn;
    const uint64_t T = credited * tn;
    const uint64_t irq_sum = x.cpustat[IRQ] + x.cpustat[SOFTIRQ];
    if (x.irqtime.total > irq_sum) return fail(at + "irqtime.total > IRQ + SOFTIRQ", x.irqtime.total, irq_sum);
    if (!m.tick.irq_time && (x.irqtime.total != 0 || x.irqtime.tick_delta != 0))
      return fail(at + "irq time measured without IRQ_TIME_ACCOUNTING", x.irqtime.total, x.irqtime.tick_delta);
    const uint64_t B = spec::tick::time_buckets(d, x) - x.irqtime.total;  // tick-charged time
    const uint64_t other = x.cpustat[STEAL] + (x.irqtime.total - x.irqtime.tick_delta);
    if (B > T) return fail(at + "tick-charged buckets exceed credited ticks * TICK_NSEC", B, T);
    if (B + other < T) return fail(at + "credited ticks neither charged nor taken by steal/irq", B + other, T);
    if (!m.tick.irq_time && !m.tick.steal && B != T) return fail(at + "plain tick: buckets != ticks * TICK_NSEC", B, T);
    if (x.steal_clock != f.steal_ns[c])
      return fail(at + "steal_clock != the trace's steal", x.steal_clock, f.steal_ns[c]);
    if (x.cpustat[STEAL] > f.steal_ns[c])
      return fail(at + "STEAL > the trace's steal", x.cpustat[STEAL], f.steal_ns[c]);
    if (!m.tick.steal && x.cpustat[STEAL] != 0) return fail(at + "STEAL without steal accounting", x.cpustat[STEAL], 0);
    const auto& row = f.ledger.cpu[c];
    const uint64_t truth_irq =
        row[size_t(trace::Bucket::Irq)] + row[size_t(trace::Bucket::Softirq)] + row[size_t(trace::Bucket::Steal)];
    if (x.irqtime.total > truth_irq)
      return fail(at + "irq time > ledger irq + softirq + steal", x.irqtime.total, truth_irq);
    if (m.acct == arch::Accounting::Tick && m.tick.irq_time) {
      // Per category: hardirq time is measured at the boundaries, so cpustat[IRQ] is the
      // ledger's irq time plus the steal inside it, less an irq still open at the end; softirq
      // likewise at most, plus the ticks of ksoftirqd (its softirqs are task time, its ticks
      // SOFTIRQ).
      const uint64_t steal = row[size_t(trace::Bucket::Steal)];
      const uint64_t irq = row[size_t(trace::Bucket::Irq)], softirq = row[size_t(trace::Bucket::Softirq)];
      if (x.cpustat[IRQ] > irq + steal) return fail(at + "IRQ > ledger irq + steal", x.cpustat[IRQ], irq + steal);
      if (x.cpustat[IRQ] + f.irq_tail[c] < irq)
        return fail(at + "IRQ < ledger irq (less an open irq)", x.cpustat[IRQ] + f.irq_tail[c], irq);
      if (x.cpustat[SOFTIRQ] > softirq + steal + f.ksoftirqd_ticks * tn)
        return fail(at + "SOFTIRQ > ledger softirq + steal + ksoftirqd ticks", x.cpustat[SOFTIRQ], softirq + steal);
    }
    if (x.cpustat[GUEST] > x.cpustat[USER]) return fail(at + "GUEST > USER", x.cpustat[GUEST], x.cpustat[USER]);
    if (x.cpustat[GUEST_NICE] > x.cpustat[NICE])
      return fail(at + "GUEST_NICE > NICE", x.cpustat[GUEST_NICE], x.cpustat[NICE]);
  }
  auto bound = [&](uint64_t total, uint64_t steal) { return total - (m.tick.steal ? steal : 0); };
  for (size_t k = t.header.ncpus; k < p.tasks.size(); ++k) {
    const auto& ta = r.tasks[k];
    const uint64_t tid = p.tasks[k].tid;
    const std::string at = "task " + std::to_string(tid) + ": ";
    auto it = f.task_ticks.find(tid);
    const uint64_t ticks = it == f.task_ticks.end() ? 0 : it->second;
    if (ta.utime + ta.stime > ticks * tn)
      return fail(at + "utime+stime > ticks while current * TICK_NSEC", ta.utime + ta.stime, ticks * tn);
    if (ta.gtime > ta.utime) return fail(at + "gtime > utime", ta.gtime, ta.utime);
    const auto& truth = f.ledger.task.at(tid);
    if (ta.sum_exec_runtime > bound(truth.total(), truth.steal))
      return fail(at + "sum_exec_runtime > ground-truth on-CPU time", ta.sum_exec_runtime,
                  bound(truth.total(), truth.steal));
  }
  if (r.reads.size() != f.reads.size()) return fail("read count", r.reads.size(), f.reads.size());
  std::map<std::pair<uint64_t, int>, sim::ReadResult> last;                 // (tid, kind) -> previous read
  std::map<std::pair<bool, uint64_t>, std::pair<uint64_t, uint64_t>> prev;  // prev_cputime owner -> (ut, st)
  for (size_t i = 0; i < r.reads.size(); ++i) {
    const auto& rd = r.reads[i];
    const auto& rf = f.reads[i];
    const std::string at = "read " + std::to_string(i) + " (id " + std::to_string(rd.id) + "): ";
    if (rd.tid != rf.tid) return fail(at + "target", rd.tid, rf.tid);
    const uint64_t b = bound(rf.total, rf.steal);
    if (rd.rtime > b) return fail(at + "rtime > ground truth of the target", rd.rtime, b);
    // Only CLOCK_THREAD_CPUTIME_ID brings the running reader's rtime up to date (task_sched_runtime);
    // per-thread stat and RUSAGE_THREAD read the value of the last scheduler update (6.12 cputime.c).
    if (rf.self && rd.kind == trace::ReadKind::ThreadCputime && !m.tick.irq_time && rd.rtime != b)
      return fail(at + "own rtime != ground truth", rd.rtime, b);
    auto key = std::make_pair(rd.tid, int(rd.kind));
    if (auto l = last.find(key); l != last.end()) {
      const auto& o = l->second;
      if (rd.rtime < o.rtime) return fail(at + "rtime went backwards", rd.rtime, o.rtime);
      if (rd.utime < o.utime) return fail(at + "utime went backwards", rd.utime, o.utime);
      if (rd.stime < o.stime) return fail(at + "stime went backwards", rd.stime, o.stime);
    }
    last[key] = rd;
    if (adjusted_kind(rd.kind)) {
      const uint64_t owner = rf.group ? p.tasks[p.reads[i].target].pid : rd.tid;
      auto& pv = prev[{rf.group, owner}];
      if (rd.rtime > pv.first + pv.second) {
        if (rd.utime + rd.stime != rd.rtime) return fail(at + "utime+stime != rtime", rd.utime + rd.stime, rd.rtime);
      } else if (rd.utime != pv.first || rd.stime != pv.second) {
        return fail(at + "no new rtime but (utime, stime) changed", rd.utime, pv.first);
      }
      pv = {rd.utime, rd.stime};
    } else if (rd.kind == trace::ReadKind::Taskstats) {
      // raw task_cputime(): the tick-sampled counters, never more than the ticks the target got
      if (rd.utime + rd.stime > r.tasks[p.reads[i].target].utime + r.tasks[p.reads[i].target].stime)
        return fail(at + "taskstats utime+stime > the task's final counters", rd.utime + rd.stime,
                    r.tasks[p.reads[i].target].utime + r.tasks[p.reads[i].target].stime);
    } else if (rd.utime != 0 || rd.stime != 0) {
      return fail(at + "clock read with utime/stime", rd.utime, rd.stime);
    }
  }
  return "";
}

class OutcomeProp : public CpuTest {};
KACCT_EVERY_CPU(OutcomeProp);

TEST_P(OutcomeProp, ConcreteInvariants) {
  const arch::CpuFacts cpu = GetParam();
  const auto cfgs = configs_of(cpu);
  check(
      [&] {
        const auto spec = *gen_spec(std::string(cpu.name));
        const auto actions = *gen_actions();
        const trace::Trace t = trace::build(spec, actions);
        auto prog = sim::compile(t);
        RC_ASSERT(prog.ok());
        const TraceFacts f = facts_of(t);
        for (const auto& c : cfgs) {
          if (c.cfg.acct != arch::Accounting::Tick) continue;  // tick facts; native: native_prop.cpp
          const auto r = sim::run(prog.value(), c.model, {.check = false});
          const std::string err = outcome_error(t, prog.value(), f, c.model, r);
          if (!err.empty()) RC_FAIL(report(cpu, c.cfg, err, t));
        }
      },
      300);
}

}  // namespace
}  // namespace kacct::props
