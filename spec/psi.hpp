// Invariants of PSI irq accounting (model/psi). State invariants are templates over D (Z3 asks
// for a state that breaks them); the run-level ones (conservation against the ground-truth irq
// time, attribution to groups, the lock) are checked concretely by `Checker` after every event
// of a script. Names are stable: they appear in verdicts and counterexamples.
//
// Which irq time goes to which group, per version (the statement the Checker enforces):
//  * before 6.1 (no 52b1364ba0b1): none; times[IRQ_FULL] does not exist (stays 0).
//  * 6.1-6.9 (52b1364ba0b1): at every update_rq_clock(rq c) the irq time accrued on c since the
//    last update, clamped to the rq clock delta (the rest carried), is charged to rq->curr's
//    group and each enabled ancestor; when rq->curr is the idle task it is consumed uncharged.
//  * 6.10+ (ddae0ca2a8fe): at sched_tick on c (curr non-idle) and at __schedule(prev -> next)
//    when prev is non-idle and next is in another leaf group, ALL irq time accrued on c since
//    the last such charge -- including irq time while c was idle -- is charged to that task's
//    group and each enabled ancestor. Nothing is consumed uncharged.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/psi/psi.hpp"

namespace kacct::spec::psi {

// ---- state invariants (any domain)

// psi_irq.seq_even: no write section left open between events (a lockless reader would spin).
template <class D>
boolean<D> seq_even(D& d, const model::psi::World<D>& w) {
  boolean<D> r = d.lit_bool(true);
  auto even = [&](const u32<D>& s) {
    return d.eq(d.urem(s, d.template lit<32>(2), "psi_irq.seq_even"), d.template lit<32>(0));
  };
  for (const auto& g : w.v.gc)
    for (const auto& c : g) r = d.band(r, even(c.seq));
  for (const auto& c : w.v.cpu) r = d.band(r, even(c.psi_seq));
  return r;
}
// psi_irq.base_le_total: the PSI base never runs ahead of irq_time_read (pending >= 0).
template <class D>
boolean<D> base_le_total(D& d, const model::psi::PsiCfg& cfg, const model::psi::World<D>& w) {
  boolean<D> r = d.lit_bool(true);
  for (const auto& c : w.v.cpu)
    r = d.band(r, d.ule(cfg.charge_at_tick() ? c.psi_irq_time : c.acct.rq.prev_irq_time, c.acct.irqtime.total));
  return r;
}
// psi_irq.monotonic: psi_irq_time, prev_irq_time and the irq total never go backwards (the rq
// clocks' monotonicity is model/tick's, proved there).
template <class D>
boolean<D> monotonic(D& d, const model::psi::World<D>& a, const model::psi::World<D>& b) {
  boolean<D> r = d.lit_bool(true);
  for (std::size_t i = 0; i < a.v.cpu.size(); ++i) {
    const auto &x = a.v.cpu[i], &y = b.v.cpu[i];
    r = d.band(r, d.ule(x.psi_irq_time, y.psi_irq_time));
    r = d.band(r, d.ule(x.acct.rq.prev_irq_time, y.acct.rq.prev_irq_time));
    r = d.band(r, d.ule(x.acct.irqtime.total, y.acct.irqtime.total));
  }
  return r;
}

// ---- run-level checks (concrete)

struct Violation {
  std::string invariant;
  std::string message;
  std::vector<std::string> also;  // the other invariants the same event breaks
  Violation() = default;
  Violation(std::string inv, std::string msg) : invariant(std::move(inv)), message(std::move(msg)) {}
};

// Fed the world before and after each event, plus the ground truth the script runner measures
// itself (irq durations per CPU), and what the event was (for attribution).
class Checker {
 public:
  struct EventInfo {
    enum Kind { Other, Tick, Switch } kind = Other;
    int cpu = -1;
    int prev = 0, next = 0;         // Switch
    std::vector<int> group_before;  // group of each task before the event (truth)
    std::vector<int> curr_before;   // rq->curr per CPU before the event
    // The rqs whose clock the event brings up to date (update_rq_clock), in order, each while
    // rq->curr and the groups are still as before the event (the script runner's statement of
    // where the kernel calls it: sched_tick, __schedule, task_sched_runtime, ttwu's enqueue).
    std::vector<int> rq_clock;
  };

