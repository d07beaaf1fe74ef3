// PSI irq pressure (PSI_IRQ_FULL, CONFIG_IRQ_TIME_ACCOUNTING + CONFIG_PSI): which irq time is
// charged to which cgroup, from which call site, under which lock. kernel/sched/psi.c,
// core.c (update_rq_clock_task, sched_tick, __schedule, task_sched_runtime), cputime.c.
// The irq time clock and the rq clock are model/tick's (IrqTime, RqClock, irqtime_account_irq,
// update_rq_clock); this file adds the PSI consumer of them.
//
// Values (clocks, irq totals, times[], sequence counts) are over the domain D; the control
// structure (cgroup tree, task -> group, rq lock owner, current task) is concrete, so the
// same step functions run concretely (scripts, props, fuzz) and symbolically (proofs/jobs_psi).
#pragma once
#include <cstdint>
#include <iterator>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "arch/patches.hpp"
#include "model/domain/reflect.hpp"
#include "model/tick/tick.hpp"
#include "model/mutation.hpp"

namespace kacct::model::psi {

// Deliberately broken variants (mutants; never a kernel version).
enum class Variant : std::uint8_t {
  Faithful,
  NoLock,         // sched_tick calls psi_account_irqtime before taking the rq lock (the 2024 draft)
  DoubleCount,    // post-fix: base not advanced after charging
  LostDelta,      // post-fix: base advanced, the delta charged to the leaf group only
  NoNegGuard,     // post-fix: the (s64)delta < 0 test removed
  NoRecordTimes,  // psi_account_irqtime adds to times[IRQ_FULL] without record_times()
};
std::string_view variant_name(Variant);
bool parse_variant(std::string_view, Variant&);

struct PsiCfg {
  arch::KVersion ver = arch::v(6, 10);
  bool irqtime = true;  // CONFIG_IRQ_TIME_ACCOUNTING with sched_clock_irqtime on (run-time flag)
  // With irqtime off: CONFIG_IRQ_TIME_ACCOUNTING built in, sched_clock_irqtime off at run time
  // (e.g. tsc=noirqtime). The call sites still call psi_account_irqtime (irq time reads as
  // constant); a6fd16148fdd (6.14) makes it return at once. false: not built in, no call at all.
  bool irqtime_built_off = false;
  Variant variant = Variant::Faithful;
  // Proposed fix kacct-psi-idle-irq (arch/patches.hpp, never a release's value): with the idle
  // task current, psi_account_irqtime() advances rq->psi_irq_time and charges nobody.
  bool idle_irq_dropped = false;

  // Version facts, from the patch table (arch/patches.hpp). resolve() asks the table once for
  // the current `ver` (the script runner does, per run: each step asks several facts per
  // event); a fact asked of an unresolved config, or after `ver` changed, asks the table.
  bool has_psi_irq() const { return fresh() ? facts_.has_psi_irq : has_psi_irq_at(ver); }
  bool charge_in_clock() const { return fresh() ? facts_.charge_in_clock : charge_in_clock_at(ver); }
  bool charge_at_tick() const { return fresh() ? facts_.charge_at_tick : charge_at_tick_at(ver); }
  bool clock_in_seq() const { return fresh() ? facts_.clock_in_seq : clock_in_seq_at(ver); }
  bool skip_irqtime_off() const { return fresh() ? facts_.skip_irqtime_off : skip_irqtime_off_at(ver); }
  bool percpu_seq() const { return fresh() ? facts_.percpu_seq : percpu_seq_at(ver); }
  PsiCfg& resolve() {
    facts_ = {ver,
              true,
              has_psi_irq_at(ver),
              charge_in_clock_at(ver),
              charge_at_tick_at(ver),
              clock_in_seq_at(ver),
              skip_irqtime_off_at(ver),
              percpu_seq_at(ver)};
    return *this;
  }
  bool psi_irq_built() const { return irqtime || irqtime_built_off; }  // the call sites exist
  TickCfg tick() const {
    TickCfg t;
    t.irq_time = irqtime;
    return t;
  }

