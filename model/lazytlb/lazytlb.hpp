// Lazy-TLB mm references: which mm each CPU uses, who holds mm_users/mm_count, and
// when an mm is freed, under mm_count refcounting of lazy references (every arch) and under
// CONFIG_MMU_LAZY_TLB_SHOOTDOWN (powerpc Book3S-64 from 6.4: 2655421ae69f + 77f68ebeee20).
//
// The structure (who runs where, active_mm pointers, mm_cpumask) is plain data: it is what the
// exhaustive explorer enumerates. The two counters of each mm are values of the domain D (atomic_t,
// 32 bits), so that the same step runs concretely and, in proofs/jobs_lazytlb.cpp, symbolically with
// arbitrary full-width counter values; underflow and use-after-free decrements are obligations.
// A decision the step takes on a counter (atomic_dec_and_test) goes through Decider<D>.
//
// Every event runs to completion atomically (the kernel runs each of these transitions with
// irqs off or under the rq lock); IPIs are delivered synchronously inside the sender's event
// (approximation: a target that has irqs off would run the handler at finish_task_switch, and
// finish only touches rq->prev_mm, which the handlers never read). IPIs reach online CPUs only
// (smp_call_function_many ands the mask with cpu_online_mask).
//
// CPU hotplug: a CPU other than 0 goes offline from its idle task (offline: the teardown on the
// CPU up to __cpu_disable), dies (dead: arch_cpu_idle_dead/idle_task_exit, then finish_cpu on
// the control CPU) and comes back (online: start_secondary on init_mm).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/patches.hpp"
#include "model/domain/reflect.hpp"
#include "model/mutation.hpp"

