// Invariants of lazy-TLB mm handling (docs/models/lazy-tlb.md). The accounting
// relation is a domain template (Z3 proves each step preserves it at full width); the rest are
// structural and checked after every event by the explorer, the property tests and the CLI.
#pragma once
#include <string>
#include <vector>

#include "model/lazytlb/lazytlb.hpp"

namespace kacct::spec::lazytlb {

// Who holds mm m, from the structure alone.
struct Holders {
  std::uint32_t users = 0;  // tasks whose ->mm is m (user tasks, kthreads inside kthread_use_mm) + outside mmget
  std::uint32_t grabs = 0;  // kthreads inside kthread_use_mm + outside mmgrab
  std::uint32_t lazy = 0;   // running tasks with mm NULL and active_mm m, plus rq->prev_mm == m
};
template <class D>
Holders holders(const model::lazytlb::World<D>& w, model::lazytlb::Ref m) {
  Holders h;
  h.users = w.mms[m].ext_users;
  h.grabs = w.mms[m].ext_grabs;
  for (const auto& t : w.tasks) {
    if (t.st == model::lazytlb::TaskState::Unborn || t.st == model::lazytlb::TaskState::Dead) continue;
    if (t.mm == m) {
      ++h.users;
      if (t.kthread) ++h.grabs;
    }
    if (t.st == model::lazytlb::TaskState::Running && t.mm == model::lazytlb::kNull && t.active_mm == m) ++h.lazy;
  }
  for (const auto& c : w.cpus)
    if (c.prev_mm == m) ++h.lazy;
  return h;
}

// L3/L4: mm_users = holders' users + X_u; mm_count = [mm_users != 0] + grabs (+ lazy under
// refcounting) + X_c; a freed mm has both at 0. X_u, X_c are references held outside the
// modelled tasks (0 concretely; any value in the proofs). get() gives holders(w, m); it is asked
// only for a live mm.
template <class D, class GetHolders>
boolean<D> accounting_by(D& d, const model::lazytlb::World<D>& w, const model::lazytlb::Cfg& cfg, model::lazytlb::Ref m,
                         GetHolders&& get, const u32<D>& xu, const u32<D>& xc) {
  const auto& k = w.cnt[m];
  if (w.mms[m].st == model::lazytlb::MmState::Unborn) return d.lit_bool(true);
  if (w.mms[m].st == model::lazytlb::MmState::Freed)
    return d.band(d.eq(k.mm_users, d.template lit<32>(0)), d.eq(k.mm_count, d.template lit<32>(0)));
  const Holders h = get();
  auto users = d.add(xu, d.template lit<32>(h.users));
  auto live = d.select(d.eq(users, d.template lit<32>(0)), d.template lit<32>(0), d.template lit<32>(1));
  auto count = d.add(d.add(xc, live), d.template lit<32>(h.grabs + (cfg.shootdown ? 0 : h.lazy)));
  return d.band(d.eq(k.mm_users, users), d.eq(k.mm_count, count));
}
template <class D>
boolean<D> accounting(D& d, const model::lazytlb::World<D>& w, const model::lazytlb::Cfg& cfg, model::lazytlb::Ref m,
                      const u32<D>& xu, const u32<D>& xc) {
  return accounting_by(
      d, w, cfg, m, [&] { return holders(w, m); }, xu, xc);
}

struct Violation {
  std::string invariant;  // "lazytlb.<name>"
  std::string detail;
  bool operator==(const Violation&) const = default;
};

// The invariants, one object at a time: check() runs each over every object, Checker over those
// a step may have changed. Each reads only what its comment says (Checker relies on it).
namespace detail {
namespace lt = model::lazytlb;
inline bool freed(const lt::World<Concrete>& w, lt::Ref m) { return m >= 0 && w.mms[m].st == lt::MmState::Freed; }

// CPU c: reads cpus[c], its current task's mm and active_mm, and those mms' and prev_mm's state
// and mask bit c.
inline void check_cpu(const lt::World<Concrete>& w, const lt::Cfg& cfg, int c, bool inductive,
                      std::vector<Violation>& out) {
  const lt::Task& t = w.tasks[w.cpus[c].curr];
  // L1: no CPU uses a freed mm, lazily or not (and under refcounting rq->prev_mm, which
  // finish_task_switch will mmdrop, is alive too; under shootdown it is only compared).
  if (freed(w, t.active_mm))
    out.push_back({"lazy_tlb.no_dangling_active_mm",
                   "CPU " + std::to_string(c) + " has active_mm = freed mm " + std::to_string(t.active_mm)});
  if (!cfg.shootdown && freed(w, w.cpus[c].prev_mm))
    out.push_back({"lazy_tlb.no_dangling_active_mm",
                   "CPU " + std::to_string(c) + " rq->prev_mm = freed mm " + std::to_string(w.cpus[c].prev_mm)});
  // L5: under shootdown every online CPU using an mm (lazily or not) is in its mm_cpumask. An
  // offline CPU gets no IPI whatever its bit says; L1 judges what it still uses.
  if (cfg.shootdown && w.cpus[c].hp == lt::Hp::Online)
    for (lt::Ref m : {t.active_mm, t.mm})
      if (m >= 0 && !freed(w, m) && !w.mms[m].mask.test(c))
        out.push_back({"lazy_tlb.mask_covers_users",
                       "CPU " + std::to_string(c) + " uses mm " + std::to_string(m) + " but is not in its mm_cpumask"});
  // L5': under shootdown a CPU that is not online runs on no user mm: no shootdown IPI can
  // reach it, so the mm could be freed under it (what 21641bd9a7a7 fixed).
  if (inductive && cfg.shootdown && w.cpus[c].hp != lt::Hp::Online && t.active_mm >= 0)
    out.push_back({"lazy_tlb.offline_cpu_on_init_mm",
                   "CPU " + std::to_string(c) + " is offline on mm " + std::to_string(t.active_mm)});
}
// Task i: reads tasks[i] and the state of its mm.
inline void check_task(const lt::World<Concrete>& w, int i, std::vector<Violation>& out) {
  const lt::Task& t = w.tasks[i];
  if (t.st == lt::TaskState::Unborn) return;
  if (t.st != lt::TaskState::Dead && freed(w, t.mm))
    out.push_back({"lazy_tlb.no_dangling_active_mm", "task " + std::to_string(i) + " has mm = freed mm"});
  // L8: a switched-out task with no mm has no active_mm.
  if (t.st != lt::TaskState::Running && t.mm == lt::kNull && t.active_mm != lt::kNull)
    out.push_back(
        {"lazy_tlb.switched_out_kthread_no_active_mm", "task " + std::to_string(i) + " keeps an active_mm off-CPU"});
}
// Mm m: reads mms[m], cnt[m] and holders(w, m) (get() gives them).
template <class GetHolders>
void check_mm(const lt::World<Concrete>& w, const lt::Cfg& cfg, int m, GetHolders&& get, std::vector<Violation>& out) {
  if (w.mms[m].st == lt::MmState::Unborn) return;
  Concrete d;
  // L2 + L3/L4 (underflow itself is an obligation of the step).
  if (!accounting_by(d, w, cfg, lt::Ref(m), get, 0u, 0u)) {
    const Holders h = get();
    out.push_back({"lazy_tlb.accounting",
                   "mm " + std::to_string(m) + ": mm_users=" + std::to_string(w.cnt[m].mm_users) + " mm_count=" +
                       std::to_string(w.cnt[m].mm_count) + " but holders users=" + std::to_string(h.users) +
                       " grabs=" + std::to_string(h.grabs) + " lazy=" + std::to_string(h.lazy)});
  }
  // L7 no leak: an mm nobody references is freed.
  if (w.mms[m].st == lt::MmState::Live && w.cnt[m].mm_count == 0)
    out.push_back({"lazy_tlb.no_leak", "mm " + std::to_string(m) + " has mm_count 0 but is not freed"});
  // Under shootdown the lazy users do not pin the mm: once the last real reference is gone
  // it is freed in the same step (no zombie mm).
  if (cfg.shootdown && w.mms[m].st == lt::MmState::Live) {
    const Holders h = get();
    if (h.users == 0 && h.grabs == 0)
      out.push_back(
          {"lazy_tlb.shootdown_frees_at_last_drop", "mm " + std::to_string(m) + " outlives its last real reference"});
  }
}
// What the step itself did (the log only).
inline void check_log(const lt::StepLog& log, std::vector<Violation>& out) {
  // L10: a CPU clears only its own mm_cpumask bit.
  for (const auto& cl : log.clears)
    if (cl.by != cl.bit)
      out.push_back({"lazy_tlb.own_bit_only", "CPU " + std::to_string(cl.by) + " cleared CPU " +
                                                  std::to_string(cl.bit) + "'s bit in mm " + std::to_string(cl.mm) +
                                                  "'s mm_cpumask"});
  for (auto wmsg : log.warns) out.push_back({"lazy_tlb.kernel_warn", std::string(wmsg)});
}
}  // namespace detail

// Every invariant after a step (log: what the step did). with_counters = false: only those that
// do not read mm_users/mm_count (the proofs check the counter ones with Z3). inductive = true
// adds the strengthening the step proofs need for hotplug (L1 alone is not inductive there).
inline std::vector<Violation> check(const model::lazytlb::World<Concrete>& w, const model::lazytlb::Cfg& cfg,
                                    const model::lazytlb::StepLog& log, bool with_counters = true,
                                    bool inductive = false) {
  std::vector<Violation> out;
  for (int c = 0; c < int(w.cpus.size()); ++c) detail::check_cpu(w, cfg, c, inductive, out);
  for (int i = 0; i < int(w.tasks.size()); ++i) detail::check_task(w, i, out);
  if (with_counters)
    for (int m = 0; m < int(w.mms.size()); ++m)
      detail::check_mm(
          w, cfg, m, [&] { return holders(w, model::lazytlb::Ref(m)); }, out);
  detail::check_log(log, out);
  return out;
}

// A zombie: an mm with no users and no real reference, kept alive only by lazy references.
inline int zombies(const model::lazytlb::World<Concrete>& w) {
  int n = 0;
  for (int m = 0; m < int(w.mms.size()); ++m)
    if (w.mms[m].st == model::lazytlb::MmState::Live) {
      Holders h = holders(w, model::lazytlb::Ref(m));
      n += h.users == 0 && h.grabs == 0;
    }
  return n;
}

// check() after every step of a run, at the cost of what each step wrote instead of the size of
// the world. It keeps the world it last judged and every mm's holders; given the next world and
// the step's log (which lists every record the step wrote), it brings both up to date from the
// listed records and re-judges only the objects whose invariants read something that changed
// (the reads named at detail::check_*); every other object's invariants read what they read
// before, when they held. After a world with any violation (or a change of an mm's state, which
// the CPU and task invariants of every object read) it judges everything, as check() does; so it
// does for a log that does not list the writes (StepLog::writes unset).
// Output: exactly check(w, cfg, log, with_counters, inductive), in the same order (props and
// test/lazytlb compare the two on random runs and every step of bounded explorations).
class Checker {
 public:
  Checker(const model::lazytlb::World<Concrete>& w, const model::lazytlb::Cfg& cfg, bool with_counters = true,
          bool inductive = false)
      : cfg_(cfg), with_counters_(with_counters), inductive_(inductive) {
    std::vector<Violation> none;
    judge_all(w, {}, none);
  }
  // Appends the violations of w, one step (described by log) after the last world judged.
  void check(const model::lazytlb::World<Concrete>& w, const model::lazytlb::StepLog& log,
             std::vector<Violation>& out) {
    namespace lt = model::lazytlb;
    if (!clean_ || !log.writes) return judge_all(w, log, out);
    const std::size_t first = out.size();
    cpus_.clear();
    tasks_.clear();
    mms_.clear();
    bool mm_state = false;
    for (int c : log.cpus) {
      lt::Cpu& o = seen_.cpus[c];
      const lt::Cpu& n = w.cpus[c];
      if (o == n) continue;
      note(cpus_, std::int16_t(c));
      if (o.prev_mm != n.prev_mm) {
        held_cpu(o, -1);
        held_cpu(n, +1);
      }
      if (o.curr != n.curr) {
        if (on_cpu_[o.curr] == c) on_cpu_[o.curr] = -1;
        on_cpu_[n.curr] = std::int16_t(c);
      }
      o = n;
    }
    for (lt::Ref i : log.tasks) {
      lt::Task& o = seen_.tasks[i];
      const lt::Task& n = w.tasks[i];
      if (o == n) continue;
      note(tasks_, i);
      if (on_cpu_[i] >= 0) note(cpus_, on_cpu_[i]);
      held_task(o, -1);
      held_task(n, +1);
      o = n;
    }
    for (lt::Ref m : log.mms) {
      lt::Mm& o = seen_.mms[m];
      const lt::Mm& n = w.mms[m];
      auto& k = seen_.cnt[m];
      if (o == n && k.mm_users == w.cnt[m].mm_users && k.mm_count == w.cnt[m].mm_count) continue;
      note(mms_, m);
      mm_state = mm_state || o.st != n.st;
      for (int j = 0; j < 4; ++j)  // CPUs whose bit changed (their L5)
        for (std::uint64_t x = o.mask.w[j] ^ n.mask.w[j]; x; x &= x - 1)
          note(cpus_, std::int16_t(64 * j + __builtin_ctzll(x)));
      o = n;
      k = w.cnt[m];
    }
    if (mm_state) {  // read by the CPU and task invariants of any object: judge every one
      judge_objects(w, out);
    } else {
      // Unordered and maybe repeated: if anything is violated, every object is judged again in
      // check()'s order (violations end a run, so this is rare).
      for (int c : cpus_) detail::check_cpu(w, cfg_, c, inductive_, out);
      for (int i : tasks_) detail::check_task(w, i, out);
      if (with_counters_)
        for (int m : mms_)
          detail::check_mm(
              w, cfg_, m, [&] { return holders(w, lt::Ref(m)); }, out);
      if (out.size() != first) {
        out.resize(first);
        judge_objects(w, out);
      }
    }
    detail::check_log(log, out);
    clean_ = out.size() == first;
  }
  // holders(w, m) of the last world judged.
  Holders holders(const model::lazytlb::World<Concrete>& w, model::lazytlb::Ref m) const {
    Holders h = held_[std::size_t(m)];
    h.users += w.mms[m].ext_users;
    h.grabs += w.mms[m].ext_grabs;
    return h;
  }
  // zombies() of the last world judged.
  int zombies() const {
    int n = 0;
    for (int m = 0; m < int(seen_.mms.size()); ++m)
      if (seen_.mms[m].st == model::lazytlb::MmState::Live) {
        const Holders h = holders(seen_, model::lazytlb::Ref(m));
        n += h.users == 0 && h.grabs == 0;
      }
    return n;
  }
  // Whether what it keeps describes w (the last world judged): false if a step wrote a record
  // its log did not list. For tests; linear in the world.
  bool describes(const model::lazytlb::World<Concrete>& w) const {
    namespace lt = model::lazytlb;
    if (seen_.cpus != w.cpus || seen_.tasks != w.tasks || seen_.mms != w.mms) return false;
    for (std::size_t m = 0; m < w.mms.size(); ++m) {
      if (seen_.cnt[m].mm_users != w.cnt[m].mm_users || seen_.cnt[m].mm_count != w.cnt[m].mm_count) return false;
      const Holders a = holders(w, lt::Ref(m)), b = spec::lazytlb::holders(w, lt::Ref(m));
      if (a.users != b.users || a.grabs != b.grabs || a.lazy != b.lazy) return false;
    }
    for (std::size_t i = 0; i < w.tasks.size(); ++i) {
      int on = -1;
      for (std::size_t c = 0; c < w.cpus.size(); ++c)
        if (w.cpus[c].curr == lt::Ref(i)) on = int(c);
      if (on != on_cpu_[i]) return false;
    }
    return true;
  }

