/* User-space stand-ins for the kernel types, macros and helpers that the extracted accounting
 * functions use (the functions themselves come from the Debian source tarball at build time).
 * One CPU, one current task: the per-CPU and per-task state is the harness's (kdiff_glue.c). */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned __int128 u128;

#define KD_CAT2(a, b) a##b
#define KD_CAT(a, b) KD_CAT2(a, b)
#define KD_SYM(name) KD_CAT(KD_PFX, name)

/* compiler.h, export.h, lockdep */
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define EXPORT_SYMBOL(x)
#define EXPORT_SYMBOL_GPL(x)
#define lockdep_assert_irqs_disabled() \
  do {                                 \
  } while (0)

/* minmax.h: the kernel's min() insists on equal types; the extracted code passes u64s. */
#define min(a, b)         \
  ({                      \
    __auto_type _a = (a); \
    __auto_type _b = (b); \
    _a < _b ? _a : _b;    \
  })

/* log2.h: ilog2() of a non-constant is fls64(n) - 1, so -1 for 0. */
static inline int ilog2(u64 n) { return n ? 63 - __builtin_clzll(n) : -1; }

#define NSEC_PER_SEC 1000000000L /* vdso/time64.h */

typedef struct {
  int counter;
} atomic_t;
#define atomic_read(v) ((v)->counter)
typedef struct {
  unsigned sequence;
} seqcount_t;

enum cpu_usage_stat { /* kernel_stat.h */
                      CPUTIME_USER,
                      CPUTIME_NICE,
                      CPUTIME_SYSTEM,
                      CPUTIME_SOFTIRQ,
                      CPUTIME_IRQ,
                      CPUTIME_IDLE,
                      CPUTIME_IOWAIT,
                      CPUTIME_STEAL,
                      CPUTIME_GUEST,
                      CPUTIME_GUEST_NICE,
                      NR_STATS,
};
struct kd_cpustat_s { /* struct kernel_cpustat; the name is the per-CPU variable here */
  u64 cpustat[NR_STATS];
};
struct prev_cputime {
  u64 utime;
  u64 stime;
  int lock;
};
struct task_cputime {
  u64 stime;
  u64 utime;
  unsigned long long sum_exec_runtime;
};
struct sched_entity {
  u64 sum_exec_runtime;
};
enum vtime_state { /* sched.h (5.5+) */
                   VTIME_INACTIVE = 0,
                   VTIME_IDLE,
                   VTIME_SYS,
                   VTIME_USER,
                   VTIME_GUEST,
};
struct vtime {
  seqcount_t seqcount;
  unsigned long long starttime;
  enum vtime_state state;
  unsigned int cpu;
  u64 utime;
  u64 stime;
  u64 gtime;
};
enum psi_states { /* psi_types.h, CONFIG_IRQ_TIME_ACCOUNTING */
                  PSI_IO_SOME,
                  PSI_IO_FULL,
                  PSI_MEM_SOME,
                  PSI_MEM_FULL,
                  PSI_CPU_SOME,
                  PSI_CPU_FULL,
                  PSI_IRQ_FULL,
                  PSI_NONIDLE,
                  NR_PSI_STATES,
};
struct psi_group_cpu { /* the fields psi_account_irqtime() and record_times() touch */
  seqcount_t seq;      /* until the per-CPU psi_seq */
  u32 state_mask;
  u32 times[NR_PSI_STATES];
  u64 state_start;
};
struct psi_group {
  struct psi_group* parent;
  bool enabled;
  struct psi_group_cpu* pcpu; /* one CPU */
  u32 rtpoll_states;
};
struct task_struct {
  int pid;
  struct psi_group* psi_group; /* task_psi_group(): its cgroup's psi, or psi_system */
  unsigned int flags;
  int nice;
  bool idle_task; /* PF_IDLE */
  struct vtime vtime;
  u64 utime, stime, gtime;
  struct sched_entity se;
  struct prev_cputime prev_cputime;
};
struct irqtime {
  u64 total;
  u64 tick_delta;
  u64 irq_start_time;
  int sync;
};
struct rq {
  struct task_struct* idle;
  u64 psi_irq_time;
  u64 prev_steal_time;
  atomic_t nr_iowait;
};