namespace kacct::model::lazytlb {

inline constexpr int kMaxCpus = 256;
using Ref = std::int16_t;           // an mm or task index
inline constexpr Ref kNull = -1;    // NULL
inline constexpr Ref kInitMm = -2;  // &init_mm (never freed; its count is not tracked)

// mm_cpumask as a fixed 256-bit set.
struct Mask {
  std::array<std::uint64_t, 4> w{};
  bool test(int c) const { return (w[c >> 6] >> (c & 63)) & 1; }
  void set(int c) { w[c >> 6] |= std::uint64_t{1} << (c & 63); }
  void clear(int c) { w[c >> 6] &= ~(std::uint64_t{1} << (c & 63)); }
  int count() const {
    return __builtin_popcountll(w[0]) + __builtin_popcountll(w[1]) + __builtin_popcountll(w[2]) +
           __builtin_popcountll(w[3]);
  }
  bool operator==(const Mask&) const = default;
};

enum class Arch : std::uint8_t { Generic, PpcRadix, PpcHash };
std::string_view arch_name(Arch);
std::optional<Arch> parse_arch(std::string_view);

// What the kernel code looks like for one arch and release; mutants are flags of the same code.
struct Cfg {
  Arch arch = Arch::Generic;
  bool force_init_mm = false;        // sched_force_init_mm at CPUHP_AP_SCHED_WAIT_EMPTY (21641bd9a7a7; 6.14)
  bool offline_trims_masks = false;  // Book3S-64 cpu_disable: cleanup_cpu_mmu_context (01b0f0eae081; 5.11)
  bool shootdown = false;            // CONFIG_MMU_LAZY_TLB_SHOOTDOWN (2655421ae69f, 77f68ebeee20; 6.4)
  bool use_mm_always_grabs = true;   // kthread_use_mm always mmgrab()s, unuse grabs lazily (6cad87b0d216; 6.4)
  bool exit_flush_shoots = false;    // radix fullmm exit flush IPIs mm_cpumask (e43c0a0c3c28; 6.6)
  bool debug_shoot_lazies = false;   // CONFIG_DEBUG_VM_SHOOT_LAZIES: IPI every CPU after a shootdown
  // Deliberately broken variants (test/lazytlb/): the checks must catch each.
  bool mut_no_lazy_grab = false;       // context_switch user->kthread without mmgrab_lazy_tlb
  bool mut_shoot_skip_cpu = false;     // cleanup_lazy_tlbs misses the highest CPU of the mask
  bool mut_clear_wrong_cpu = false;    // the flushing CPU clears the targets' mask bits itself
  bool mut_no_force_init_mm = false;   // the outgoing CPU keeps its lazy mm past __cpu_disable
  bool mut_dead_no_drop = false;       // finish_cpu does not drop the idle task's lazy reference
  bool mut_offline_clear_all = false;  // clear_tasks_mm_cpumask clears every CPU's bit, not its own
  bool operator==(const Cfg&) const = default;
};
// The code of `arch` in release `ver`, from the patch table (arch::applied).
Cfg config_for(Arch arch, arch::KVersion ver);
std::string mode_name(const Cfg&);  // "refcount" / "shootdown"

enum class TaskState : std::uint8_t { Unborn, Runnable, Running, Dead };
struct Task {
  TaskState st = TaskState::Unborn;
  bool kthread = false;   // PF_KTHREAD (mm NULL unless inside kthread_use_mm)
  bool idle = false;      // the per-CPU idle task (runs only on its CPU)
  bool exiting = false;   // past exit_mm(): dies at its final switch-out
  Ref mm = kNull;         // task->mm
  Ref active_mm = kNull;  // task->active_mm
  bool operator==(const Task&) const = default;
};
// Hotplug state: Dying between __cpu_disable (offline in cpu_online_mask) and the CPU's death.
enum class Hp : std::uint8_t { Online, Dying, Dead };
struct Cpu {
  Ref curr = kNull;       // rq->curr
  Ref prev_mm = kNull;    // rq->prev_mm, parked by context_switch for finish_task_switch
  bool irqs_off = false;  // between context_switch and finish_task_switch
  Hp hp = Hp::Online;
  bool operator==(const Cpu&) const = default;
};
enum class MmState : std::uint8_t { Unborn, Live, Freed };
struct Mm {
  MmState st = MmState::Unborn;
  Mask mask;                   // mm_cpumask
  std::uint8_t ext_users = 0;  // mmget_not_zero() holders outside the modelled tasks
  std::uint8_t ext_grabs = 0;  // mmgrab() holders outside the modelled tasks
  bool operator==(const Mm&) const = default;
};
template <class D>
struct Counters {  // the two atomic_t of struct mm_struct
  BOOST_HANA_DEFINE_STRUCT(Counters, (u32<D>, mm_users), (u32<D>, mm_count));
};

template <class D>
struct World {
  std::vector<Cpu> cpus;
  std::vector<Task> tasks;  // [0, ntasks) ordinary tasks, then one idle task per CPU
  std::vector<Mm> mms;
  std::vector<Counters<D>> cnt;
  int ntasks = 0;
  Ref idle_of(int c) const { return Ref(ntasks + c); }
};

// Sizes of a world; the initial state: each CPU runs its idle task on init_mm; task 0 is a
// user task of mm 0 (runnable), the last ordinary task (if ntasks >= 2) is a kernel thread;
// the other task and mm slots are free for fork and exec.
struct Sizes {
  int cpus = 2, tasks = 3, mms = 2;
  bool operator==(const Sizes&) const = default;
};
World<Concrete> initial(const Sizes&);

enum class Op : std::uint8_t {
  Switch,   // switch CPU TASK: context_switch to TASK (any of the four kinds)
  Finish,   // finish CPU: finish_task_switch (drops rq->prev_mm lazily)
  Idle,     // idle CPU: context_switch to the CPU's idle task
  Exit,     // exit CPU: exit_mm() of the current task (with its mmput)
  Exec,     // exec CPU: exec_mmap() of a fresh mm by the current task
  Fork,     // fork CPU TASK: copy_mm without CLONE_VM (new mm) into slot TASK
  ForkVm,   // forkvm CPU TASK: CLONE_VM (shares the mm, mmget)
  Use,      // use CPU MM: mmget_not_zero + kthread_use_mm by the current kthread
  Unuse,    // unuse CPU: kthread_unuse_mm + mmput
  MmGet,    // mmget CPU MM: mmget_not_zero by an outside holder (e.g. /proc, io_uring)
  MmPut,    // mmput CPU MM: that holder's mmput, run on CPU
  MmGrab,   // mmgrab CPU MM: mmgrab by an outside holder
  MmDrop,   // mmdrop CPU MM: that holder's mmdrop, run on CPU (may be the final one)
  Flush,    // flush CPU MM: radix TLB flush of MM from CPU with the trim clock firing
  Offline,  // offline CPU: hotplug teardown on CPU (idle) up to __cpu_disable
  Dead,     // dead CPU: idle_task_exit on CPU, then finish_cpu on the control CPU
  Online,   // online CPU: start_secondary, the CPU runs its idle task on init_mm
};
inline constexpr int kNumOps = 17;
std::string_view op_name(Op);
struct Event {
  Op op = Op::Finish;
  std::int16_t cpu = 0;
  std::int16_t arg = 0;  // task or mm, by op
  bool operator==(const Event&) const = default;
};
std::string event_text(const Event&);

// Cost counters of one run (the seed's question: what bounces the mm_count line).
struct Costs {
  std::uint64_t count_atomics = 0;  // atomic RMWs on an mm_count (incl. init_mm's)
  std::uint64_t users_atomics = 0;  // atomic RMWs on an mm_users
  std::uint64_t ipis = 0;           // cross-CPU function calls sent
  std::uint64_t mask_updates = 0;   // mm_cpumask bit sets and clears
  std::uint64_t switches = 0;       // context switches
  std::uint64_t frees = 0;          // __mmdrop completions
};

// A list of record indices that keeps its storage across clear(): appending is a store on the
// step's path, not a call.
template <class T>
struct IndexList {
  std::vector<T> v;
  std::size_t n = 0;
  KACCT_INLINE void add(T x) {
    if (n == v.size()) [[unlikely]]
      grow();
    v[n++] = x;
  }
  [[gnu::noinline]] void grow() { v.resize(2 * n + 16); }
  void clear() { n = 0; }
  bool empty() const { return n == 0; }
  std::size_t size() const { return n; }
  const T* begin() const { return v.data(); }
  const T* end() const { return v.data() + n; }
};

// What one step did that the spec needs to judge (own-bit rule, shootdown coverage, frees), and,
// from a Stepper<D, true>, which records it may have written: spec::lazytlb::Checker re-judges
// only those (and what reads them). A record written must be listed (test/lazytlb and props
// check that nothing else changed); one listed and not written, or listed twice, only costs time.
struct StepLog {
  struct Clear {
    std::int16_t by, bit;
    Ref mm;
  };
  std::vector<Clear> clears;
  std::vector<std::string_view> warns;  // kernel WARN/BUG conditions hit
  bool writes = false;                  // the last step listed the records it wrote (below)
  IndexList<std::int16_t> cpus;         // Cpu records written
  IndexList<Ref> tasks;                 // Task records written
  IndexList<Ref> mms;                   // Mm records or counters written
  void reset() {
    clears.clear();
    warns.clear();
    cpus.clear();
    tasks.clear();
    mms.clear();
  }
};

// Why `e` cannot happen in `w` (empty: it can). Only the structure is consulted.
template <class D>
std::string not_enabled(const World<D>& w, const Cfg& cfg, const Event& e);
// The same without the event's numbers in the text (no allocation: the explorer asks this of
// every candidate event of every state).
template <class D>
std::string_view why_not_enabled(const World<D>& w, const Cfg& cfg, const Event& e);

// ---- decisions on counter values -------------------------------------------------------------
// Concretely a decision is the value. In a symbolic domain its outcome comes from an oracle
// (the prover enumerates them) and `path` records each condition as taken.
template <class D>
struct Decider {
  std::vector<bool> oracle;  // outcome of each decision, in order (missing: false)
  std::size_t next = 0;
  std::vector<boolean<D>> path;  // the decisions taken, as conditions
  bool operator()(D& d, const boolean<D>& c) {
    bool v = next < oracle.size() ? oracle[next] : false;
    ++next;
    path.push_back(v ? c : d.bnot(c));
    return v;
  }
};
template <>
struct Decider<Concrete> {
  bool operator()(Concrete&, bool c) { return c; }
};

// ---- the step ---------------------------------------------------------------------------------
// ListWrites: the log lists every record the step writes (for spec::lazytlb::Checker); off, the
// step pays nothing for it.
template <class D, bool ListWrites = false>
class Stepper {
 public:
  Stepper(D& d, const Cfg& cfg, World<D>& w, Costs& cost, StepLog& log, Decider<D>& decide)
      : d_(d), cfg_(cfg), w_(w), cost_(cost), log_(log), decide_(decide) {
    log_.writes = ListWrites;
  }