  Checker(const model::psi::PsiCfg& cfg, const model::psi::World<Concrete>& w0)
      : cfg_(cfg), psi_irq_(cfg.has_psi_irq()), at_tick_(cfg.charge_at_tick()), in_clock_(cfg.charge_in_clock()) {
    expected_.assign(w0.v.gc.size(), std::vector<std::uint64_t>(w0.v.cpu.size(), 0));
    accrued_.assign(w0.v.cpu.size(), 0);
    idle_pending_.assign(w0.v.cpu.size(), 0);
    charged_.assign(w0.v.cpu.size(), 0);
    ledger_ = expected_;
    ledger_base_.assign(w0.v.cpu.size(), 0);
    for (const auto& c : w0.v.cpu) ledger_clock_.push_back(c.acct.rq.clock);
    total0_.clear();
    for (const auto& c : w0.v.cpu) total0_.push_back(c.acct.irqtime.total);
  }
  // `idle`: the irq ran while the CPU's idle task was current (for the idle-irq finding).
  void add_irq(int cpu, std::uint64_t ns, bool idle = false) {
    accrued_[cpu] += ns;
    if (idle) idle_pending_[cpu] += ns;
  }
  // Finding (not a violation: it is what 6.10+ does): irq time that ran while a CPU idled and was
  // later charged to a task's group. Total ns, and the first such charge.
  std::uint64_t idle_irq_charged() const { return idle_charged_; }
  const std::string& idle_irq_finding() const { return idle_finding_; }
  const std::vector<std::uint64_t>& accrued() const { return accrued_; }
  std::uint64_t charged(int cpu) const { return charged_[cpu]; }
  std::uint64_t max_pending() const { return max_pending_; }

  // Incremental (the default): after an event that left every invariant holding, the next
  // event's per-record passes (psi_irq.hierarchy, group_ledger, state_clock) judge only the
  // psi_group_cpu records the event wrote (w.c.gc_writes: the caller clears it before each
  // event) or whose expected sums it changed; every other record reads what it read when it
  // last held (its state clock cannot fall behind: the clock only grows). The first event, one
  // after a violation, and a clock that went back are judged in full. The findings, their
  // text and order are the full pass's (test/psi: PsiIncremental.SameAsFullCheck).
  void set_incremental(bool on) { incremental_ = on; }

  // The first invariant the event breaks (in the order below), with the others it breaks too.
  std::optional<Violation> after(const model::psi::World<Concrete>& before, const model::psi::World<Concrete>& w,
                                 const EventInfo& e) {
    std::vector<Violation> found;
    full_ = !incremental_ || !judged_ || violated_ || w.v.now < last_now_;
    dirty_.assign(w.c.gc_writes.begin(), w.c.gc_writes.end());
    check(before, w, e, found);
    judged_ = true;
    violated_ = !found.empty();
    last_now_ = w.v.now;
    if (found.empty()) return std::nullopt;
    Violation v = found.front();
    for (std::size_t i = 1; i < found.size(); ++i)
      if (std::find(v.also.begin(), v.also.end(), found[i].invariant) == v.also.end() &&
          found[i].invariant != v.invariant)
        v.also.push_back(found[i].invariant);
    return v;
  }

