// Workload of the native vtime recording guest (native-record.sh; static, ppc64le). Pinned to
// one CPU, it runs phases with user, system, idle and irq time (spin, getppid loop, short
// sleeps, a forked child, a second thread) and after each phase reads its own CPU times the
// ways user space can: /proc/self/stat, /proc/self/task/TID/stat, getrusage(RUSAGE_SELF /
// RUSAGE_THREAD) and taskstats (TASKSTATS_CMD_GET by tid: ac_utime/ac_stime and the scaled
// pair). Each read is framed by trace_marker writes "kacct read ID KIND TID" / "kacct done ID"
// so that the reducer can place it between the accounting hooks; values are printed at the end
// as "V ID KIND TID A B [C D]" (stat: clock ticks; rusage and taskstats: us). Each round ends
// with a read of /proc/stat's per-CPU lines ("P" lines, see proc_stat()).
//   native-work PHASE_MS
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int marker = -1, nlfd = -1, family = -1;
static long phase_ns;

struct val {
  int id, tid;
  const char* kind;
  unsigned long long v[4];
  int n;
};
static struct val vals[256];
static int nvals;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static int gettid_(void) { return (int)syscall(SYS_gettid); }
static void mark(const char* fmt, int a, const char* k, int t) {
  char b[128];
  int n = snprintf(b, sizeof b, fmt, a, k, t);
  if (write(marker, b, n) < 0) perror("trace_marker");
}

// taskstats over generic netlink (no libnl)
struct nlreq {
  struct nlmsghdr n;
  struct genlmsghdr g;
  char buf[64];
};
static int nl_send(int type, int cmd, int attr, const void* data, int len) {
  struct nlreq r;
  memset(&r, 0, sizeof r);
  r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
  r.n.nlmsg_type = type;
  r.n.nlmsg_flags = NLM_F_REQUEST;
  r.g.cmd = cmd;
  r.g.version = 1;
  struct nlattr* na = (struct nlattr*)((char*)&r + r.n.nlmsg_len);
  na->nla_type = attr;
  na->nla_len = NLA_HDRLEN + len;
  memcpy((char*)na + NLA_HDRLEN, data, len);
  r.n.nlmsg_len += NLA_ALIGN(na->nla_len);
  struct sockaddr_nl a = {.nl_family = AF_NETLINK};
  return sendto(nlfd, &r, r.n.nlmsg_len, 0, (struct sockaddr*)&a, sizeof a) < 0 ? -1 : 0;
}
static struct nlattr* nl_find(char* p, int len, int type) {
  while (len >= NLA_HDRLEN) {
    struct nlattr* na = (struct nlattr*)p;
    if (na->nla_len < NLA_HDRLEN) return NULL;
    if ((na->nla_type & NLA_TYPE_MASK) == type) return na;
    len -= NLA_ALIGN(na->nla_len);
    p += NLA_ALIGN(na->nla_len);
  }
  return NULL;
}
static void nl_open(void) {
  static char buf[4096];
  nlfd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
  struct sockaddr_nl a = {.nl_family = AF_NETLINK};
  if (nlfd < 0 || bind(nlfd, (struct sockaddr*)&a, sizeof a) < 0) return;
  if (nl_send(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
              strlen(TASKSTATS_GENL_NAME) + 1))
    return;
  int n = recv(nlfd, buf, sizeof buf, 0);
  struct nlmsghdr* h = (struct nlmsghdr*)buf;
  if (n < 0 || !NLMSG_OK(h, n) || h->nlmsg_type == NLMSG_ERROR) return;
  struct nlattr* na =
      nl_find((char*)NLMSG_DATA(h) + GENL_HDRLEN, h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), CTRL_ATTR_FAMILY_ID);
  if (na) family = *(unsigned short*)((char*)na + NLA_HDRLEN);
}
static int taskstats(int tid, struct taskstats* t) {
  static __thread char buf[4096];
  if (family < 0 || nl_send(family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, &tid, sizeof tid)) return -1;
  int n = recv(nlfd, buf, sizeof buf, 0);
  struct nlmsghdr* h = (struct nlmsghdr*)buf;
  if (n < 0 || !NLMSG_OK(h, n) || h->nlmsg_type == NLMSG_ERROR) return -1;
  struct nlattr* na =
      nl_find((char*)NLMSG_DATA(h) + GENL_HDRLEN, h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), TASKSTATS_TYPE_AGGR_PID);
  if (!na) return -1;
  na = nl_find((char*)na + NLA_HDRLEN, na->nla_len - NLA_HDRLEN, TASKSTATS_TYPE_STATS);
  if (!na) return -1;
  memset(t, 0, sizeof *t);
  int len = na->nla_len - NLA_HDRLEN;
  memcpy(t, (char*)na + NLA_HDRLEN, len < (int)sizeof *t ? len : (int)sizeof *t);
  return 0;
}

// fields 14 and 15 of a stat file (after the ")" of the comm)
static int stat_file(const char* path, unsigned long long* u, unsigned long long* s) {
  char b[1024];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  int n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return -1;
  b[n] = 0;
  char* p = strrchr(b, ')');
  if (!p) return -1;
  return sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", u, s) == 2 ? 0 : -1;
}