  // One event; the caller checked not_enabled(). Kernel obligations go to d.require().
  void run(const Event& e) {
    const int c = e.cpu;
    switch (e.op) {
      case Op::Switch: context_switch(c, e.arg); break;
      case Op::Idle: context_switch(c, w_.idle_of(c)); break;
      case Op::Finish: finish_task_switch(c); break;
      case Op::Exit: exit_mm(c); break;
      case Op::Exec: exec_mmap(c); break;
      case Op::Fork: fork(c, e.arg, false); break;
      case Op::ForkVm: fork(c, e.arg, true); break;
      case Op::Use: {
        if (mmget_not_zero(Ref(e.arg))) kthread_use_mm(c, Ref(e.arg));
        break;
      }
      case Op::Unuse: {
        Ref m = curr_task(c).mm;
        kthread_unuse_mm(c);
        mmput(c, m);
        break;
      }
      case Op::MmGet:
        if (mmget_not_zero(Ref(e.arg))) ++mm_w(Ref(e.arg)).ext_users;
        break;
      case Op::MmPut:
        --mm_w(Ref(e.arg)).ext_users;
        mmput(c, Ref(e.arg));
        break;
      case Op::MmGrab:
        ++mm_w(Ref(e.arg)).ext_grabs;
        mmgrab(Ref(e.arg));
        break;
      case Op::MmDrop:
        --mm_w(Ref(e.arg)).ext_grabs;
        mmdrop(c, Ref(e.arg));
        break;
      case Op::Flush: radix_trim_flush(c, Ref(e.arg)); break;
      case Op::Offline: cpu_offline(c); break;
      case Op::Dead: cpu_dead(c); break;
      case Op::Online: cpu_online(c); break;
    }
  }

