/* kacct-workload: a small program whose CPU time the kernel reports and kacct predicts.
 * The work runs in a forked child (its pid is the first output line). Each read is announced by the invalid syscall 100000+K (it fails with ENOSYS) immediately
 * before the syscall that reads; kacct perf-replay finds the marker in the perf trace and
 * predicts the value at the read syscall's exit. Output: JSON lines on stdout (docs/perf.md).
 *
 *   kacct-workload MODE [-t SECONDS] [-n READS] [-k KINDS]
 *   MODE: spin | syscall | readloop | pagefault | yield | sleep | mixed
 *   KINDS: comma list of proc_stat,task_stat,rusage_self,rusage_thread,process_cputime (default all)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARKER_BASE 100000

enum kind { PROC_STAT, TASK_STAT, RU_SELF, RU_THREAD, PROCESS_CPUTIME, NKINDS };
static const char *kind_name[NKINDS] = {"proc_stat", "task_stat", "rusage_self", "rusage_thread", "process_cputime"};

static int kinds[NKINDS], nkinds;
static int proc_fd = -1, task_fd = -1;
static long main_tid;
static volatile unsigned long sink;
static volatile int stop_threads;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* utime and stime (fields 14 and 15) of a /proc stat line; the comm may contain spaces. */
static int stat_times(const char *buf, unsigned long long *ut, unsigned long long *st) {
  const char *p = strrchr(buf, ')');
  int field = 2;
  if (!p) return -1;
  for (p++; *p && field < 14; p++)
    if (*p == ' ') field++;
  return sscanf(p, " %llu %llu", ut, st) == 2 ? 0 : -1;
}

