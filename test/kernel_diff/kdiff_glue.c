/* One build of the extracted kernel functions (KD_PFX names it: tree and division flavour) and
 * the table that the test calls them through. Compiled once per tree x flavour. */
#include <setjmp.h>
#include <string.h>

/* generated from the tarball by tools/kernel-diff/extract.py; rename.h first, so that a struct
 * tag sharing a function's name (task_cputime) is prefixed everywhere alike */
#include "rename.h"
#include "kshim.h"
#include "macros.h"
#include "math64.inc"
#ifdef KD_X86
#include "div64_x86.inc"
#else
#include "div64_generic.inc"
#endif
#include "cputime.inc"
#include "psi_tree.h"
#include "tree.h"
#include "psi.inc"

#include "kdiff.h"
#include "kdiff_trap.h"

struct kd_cpustat_s kd_kcpustat;
struct rq kd_rq;
struct irqtime cpu_irqtime;
struct task_struct *kd_current, *kd_ksoftirqd;
unsigned int kd_preempt_count;
u64 kd_sched_clock, kd_steal_clock;
bool paravirt_steal_enabled;
int sched_clock_irqtime;

static struct task_struct task, other;

static sigjmp_buf trap_jmp;

static uint64_t kd_mul(uint64_t a, uint64_t b, uint64_t c, int* trapped) {
  kd_arm_traps();
  kd_trap_target = &trap_jmp;
  volatile uint64_t r = 0;
  *trapped = 0;
  if (sigsetjmp(trap_jmp, 0)) {
    *trapped = 1;
    return 0;
  }
  r = mul_u64_u64_div_u64(a, b, c);
  return r;
}

static void kd_adjust(const uint64_t curr[3], uint64_t prev[2], uint64_t out[2], int* trapped) {
  kd_arm_traps();
  kd_trap_target = &trap_jmp;
  struct task_cputime tc = {.utime = curr[0], .stime = curr[1], .sum_exec_runtime = curr[2]};
  static struct prev_cputime pc;
  u64 ut = 0, st = 0;
  pc.utime = prev[0];
  pc.stime = prev[1];
  *trapped = 0;
  if (sigsetjmp(trap_jmp, 0)) {
    *trapped = 1;
    return;
  }
  cputime_adjust(&tc, &pc, &ut, &st);
  prev[0] = pc.utime;
  prev[1] = pc.stime;
  out[0] = ut;
  out[1] = st;
}

static void kd_adjust_bare(const uint64_t curr[3], uint64_t prev[2], uint64_t out[2]) {
  struct task_cputime tc = {.utime = curr[0], .stime = curr[1], .sum_exec_runtime = curr[2]};
  static struct prev_cputime pc;
  u64 ut = 0, st = 0;
  pc.utime = prev[0];
  pc.stime = prev[1];
  cputime_adjust(&tc, &pc, &ut, &st);
  prev[0] = pc.utime;
  prev[1] = pc.stime;
  out[0] = ut;
  out[1] = st;
}

static void load(const struct kd_cpu* c, const struct kd_task* p, const struct kd_ctx* x) {
  memcpy(kd_kcpustat.cpustat, c->cpustat, sizeof c->cpustat);
  kd_rq.prev_steal_time = c->prev_steal_time;
  kd_steal_clock = c->steal_clock;
  cpu_irqtime.total = c->irq_total;
  cpu_irqtime.tick_delta = c->irq_tick_delta;
  cpu_irqtime.irq_start_time = c->irq_start_time;
  kd_rq.nr_iowait.counter = x->nr_iowait;
  kd_rq.idle = x->is_idle ? &task : &other;
  kd_ksoftirqd = x->is_ksoftirqd ? &task : &other;
  kd_current = &task;
  kd_preempt_count = x->preempt_count;
  sched_clock_irqtime = x->irq_time;
  paravirt_steal_enabled = x->steal;
  if (p) {
    task.utime = p->utime;
    task.stime = p->stime;
    task.gtime = p->gtime;
  }
  task.flags = x->pf_vcpu ? PF_VCPU : 0;
  task.nice = x->nice_pos ? 1 : 0;
}
static void store(struct kd_cpu* c, struct kd_task* p) {
  memcpy(c->cpustat, kd_kcpustat.cpustat, sizeof c->cpustat);
  c->prev_steal_time = kd_rq.prev_steal_time;
  c->steal_clock = kd_steal_clock;
  c->irq_total = cpu_irqtime.total;
  c->irq_tick_delta = cpu_irqtime.tick_delta;
  c->irq_start_time = cpu_irqtime.irq_start_time;
  if (p) {
    p->utime = task.utime;
    p->stime = task.stime;
    p->gtime = task.gtime;
  }
}