 private:
  void check(const model::psi::World<Concrete>& before, const model::psi::World<Concrete>& w, const EventInfo& e,
             std::vector<Violation>& found) {
    Concrete d;
    // psi_irq.lock_held (the first new fault)
    if (n_faults_ < w.c.faults.size()) {
      const auto& f = w.c.faults[n_faults_];
      const auto torn = seq_dump(w);
      found.push_back(
          {"psi_irq.lock_held", fmt::format("cpu {} wrote {} of cpu {} without holding rq {}'s lock (owner {}){}",
                                            f.actor, f.what, f.cpu, f.cpu, lock_name(before, f.cpu),
                                            torn.empty() ? "" : "; after the event " + torn + "(torn: readers spin)")});
    }
    n_faults_ = w.c.faults.size();
    if (!seq_even(d, w))
      found.push_back({"psi_irq.seq_even", "a sequence count is odd after the event: " + seq_dump(w)});
    if (!monotonic(d, before, w)) found.push_back({"psi_irq.monotonic", "a PSI base or the irq total went backwards"});
    if (!base_le_total(d, cfg_, w))
      found.push_back({"psi_irq.base_le_total", "a PSI base is ahead of irq_time_read()"});
    // New charges: attribution, width, then the hierarchy sums.
    for (std::size_t i = n_charges_; i < w.c.charges.size(); ++i) {
      const auto& ch = w.c.charges[i];
      if (auto v = attribution(ch, e)) found.push_back(*v);
      if (ch.leaf >= 0 && ch.delta >> 32)
        found.push_back({"psi_irq.delta_fits_u32",
                         fmt::format("cpu {}: one charge of {} ns to task {} does not fit the u32 times[IRQ_FULL] add; "
                                     "{} ns are lost mod 2^32",
                                     ch.cpu, ch.delta, ch.task, ch.delta - (ch.delta & 0xffffffffu))});
      charged_[ch.cpu] += ch.delta;
      const auto from_idle = std::min(idle_pending_[ch.cpu], ch.delta);  // oldest irq time first
      idle_pending_[ch.cpu] -= from_idle;
      if (ch.leaf >= 0 && from_idle) {
        if (idle_finding_.empty())
          idle_finding_ =
              fmt::format("cpu {}: {} ns of irq time that ran while the cpu idled charged to task {} (group {})",
                          ch.cpu, from_idle, ch.task, ch.leaf);
        idle_charged_ += from_idle;
      }
      if (ch.leaf >= 0)
        for (int g : w.c.chain(ch.leaf))
          if (before.c.enabled[g]) {
            expected_[g][ch.cpu] += ch.delta;
            dirty_.emplace_back(g, ch.cpu);
          }
    }
    n_charges_ = w.c.charges.size();
    if (auto v = per_group(w, "psi_irq.hierarchy", "the charges to it and its descendants sum to", expected_))
      found.push_back(*v);
    // psi_irq.conservation: charged (and, pre-fix, consumed for idle) + pending == accrued.
    for (std::size_t c = 0; c < w.v.cpu.size(); ++c) {
      const auto& pc = w.v.cpu[c];
      if (pc.acct.irqtime.total - total0_[c] != accrued_[c]) {
        found.push_back({"psi_irq.irq_clock", fmt::format("cpu {}: irq_time_read() grew by {} but {} ns of irq ran", c,
                                                          pc.acct.irqtime.total - total0_[c], accrued_[c])});
        continue;
      }
      if (!psi_irq_ || !cfg_.irqtime) continue;
      const std::uint64_t base = at_tick_ ? pc.psi_irq_time : pc.acct.rq.prev_irq_time;
      const std::uint64_t pending = pc.acct.irqtime.total - base;
      max_pending_ = std::max(max_pending_, pending);
      if (charged_[c] + pending != accrued_[c])
        found.push_back(
            {"psi_irq.conservation",
             fmt::format("cpu {}: {} ns charged + {} ns pending != {} ns of irq time accrued ({})", c, charged_[c],
                         pending, accrued_[c], charged_[c] + pending > accrued_[c] ? "counted twice" : "lost")});
      // psi_irq.bounded_lag (6.10+): a charge point leaves nothing pending.
      if (at_tick_ && e.cpu == int(c) && pending != 0 && charge_point(e, c) > 0)
        found.push_back(
            {"psi_irq.bounded_lag", fmt::format("cpu {}: {} ns still pending after a charge point", c, pending)});
    }
    // psi_irq.group_ledger (every version): per cgroup and CPU, times[IRQ_FULL] against a ledger kept
    // from the ground truth alone (the irq time that ran, the tasks' groups, the charge points of
    // the version's rule), not from the model's charge log: at a charge point the irq time
    // accrued on the CPU since its last one goes to the charged task's group and each enabled
    // ancestor (the proposed fix: an idle point consumes it).
    if (psi_irq_ && at_tick_ && e.cpu >= 0 && std::size_t(e.cpu) < w.v.cpu.size()) {
      const std::size_t c = std::size_t(e.cpu);
      const int task = charge_point(e, c);
      const bool idle_point = cfg_.idle_irq_dropped && ((e.kind == EventInfo::Tick && e.curr_before[c] == 0) ||
                                                        (e.kind == EventInfo::Switch && e.prev == 0 && e.next != 0));
      if (task > 0) {
        for (int g : w.c.chain(e.group_before[task]))
          if (before.c.enabled[g]) {
            ledger_[g][c] += accrued_[c] - ledger_base_[c];
            dirty_.emplace_back(g, int(c));
          }
        ledger_base_[c] = accrued_[c];
      } else if (idle_point) {
        ledger_base_[c] = accrued_[c];
      }
    }
    // 6.1-6.9: at each update_rq_clock(rq c) the irq time accrued on c since the last one,
    // clamped to the rq clock's advance (the rest carried), goes to rq->curr's group and each
    // enabled ancestor; with the idle task current it is consumed uncharged.
    if (psi_irq_ && in_clock_)
      for (int c : e.rq_clock) {
        const std::uint64_t now = w.v.now, last = ledger_clock_[std::size_t(c)];
        const std::uint64_t took =
            std::min(accrued_[std::size_t(c)] - ledger_base_[std::size_t(c)], now > last ? now - last : 0);
        ledger_clock_[std::size_t(c)] = std::max(now, last);
        ledger_base_[std::size_t(c)] += took;
        if (const int task = e.curr_before[std::size_t(c)]; task > 0)
          for (int g : w.c.chain(e.group_before[std::size_t(task)]))
            if (before.c.enabled[g]) {
              ledger_[g][std::size_t(c)] += took;
              dirty_.emplace_back(g, c);
            }
      }
    if (auto v = per_group(w, "psi_irq.group_ledger", "the ground truth gives its subtree", ledger_))
      found.push_back(*v);
    // psi_irq.state_clock: a psi_group_cpu whose state changed in the event (times[IRQ_FULL] or
    // its sequence count moved) had its running state interval closed by record_times() at the
    // event's clock; no state clock is ahead of the clock.
    auto written = [&](std::size_t g, std::size_t c) {
      const auto &x = before.v.gc[g][c], &y = w.v.gc[g][c];
      return x.irq_full != y.irq_full || x.seq != y.seq;
    };
    auto stale = [&](std::size_t g, std::size_t c) {
      const auto& y = w.v.gc[g][c];
      return y.state_start > w.v.now || (written(g, c) && y.state_start != w.v.now);
    };
    if (auto at = first_where(w, stale)) {
      const auto [g, c] = *at;
      found.push_back({"psi_irq.state_clock", fmt::format("group {} cpu {}: state_start = {} at clock {} after {}", g,
                                                          c, w.v.gc[g][c].state_start, w.v.now,
                                                          written(g, c) ? "a write to its times" : "the event")});
    }
  }
  // The first record (group, cpu), in group then CPU order, where bad(g, c): over every record
  // when judging in full, else over the records the event wrote or re-summed (the others held).
  template <class Bad>
  std::optional<std::pair<std::size_t, std::size_t>> first_where(const model::psi::World<Concrete>& w,
                                                                 Bad&& bad) const {
    if (full_) {
      for (std::size_t g = 0; g < w.v.gc.size(); ++g)
        for (std::size_t c = 0; c < w.v.cpu.size(); ++c)
          if (bad(g, c)) return std::pair{g, c};
      return std::nullopt;
    }
    std::optional<std::pair<std::size_t, std::size_t>> first;
    for (const auto& [gi, ci] : dirty_) {
      const std::pair at{std::size_t(gi), std::size_t(ci)};
      if ((!first || at < *first) && bad(at.first, at.second)) first = at;
    }
    return first;
  }
  // The task a 6.10+ charge point on CPU c charges (sched_tick with a task current; __schedule
  // from a task to one in another leaf group), or 0.
  static int charge_point(const EventInfo& e, std::size_t c) {
    if (e.cpu != int(c)) return 0;
    if (e.kind == EventInfo::Tick && e.curr_before[c] != 0) return e.curr_before[c];
    if (e.kind == EventInfo::Switch && e.prev != e.next && e.prev != 0 &&
        e.group_before[e.prev] != e.group_before[e.next])
      return e.prev;
    return 0;
  }
  // times[IRQ_FULL] of every group and CPU against a u64 sum (mod 2^32): the first mismatch.
  std::optional<Violation> per_group(const model::psi::World<Concrete>& w, const char* inv, const char* what,
                                     const std::vector<std::vector<std::uint64_t>>& want) const {
    const auto at = first_where(w, [&](std::size_t g, std::size_t c) {
      return w.v.gc[g][c].irq_full != std::uint32_t(psi_irq_ ? want[g][c] : 0);
    });
    if (!at) return std::nullopt;
    const auto [g, c] = *at;
    return Violation{inv, fmt::format("group {} cpu {}: times[IRQ_FULL] = {}, but {} {} (mod 2^32: {})", g, c,
                                      w.v.gc[g][c].irq_full, what, want[g][c], std::uint32_t(want[g][c]))};
  }

