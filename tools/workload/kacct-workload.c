/* kacct-workload: a small program whose CPU time the kernel reports and kacct predicts.
 * The work runs in a forked child (its pid is the first output line). Each read is announced by the invalid syscall
 * 100000+K (it fails with ENOSYS) immediately before the syscall that reads; kacct perf-replay finds the marker in the
 * perf trace and predicts the value at the read syscall's exit. Output: JSON lines on stdout (docs/perf.md).
 *
 *   kacct-workload MODE [-t SECONDS] [-n READS] [-k KINDS] [-c CPU]
 *   MODE: spin | syscall | readloop | pagefault | yield | sleep | mixed | threads | forks | procs | migrate
 *     threads: mixed work while short-lived threads are created and exit beside it (one round's thread
 *              runs while the next is created; the group's reads include the dead threads);
 *     forks:   mixed work with a child forked, run briefly and reaped every round (fork/exit churn);
 *     procs:   three more processes doing mixed work on the same CPU for the whole run;
 *     migrate: mixed work, moved between CPU 0 (housekeeping) and -c CPU every round, so it runs and
 *              reads on both (trace both CPUs).
 *   KINDS: comma list of proc_stat,task_stat,rusage_self,rusage_thread,process_cputime,taskstats
 *          (default: all but taskstats)
 *   -c CPU: pin the process (and so the measured child and its threads) to CPU, e.g. a nohz_full one
 * taskstats: the genetlink TASKSTATS_CMD_GET reply for the main thread (ac_utime/ac_stime, us);
 * the kernel builds the reply inside the sendmsg() that follows the marker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARKER_BASE 100000

enum kind { PROC_STAT, TASK_STAT, RU_SELF, RU_THREAD, PROCESS_CPUTIME, TASKSTATS, NKINDS };
static const char* kind_name[NKINDS] = {"proc_stat",     "task_stat",       "rusage_self",
                                        "rusage_thread", "process_cputime", "taskstats"};

static int kinds[NKINDS], nkinds;
static int proc_fd = -1, task_fd = -1, nl_fd = -1, ts_family = -1;
static long main_tid;
static volatile unsigned long sink;
static volatile int stop_threads;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* utime and stime (fields 14 and 15) of a /proc stat line; the comm may contain spaces. */
static int stat_times(const char* buf, unsigned long long* ut, unsigned long long* st) {
  const char* p = strrchr(buf, ')');
  int field = 2;
  if (!p) return -1;
  for (p++; *p && field < 14; p++)
    if (*p == ' ') field++;
  return sscanf(p, " %llu %llu", ut, st) == 2 ? 0 : -1;
}

/* Generic netlink, by hand (no libnl): one request, one reply. */
struct nlreq {
  struct nlmsghdr n;
  struct genlmsghdr g;
  char buf[256];
};
static void nl_attr(struct nlreq* r, unsigned short type, const void* data, unsigned short len) {
  struct nlattr* a = (struct nlattr*)((char*)r + NLMSG_ALIGN(r->n.nlmsg_len));
  a->nla_type = type;
  a->nla_len = (unsigned short)(NLA_HDRLEN + len);
  memcpy((char*)a + NLA_HDRLEN, data, len);
  r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}