static void kd_tick(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x) {
  load(c, p, x);
  account_process_tick(&task, x->user_tick);
  store(c, p);
}
static void kd_idle_ticks(struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x, unsigned long ticks) {
  load(c, p, x);
  account_idle_ticks(ticks);
  store(c, p);
}
static void kd_irq(struct kd_cpu* c, const struct kd_ctx* x, uint64_t now, unsigned offset) {
  load(c, 0, x);
  kd_sched_clock = now;
  irqtime_account_irq(&task, offset);
  store(c, 0);
}

static void load_vtime(struct task_struct* t, const struct kd_task* p, const struct kd_vtime* v) {
  t->utime = p->utime;
  t->stime = p->stime;
  t->gtime = p->gtime;
  t->vtime.seqcount.sequence = v->seq;
  t->vtime.starttime = v->starttime;
  t->vtime.state = (enum vtime_state)v->state;
  t->vtime.cpu = (unsigned)v->cpu;
  t->vtime.utime = v->utime;
  t->vtime.stime = v->stime;
  t->vtime.gtime = v->gtime;
  t->flags = v->pf_vcpu ? PF_VCPU : 0;
  t->idle_task = v->is_idle;
  t->nice = v->nice_pos ? 1 : 0;
}
static void store_vtime(const struct task_struct* t, struct kd_task* p, struct kd_vtime* v) {
  p->utime = t->utime;
  p->stime = t->stime;
  p->gtime = t->gtime;
  v->seq = t->vtime.seqcount.sequence;
  v->starttime = t->vtime.starttime;
  v->state = (int)t->vtime.state;
  v->cpu = (int)t->vtime.cpu;
  v->utime = t->vtime.utime;
  v->stime = t->vtime.stime;
  v->gtime = t->vtime.gtime;
  v->pf_vcpu = (t->flags & PF_VCPU) != 0;
}
static void kd_vtime_op(enum kd_vtime_op op, struct kd_cpu* c, struct kd_task* p, struct kd_vtime* v,
                        const struct kd_ctx* x, uint64_t now) {
  load(c, 0, x);
  load_vtime(&task, p, v);
  kd_sched_clock = now;
  switch (op) {
    case KD_USER_ENTER: vtime_user_enter(&task); break;
    case KD_USER_EXIT: vtime_user_exit(&task); break;
    case KD_GUEST_ENTER: vtime_guest_enter(&task); break;
    case KD_GUEST_EXIT: vtime_guest_exit(&task); break;
    case KD_ACCOUNT_KERNEL: vtime_account_kernel(&task); break;
  }
  store(c, 0);
  store_vtime(&task, p, v);
}
static void kd_vtime_switch(struct kd_cpu* c, struct kd_task* prev, struct kd_vtime* pv, struct kd_task* next,
                            struct kd_vtime* nv, const struct kd_ctx* x, uint64_t now) {
  load(c, 0, x);
  load_vtime(&task, prev, pv);
  load_vtime(&other, next, nv);
  kd_current = &other;
  kd_sched_clock = now;
  vtime_task_switch_generic(&task);
  store(c, 0);
  store_vtime(&task, prev, pv);
  store_vtime(&other, next, nv);
}
static int kd_task_cputime(const struct kd_task* p, const struct kd_vtime* v, uint64_t now, uint64_t* ut,
                           uint64_t* st) {
  load_vtime(&task, p, v);
  kd_sched_clock = now;
  u64 u = 0, s = 0;
  int r = task_cputime(&task, &u, &s);
  *ut = u;
  *st = s;
  return r;
}