  static std::string lock_name(const model::psi::World<Concrete>& w, int cpu) {
    return w.c.lock_owner[cpu] < 0 ? "none" : "cpu " + std::to_string(w.c.lock_owner[cpu]);
  }
  static std::string seq_dump(const model::psi::World<Concrete>& w) {
    std::string s;
    for (std::size_t g = 0; g < w.v.gc.size(); ++g)
      for (std::size_t c = 0; c < w.v.cpu.size(); ++c)
        if (w.v.gc[g][c].seq & 1) s += fmt::format("group {} cpu {} seq={} ", g, c, w.v.gc[g][c].seq);
    for (std::size_t c = 0; c < w.v.cpu.size(); ++c)
      if (w.v.cpu[c].psi_seq & 1) s += fmt::format("psi_seq[cpu {}]={} ", c, w.v.cpu[c].psi_seq);
    return s;
  }
  // psi_irq.attribution: the charged task and group are the version's.
  std::optional<Violation> attribution(const model::psi::Charge& ch, const EventInfo& e) const {
    auto bad = [&](const std::string& why) {
      return Violation{"psi_irq.attribution", fmt::format("cpu {}: charge of {} ns to task {} (group {}) at {}: {}",
                                                          ch.cpu, ch.delta, ch.task, ch.leaf,
                                                          ch.site == model::psi::Site::Tick     ? "sched_tick"
                                                          : ch.site == model::psi::Site::Switch ? "__schedule"
                                                                                                : "update_rq_clock",
                                                          why)};
    };
    const int truth_group = ch.task == 0 ? 0 : e.group_before[ch.task];
    if (ch.leaf >= 0 && ch.leaf != truth_group) return bad(fmt::format("the task is in group {}", truth_group));
    if (in_clock_) {
      if (ch.site != model::psi::Site::RqClock) return bad("pre-fix versions charge only from update_rq_clock");
      if (ch.task != e.curr_before[ch.cpu]) return bad("not rq->curr at the clock update");
      if ((ch.task == 0) != (ch.leaf < 0)) return bad("the idle task's share must be consumed, others charged");
      return std::nullopt;
    }
    if (cfg_.idle_irq_dropped && ch.task == 0 && ch.leaf < 0) {  // the proposed fix: only while idle
      const bool idle_point =
          (ch.site == model::psi::Site::Tick && e.kind == EventInfo::Tick && e.curr_before[ch.cpu] == 0) ||
          (ch.site == model::psi::Site::Switch && e.kind == EventInfo::Switch && e.prev == 0);
      if (idle_point) return std::nullopt;
      return bad("the fix consumes irq time only with the idle task current");
    }
    if (ch.leaf < 0 || ch.task == 0) return bad("6.10+ never consumes irq time uncharged");
    if (ch.site == model::psi::Site::Tick && (e.kind != EventInfo::Tick || ch.task != e.curr_before[ch.cpu]))
      return bad("the tick charges rq->curr");
    if (ch.site == model::psi::Site::Switch &&
        (e.kind != EventInfo::Switch || ch.task != e.prev || e.group_before[e.prev] == e.group_before[e.next]))
      return bad("a switch charges prev, and only when next is in another leaf group");
    if (ch.site == model::psi::Site::RqClock) return bad("6.10+ never charges from update_rq_clock");
    return std::nullopt;
  }

  model::psi::PsiCfg cfg_;
  bool psi_irq_, at_tick_, in_clock_;  // cfg_'s version facts, asked once
  bool incremental_ = true, full_ = true, judged_ = false, violated_ = false;
  std::uint64_t last_now_ = 0;                        // the clock of the last event judged
  std::vector<std::pair<int, int>> dirty_;            // this event's written or re-summed records
  std::vector<std::vector<std::uint64_t>> expected_;  // u64 sum of charges per [group][cpu]
  std::vector<std::vector<std::uint64_t>> ledger_;    // the same from the ground truth
  std::vector<std::uint64_t> accrued_, total0_, charged_, idle_pending_;
  std::vector<std::uint64_t> ledger_base_;   // per CPU: accrued at its last charge point (6.1-6.9: taken so far)
  std::vector<std::uint64_t> ledger_clock_;  // per CPU: the clock at its last update_rq_clock (6.1-6.9)
  std::uint64_t idle_charged_ = 0;
  std::string idle_finding_;
  std::size_t n_faults_ = 0, n_charges_ = 0;
  std::uint64_t max_pending_ = 0;
};

}  // namespace kacct::spec::psi