 private:
  // A step lists a few records, repeats mostly in a row: those are dropped.
  static void note(std::vector<std::int16_t>& v, std::int16_t x) {
    if (v.empty() || v.back() != x) v.push_back(x);
  }
  // holders() counts, without the outside holders: what task t and a CPU's prev_mm add.
  void held_task(const model::lazytlb::Task& t, int sign) {
    namespace lt = model::lazytlb;
    if (t.st == lt::TaskState::Unborn || t.st == lt::TaskState::Dead) return;
    if (t.mm >= 0) {
      held_[std::size_t(t.mm)].users += std::uint32_t(sign);
      if (t.kthread) held_[std::size_t(t.mm)].grabs += std::uint32_t(sign);
      note(mms_, t.mm);
    }
    if (t.st == lt::TaskState::Running && t.mm == lt::kNull && t.active_mm >= 0) {
      held_[std::size_t(t.active_mm)].lazy += std::uint32_t(sign);
      note(mms_, t.active_mm);
    }
  }
  void held_cpu(const model::lazytlb::Cpu& c, int sign) {
    if (c.prev_mm < 0) return;
    held_[std::size_t(c.prev_mm)].lazy += std::uint32_t(sign);
    note(mms_, c.prev_mm);
  }
  void judge_all(const model::lazytlb::World<Concrete>& w, const model::lazytlb::StepLog& log,
                 std::vector<Violation>& out) {
    const std::size_t first = out.size();
    seen_ = w;
    held_.assign(w.mms.size(), Holders{});
    mms_.clear();
    for (const auto& t : w.tasks) held_task(t, +1);
    for (const auto& c : w.cpus) held_cpu(c, +1);
    on_cpu_.assign(w.tasks.size(), -1);
    for (std::size_t c = 0; c < w.cpus.size(); ++c) on_cpu_[std::size_t(w.cpus[c].curr)] = std::int16_t(c);
    judge_objects(w, out);
    detail::check_log(log, out);
    clean_ = out.size() == first;
  }
  void judge_objects(const model::lazytlb::World<Concrete>& w, std::vector<Violation>& out) {
    for (int c = 0; c < int(w.cpus.size()); ++c) detail::check_cpu(w, cfg_, c, inductive_, out);
    for (int i = 0; i < int(w.tasks.size()); ++i) detail::check_task(w, i, out);
    if (with_counters_)
      for (int m = 0; m < int(w.mms.size()); ++m)
        detail::check_mm(
            w, cfg_, m, [&] { return holders(w, model::lazytlb::Ref(m)); }, out);
  }

  model::lazytlb::Cfg cfg_;
  bool with_counters_, inductive_;
  model::lazytlb::World<Concrete> seen_;          // the last world judged
  std::vector<Holders> held_;                     // holders(seen_, m) without the outside holders
  std::vector<std::int16_t> on_cpu_;              // per task: the CPU it is current on, or -1
  bool clean_ = false;                            // seen_ had no violation
  std::vector<std::int16_t> cpus_, tasks_, mms_;  // to judge after this step
};

}  // namespace kacct::spec::lazytlb