 private:
  // Every record the step writes is taken through these, which list it in the log.
  Cpu& cpu_w(int c) {
    if constexpr (ListWrites) log_.cpus.add(std::int16_t(c));
    return w_.cpus[c];
  }
  Task& task_w(Ref i) {
    if constexpr (ListWrites) log_.tasks.add(i);
    return w_.tasks[i];
  }
  Mm& mm_w(Ref m) {
    if constexpr (ListWrites) log_.mms.add(m);
    return w_.mms[m];
  }
  Counters<D>& cnt_w(Ref m) {
    if constexpr (ListWrites) log_.mms.add(m);
    return w_.cnt[m];
  }
  Task& task(int c) { return task_w(w_.cpus[c].curr); }  // CPU c's current task, to write
  const Task& curr_task(int c) const { return w_.tasks[w_.cpus[c].curr]; }
  static bool regular(Ref m) { return m >= 0; }
  bool online(int c) const { return w_.cpus[c].hp == Hp::Online; }
  std::uint64_t others_online(int c) const {
    std::uint64_t n = 0;
    for (int t = 0; t < int(w_.cpus.size()); ++t) n += t != c && online(t);
    return n;
  }

  // mmgrab(): atomic_inc(&mm->mm_count) (include/linux/sched/mm.h, all versions).
  void mmgrab(Ref m) {
    ++cost_.count_atomics;
    if (!regular(m)) return;
    d_.require(d_.lit_bool(w_.mms[m].st != MmState::Freed), "mmgrab.use_after_free");
    auto& k = cnt_w(m).mm_count;
    k = KACCT_MUTANT(501, d_.add(k, d_.template lit<32>(1)), k);
  }
  // mmdrop(): atomic_dec_and_test(&mm->mm_count), __mmdrop() at zero (all versions; non-RT
  // mmdrop_sched is the same).
  void mmdrop(int c, Ref m) {
    ++cost_.count_atomics;
    if (!regular(m)) return;
    if (w_.mms[m].st == MmState::Freed) {
      d_.require(d_.lit_bool(false), "mmdrop.use_after_free");
      return;
    }
    auto& k = cnt_w(m).mm_count;
    d_.require(d_.bnot(d_.eq(k, d_.template lit<32>(0))), "mm_count.underflow");
    k = d_.sub(k, d_.template lit<32>(1));
    if (decide_(d_, KACCT_MUTANT(502, d_.eq(k, d_.template lit<32>(0)), d_.eq(k, d_.template lit<32>(1)))))
      mmdrop_final(c, m);
  }
  // mmgrab_lazy_tlb()/mmdrop_lazy_tlb(): real references unless SHOOTDOWN (aa464ba9a1e4,
  // 2655421ae69f; 6.4). Before 6.4 the same call sites used mmgrab()/mmdrop().
  void lazy_grab(Ref m) {
    if (KACCT_MUTANT(503, !cfg_.shootdown, false)) mmgrab(m);
  }
  void lazy_drop(int c, Ref m) {
    if (KACCT_MUTANT(504, !cfg_.shootdown, false)) mmdrop(c, m);
  }

  // __mmdrop() -> cleanup_lazy_tlbs() (kernel/fork.c; shootdown from 2655421ae69f, 6.4):
  // with SHOOTDOWN, run do_shoot_lazy_tlb on every CPU of mm_cpumask (self included) and wait.
  void mmdrop_final(int c, Ref m) {
    auto& mm = mm_w(m);
    if (KACCT_MUTANT(505, cfg_.shootdown, false)) {
      int skip = -1;
      if (cfg_.mut_shoot_skip_cpu)
        for (int t = 0; t < int(w_.cpus.size()); ++t)
          if (mm.mask.test(t)) skip = t;
      for (int t = 0; t < int(w_.cpus.size()); ++t) {
        if (!mm.mask.test(t) || t == skip || (t != c && !online(t))) continue;
        if (t != c) ++cost_.ipis;
        do_shoot_lazy_tlb(t, m);
      }
      if (cfg_.debug_shoot_lazies) cost_.ipis += others_online(c);
    }
    if (w_.tasks[w_.cpus[c].curr].mm == m) log_.warns.push_back("__mmdrop: mm == current->mm");
    if (w_.tasks[w_.cpus[c].curr].active_mm == m) log_.warns.push_back("__mmdrop: mm == current->active_mm");
    mm.st = MmState::Freed;
    ++cost_.frees;
  }
  // do_shoot_lazy_tlb() (kernel/fork.c, 6.4+): a CPU lazily on mm switches to init_mm.
  void do_shoot_lazy_tlb(int t, Ref m) {
    Task& cur = task(t);
    if (cur.active_mm != m) return;
    if (cur.mm != kNull) log_.warns.push_back("do_shoot_lazy_tlb: current->mm set");
    KACCT_MUTANT_DROP(506, cur.active_mm = kInitMm)
  }