// /proc/stat's per-CPU lines (clock ticks: user nice system idle iowait irq softirq steal), framed
// by "kacct pstat ID" / "kacct pdone ID" markers; printed as "P ID CPU" and the eight columns
struct pval {
  int id, cpu;
  unsigned long long v[8];
};
static struct pval pvals[512];
static int npvals, npvals_from;
static void proc_stat(int id) {
  static __thread char b[16384];
  struct pval got[2];
  int n = 0, len = 0, ng = 0;
  mark("kacct pstat %d %s %d", id, "cpu_stat", gettid_());
  int fd = open("/proc/stat", O_RDONLY);
  while (fd >= 0 && len < (int)sizeof b - 1 && (n = read(fd, b + len, sizeof b - 1 - len)) > 0) len += n;
  if (fd >= 0) close(fd);
  mark("kacct pdone %d %s %d", id, "cpu_stat", gettid_());
  b[len] = 0;
  for (char* l = b; l && *l && ng < 2; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    struct pval p = {.id = id};
    // the first line is the sum ("cpu  ..."): "cpu%d" would take its first column for a CPU number
    if (strncmp(l, "cpu", 3) || l[3] < '0' || l[3] > '9') continue;
    if (sscanf(l, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &p.cpu, &p.v[0], &p.v[1], &p.v[2], &p.v[3], &p.v[4],
               &p.v[5], &p.v[6], &p.v[7]) == 9)
      got[ng++] = p;
  }
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ng && npvals < 512; ++i) pvals[npvals++] = got[i];
  pthread_mutex_unlock(&lock);
}

static int next_id = 1;
static void reads(void) {
  const int tid = gettid_();
  const char* kinds[] = {"task_stat", "thread_stat", "rusage_self", "rusage_thread", "taskstats"};
  for (int k = 0; k < 5; ++k) {
    struct val v = {.tid = tid, .kind = kinds[k]};
    pthread_mutex_lock(&lock);
    v.id = next_id++;
    pthread_mutex_unlock(&lock);
    char path[64];
    struct rusage r;
    struct taskstats t;
    mark("kacct read %d %s %d", v.id, kinds[k], tid);
    int ok = 0;
    switch (k) {
      case 0:
        ok = stat_file("/proc/self/stat", &v.v[0], &v.v[1]);
        v.n = 2;
        break;
      case 1:
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
        ok = stat_file(path, &v.v[0], &v.v[1]);
        v.n = 2;
        break;
      case 2:
      case 3:
        ok = getrusage(k == 2 ? RUSAGE_SELF : RUSAGE_THREAD, &r);
        v.v[0] = r.ru_utime.tv_sec * 1000000ULL + r.ru_utime.tv_usec;
        v.v[1] = r.ru_stime.tv_sec * 1000000ULL + r.ru_stime.tv_usec;
        v.n = 2;
        break;
      case 4:
        ok = taskstats(tid, &t);
        v.v[0] = t.ac_utime, v.v[1] = t.ac_stime, v.v[2] = t.ac_utimescaled, v.v[3] = t.ac_stimescaled;
        v.n = 4;
        break;
    }
    mark("kacct done %d %s %d", v.id, kinds[k], tid);
    if (ok == 0) {
      pthread_mutex_lock(&lock);
      vals[nvals++] = v;
      pthread_mutex_unlock(&lock);
    }
  }
  pthread_mutex_lock(&lock);
  const int id = next_id++;
  pthread_mutex_unlock(&lock);
  proc_stat(id);
}

static void print_pvals(void) {
  for (int i = npvals_from; i < npvals; ++i)
    printf("P %d %d %llu %llu %llu %llu %llu %llu %llu %llu\n", pvals[i].id, pvals[i].cpu, pvals[i].v[0], pvals[i].v[1],
           pvals[i].v[2], pvals[i].v[3], pvals[i].v[4], pvals[i].v[5], pvals[i].v[6], pvals[i].v[7]);
}

static volatile unsigned long sink;
static void spin(long ns) {
  long long end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 1000; ++i) sink += i;
}
static void sys_loop(long ns) {
  long long end = now_ns() + ns;
  while (now_ns() < end)
    for (int i = 0; i < 100; ++i) syscall(SYS_getppid);
}
static void* thread_main(void* arg) {
  (void)arg;
  spin(phase_ns / 2);
  sys_loop(phase_ns / 2);
  reads();
  return NULL;
}

int main(int argc, char** argv) {
  phase_ns = (argc > 1 ? atol(argv[1]) : 40) * 1000000L;
  marker = open("/sys/kernel/tracing/trace_marker", O_WRONLY);
  nl_open();
  setvbuf(stdout, NULL, _IOLBF, 0);
  reads();
  spin(phase_ns);
  reads();
  sys_loop(phase_ns);
  reads();
  for (long long end = now_ns() + phase_ns; now_ns() < end;) usleep(2000);
  reads();
  spin(phase_ns / 2);
  sys_loop(phase_ns / 2);
  reads();
  pid_t c = fork();
  if (c == 0) {
    next_id += 100;        // its own ids
    npvals_from = npvals;  // the values before the fork are the parent's to print
    spin(phase_ns / 2);
    sys_loop(phase_ns / 2);
    reads();
    for (int i = 0; i < nvals; ++i)
      if (vals[i].tid == gettid_())
        printf("V %d %s %d %llu %llu %llu %llu\n", vals[i].id, vals[i].kind, vals[i].tid, vals[i].v[0], vals[i].v[1],
               vals[i].v[2], vals[i].v[3]);
    print_pvals();
    _exit(0);
  }
  waitpid(c, NULL, 0);
  pthread_t th;
  pthread_create(&th, NULL, thread_main, NULL);
  sys_loop(phase_ns / 2);
  pthread_join(th, NULL);
  reads();
  for (int i = 0; i < nvals; ++i)
    printf("V %d %s %d %llu %llu %llu %llu\n", vals[i].id, vals[i].kind, vals[i].tid, vals[i].v[0], vals[i].v[1],
           vals[i].v[2], vals[i].v[3]);
  print_pvals();
  return 0;
}