/* The one CPU the harness runs on (prefixed per build, like the extracted functions). */
#define kd_kcpustat KD_SYM(kcpustat)
#define kd_rq KD_SYM(rq)
#define cpu_irqtime KD_SYM(cpu_irqtime)
#define kd_current KD_SYM(cur_task)
#define kd_ksoftirqd KD_SYM(ksoftirqd)
#define kd_preempt_count KD_SYM(preempt_count)
#define kd_sched_clock KD_SYM(sched_clock)
#define kd_steal_clock KD_SYM(steal_clock)
#define paravirt_steal_enabled KD_SYM(paravirt_steal_enabled)
#define sched_clock_irqtime KD_SYM(sched_clock_irqtime)
extern struct kd_cpustat_s kd_kcpustat;
extern struct rq kd_rq;
extern struct irqtime cpu_irqtime;
extern struct task_struct *kd_current, *kd_ksoftirqd;
extern unsigned int kd_preempt_count;
extern u64 kd_sched_clock, kd_steal_clock;
extern bool paravirt_steal_enabled;
extern int sched_clock_irqtime;

#define kernel_cpustat kd_kcpustat
#define kcpustat_this_cpu (&kd_kcpustat)
#define __this_cpu_add(var, v) ((var) += (v))
#define this_cpu_ptr(p) (p)
#define this_rq() (&kd_rq)
#define smp_processor_id() 0
#define current kd_current
#define this_cpu_ksoftirqd() kd_ksoftirqd
#define preempt_count() kd_preempt_count
#define sched_clock_cpu(cpu) kd_sched_clock
#define static_key_false(k) (*(k))
#define paravirt_steal_clock(cpu) kd_steal_clock
#define task_nice(p) ((p)->nice)
#define vtime_accounting_enabled_this_cpu() false
/* gen vtime: one writer, so the readers never retry; the sequence is compared with the model's */
#define vtime_accounting_enabled() true
#define sched_clock() kd_sched_clock
#define is_idle_task(p) ((p)->idle_task)
#define write_seqcount_begin(s) ((s)->sequence++)
#define write_seqcount_end(s) ((s)->sequence++)
#define read_seqcount_begin(s) ((s)->sequence)
#define read_seqcount_retry(s, seq) ((s)->sequence != (seq))
#define WARN_ON_ONCE(c) ((void)(c))
/* PSI */
#define static_branch_likely(k) (*(k))
#define task_psi_group(t) ((t)->psi_group)
#define task_cpu(p) 0
#define irq_time_read(cpu) (cpu_irqtime.total)
#define cpu_clock(cpu) kd_sched_clock
#define per_cpu_ptr(p, cpu) (p)
#define lockdep_assert_rq_held(rq) ((void)(rq))
#define psi_schedule_rtpoll_work(g, delay, force) ((void)(g))
#define psi_seq KD_SYM(psi_seq)
#define psi_disabled KD_SYM(psi_disabled)
extern seqcount_t psi_seq;
extern bool psi_disabled;
#define u64_stats_update_begin(s) ((void)(s))
#define u64_stats_update_end(s) ((void)(s))
#define raw_spin_lock_irqsave(l, f) ((void)(l), (f) = 0)
#define raw_spin_unlock_irqrestore(l, f) ((void)(l), (void)(f))
/* cgroup, thread-group and BSD process accounting: other counters, not compared here */
#define cgroup_account_cputime_field(p, i, t) ((void)(p), (void)(i), (void)(t))
#define account_group_user_time(p, t) ((void)(p), (void)(t))
#define account_group_system_time(p, t) ((void)(p), (void)(t))
#define acct_account_cputime(p) ((void)(p))

#define CONFIG_IRQ_TIME_ACCOUNTING 1
#define CONFIG_PARAVIRT 1
#define CONFIG_64BIT 1