  // switch_mm_irqs_off() mask side (powerpc mmu_context.c; x86 likewise sets the bit): the CPU
  // joins next's mm_cpumask if not yet in it; bits are never cleared on a switch.
  void switch_mm(int c, Ref next) {
    if (!regular(next)) return;
    if (!w_.mms[next].mask.test(c)) {
      KACCT_MUTANT_DROP(507, mm_w(next).mask.set(c))
      ++cost_.mask_updates;
    }
  }

  // context_switch() (kernel/sched/core.c, 6.1 and 6.12 alike): kernel<-{kernel,user} borrows
  // prev's active_mm (user->kernel takes a lazy reference), user<-kernel parks it in rq->prev_mm.
  void context_switch(int c, Ref n) {
    Cpu& cpu = cpu_w(c);
    Task& prev = task_w(cpu.curr);
    Task& next = task_w(n);
    ++cost_.switches;
    cpu.irqs_off = true;
    if (next.mm == kNull) {
      next.active_mm = prev.active_mm;
      if (prev.mm != kNull) {
        if (!cfg_.mut_no_lazy_grab) lazy_grab(prev.active_mm);
      } else {
        KACCT_MUTANT_DROP(508, prev.active_mm = kNull)
      }
    } else {
      switch_mm(c, next.mm);
      next.active_mm = next.mm;
      if (prev.mm == kNull) {
        cpu.prev_mm = KACCT_MUTANT(509, prev.active_mm, kNull);
        prev.active_mm = kNull;
      }
    }
    prev.st = prev.exiting ? TaskState::Dead : TaskState::Runnable;
    next.st = TaskState::Running;
    cpu.curr = n;
  }
  // finish_task_switch() (kernel/sched/core.c): irqs on, then mmdrop_lazy_tlb_sched(prev_mm)
  // (6.4+; mmdrop_sched before).
  void finish_task_switch(int c) {
    Cpu& cpu = cpu_w(c);
    Ref m = cpu.prev_mm;
    cpu.prev_mm = kNull;
    cpu.irqs_off = false;
    if (m != kNull) KACCT_MUTANT_DROP(510, lazy_drop(c, m))
  }

  // mmget_not_zero(): atomic_inc_not_zero(&mm->mm_users).
  bool mmget_not_zero(Ref m) {
    auto& u = cnt_w(m).mm_users;
    ++cost_.users_atomics;
    if (decide_(d_, KACCT_MUTANT(511, d_.eq(u, d_.template lit<32>(0)), d_.lit_bool(false)))) return false;
    u = d_.add(u, d_.template lit<32>(1));
    return true;
  }
  // mmput() (kernel/fork.c): the last user runs __mmput: exit_mmap (with the radix fullmm flush,
  // which from e43c0a0c3c28 (6.6) under SHOOTDOWN also shoots the lazies of other CPUs), then
  // mmdrop() of the users' collective reference.
  void mmput(int c, Ref m) {
    auto& u = cnt_w(m).mm_users;
    ++cost_.users_atomics;
    if (w_.mms[m].st == MmState::Freed) {
      d_.require(d_.lit_bool(false), "mmput.use_after_free");
      return;
    }
    d_.require(d_.bnot(d_.eq(u, d_.template lit<32>(0))), "mm_users.underflow");
    u = d_.sub(u, d_.template lit<32>(1));
    if (!decide_(d_, d_.eq(u, d_.template lit<32>(0)))) return;
    if (cfg_.arch == Arch::PpcRadix && cfg_.shootdown && KACCT_MUTANT(512, cfg_.exit_flush_shoots, false))
      exit_flush_lazy_tlbs(c, m);
    KACCT_MUTANT_DROP(513, mmdrop(c, m))
  }

  // exit_mm() (kernel/exit.c): take a lazy reference, drop current->mm, keep running lazily on
  // it until the final schedule(), then mmput().
  void exit_mm(int c) {
    Task& t = task(c);
    Ref m = t.mm;
    KACCT_MUTANT_DROP(514, lazy_grab(m))
    t.mm = kNull;
    t.exiting = true;
    mmput(c, m);
  }

