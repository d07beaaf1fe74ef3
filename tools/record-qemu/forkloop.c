/* Fork-loop probe for the gen vtime fork-residue finding (kacct docs/findings). Runs on CPU C
 * for S seconds: the parent spins X us in user space, forks; the child spins Y us and exits;
 * the parent waits. Prints the growth of /proc/stat's cpuC fields against wall time.
 * mode fork | nofork (the parent spins X + Y itself and makes one getppid instead of fork) |
 * copy | nocopy (see below: the same work, the residue copied or flushed at fork). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static void spin(long long ns) {
  long long end = now() + ns;
  while (now() < end) {}
}
static long long cpu_ticks(int cpu, long long f[8]) {
  char want[16], line[512];
  snprintf(want, sizeof want, "cpu%d ", cpu);
  FILE* p = fopen("/proc/stat", "r");
  long long sum = 0;
  while (fgets(line, sizeof line, p))
    if (!strncmp(line, want, strlen(want))) {
      sscanf(line + strlen(want), "%lld %lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5],
             &f[6], &f[7]);
      for (int i = 0; i < 8; i++) sum += f[i];
    }
  fclose(p);
  return sum;
}
int main(int argc, char** argv) {
  const char* mode = argv[1];
  int cpu = atoi(argv[2]);
  double secs = atof(argv[3]);
  long long x = atoll(argv[4]) * 1000, y = atoll(argv[5]) * 1000;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
  long long a[8], b[8];
  long long t0 = now(), s0 = cpu_ticks(cpu, a), n = 0;
  while (now() - t0 < (long long)(secs * 1e9)) {
    if (!strcmp(mode, "copy") || !strcmp(mode, "nocopy")) {
      /* the same work in both: a long spin flushes the user residue at the next kernel entry
       * (>= TICK_NSEC), a short one leaves it below TICK_NSEC. copy: fork right after the
       * short spin (the residue is copied); nocopy: fork right after the long one (flushed). */
      const int copy = !strcmp(mode, "copy");
      spin(copy ? y : x);
      getppid();
      spin(copy ? x : y);
      pid_t c = fork();
      if (c == 0) {
        spin(y);
        _exit(0);
      }
      waitpid(c, 0, 0);
      n++;
      continue;
    }
    spin(x);
    if (!strcmp(mode, "fork")) {
      pid_t c = fork();
      if (c == 0) {
        spin(y);
        _exit(0);
      }
      waitpid(c, 0, 0);
    } else {
      getppid();
      spin(y);
    }
    n++;
  }
  long long t1 = now(), s1 = cpu_ticks(cpu, b);
  const long long hz = sysconf(_SC_CLK_TCK);
  printf(
      "RESULT mode=%s cpu=%d iterations=%lld wall_ms=%lld cpu%d_sum_ms=%lld (user %lld system %lld idle %lld "
      "irq %lld softirq %lld steal %lld) ratio=%.4f\n",
      mode, cpu, n, (t1 - t0) / 1000000, cpu, (s1 - s0) * 1000 / hz, (b[0] - a[0]) * 1000 / hz,
      (b[2] - a[2]) * 1000 / hz, (b[3] - a[3]) * 1000 / hz, (b[5] - a[5]) * 1000 / hz, (b[6] - a[6]) * 1000 / hz,
      (b[7] - a[7]) * 1000 / hz, (double)(s1 - s0) * 1000 / hz / ((t1 - t0) / 1e6));
  return 0;
}
