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

struct kd_api {
  const char* name;
  /* *trapped = 1 when the call raised SIGFPE/SIGILL (divq #DE, division by zero) */
  uint64_t (*mul_u64_u64_div_u64)(uint64_t a, uint64_t b, uint64_t c, int* trapped);
  /* curr = {utime, stime, sum_exec_runtime}; prev = {utime, stime} in/out; out = {*ut, *st} */
  void (*cputime_adjust)(const uint64_t curr[3], uint64_t prev[2], uint64_t out[2], int* trapped);
  void (*account_process_tick)(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x);
  void (*account_idle_ticks)(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x, unsigned long ticks);
  void (*irqtime_account_irq)(struct kd_cpu* c, const struct kd_ctx* x, uint64_t now, unsigned offset);
};

extern const struct kd_api k61x86_api, k61gen_api, k612x86_api, k612gen_api;

#ifdef __cplusplus
}
#endif