 private:
  static bool has_psi_irq_at(arch::KVersion ver) {
    return arch::applied("52b1364ba0b1", KACCT_MUTANT(619, ver, arch::next_mainline(ver)));
  }
  static bool charge_in_clock_at(arch::KVersion ver) {
    return KACCT_MUTANT(617, has_psi_irq_at(ver) && !arch::applied("ddae0ca2a8fe", ver), has_psi_irq_at(ver));
  }
  static bool charge_at_tick_at(arch::KVersion ver) {
    return arch::applied("ddae0ca2a8fe", KACCT_MUTANT(620, ver, ver.series()));
  }
  static bool clock_in_seq_at(arch::KVersion ver) {
    return arch::applied("3840cbe24cf0", KACCT_MUTANT(621, ver, arch::next_mainline(ver)));
  }
  static bool skip_irqtime_off_at(arch::KVersion ver) { return arch::applied("a6fd16148fdd", ver); }
  static bool percpu_seq_at(arch::KVersion ver) {
    return arch::applied("570c8efd5eb7", KACCT_MUTANT(622, ver, ver.series()));
  }
  bool fresh() const { return facts_.valid && facts_.ver == ver; }
  struct Facts {
    arch::KVersion ver{};
    bool valid = false;
    bool has_psi_irq = false, charge_in_clock = false, charge_at_tick = false, clock_in_seq = false,
         skip_irqtime_off = false, percpu_seq = false;
  };
  Facts facts_;
};

// Selects a kacct-local proposed fix (arch/patches.hpp) on top of a version's settings; false
// if `id` is not a PSI fix.
inline bool apply_fix(PsiCfg& c, std::string_view id) {
  if (id != "kacct-psi-idle-irq") return false;
  c.idle_irq_dropped = true;
  return true;
}

// struct psi_group_cpu, the part on this path: times[PSI_IRQ_FULL] (u32, wraps), state_start,
// and the per-group-per-CPU seqcount (until 6.17).
template <class D>
struct GroupCpu {
  BOOST_HANA_DEFINE_STRUCT(GroupCpu, (u32<D>, irq_full), (u64<D>, state_start), (u32<D>, seq));
};
// Per CPU: the tick model's accounting state (irq time clock, rq clock), rq->psi_irq_time
// (6.10+) and the per-CPU psi_seq (6.17+).
template <class D>
struct PsiCpu {
  BOOST_HANA_DEFINE_STRUCT(PsiCpu, (CpuAcct<D>, acct), (u64<D>, psi_irq_time), (u32<D>, psi_seq));
};
// Every D-valued field of the world (what a symbolic branch merges).
template <class D>
struct Vals {
  u64<D> now;  // sched_clock_cpu / cpu_clock, one clock for all CPUs
  std::vector<PsiCpu<D>> cpu;
  std::vector<std::vector<GroupCpu<D>>> gc;  // [group][cpu]
};

// Cost counters, per call site (concrete meaning only).
struct Costs {
  std::uint64_t clock_reads = 0;   // sched_clock_cpu() in update_rq_clock + cpu_clock() in PSI
  std::uint64_t irq_reads = 0;     // irq_time_read()
  std::uint64_t levels = 0;        // cgroup hierarchy levels walked by psi_account_irqtime
  std::uint64_t seq_sections = 0;  // write_seqcount_begin/end pairs
  std::uint64_t psi_calls = 0;     // psi_account_irqtime entries
  Costs& operator+=(const Costs& o) {
    clock_reads += o.clock_reads;
    irq_reads += o.irq_reads;
    levels += o.levels;
    seq_sections += o.seq_sections;
    psi_calls += o.psi_calls;
    return *this;
  }
};

enum class Site : std::uint8_t { RqClock, Tick, Switch };
// One psi_account_irqtime that charged (or, pre-fix for the idle task, consumed) irq time.
struct Charge {
  int cpu = 0, task = 0, leaf = 0;  // leaf group of the charged task at the time; -1: not charged
  std::uint64_t delta = 0;          // the delta as computed (before the u32 add)
  Site site = Site::RqClock;
};
// A PSI or rq write without the rq lock held by the writing CPU.
struct LockFault {
  int cpu = 0, actor = 0;
  std::string what;
};

struct Task {
  int group = 0;
  int cpu = -1;  // last CPU it ran on (task_cpu); -1 never ran
};

// Concrete control state. Task 0 is each CPU's idle task (pid 0, root group).
struct Ctl {
  std::vector<int> parent;      // parent[g]; parent[0] = -1 (root, psi_system)
  std::vector<char> enabled;    // cgroup.pressure (group->enabled)
  std::vector<Task> tasks;      // tasks[0] unused placeholder for idle
  std::vector<int> curr;        // per CPU; 0 = idle
  std::vector<int> lock_owner;  // per CPU rq lock: -1 free, else the holding CPU
  std::vector<char> in_irq;     // per CPU: 0 none, 1 hardirq, 2 softirq
  Costs costs;
  std::vector<Charge> charges;  // concrete runs only
  std::vector<LockFault> faults;
  // Concrete runs only: every psi_group_cpu record (group, cpu) written since the reader last
  // cleared the list, repeats included; gc_w() is the only way a step writes one (the checker
  // re-judges these records and takes the others as judged before).
  std::vector<std::pair<int, int>> gc_writes;
  int group_of(int task) const { return task == 0 ? 0 : tasks[task].group; }
  // Group g and its ancestors, leaf first: a walk up `parent` (the checks walk it per charge
  // and per event, so it allocates nothing; converts to a vector where one is kept).
  struct Chain {
    const std::vector<int>* parent;
    int g;
    struct It {
      const std::vector<int>* parent;
      int g;
      int operator*() const { return g; }
      It& operator++() {
        g = (*parent)[std::size_t(g)];
        return *this;
      }
      bool operator!=(std::default_sentinel_t) const { return g >= 0; }
    };
    It begin() const { return {parent, g}; }
    std::default_sentinel_t end() const { return {}; }
    operator std::vector<int>() const {
      std::vector<int> out;
      for (int x : *this) out.push_back(x);
      return out;
    }
  };
  Chain chain(int g) const { return {&parent, g}; }
};

template <class D>
struct World {
  Vals<D> v;
  Ctl c;
};

// ---- helpers

// Run fn on the values only when c holds (symbolically: on a copy under c, merged back).
template <class D, class Fn>
void guarded(D& d, const boolean<D>& c, World<D>& w, Fn&& fn) {
  if constexpr (!D::is_symbolic) {
    if (c) fn(w);
  } else {
    World<D> t = w;
    d.under(c, [&] { fn(t); });
    w.v.now = merge(d, c, t.v.now, w.v.now);
    for (std::size_t i = 0; i < w.v.cpu.size(); ++i) w.v.cpu[i] = merge(d, c, t.v.cpu[i], w.v.cpu[i]);
    for (std::size_t g = 0; g < w.v.gc.size(); ++g)
      for (std::size_t i = 0; i < w.v.gc[g].size(); ++i) w.v.gc[g][i] = merge(d, c, t.v.gc[g][i], w.v.gc[g][i]);
    w.c.costs = t.c.costs;  // costs only mean something concretely
  }
}
// psi_group_cpu of group g on `cpu`, to be written (listed in gc_writes when concrete).
template <class D>
GroupCpu<D>& gc_w(World<D>& w, int g, int cpu) {
  if constexpr (!D::is_symbolic) w.c.gc_writes.emplace_back(g, cpu);
  return w.v.gc[std::size_t(g)][std::size_t(cpu)];
}
// The writer holds rq(cpu)'s lock? Record the fault otherwise.
inline void note_write(Ctl& c, int cpu, int actor, const char* what) {
  if (c.lock_owner[cpu] != actor) c.faults.push_back({cpu, actor, what});
}
// write_seqcount_begin/end as one section (sequential: +2, as two increments).
template <class D>
void seq_section(D& d, u32<D>& seq) {
  seq = d.add(seq, d.template lit<32>(1));
  seq = KACCT_MUTANT(601, d.add(seq, d.template lit<32>(1)), seq);
}
// record_times(groupc, now) (4.20+): closes the running state interval. The other states'
// times[] are not modelled; only state_start moves.
template <class D>
void record_times(D&, GroupCpu<D>& gc, const u64<D>& now) {
  gc.state_start = now;
}

// ---- the PSI consumer

// psi_account_irqtime(task, u32 delta) (52b1364ba0b1, 6.1-6.9): called from update_rq_clock_task
// with the clamped irq delta; cpu_clock read once before the walk; one seqcount section per
// enabled group on the way to the root.
template <class D>
void psi_account_irqtime_old(D& d, const PsiCfg& cfg, World<D>& w, int cpu, int actor, const u64<D>& irq_delta) {
  auto& c = w.c;
  c.costs.psi_calls++;
  const int task = c.curr[cpu];
  if (KACCT_MUTANT(618, task == 0, false)) {
    if constexpr (!D::is_symbolic) c.charges.push_back({cpu, 0, -1, std::uint64_t(irq_delta), Site::RqClock});
    return;
  }
  const auto delta = d.template trunc<32>(irq_delta);  // the u32 parameter
  c.costs.clock_reads++;
  const auto now = w.v.now;
  const int leaf = c.group_of(task);
  for (int g : c.chain(leaf)) {
    c.costs.levels++;
    if (KACCT_MUTANT(603, !c.enabled[g], false)) continue;
    auto& gc = gc_w(w, g, cpu);
    note_write(c, cpu, actor, "psi_group_cpu (times[IRQ_FULL], seq)");
    c.costs.seq_sections++;
    KACCT_MUTANT_DROP(602, seq_section(d, gc.seq))
    if (cfg.variant != Variant::NoRecordTimes) { KACCT_MUTANT_DROP(604, record_times(d, gc, now)) }
    gc.irq_full = d.add(gc.irq_full, delta);
  }
  if constexpr (!D::is_symbolic) c.charges.push_back({cpu, task, leaf, std::uint64_t(irq_delta), Site::RqClock});
  (void)cfg;
}

// psi_account_irqtime(rq, curr, prev) (ddae0ca2a8fe, 6.10+): own base rq->psi_irq_time,
// unclamped s64 delta with the "< 0" guard, skipped when prev is in curr's leaf group;
// 6.12 (3840cbe24cf0): cpu_clock per group inside the section; 6.14 (a6fd16148fdd): skipped
// when irq time accounting is off at run time; 6.17 (570c8efd5eb7): one per-CPU psi_seq
// section and one cpu_clock read around the whole walk.
template <class D>
void psi_account_irqtime_new(D& d, const PsiCfg& cfg, World<D>& w, int cpu, int actor, int curr, int prev, Site site) {
  auto& c = w.c;
  if (cfg.skip_irqtime_off() && !cfg.irqtime) return;
  c.costs.psi_calls++;
  if (KACCT_MUTANT(610, curr == 0, false)) {                         // !curr->pid
    if (cfg.idle_irq_dropped && cfg.variant == Variant::Faithful) {  // proposed fix: consume it uncharged
      c.costs.irq_reads++;
      auto& pc = w.v.cpu[cpu];
      note_write(c, cpu, actor, "rq->psi_irq_time");
      const auto irq = pc.acct.irqtime.total;
      if constexpr (!D::is_symbolic) c.charges.push_back({cpu, 0, -1, std::uint64_t(irq - pc.psi_irq_time), site});
      pc.psi_irq_time = irq;
    }
    return;
  }
  // lockdep_assert_rq_held(rq): the fault list is the model's lockdep.
  const int leaf = c.group_of(curr);
  if (KACCT_MUTANT(605, prev >= 0 && c.group_of(prev) == leaf, false)) return;
  if (!cfg.clock_in_seq()) c.costs.clock_reads++;  // 6.10-6.11: now = cpu_clock() before the read
  c.costs.irq_reads++;
  auto& pc0 = w.v.cpu[cpu];
  const auto irq = pc0.acct.irqtime.total;  // irq_time_read(cpu)
  const auto delta = d.sub(irq, pc0.psi_irq_time);
  auto nonneg = KACCT_MUTANT(606, d.ult(delta, d.template lit<64>(std::uint64_t{1} << 63)),
                             d.ule(delta, d.template lit<64>(std::uint64_t{1} << 63)));
  if (cfg.variant == Variant::NoNegGuard) nonneg = d.lit_bool(true);
  guarded(d, nonneg, w, [&](World<D>& s) {
    auto& pc = s.v.cpu[cpu];
    note_write(s.c, cpu, actor, "rq->psi_irq_time");
    if (cfg.variant != Variant::DoubleCount) pc.psi_irq_time = irq;
    const bool percpu = cfg.percpu_seq();
    if (percpu) {
      s.c.costs.seq_sections++;
      s.c.costs.clock_reads++;
      note_write(s.c, cpu, actor, "psi_seq");
    }
    const auto d32 = d.template trunc<32>(delta);
    bool first = true;
    for (int g : s.c.chain(leaf)) {
      s.c.costs.levels++;
      if (KACCT_MUTANT(609, !s.c.enabled[g], false)) continue;
      if (cfg.variant == Variant::LostDelta && !first) break;
      first = false;
      auto& gc = gc_w(s, g, cpu);
      note_write(s.c, cpu, actor, "psi_group_cpu (times[IRQ_FULL])");
      if (!percpu) {
        s.c.costs.seq_sections++;
        KACCT_MUTANT_DROP(608, seq_section(d, gc.seq))
        if (cfg.clock_in_seq()) s.c.costs.clock_reads++;
      }
      if (cfg.variant != Variant::NoRecordTimes) record_times(d, gc, s.v.now);
      gc.irq_full = d.add(gc.irq_full, d32);
    }
    if (KACCT_MUTANT(607, percpu, false)) seq_section(d, s.v.cpu[cpu].psi_seq);
    if constexpr (!D::is_symbolic) s.c.charges.push_back({cpu, curr, leaf, std::uint64_t(delta), site});
  });
}

// update_rq_clock(rq) + update_rq_clock_task() (model/tick), with 6.1-6.9's
// psi_account_irqtime(rq->curr, irq_delta) on the clamped irq delta. `actor` holds the lock.
template <class D>
void psi_update_rq_clock(D& d, const PsiCfg& cfg, World<D>& w, int cpu, int actor) {
  auto& pc = w.v.cpu[cpu];
  note_write(w.c, cpu, actor, "rq->clock");
  w.c.costs.clock_reads++;
  if (cfg.psi_irq_built()) w.c.costs.irq_reads++;
  const auto before = pc.acct.rq.prev_irq_time;
  update_rq_clock(d, cfg.tick(), pc.acct, w.v.now);
  const auto irq_delta =
      KACCT_MUTANT(611, d.sub(w.v.cpu[cpu].acct.rq.prev_irq_time, before), w.v.cpu[cpu].acct.rq.prev_irq_time);
  if (cfg.psi_irq_built() && cfg.charge_in_clock()) psi_account_irqtime_old(d, cfg, w, cpu, actor, irq_delta);
}

// ---- the events (one CPU's step each; the caller sets the time)

// irqtime_account_irq at a hardirq/softirq boundary on `cpu` (model/tick).
template <class D>
void irq_boundary(D& d, const PsiCfg& cfg, World<D>& w, int cpu, IrqClass leaving) {
  irqtime_account_irq(d, cfg.tick(), w.v.cpu[cpu].acct, w.v.now, leaving);
}

// raw_spin_rq_lock / raw_spin_rq_unlock: only the holder is modelled.
inline void lock(Ctl& c, int cpu, int actor) { c.lock_owner[cpu] = actor; }
inline void unlock(Ctl& c, int cpu) { c.lock_owner[cpu] = -1; }

// sched_tick() (6.10+ form; scheduler_tick before 6.10): under the local rq lock,
// psi_account_irqtime(rq, curr, NULL) then update_rq_clock. NoLock: the draft's order.
template <class D>
void sched_tick(D& d, const PsiCfg& cfg, World<D>& w, int cpu) {
  const bool post = cfg.charge_at_tick() && cfg.psi_irq_built();
  if (post && cfg.variant == Variant::NoLock)
    psi_account_irqtime_new(d, cfg, w, cpu, cpu, w.c.curr[cpu], -1, Site::Tick);
  lock(w.c, cpu, cpu);
  if (KACCT_MUTANT(612, post && cfg.variant != Variant::NoLock, false))
    psi_account_irqtime_new(d, cfg, w, cpu, cpu, w.c.curr[cpu], -1, Site::Tick);
  psi_update_rq_clock(d, cfg, w, cpu, cpu);
  unlock(w.c, cpu);
}

// __schedule(): local rq lock, update_rq_clock, pick `next`; when it differs from prev,
// rq->curr = next and (6.10+) psi_account_irqtime(rq, prev, next) before the switch.
template <class D>
void schedule(D& d, const PsiCfg& cfg, World<D>& w, int cpu, int next) {
  lock(w.c, cpu, cpu);
  psi_update_rq_clock(d, cfg, w, cpu, cpu);
  const int prev = w.c.curr[cpu];
  if (prev != next) {
    w.c.curr[cpu] = KACCT_MUTANT(614, next, prev);
    if (next != 0) w.c.tasks[next].cpu = cpu;
    if (KACCT_MUTANT(613, cfg.charge_at_tick() && cfg.psi_irq_built(), false))
      psi_account_irqtime_new(d, cfg, w, cpu, cpu, prev, next, Site::Switch);
  }
  unlock(w.c, cpu);
}

// task_sched_runtime(current) behind clock_gettime(CLOCK_THREAD_CPUTIME_ID): task_rq_lock,
// update_rq_clock, update_curr, unlock (the running task never takes the lockless path).
template <class D>
void clock_gettime_thread(D& d, const PsiCfg& cfg, World<D>& w, int cpu) {
  lock(w.c, cpu, cpu);
  psi_update_rq_clock(d, cfg, w, cpu, cpu);
  unlock(w.c, cpu);
}

// A wakeup (ttwu -> enqueue) onto rq `cpu` performed by CPU `by`: rq lock, update_rq_clock.
template <class D>
void wakeup(D& d, const PsiCfg& cfg, World<D>& w, int cpu, int by) {
  lock(w.c, cpu, by);
  psi_update_rq_clock(d, cfg, w, cpu, by);
  unlock(w.c, cpu);
}

// The PSI writes of cgroup_move_task(task, to) (psi_task_change on the old groups, then on the
// new ones) on the task's CPU, under task_rq_lock. `locked` false: the lock is already held
// by the caller of the composite race step.
template <class D>
void move_sections(D& d, World<D>& w, int task, int to, int cpu, int actor) {
  auto& c = w.c;
  for (int g : c.chain(c.group_of(task))) {
    if (!c.enabled[g]) continue;
    note_write(c, cpu, actor, "psi_group_cpu (psi_task_change)");
    auto& gc = gc_w(w, g, cpu);
    KACCT_MUTANT_DROP(615, seq_section(d, gc.seq))
    record_times(d, gc, w.v.now);
  }
  c.tasks[task].group = to;
  for (int g : c.chain(to)) {
    if (!c.enabled[g]) continue;
    note_write(c, cpu, actor, "psi_group_cpu (psi_task_change)");
    auto& gc = gc_w(w, g, cpu);
    seq_section(d, gc.seq);
    record_times(d, gc, w.v.now);
  }
}
// cgroup_move_task(task, to) from CPU `by`.
template <class D>
void cgroup_move(D& d, World<D>& w, int task, int to, int by) {
  const int cpu = w.c.tasks[task].cpu;
  if (cpu < 0) {
    w.c.tasks[task].group = to;
    return;
  }
  KACCT_MUTANT_DROP(616, lock(w.c, cpu, by))
  move_sections(d, w, task, to, cpu, by);
  unlock(w.c, cpu);
}

// cgroup.pressure write (psi_cgroup_restart, 6.1+): the flag flips; per CPU, under that rq's
// lock, a psi_group_change section restarts the state clock.
template <class D>
void set_pressure(D& d, World<D>& w, int g, bool on, int by) {
  w.c.enabled[g] = on;
  if (!on) return;
  for (int cpu = 0; cpu < int(w.c.curr.size()); ++cpu) {
    lock(w.c, cpu, by);
    note_write(w.c, cpu, by, "psi_group_cpu (psi_cgroup_restart)");
    auto& gc = gc_w(w, g, cpu);
    seq_section(d, gc.seq);
    record_times(d, gc, w.v.now);
    unlock(w.c, cpu);
  }
}

// sched_tick on `cpu` concurrent with cgroup_move_task(task, to) issued from CPU `by` (concrete).
// When the tick's psi_account_irqtime runs under the rq lock (every faithful version) the lock
// serialises the two: tick, then move. Without it (Variant::NoLock, 6.10+ call site) the
// writers overlap; the interleaving modelled is the one where both write_seqcount_begin()
// increments (plain load + store) read the same even value: every sequence count both write
// ends one short, i.e. odd, and lockless readers (collect_percpu_times) spin.
inline void race_tick_move(Concrete& d, const PsiCfg& cfg, World<Concrete>& w, int cpu, int task, int to, int by) {
  const bool overlap = cfg.charge_at_tick() && cfg.psi_irq_built() && cfg.variant == Variant::NoLock;
  if (!overlap) {
    sched_tick(d, cfg, w, cpu);
    cgroup_move(d, w, task, to, by);
    return;
  }
  auto seqs = [&] {
    std::vector<std::uint32_t> out;
    for (const auto& g : w.v.gc) out.push_back(g[cpu].seq);
    out.push_back(w.v.cpu[cpu].psi_seq);
    return out;
  };
  const auto s0 = seqs();
  psi_account_irqtime_new(d, cfg, w, cpu, cpu, w.c.curr[cpu], -1, Site::Tick);  // unlocked
  const auto s1 = seqs();
  lock(w.c, cpu, by);
  move_sections(d, w, task, to, cpu, by);
  if (cfg.percpu_seq()) seq_section(d, w.v.cpu[cpu].psi_seq);  // psi_task_change's psi_seq section
  unlock(w.c, cpu);
  const auto s2 = seqs();
  for (std::size_t i = 0; i < s0.size(); ++i)
    if (s1[i] != s0[i] && s2[i] != s1[i]) {  // both wrote it: one increment lost
      if (i + 1 < s0.size())
        gc_w(w, int(i), cpu).seq -= 1;
      else
        w.v.cpu[cpu].psi_seq -= 1;
    }
  lock(w.c, cpu, cpu);
  psi_update_rq_clock(d, cfg, w, cpu, cpu);
  unlock(w.c, cpu);
}

// Boot state: clocks and counters 0, every group enabled (psi_cgroup_alloc/group_init), idle running.
template <class D>
World<D> make_world(D& d, int cpus, const std::vector<int>& parent, int ntasks) {
  World<D> w;
  auto zero64 = d.template lit<64>(0);
  auto zero32 = d.template lit<32>(0);
  w.v.now = zero64;
  for (int i = 0; i < cpus; ++i) w.v.cpu.push_back({zero_cpu(d), zero64, zero32});
  for (std::size_t g = 0; g < parent.size(); ++g)
    w.v.gc.push_back(std::vector<GroupCpu<D>>(cpus, GroupCpu<D>{zero32, zero64, zero32}));
  w.c.parent = parent;
  w.c.enabled.assign(parent.size(), 1);
  w.c.tasks.assign(ntasks + 1, Task{});
  w.c.curr.assign(cpus, 0);
  w.c.lock_owner.assign(cpus, -1);
  w.c.in_irq.assign(cpus, 0);
  return w;
}

}  // namespace kacct::model::psi
