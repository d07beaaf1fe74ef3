/* The kernel's accounting functions, built from a Debian source tarball (kdiff_glue.c), as the
 * test sees them: one table per tree and mul_u64_u64_div_u64() flavour. */
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kd_cpu { /* kernel_cpustat, rq->prev_steal_time, the paravirt steal clock, struct irqtime */
  uint64_t cpustat[10];
  uint64_t prev_steal_time, steal_clock;
  uint64_t irq_total, irq_tick_delta, irq_start_time;
};
struct kd_task {
  uint64_t utime, stime, gtime;
};
struct kd_ctx { /* what the accounting functions read besides the state */
  unsigned preempt_count;
  int user_tick, is_idle, is_ksoftirqd, pf_vcpu, nice_pos, nr_iowait;
  int irq_time; /* sched_clock_irqtime */
  int steal;    /* paravirt_steal_enabled */
};

struct kd_vtime { /* struct vtime of one task, and the task flags vtime reads */
  uint64_t starttime, utime, stime, gtime;
  unsigned seq;
  int state; /* enum vtime_state */
  int cpu;   /* vtime->cpu (unsigned int in the kernel: -1 is UINT_MAX) */
  int pf_vcpu, is_idle, nice_pos;
};
enum kd_vtime_op { KD_USER_ENTER, KD_USER_EXIT, KD_GUEST_ENTER, KD_GUEST_EXIT, KD_ACCOUNT_KERNEL };

struct kd_psi_group { /* one cgroup's psi_group and its psi_group_cpu on the one CPU */
  uint32_t irq_full;  /* times[PSI_IRQ_FULL] */
  uint64_t state_start;
  unsigned seq; /* groupc->seq (trees without the per-CPU psi_seq) */
  int parent;   /* index, -1 for the root (psi_system) */
  int enabled;
};
struct kd_psi {          /* the rq and CPU side */
  uint64_t psi_irq_time; /* rq->psi_irq_time */
  unsigned psi_seq;      /* the per-CPU psi_seq (trees that have it) */
  uint64_t irq_total;    /* irq_time_read() */
  uint64_t now;          /* cpu_clock() */
};

/* The tick helpers called one by one (static ones included: the glue is in their file). */
enum kd_tick_fn {
  KD_ACCOUNT_USER_TIME,            /* account_user_time(p, arg) */
  KD_ACCOUNT_GUEST_TIME,           /* account_guest_time(p, arg) */
  KD_ACCOUNT_SYSTEM_INDEX_TIME,    /* account_system_index_time(p, arg, iarg) */
  KD_ACCOUNT_SYSTEM_TIME,          /* account_system_time(p, iarg, arg) */
  KD_ACCOUNT_IDLE_TIME,            /* account_idle_time(arg) */
  KD_STEAL_ACCOUNT_PROCESS_TIME,   /* returns steal_account_process_time(arg) */
  KD_ACCOUNT_OTHER_TIME,           /* returns account_other_time(arg) */
  KD_IRQTIME_ACCOUNT_PROCESS_TICK, /* irqtime_account_process_tick(p, x->user_tick, iarg) */
};

struct kd_api {
  const char* name;
  /* *trapped = 1 when the call raised SIGFPE/SIGILL (divq #DE, division by zero) */
  uint64_t (*mul_u64_u64_div_u64)(uint64_t a, uint64_t b, uint64_t c, int* trapped);
  /* curr = {utime, stime, sum_exec_runtime}; prev = {utime, stime} in/out; out = {*ut, *st} */
  void (*cputime_adjust)(const uint64_t curr[3], uint64_t prev[2], uint64_t out[2], int* trapped);
  void (*account_process_tick)(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x);
  void (*account_idle_ticks)(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x, unsigned long ticks);
  void (*irqtime_account_irq)(struct kd_cpu* c, const struct kd_ctx* x, uint64_t now, unsigned offset);
  /* gen vtime: c and x as above (x->preempt_count is irq_count(); x's task fields unused) */
  void (*vtime_op)(enum kd_vtime_op op, struct kd_cpu* c, struct kd_task* p, struct kd_vtime* v, const struct kd_ctx* x,
                   uint64_t now);
  /* vtime_task_switch_generic(prev) with next as current */
  void (*vtime_task_switch)(struct kd_cpu* c, struct kd_task* prev, struct kd_vtime* pv, struct kd_task* next,
                            struct kd_vtime* nv, const struct kd_ctx* x, uint64_t now);
  /* task_cputime(t, &utime, &stime): returns its bool */
  /* psi_account_irqtime(rq, curr, prev): curr's pid (0: the idle task) and group; prev_group -1
   * for prev == NULL. Returns whether the tree has the per-CPU psi_seq. */
  int (*psi_account_irqtime)(struct kd_psi_group* g, int ngroups, struct kd_psi* s, int curr_pid, int curr_group,
                             int prev_group);
  uint64_t (*tick_fn)(enum kd_tick_fn f, struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x, uint64_t arg,
                      int iarg);
  int (*task_cputime)(const struct kd_task* p, const struct kd_vtime* v, uint64_t now, uint64_t* utime,
                      uint64_t* stime);
  const char* version; /* the tree's VERSION.PATCHLEVEL.SUBLEVEL */
  /* cputime_adjust() called directly, without the trap guard (bench/bench_adjust.cpp): only for
   * inputs that cannot trap */
  void (*cputime_adjust_bare)(const uint64_t curr[3], uint64_t prev[2], uint64_t out[2]);
};

extern const struct kd_api k61x86_api, k61gen_api, k612x86_api, k612gen_api;

#ifdef __cplusplus
}
#endif