  // exec_mmap() (fs/exec.c): switch to the new mm with irqs off, then mmput(old mm), or for a
  // kernel thread mmdrop_lazy_tlb(old active_mm) (6.4+; mmdrop before).
  void exec_mmap(int c) {
    Task& t = task(c);
    Ref nm = kNull;
    for (int i = 0; i < int(w_.mms.size()); ++i)
      if (w_.mms[i].st == MmState::Unborn) {
        nm = Ref(i);
        break;
      }
    mm_init(nm);
    Ref old = t.mm, active = t.active_mm;
    t.mm = t.active_mm = nm;
    t.kthread = false;
    switch_mm(c, nm);
    if (old != kNull)
      mmput(c, old);
    else
      KACCT_MUTANT_DROP(515, lazy_drop(c, active))
  }
  // mm_init(): both counters start at 1, empty mask.
  void mm_init(Ref m) {
    mm_w(m) = Mm{MmState::Live, {}, 0, 0};
    cnt_w(m).mm_users = d_.template lit<32>(1);
    w_.cnt[m].mm_count = KACCT_MUTANT(516, d_.template lit<32>(1), d_.template lit<32>(2));
  }
  // copy_mm() (kernel/fork.c): CLONE_VM shares with mmget(), else dup_mm() makes a new mm;
  // a kernel thread's child has no mm and no active_mm.
  void fork(int c, Ref n, bool vm) {
    const Task& p = curr_task(c);
    Task& ch = task_w(n);
    ch = Task{};
    ch.st = TaskState::Runnable;
    ch.kthread = p.kthread && p.mm == kNull;
    if (p.mm == kNull) return;
    ch.kthread = false;
    if (vm) {
      ++cost_.users_atomics;
      auto& u = cnt_w(p.mm).mm_users;
      u = KACCT_MUTANT(517, d_.add(u, d_.template lit<32>(1)), u);
      ch.mm = ch.active_mm = p.mm;
    } else {
      Ref nm = kNull;
      for (int i = 0; i < int(w_.mms.size()); ++i)
        if (w_.mms[i].st == MmState::Unborn) {
          nm = Ref(i);
          break;
        }
      mm_init(nm);
      ch.mm = ch.active_mm = nm;
    }
  }

  // kthread_use_mm() (kernel/kthread.c): 6.4+ (6cad87b0d216) always mmgrab(mm), then
  // mmdrop_lazy_tlb(old active_mm); before, grab and drop only when the mm changes.
  void kthread_use_mm(int c, Ref m) {
    Task& t = task(c);
    Ref old = t.active_mm;
    if (cfg_.use_mm_always_grabs) {
      mmgrab(m);
      t.active_mm = m;
      t.mm = m;
      switch_mm(c, m);
      KACCT_MUTANT_DROP(518, lazy_drop(c, old))
    } else {
      if (old != m) {
        mmgrab(m);
        t.active_mm = m;
      }
      t.mm = m;
      switch_mm(c, m);
      if (KACCT_MUTANT(519, old != m, true)) mmdrop(c, old);
    }
  }
  // kthread_unuse_mm() (kernel/kthread.c): mm becomes the lazy mm; 6.4+ takes a lazy reference
  // and drops the real one, before the real one simply became the lazy one.
  void kthread_unuse_mm(int c) {
    Task& t = task(c);
    Ref m = t.mm;
    t.mm = kNull;
    if (cfg_.use_mm_always_grabs) {
      lazy_grab(m);
      KACCT_MUTANT_DROP(520, mmdrop(c, m))
    }
  }

  // exit_lazy_flush_tlb() (arch/powerpc/mm/book3s64/radix_tlb.c, 5.10+ with a665eec0a22e, irqs
  // off from dfaed3e1fa70): a CPU lazily on mm moves to init_mm, then clears its own mask bit.
  void exit_lazy_flush_tlb(int t, Ref m) {
    Task& cur = task(t);
    if (KACCT_MUTANT(521, cur.mm == m, false)) return;
    if (cur.active_mm == m) {
      lazy_grab(kInitMm);
      cur.active_mm = kInitMm;
      KACCT_MUTANT_DROP(522, lazy_drop(t, m))
    }
    if (!cfg_.mut_clear_wrong_cpu && w_.mms[m].mask.test(t)) clear_bit(t, t, m);
  }
  void clear_bit(int by, int bit, Ref m) {
    mm_w(m).mask.clear(bit);
    ++cost_.mask_updates;
    log_.clears.push_back({std::int16_t(by), std::int16_t(bit), m});
  }
  // exit_flush_lazy_tlbs(): smp_call_function_many(mm_cpumask) - every CPU but the caller.
  void exit_flush_lazy_tlbs(int c, Ref m) {
    for (int t = 0; t < int(w_.cpus.size()); ++t) {
      if (t == c || !w_.mms[m].mask.test(t) || !online(t)) continue;
      ++cost_.ipis;
      if (cfg_.mut_clear_wrong_cpu) clear_bit(c, t, m);  // the sparc64-style bug (bafb056ce279)
      exit_lazy_flush_tlb(t, m);
    }
  }
  // flush_type_needed() with tick_and_test_trim_clock() firing (radix_tlb.c, 4.19+ 0cef77c7798a):
  // alone in the mask and not using mm: trim self; otherwise IPI-trim the others, then self
  // unless the caller is using mm.
  void radix_trim_flush(int c, Ref m) {
    const Mask& mask = w_.mms[m].mask;
    const int n = mask.count();
    if (n == 0) return;
    if (KACCT_MUTANT(523, n == 1 && mask.test(c), n == 1)) {
      if (curr_task(c).mm != m) exit_lazy_flush_tlb(c, m);
      return;
    }
    exit_flush_lazy_tlbs(c, m);
    if (KACCT_MUTANT(524, curr_task(c).mm == m, false)) return;
    if (w_.mms[m].mask.test(c)) exit_lazy_flush_tlb(c, m);
  }

