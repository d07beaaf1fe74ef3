// Workload of the lazy-TLB recording guest (lazytlb-init.sh runs it from the init shell with
// the probes on): every way a task gains or drops an mm reference that a small guest reaches
// without drivers. CPUs idle between phases, so they hold mms lazily.
//   1. spin on CPU 0, sleep, spin on CPU 1 (migration by affinity), sleep
//   2. three threads (CLONE_VM) that move between the CPUs, sleep and exit; one of them exits
//      while the others still run
//   3. three forked children (new mms) that spin on alternating CPUs and exit; the parent waits
//   4. a child that execs this program ("child" argument: spin, sleep, exit)
//   5. a vfork()ed child that execs
//   6. two threads still running when the process exits (exit_group kills them)
// kthread_use_mm() has no user reachable here (docs/conformance.md, lazy-TLB section).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_cpu(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}
static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
static void* mover(void* arg) {
  long id = (long)arg;
  for (int i = 0; i < 4; ++i) {
    on_cpu((int)((id + i) & 1));
    spin_us(1500);
    usleep(2000);
  }
  return NULL;
}
static void* forever(void* arg) {
  on_cpu((int)(long)arg);
  for (;;) {
    spin_us(1000);
    usleep(1000);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    spin_us(2000);
    usleep(3000);
    return 0;
  }
  // 1
  on_cpu(0);
  spin_us(2000);
  usleep(5000);
  on_cpu(1);
  spin_us(2000);
  usleep(5000);
  // 2
  pthread_t t[3];
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, mover, (void*)i);
  for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
  usleep(5000);
  // 3
  for (int i = 0; i < 3; ++i) {
    pid_t p = fork();
    if (p == 0) {
      on_cpu(i & 1);
      spin_us(2000);
      usleep(2000);
      on_cpu((i + 1) & 1);
      spin_us(1000);
      _exit(0);
    }
  }
  while (wait(NULL) > 0) {}
  usleep(5000);
  // 4
  pid_t p = fork();
  if (p == 0) {
    execl("/proc/self/exe", argv[0], "child", (char*)NULL);
    _exit(127);
  }
  waitpid(p, NULL, 0);
  usleep(5000);
  // 5
  p = vfork();
  if (p == 0) {
    execl("/proc/self/exe", argv[0], "child", (char*)NULL);
    _exit(127);
  }
  waitpid(p, NULL, 0);
  usleep(5000);
  // 6
  pthread_t f[2];
  for (long i = 0; i < 2; ++i) pthread_create(&f[i], NULL, forever, (void*)i);
  usleep(8000);
  return 0;
}