static void do_read(unsigned marker, enum kind k) {
  char buf[1024];
  unsigned long long ut = 0, st = 0;
  ssize_t n = 0;
  struct rusage ru;
  struct timespec ts;
  int rc = 0;
  syscall(MARKER_BASE + marker); /* the marker: ENOSYS */
  switch (k) {                   /* the very next syscall is the read */
    case PROC_STAT: n = pread(proc_fd, buf, sizeof buf - 1, 0); break;
    case TASK_STAT: n = pread(task_fd, buf, sizeof buf - 1, 0); break;
    case RU_SELF: rc = getrusage(RUSAGE_SELF, &ru); break;
    case RU_THREAD: rc = getrusage(RUSAGE_THREAD, &ru); break;
    case PROCESS_CPUTIME: rc = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); break;
    default: break;
  }
  if (n < 0 || rc != 0) {
    fprintf(stderr, "kacct-workload: read %s failed: %s\n", kind_name[k], strerror(errno));
    exit(1);
  }
  printf("{\"marker\": %u, \"kind\": \"%s\", \"tid\": %ld, ", marker, kind_name[k], main_tid);
  if (k == PROC_STAT || k == TASK_STAT) {
    buf[n] = 0;
    if (stat_times(buf, &ut, &st)) {
      fprintf(stderr, "kacct-workload: cannot parse stat line\n");
      exit(1);
    }
    printf("\"utime\": %llu, \"stime\": %llu, \"unit\": \"clock_ticks\"}\n", ut, st);
  } else if (k == PROCESS_CPUTIME) {
    printf("\"value\": %llu, \"unit\": \"ns\"}\n", (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
  } else {
    printf("\"utime\": %llu, \"stime\": %llu, \"unit\": \"us\"}\n",
           (unsigned long long)ru.ru_utime.tv_sec * 1000000ull + (unsigned long long)ru.ru_utime.tv_usec,
           (unsigned long long)ru.ru_stime.tv_sec * 1000000ull + (unsigned long long)ru.ru_stime.tv_usec);
  }
}

static void spin(unsigned iters) {
  for (unsigned i = 0; i < iters; i++) sink += i * 7u;
}
static void syscalls(unsigned n) {
  for (unsigned i = 0; i < n; i++) syscall(SYS_getppid);
}
static void readloop(unsigned n) {
  static int fd = -1;
  char buf[4096];
  if (fd < 0) fd = open("/dev/zero", O_RDONLY);
  for (unsigned i = 0; i < n; i++)
    if (read(fd, buf, sizeof buf) < 0) exit(1);
}
static void pagefaults(unsigned pages) {
  long psz = sysconf(_SC_PAGESIZE);
  char *p = mmap(NULL, (size_t)pages * (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(1);
  for (unsigned i = 0; i < pages; i++) p[(size_t)i * (size_t)psz] = 1;
  munmap(p, (size_t)pages * (size_t)psz);
}
static void *yielder(void *arg) {
  (void)arg;
  while (!stop_threads) sched_yield();
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  double seconds = 1.0;
  unsigned nreads = 10;
  const char *klist = "proc_stat,task_stat,rusage_self,rusage_thread,process_cputime";
  int opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "t:n:k:")) != -1) {
    if (opt == 't') seconds = atof(optarg);
    else if (opt == 'n') nreads = (unsigned)atoi(optarg);
    else if (opt == 'k') klist = optarg;
    else return 2;
  }
  static const char *modes[] = {"spin", "syscall", "readloop", "pagefault", "yield", "sleep", "mixed"};
  int m = -1;
  for (int i = 0; i < 7; i++)
    if (!strcmp(mode, modes[i])) m = i;
  if (m < 0 || seconds <= 0 || nreads == 0) {
    fprintf(stderr, "usage: kacct-workload spin|syscall|readloop|pagefault|yield|sleep|mixed [-t SECONDS] [-n READS] [-k KINDS]\n");
    return 2;
  }
  char copy[256];
  snprintf(copy, sizeof copy, "%s", klist);
  for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
    int found = 0;
    for (int k = 0; k < NKINDS; k++)
      if (!strcmp(tok, kind_name[k])) kinds[nkinds++] = k, found = 1;
    if (!found || nkinds > NKINDS) {
      fprintf(stderr, "kacct-workload: unknown read kind '%s'\n", tok);
      return 2;
    }
  }
  /* The measured process is a child forked here, so that a trace started before this program
   * sees its whole life: its counters and prev_cputime start at zero inside the trace. */
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) {
    int status = 0;
    if (waitpid(child, &status, 0) != child) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  main_tid = syscall(SYS_gettid);
  char path[64];
  proc_fd = open("/proc/self/stat", O_RDONLY);
  snprintf(path, sizeof path, "/proc/self/task/%ld/stat", main_tid);
  task_fd = open(path, O_RDONLY);
  if (proc_fd < 0 || task_fd < 0) return 1;
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  printf("{\"pid\": %ld, \"mode\": \"%s\", \"seconds\": %g, \"reads\": %u}\n", (long)getpid(), mode, seconds, nreads);

  pthread_t th;
  if (m == 4) { /* yield: a second thread on the same CPU */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    sched_setaffinity(0, sizeof set, &set);
    pthread_create(&th, NULL, yielder, NULL);
  }
  const uint64_t t0 = now_ns(), total = (uint64_t)(seconds * 1e9), slice = total / nreads;
  unsigned marker = 1;
  for (unsigned r = 0; r < nreads; r++) {
    const uint64_t until = t0 + slice * (r + 1);
    unsigned round = 0;
    while (now_ns() < until) {
      switch (m == 6 ? (int)(round++ % 5) : m) {
        case 0: spin(200000); break;
        case 1: syscalls(500); break;
        case 2: readloop(200); break;
        case 3: pagefaults(64); break;
        case 4: sched_yield(); spin(2000); break;
        case 5: {
          struct timespec d = {0, 2000000};
          nanosleep(&d, NULL);
          spin(20000);
          break;
        }
        default: break;
      }
    }
    do_read(marker++, (enum kind)kinds[r % (unsigned)nkinds]);
  }
  if (m == 4) {
    stop_threads = 1;
    pthread_join(th, NULL);
  }
  fflush(stdout);
  return 0;
}