seqcount_t psi_seq;
bool psi_disabled;

enum { KD_MAX_GROUPS = 8 };
static int kd_psi(struct kd_psi_group* g, int n, struct kd_psi* s, int curr_pid, int curr_group, int prev_group) {
  static struct psi_group groups[KD_MAX_GROUPS];
  static struct psi_group_cpu gcpu[KD_MAX_GROUPS];
  if (n > KD_MAX_GROUPS) n = KD_MAX_GROUPS;
  memset(groups, 0, sizeof groups);
  memset(gcpu, 0, sizeof gcpu);
  for (int i = 0; i < n; ++i) {
    groups[i].parent = g[i].parent >= 0 ? &groups[g[i].parent] : 0;
    groups[i].enabled = g[i].enabled;
    groups[i].pcpu = &gcpu[i];
    gcpu[i].times[PSI_IRQ_FULL] = g[i].irq_full;
    gcpu[i].state_start = g[i].state_start;
    gcpu[i].seq.sequence = g[i].seq;
  }
  kd_rq.psi_irq_time = s->psi_irq_time;
  psi_seq.sequence = s->psi_seq;
  cpu_irqtime.total = s->irq_total;
  kd_sched_clock = s->now;
  psi_disabled = false;
  task.pid = curr_pid;
  task.psi_group = &groups[curr_group];
  other.pid = 1;
  other.psi_group = prev_group >= 0 ? &groups[prev_group] : 0;
  psi_account_irqtime(&kd_rq, &task, prev_group >= 0 ? &other : 0);
  for (int i = 0; i < n; ++i) {
    g[i].irq_full = gcpu[i].times[PSI_IRQ_FULL];
    g[i].state_start = gcpu[i].state_start;
    g[i].seq = gcpu[i].seq.sequence;
  }
  s->psi_irq_time = kd_rq.psi_irq_time;
  s->psi_seq = psi_seq.sequence;
  return KD_PSI_PERCPU_SEQ;
}

static uint64_t kd_tick_fn(enum kd_tick_fn f, struct kd_cpu* c, struct kd_task* p, const struct kd_ctx* x, uint64_t arg,
                           int iarg) {
  u64 r = 0;
  load(c, p, x);
  switch (f) {
    case KD_ACCOUNT_USER_TIME: account_user_time(&task, arg); break;
    case KD_ACCOUNT_GUEST_TIME: account_guest_time(&task, arg); break;
    case KD_ACCOUNT_SYSTEM_INDEX_TIME: account_system_index_time(&task, arg, (enum cpu_usage_stat)iarg); break;
    case KD_ACCOUNT_SYSTEM_TIME: account_system_time(&task, iarg, arg); break;
    case KD_ACCOUNT_IDLE_TIME: account_idle_time(arg); break;
    case KD_STEAL_ACCOUNT_PROCESS_TIME: r = steal_account_process_time(arg); break;
    case KD_ACCOUNT_OTHER_TIME: r = account_other_time(arg); break;
    case KD_IRQTIME_ACCOUNT_PROCESS_TICK: irqtime_account_process_tick(&task, x->user_tick, iarg); break;
  }
  store(c, p);
  return r;
}

const struct kd_api KD_SYM(api) = {KD_NAME,         kd_mul,          kd_adjust,       kd_tick, kd_idle_ticks,
                                   kd_irq,          kd_vtime_op,     kd_vtime_switch, kd_psi,  kd_tick_fn,
                                   kd_task_cputime, KD_TREE_VERSION, kd_adjust_bare};