static void nl_request(struct nlreq* r, unsigned short family, unsigned char cmd) {
  memset(r, 0, sizeof *r);
  r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
  r->n.nlmsg_type = family;
  r->n.nlmsg_flags = NLM_F_REQUEST;
  r->n.nlmsg_pid = (unsigned)getpid();
  r->g.cmd = cmd;
  r->g.version = 1;
}
static int nl_send(const struct nlreq* r) {
  struct sockaddr_nl to = {.nl_family = AF_NETLINK};
  return sendto(nl_fd, r, r->n.nlmsg_len, 0, (struct sockaddr*)&to, sizeof to) < 0 ? -1 : 0;
}
/* Walks the attributes of a reply; returns the payload of `want` (nested ones included). */
static const void* nl_find(const char* p, int len, unsigned short want, int* plen) {
  while (len >= (int)NLA_HDRLEN) {
    const struct nlattr* a = (const struct nlattr*)p;
    if (a->nla_len < NLA_HDRLEN || a->nla_len > len) return NULL;
    const unsigned short type = a->nla_type & NLA_TYPE_MASK;
    if (type == want) {
      *plen = a->nla_len - (int)NLA_HDRLEN;
      return p + NLA_HDRLEN;
    }
    if (type == TASKSTATS_TYPE_AGGR_PID || type == TASKSTATS_TYPE_AGGR_TGID) {
      const void* in = nl_find(p + NLA_HDRLEN, a->nla_len - (int)NLA_HDRLEN, want, plen);
      if (in) return in;
    }
    p += NLA_ALIGN(a->nla_len);
    len -= NLA_ALIGN(a->nla_len);
  }
  return NULL;
}
static int nl_reply(char* buf, int size, unsigned short want, const void** out, int* plen) {
  const int n = (int)recv(nl_fd, buf, (size_t)size, 0);
  const struct nlmsghdr* h = (const struct nlmsghdr*)buf;
  if (n < (int)NLMSG_LENGTH(GENL_HDRLEN) || !NLMSG_OK(h, (unsigned)n) || h->nlmsg_type == NLMSG_ERROR) return -1;
  *out =
      nl_find((const char*)NLMSG_DATA(h) + GENL_HDRLEN, (int)h->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN), want, plen);
  return *out ? 0 : -1;
}
static int taskstats_open(void) {
  struct nlreq r;
  char buf[4096];
  const void* id;
  int len = 0;
  nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
  if (nl_fd < 0) return -1;
  nl_request(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
  nl_attr(&r, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof TASKSTATS_GENL_NAME);
  if (nl_send(&r) || nl_reply(buf, sizeof buf, CTRL_ATTR_FAMILY_ID, &id, &len) || len < 2) return -1;
  ts_family = *(const unsigned short*)id;
  return 0;
}

static void do_read(unsigned marker, enum kind k) {
  char buf[1024];
  unsigned long long ut = 0, st = 0;
  ssize_t n = 0;
  struct rusage ru;
  struct timespec ts;
  struct nlreq req;
  char reply[4096];
  const void* stats = NULL;
  struct taskstats tst;
  int rc = 0, slen = 0;
  memset(&tst, 0, sizeof tst);
  if (k == TASKSTATS) { /* built before the marker: the read is the sendto() alone */
    const unsigned pid = (unsigned)main_tid;
    nl_request(&req, (unsigned short)ts_family, TASKSTATS_CMD_GET);
    nl_attr(&req, TASKSTATS_CMD_ATTR_PID, &pid, sizeof pid);
  }
  syscall(MARKER_BASE + marker); /* the marker: ENOSYS */
  switch (k) {                   /* the very next syscall is the read */
    case PROC_STAT: n = pread(proc_fd, buf, sizeof buf - 1, 0); break;
    case TASK_STAT: n = pread(task_fd, buf, sizeof buf - 1, 0); break;
    case RU_SELF: rc = getrusage(RUSAGE_SELF, &ru); break;
    case RU_THREAD: rc = getrusage(RUSAGE_THREAD, &ru); break;
    case PROCESS_CPUTIME: rc = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); break;
    case TASKSTATS:
      rc = nl_send(&req);
      if (!rc) rc = nl_reply(reply, sizeof reply, TASKSTATS_TYPE_STATS, &stats, &slen);
      /* The kernel's struct may be older (shorter) or newer than this header's; the prefix is stable. */
      if (!rc) memcpy(&tst, stats, (size_t)slen < sizeof tst ? (size_t)slen : sizeof tst);
      break;
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
  } else if (k == TASKSTATS) {
    printf("\"utime\": %llu, \"stime\": %llu, \"utimescaled\": %llu, \"stimescaled\": %llu, \"unit\": \"us\"}\n",
           (unsigned long long)tst.ac_utime, (unsigned long long)tst.ac_stime, (unsigned long long)tst.ac_utimescaled,
           (unsigned long long)tst.ac_stimescaled);
  } else if (k == PROCESS_CPUTIME) {
    printf("\"value\": %llu, \"unit\": \"ns\"}\n",
           (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
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
  char* p = mmap(NULL, (size_t)pages * (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(1);
  for (unsigned i = 0; i < pages; i++) p[(size_t)i * (size_t)psz] = 1;
  munmap(p, (size_t)pages * (size_t)psz);
}
static void* worker(void* arg) {
  (void)arg;
  spin(20000);
  syscalls(50);
  return NULL;
}
static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}
static void mixed_round(unsigned round) {
  switch (round % 3) {
    case 0: spin(50000); break;
    case 1: syscalls(100); break;
    default: {
      struct timespec d = {0, 500000};
      nanosleep(&d, NULL);
    }
  }
}
static void* yielder(void* arg) {
  (void)arg;
  while (!stop_threads) sched_yield();
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  double seconds = 1.0;
  unsigned nreads = 10;
  const char* klist = "proc_stat,task_stat,rusage_self,rusage_thread,process_cputime";
  int opt, cpu = -1;
  optind = 2;
  while ((opt = getopt(argc, argv, "t:n:k:c:")) != -1) {
    if (opt == 't')
      seconds = atof(optarg);
    else if (opt == 'c')
      cpu = atoi(optarg);
    else if (opt == 'n')
      nreads = (unsigned)atoi(optarg);
    else if (opt == 'k')
      klist = optarg;
    else
      return 2;
  }
  static const char* modes[] = {"spin",  "syscall", "readloop", "pagefault", "yield",  "sleep",
                                "mixed", "threads", "forks",    "procs",     "migrate"};
  int m = -1;
  for (int i = 0; i < 11; i++)
    if (!strcmp(mode, modes[i])) m = i;
  if (m < 0 || seconds <= 0 || nreads == 0) {
    fprintf(stderr,
            "usage: kacct-workload spin|syscall|readloop|pagefault|yield|sleep|mixed|threads|forks|procs|migrate "
            "[-t SECONDS] [-n READS] [-k KINDS] [-c CPU]\n");
    return 2;
  }
  char copy[256];
  snprintf(copy, sizeof copy, "%s", klist);
  for (char* tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
    int found = 0;
    for (int k = 0; k < NKINDS; k++)
      if (!strcmp(tok, kind_name[k])) kinds[nkinds++] = k, found = 1;
    if (!found || nkinds > NKINDS) {
      fprintf(stderr, "kacct-workload: unknown read kind '%s'\n", tok);
      return 2;
    }
  }
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
      fprintf(stderr, "kacct-workload: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
      return 1;
    }
  }
  for (int k = 0; k < nkinds; k++)
    if (kinds[k] == TASKSTATS && ts_family < 0 && taskstats_open()) {
      fprintf(stderr, "kacct-workload: taskstats (genetlink) unavailable: %s\n", strerror(errno));
      return 1;
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
  pid_t others[3] = {0, 0, 0};
  if (m == 9) /* procs: siblings on the same CPU until the end */
    for (int i = 0; i < 3; i++)
      if ((others[i] = fork()) == 0) {
        for (unsigned round = (unsigned)i;; round++) mixed_round(round);
      }
  if (m == 10 && cpu < 0) {
    fprintf(stderr, "kacct-workload: migrate needs -c CPU\n");
    return 2;
  }
  int have_thread = 0;
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
        case 4:
          sched_yield();
          spin(2000);
          break;
        case 5: {
          struct timespec d = {0, 2000000};
          nanosleep(&d, NULL);
          spin(20000);
          break;
        }
        case 7: /* threads: the previous round's thread still runs while this one's is created */
          if (have_thread) pthread_join(th, NULL);
          have_thread = !pthread_create(&th, NULL, worker, NULL);
          mixed_round(round++);
          break;
        case 8: { /* forks */
          const pid_t c = fork();
          if (c == 0) {
            spin(20000);
            syscalls(50);
            _exit(0);
          }
          mixed_round(round++);
          if (c > 0) waitpid(c, NULL, 0);
          break;
        }
        case 9: mixed_round(round++); break;
        case 10: /* migrate: CPU 0 and -c CPU in turn, a few rounds each */
          if (round % 4 == 0) pin(round % 8 ? 0 : cpu);
          mixed_round(round++);
          break;
        default: break;
      }
    }
    do_read(marker++, (enum kind)kinds[r % (unsigned)nkinds]);
  }
  if (have_thread) pthread_join(th, NULL);
  for (int i = 0; i < 3; i++)
    if (others[i] > 0) {
      kill(others[i], SIGKILL);
      waitpid(others[i], NULL, 0);
    }
  if (m == 4) {
    stop_threads = 1;
    pthread_join(th, NULL);
  }
  fflush(stdout);
  return 0;
}