  // ---- CPU hotplug (kernel/cpu.c, kernel/sched/core.c, arch/powerpc) ----
  // The outgoing CPU's hotplug threads (cpuhp, stopper) are kernel threads that take over and
  // hand on its lazy mm like the idle task, so the teardown runs in the idle task's context.
  // offline: sched_cpu_wait_empty() -> sched_force_init_mm() (21641bd9a7a7, 6.14): off the lazy
  // mm onto init_mm while still online; then take_cpu_down -> __cpu_disable(): the CPU leaves
  // cpu_online_mask (no more IPIs), and Book3S-64's pseries/powernv cpu_disable runs
  // cleanup_cpu_mmu_context() -> clear_tasks_mm_cpumask(): the CPU clears its own bit in the mm
  // of every process that still has a task with an mm (01b0f0eae081).
  void cpu_offline(int c) {
    Task& idle = task(c);
    if (cfg_.force_init_mm && !cfg_.mut_no_force_init_mm && idle.active_mm != kInitMm) {
      Ref m = idle.active_mm;
      lazy_grab(kInitMm);
      idle.active_mm = kInitMm;
      KACCT_MUTANT_DROP(525, lazy_drop(c, m))
    }
    cpu_w(c).hp = Hp::Dying;
    if (!cfg_.offline_trims_masks) return;
    for (const Task& t : w_.tasks) {
      if (t.st == TaskState::Unborn || t.st == TaskState::Dead || !regular(t.mm)) continue;
      for (int b = 0; b < int(w_.cpus.size()); ++b)
        if ((b == c || cfg_.mut_offline_clear_all) && w_.mms[t.mm].mask.test(b)) clear_bit(c, b, t.mm);
    }
  }
  // dead: arch_cpu_idle_dead() -> idle_task_exit() switches the hardware to init_mm (before
  // 21641bd9a7a7 leaving active_mm set), the CPU stops, then finish_cpu() on the control CPU
  // (bf2c59fce407, 5.8; the drop ran on the dying CPU before): active_mm = &init_mm (6.14+:
  // NULL, with a WARN unless it was init_mm) and mmdrop_lazy_tlb() of the old one.
  void cpu_dead(int c) {
    Task& idle = task(c);
    Ref m = idle.active_mm;
    cpu_w(c).hp = Hp::Dead;
    if (cfg_.force_init_mm && m != kInitMm) log_.warns.push_back("finish_cpu: idle active_mm != &init_mm");
    idle.active_mm = KACCT_MUTANT(526, cfg_.force_init_mm ? kNull : kInitMm, kInitMm);
    if (!cfg_.mut_dead_no_drop) lazy_drop(c, m);
  }
  // online: start_secondary() (powerpc smp.c; x86 likewise): mmgrab_lazy_tlb(&init_mm),
  // current->active_mm = &init_mm, set_cpu_online(); no user mm's mask is touched.
  void cpu_online(int c) {
    lazy_grab(kInitMm);
    task(c).active_mm = kInitMm;
    cpu_w(c).hp = Hp::Online;
  }

