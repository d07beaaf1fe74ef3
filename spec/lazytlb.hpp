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
// modelled tasks (0 concretely; any value in the proofs).
template <class D>
boolean<D> accounting(D& d, const model::lazytlb::World<D>& w, const model::lazytlb::Cfg& cfg, model::lazytlb::Ref m,
                      const u32<D>& xu, const u32<D>& xc) {
  const auto& k = w.cnt[m];
  if (w.mms[m].st == model::lazytlb::MmState::Unborn) return d.lit_bool(true);
  if (w.mms[m].st == model::lazytlb::MmState::Freed)
    return d.band(d.eq(k.mm_users, d.template lit<32>(0)), d.eq(k.mm_count, d.template lit<32>(0)));
  Holders h = holders(w, m);
  auto users = d.add(xu, d.template lit<32>(h.users));
  auto live = d.select(d.eq(users, d.template lit<32>(0)), d.template lit<32>(0), d.template lit<32>(1));
  auto count = d.add(d.add(xc, live), d.template lit<32>(h.grabs + (cfg.shootdown ? 0 : h.lazy)));
  return d.band(d.eq(k.mm_users, users), d.eq(k.mm_count, count));
}

struct Violation {
  std::string invariant;  // "lazytlb.<name>"
  std::string detail;
};

// Every invariant after a step (log: what the step did). with_counters = false: only those that
// do not read mm_users/mm_count (the proofs check the counter ones with Z3). inductive = true
// adds the strengthening the step proofs need for hotplug (L1 alone is not inductive there).
inline std::vector<Violation> check(const model::lazytlb::World<Concrete>& w, const model::lazytlb::Cfg& cfg,
                                    const model::lazytlb::StepLog& log, bool with_counters = true,
                                    bool inductive = false) {
  std::vector<Violation> out;
  auto freed = [&](model::lazytlb::Ref m) { return m >= 0 && w.mms[m].st == model::lazytlb::MmState::Freed; };
  for (int c = 0; c < int(w.cpus.size()); ++c) {
    const model::lazytlb::Task& t = w.tasks[w.cpus[c].curr];
    // L1: no CPU uses a freed mm, lazily or not (and under refcounting rq->prev_mm, which
    // finish_task_switch will mmdrop, is alive too; under shootdown it is only compared).
    if (freed(t.active_mm))
      out.push_back({"lazy_tlb.no_dangling_active_mm",
                     "CPU " + std::to_string(c) + " has active_mm = freed mm " + std::to_string(t.active_mm)});
    if (!cfg.shootdown && freed(w.cpus[c].prev_mm))
      out.push_back({"lazy_tlb.no_dangling_active_mm",
                     "CPU " + std::to_string(c) + " rq->prev_mm = freed mm " + std::to_string(w.cpus[c].prev_mm)});
    // L5: under shootdown every online CPU using an mm (lazily or not) is in its mm_cpumask. An
    // offline CPU gets no IPI whatever its bit says; L1 judges what it still uses.
    if (cfg.shootdown && w.cpus[c].hp == model::lazytlb::Hp::Online)
      for (model::lazytlb::Ref m : {t.active_mm, t.mm})
        if (m >= 0 && !freed(m) && !w.mms[m].mask.test(c))
          out.push_back({"lazy_tlb.mask_covers_users", "CPU " + std::to_string(c) + " uses mm " + std::to_string(m) +
                                                           " but is not in its mm_cpumask"});
    // L5': under shootdown a CPU that is not online runs on no user mm: no shootdown IPI can
    // reach it, so the mm could be freed under it (what 21641bd9a7a7 fixed).
    if (inductive && cfg.shootdown && w.cpus[c].hp != model::lazytlb::Hp::Online && t.active_mm >= 0)
      out.push_back({"lazy_tlb.offline_cpu_on_init_mm",
                     "CPU " + std::to_string(c) + " is offline on mm " + std::to_string(t.active_mm)});
  }
  for (int i = 0; i < int(w.tasks.size()); ++i) {
    const model::lazytlb::Task& t = w.tasks[i];
    if (t.st == model::lazytlb::TaskState::Unborn) continue;
    if (t.st != model::lazytlb::TaskState::Dead && freed(t.mm))
      out.push_back({"lazy_tlb.no_dangling_active_mm", "task " + std::to_string(i) + " has mm = freed mm"});
    // L8: a switched-out task with no mm has no active_mm.
    if (t.st != model::lazytlb::TaskState::Running && t.mm == model::lazytlb::kNull &&
        t.active_mm != model::lazytlb::kNull)
      out.push_back(
          {"lazy_tlb.switched_out_kthread_no_active_mm", "task " + std::to_string(i) + " keeps an active_mm off-CPU"});
  }
  for (int m = 0; m < int(w.mms.size()); ++m) {
    if (w.mms[m].st == model::lazytlb::MmState::Unborn) continue;
    if (!with_counters) continue;
    Concrete d;
    // L2 + L3/L4 (underflow itself is an obligation of the step).
    if (!accounting(d, w, cfg, model::lazytlb::Ref(m), 0u, 0u)) {
      Holders h = holders(w, model::lazytlb::Ref(m));
      out.push_back({"lazy_tlb.accounting",
                     "mm " + std::to_string(m) + ": mm_users=" + std::to_string(w.cnt[m].mm_users) + " mm_count=" +
                         std::to_string(w.cnt[m].mm_count) + " but holders users=" + std::to_string(h.users) +
                         " grabs=" + std::to_string(h.grabs) + " lazy=" + std::to_string(h.lazy)});
    }
    // L7 no leak: an mm nobody references is freed.
    if (w.mms[m].st == model::lazytlb::MmState::Live && w.cnt[m].mm_count == 0)
      out.push_back({"lazy_tlb.no_leak", "mm " + std::to_string(m) + " has mm_count 0 but is not freed"});
    // Under shootdown the lazy users do not pin the mm: once the last real reference is gone
    // it is freed in the same step (no zombie mm).
    if (cfg.shootdown && w.mms[m].st == model::lazytlb::MmState::Live) {
      Holders h = holders(w, model::lazytlb::Ref(m));
      if (h.users == 0 && h.grabs == 0)
        out.push_back(
            {"lazy_tlb.shootdown_frees_at_last_drop", "mm " + std::to_string(m) + " outlives its last real reference"});
    }
  }
  // L10: a CPU clears only its own mm_cpumask bit.
  for (const auto& cl : log.clears)
    if (cl.by != cl.bit)
      out.push_back({"lazy_tlb.own_bit_only", "CPU " + std::to_string(cl.by) + " cleared CPU " +
                                                  std::to_string(cl.bit) + "'s bit in mm " + std::to_string(cl.mm) +
                                                  "'s mm_cpumask"});
  for (auto wmsg : log.warns) out.push_back({"lazy_tlb.kernel_warn", std::string(wmsg)});
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

}  // namespace kacct::spec::lazytlb