  D& d_;
  const Cfg& cfg_;
  World<D>& w_;
  Costs& cost_;
  StepLog& log_;
  Decider<D>& decide_;
};

template <class D>
std::string_view why_not_enabled(const World<D>& w, const Cfg& cfg, const Event& e) {
  const int nc = int(w.cpus.size());
  if (e.cpu < 0 || e.cpu >= nc) return "no CPU";
  const Cpu& cpu = w.cpus[e.cpu];
  const Task& cur = w.tasks[cpu.curr];
  auto mm_ok = [&] { return e.arg >= 0 && e.arg < int(w.mms.size()); };
  const bool busy = cpu.irqs_off;
  switch (e.op) {
    case Op::Offline:
      if (e.cpu == 0) return "CPU 0 is the boot CPU (it does not go offline)";
      if (cpu.hp != Hp::Online) return "CPU is already offline";
      if (busy) return "CPU has not finished its last context switch";
      if (cpu.curr != w.idle_of(e.cpu)) return "CPU is not idle (its tasks must be switched away first)";
      return "";
    case Op::Dead: return cpu.hp == Hp::Dying ? "" : "CPU is not going offline";
    case Op::Online:
      if (cpu.hp == Hp::Dying) return "CPU has not finished going offline";
      return cpu.hp == Hp::Dead ? "" : "CPU is online";
    default:
      if (cpu.hp != Hp::Online) return "CPU is offline";
      break;
  }
  switch (e.op) {
    case Op::Finish: return busy ? "" : "CPU is not inside a context switch";
    case Op::Switch:
    case Op::Idle: {
      if (busy) return "CPU has not finished its last context switch";
      Ref n = e.op == Op::Idle ? w.idle_of(e.cpu) : Ref(e.arg);
      if (e.op == Op::Switch && (n < 0 || n >= w.ntasks)) return "no ordinary task";
      if (w.tasks[n].st != TaskState::Runnable) return "task is not runnable";
      return "";
    }
    default: break;
  }
  if (busy) return "CPU has irqs off (context switch not finished)";
  switch (e.op) {
    case Op::Exit:
      if (cur.kthread || cur.mm == kNull || cur.exiting) return "current task has no mm of its own";
      return "";
    case Op::Exec: {
      if (cur.exiting || cur.idle || (cur.kthread && cur.mm != kNull)) return "current task cannot exec";
      for (const auto& m : w.mms)
        if (m.st == MmState::Unborn) return "";
      return "no free mm slot";
    }
    case Op::Fork:
    case Op::ForkVm: {
      if (cur.exiting || cur.idle || (cur.kthread && cur.mm != kNull)) return "current task cannot fork";
      if (e.arg < 0 || e.arg >= w.ntasks || w.tasks[e.arg].st != TaskState::Unborn) return "task slot is not free";
      if (e.op == Op::Fork && cur.mm != kNull) {
        for (const auto& m : w.mms)
          if (m.st == MmState::Unborn) return "";
        return "no free mm slot";
      }
      return "";
    }
    case Op::Use:
      if (!mm_ok()) return "no mm";
      if (!cur.kthread || cur.idle || cur.mm != kNull || cur.exiting) return "current task is not a kthread without mm";
      if (w.mms[e.arg].st != MmState::Live) return "mm is not live";
      return "";
    case Op::Unuse:
      if (!cur.kthread || cur.mm == kNull) return "current task is not a kthread using an mm";
      return "";
    case Op::MmGet:
      if (!mm_ok()) return "no mm";
      if (w.mms[e.arg].st != MmState::Live) return "mm is not live";
      return "";
    case Op::MmPut:
      if (!mm_ok()) return "no mm";
      return w.mms[e.arg].ext_users ? "" : "no outside mm_users holder";
    case Op::MmGrab: {
      if (!mm_ok()) return "no mm";
      // The grabber must reach the mm through a holder: a task using it or an outside user.
      if (w.mms[e.arg].st != MmState::Live) return "mm is not live";
      bool reachable = w.mms[e.arg].ext_users > 0 || w.mms[e.arg].ext_grabs > 0;
      for (const auto& t : w.tasks) reachable = reachable || (t.mm == e.arg && t.st != TaskState::Dead);
      return reachable ? "" : "nobody holds the mm to grab it from";
    }
    case Op::MmDrop:
      if (!mm_ok()) return "no mm";
      return w.mms[e.arg].ext_grabs ? "" : "no outside mm_count holder";
    case Op::Flush: {
      if (cfg.arch != Arch::PpcRadix) return "flush trimming is powerpc radix only";
      if (!mm_ok()) return "no mm";
      if (w.mms[e.arg].st != MmState::Live) return "mm is not live";
      bool user = w.mms[e.arg].ext_users > 0;
      for (const auto& t : w.tasks) user = user || (t.mm == e.arg && t.st != TaskState::Dead);
      return user ? "" : "mm has no users (nothing flushes it)";
    }
    default: return "";
  }
}

template <class D>
std::string not_enabled(const World<D>& w, const Cfg& cfg, const Event& e) {
  const std::string_view why = why_not_enabled(w, cfg, e);
  // the three reasons that name a number the event gave
  if (why == "no CPU") return "no CPU " + std::to_string(e.cpu);
  if (why == "no mm" || why == "no ordinary task") return std::string(why) + " " + std::to_string(e.arg);
  return std::string(why);
}

}  // namespace kacct::model::lazytlb
