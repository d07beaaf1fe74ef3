/* Example of a C test suite (LTP / kselftest style, TAP output) using kacct as an oracle.
 *
 * A small workload on one CPU (x86-64, 6.6, tick accounting, HZ=250): a task spins in user
 * space, makes system calls, some of which are still running when the tick fires, then reads
 * /proc/self/stat, getrusage(RUSAGE_SELF) and /proc/self/task/TID/stat. The expected values are
 * computed HERE, independently of kacct, from the trace semantics: a tick charges TICK_NSEC to
 * utime if the task was in user mode when it fired, else to stime; sum_exec_runtime is the time
 * the task was current; the reads scale the sampled split to sum_exec_runtime
 * (cputime_adjust, written out below) and report clock ticks (USER_HZ=100) or microseconds.
 * Then the error paths: malformed text, an illegal config, an impossible event order.
 * Exit status: 0 all passed, 1 a check failed (kselftest's KSFT_PASS / KSFT_FAIL). */
#include <kacct/kacct.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTESTS 27
static int test_no, failures;

static void ok(int cond, const char* what) {
  ++test_no;
  printf("%s %d - %s\n", cond ? "ok" : "not ok", test_no, what);
  if (!cond) ++failures;
}
static void diag_u64(const char* what, uint64_t got, uint64_t want) {
  if (got != want) printf("# %s: got %" PRIu64 ", expected %" PRIu64 "\n", what, got, want);
}

/* ---- the workload, as an event list (also rendered to trace text) ---- */
enum { TID = 100, NTICKS = 25 };
static const uint64_t kTickNs = 4000000; /* TICK_NSEC at HZ=250 */
static const uint64_t kStartNs = 1000000;

static kacct_event events[400];
static size_t nevents;

static void add(uint64_t ts, kacct_kind kind, uint64_t a, uint64_t b) {
  kacct_event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.cpu = 0;
  e.kind = kind;
  e.a = a;
  e.b = b;
  events[nevents++] = e;
}
static void add_read(uint64_t ts, kacct_read_kind k, uint64_t id) {
  add(ts, KACCT_EV_READ, 0, 0);
  events[nevents - 1].read_kind = k;
  events[nevents - 1].read_id = id;
}

/* Does tick k (1-based) find the task in the kernel? */
static int kernel_at_tick(int k) { return k % 3 == 0 || k % 7 == 0; }

static uint64_t want_utime, want_stime, read_ts[4];

static void build_workload(void) {
  int k;
  add(kStartNs, KACCT_EV_SWITCH, 0, TID);            /* idle -> task (starts in kernel mode) */
  add(kStartNs + 2000, KACCT_EV_SYSCALL_EXIT, 0, 0); /* ... and returns to user space */
  for (k = 1; k <= NTICKS; ++k) {
    const uint64_t t = kTickNs * (uint64_t)k;
    /* a short syscall that ends before the tick: invisible to tick sampling */
    add(t - 2500000, KACCT_EV_SYSCALL_ENTER, 39, 0);
    add(t - 2400000, KACCT_EV_SYSCALL_EXIT, 0, 0);
    if (kernel_at_tick(k)) { /* a syscall still running when the tick fires */
      add(t - 1500000, KACCT_EV_SYSCALL_ENTER, 0, 0);
      add(t, KACCT_EV_TICK, 0, 0);
      add(t + 500000, KACCT_EV_SYSCALL_EXIT, 0, 0);
      want_stime += kTickNs;
    } else {
      add(t, KACCT_EV_TICK, 0, 0);
      want_utime += kTickNs;
    }
  }
  /* the reads, each inside its own system call, after the last tick */
  read_ts[1] = kTickNs * NTICKS + 1000000;
  read_ts[2] = read_ts[1] + 10000;
  read_ts[3] = read_ts[1] + 20000;
  add(read_ts[1] - 1000, KACCT_EV_SYSCALL_ENTER, 0, 0);
  add_read(read_ts[1], KACCT_READ_PROC_STAT, 1);
  add(read_ts[1] + 1000, KACCT_EV_SYSCALL_EXIT, 0, 0);
  add(read_ts[2] - 1000, KACCT_EV_SYSCALL_ENTER, 98, 0);
  add_read(read_ts[2], KACCT_READ_RUSAGE_SELF, 2);
  add(read_ts[2] + 1000, KACCT_EV_SYSCALL_EXIT, 0, 0);
  add(read_ts[3] - 1000, KACCT_EV_SYSCALL_ENTER, 0, 0);
  add_read(read_ts[3], KACCT_READ_TASK_STAT, 3);
  add(read_ts[3] + 1000, KACCT_EV_SYSCALL_EXIT, 0, 0);
}

static const char kHeader[] =
    "kacct-trace 1\n"
    "cpu x86-64\n"
    "ncpus 1\n"
    "clock ns\n"
    "task 100 pid=100 comm=worker nice=0 mm=1\n"
    "events\n";

/* Renders the event list in the trace text format (docs/trace-format.md). */
static char* render(void) {
  size_t cap = 64 * (nevents + 8), len = 0, i;
  char* s = malloc(cap);
  if (!s) return NULL;
  len += (size_t)snprintf(s, cap, "%s", kHeader);
  for (i = 0; i < nevents; ++i) {
    const kacct_event* e = &events[i];
    static const char* names[] = {"syscall_enter", "syscall_exit"};
    static const char* reads[] = {"proc_stat", "task_stat", "rusage_self"};
    char* p = s + len;
    size_t room = cap - len;
    switch (e->kind) {
      case KACCT_EV_SWITCH:
        len += (size_t)snprintf(p, room, "%" PRIu64 " 0 switch prev=%" PRIu64 " next=%" PRIu64 "\n", e->ts, e->a, e->b);
        break;
      case KACCT_EV_SYSCALL_ENTER:
        len += (size_t)snprintf(p, room, "%" PRIu64 " 0 %s nr=%" PRIu64 "\n", e->ts, names[0], e->a);
        break;
      case KACCT_EV_SYSCALL_EXIT: len += (size_t)snprintf(p, room, "%" PRIu64 " 0 %s\n", e->ts, names[1]); break;
      case KACCT_EV_TICK: len += (size_t)snprintf(p, room, "%" PRIu64 " 0 tick\n", e->ts); break;
      case KACCT_EV_READ:
        len += (size_t)snprintf(p, room, "%" PRIu64 " 0 read kind=%s id=%" PRIu64 "\n", e->ts, reads[e->read_kind],
                                e->read_id);
        break;
      default: free(s); return NULL;
    }
  }
  return s;
}

/* cputime_adjust() as this test understands it: split rtime in the ratio of the sampled
 * stime:utime, never letting either reported value go below what was reported before. */
struct prev {
  uint64_t utime, stime;
};
static void adjust(uint64_t utime, uint64_t stime, uint64_t rtime, struct prev* prev, uint64_t* ut, uint64_t* st) {
  if (prev->stime + prev->utime < rtime) {
    if (stime == 0) {
      utime = rtime;
    } else if (utime == 0) {
      stime = rtime;
    } else {
      stime = stime * rtime / (stime + utime); /* small values here: no overflow */
    }
    if (stime < prev->stime) stime = prev->stime;
    utime = rtime - stime;
    if (utime < prev->utime) {
      utime = prev->utime;
      stime = rtime - utime;
    }
    prev->utime = utime;
    prev->stime = stime;
  }
  *ut = prev->utime;
  *st = prev->stime;
}

static int contains(const char* s, const char* part) { return s && strstr(s, part) != NULL; }

static int same_read(const kacct_read* x, const kacct_read* y) {
  return x->id == y->id && x->utime_ns == y->utime_ns && x->stime_ns == y->stime_ns && x->rtime_ns == y->rtime_ns &&
         x->utime_ticks == y->utime_ticks && x->stime_ticks == y->stime_ticks;
}

int main(void) {
  kacct_model *m = NULL, *chunked = NULL, *structs = NULL, *bad = NULL;
  kacct_read rd, rd2;
  kacct_task_times tt;
  kacct_cpustat cs;
  kacct_verdict v;
  struct prev group = {0, 0}, thread = {0, 0};
  uint64_t u, s;
  size_t i, nreads = 0;
  int found = 0;
  char* text;
  kacct_status st;

  printf("TAP version 13\n1..%d\n", NTESTS);
  build_workload();
  text = render();
  if (!text) {
    printf("Bail out! cannot render the workload\n");
    return 1;
  }

  /* the library and the table */
  ok(kacct_api_version() == KACCT_API_VERSION, "library API version matches the header");
  for (i = 0; i < kacct_cpu_count(); ++i) found |= strcmp(kacct_cpu_name(i), "x86-64") == 0;
  ok(found && kacct_cpu_name(kacct_cpu_count()) == NULL, "kacct_cpu_name lists x86-64, NULL past the end");
  for (found = 0, i = 0; i < kacct_config_count(); ++i) found |= strcmp(kacct_config_name(i), "6.6-tick-hz250") == 0;
  ok(found, "kacct_config_name lists 6.6-tick-hz250");

  /* the whole trace as text */
  st = kacct_open("x86-64", "6.6-tick-hz250", &m);
  ok(st == KACCT_OK && m != NULL, "open x86-64 6.6-tick-hz250");
  if (!m) {
    printf("Bail out! %s\n", kacct_last_error());
    return 1;
  }
  st = kacct_feed_text(m, text, strlen(text));
  ok(st == KACCT_OK, "feed the workload as text");
  if (st != KACCT_OK) printf("# %s\n", kacct_error_message(m));

  /* raw tick-sampled task times */
  st = kacct_get_task_times(m, TID, &tt);
  ok(st == KACCT_OK && tt.utime == want_utime && tt.stime == want_stime,
     "tick sampling: utime/stime = ticks in user/kernel mode");
  diag_u64("utime", tt.utime, want_utime);
  diag_u64("stime", tt.stime, want_stime);
  /* se.sum_exec_runtime is brought up to date lazily (update_curr: at ticks, switches and the
   * reads that call task_sched_runtime(): the group reads, not /proc/PID/task/TID/stat), so at
   * the end of the trace it stands at the getrusage(RUSAGE_SELF) read. */
  ok(tt.sum_exec_runtime == read_ts[2] - kStartNs, "sum_exec_runtime = time current up to the last updating read");
  diag_u64("sum_exec_runtime", tt.sum_exec_runtime, read_ts[2] - kStartNs);
  st = kacct_get_cpustat(m, 0, &cs);
  ok(st == KACCT_OK && cs.ns[KACCT_CPUTIME_USER] == want_utime && cs.ns[KACCT_CPUTIME_SYSTEM] == want_stime &&
         cs.ticks[KACCT_CPUTIME_USER] == want_utime / 10000000 && cs.ns[KACCT_CPUTIME_IDLE] == 0,
     "/proc/stat cpu0: user and system columns");

  /* the reads: /proc/PID/stat (group), getrusage(RUSAGE_SELF) (group, same prev_cputime),
   * /proc/PID/task/TID/stat (the thread's own prev_cputime) */
  kacct_read_count(m, &nreads);
  ok(nreads == 3, "three read results");
  adjust(want_utime, want_stime, read_ts[1] - kStartNs, &group, &u, &s);
  st = kacct_find_read(m, 1, &rd);
  ok(st == KACCT_OK && rd.kind == KACCT_READ_PROC_STAT && rd.utime_ns == u && rd.stime_ns == s &&
         rd.line == rd.event_index + 7,
     "/proc/PID/stat: utime/stime after cputime_adjust (ns)");
  diag_u64("proc_stat utime ns", rd.utime_ns, u);
  diag_u64("proc_stat stime ns", rd.stime_ns, s);
  ok(rd.utime_ticks == u / 10000000 && rd.stime_ticks == s / 10000000 && rd.utime_ticks + rd.stime_ticks > 0,
     "/proc/PID/stat: fields 14/15 in clock ticks (USER_HZ=100)");
  printf("# /proc/%d/stat utime=%" PRIu64 " stime=%" PRIu64 " (clock ticks)\n", TID, rd.utime_ticks, rd.stime_ticks);
  adjust(want_utime, want_stime, read_ts[2] - kStartNs, &group, &u, &s);
  st = kacct_find_read(m, 2, &rd);
  ok(st == KACCT_OK && rd.utime_us == u / 1000 && rd.stime_us == s / 1000,
     "getrusage(RUSAGE_SELF): ru_utime/ru_stime in us");
  diag_u64("rusage utime us", rd.utime_us, u / 1000);
  diag_u64("rusage stime us", rd.stime_us, s / 1000);
  /* task_cputime_adjusted() reads the stored sum_exec_runtime: the value of the previous read */
  adjust(want_utime, want_stime, read_ts[2] - kStartNs, &thread, &u, &s);
  st = kacct_find_read(m, 3, &rd);
  ok(st == KACCT_OK && rd.utime_ns == u && rd.stime_ns == s && rd.tid == TID && rd.rtime_ns == read_ts[2] - kStartNs,
     "/proc/PID/task/TID/stat: the thread's own cputime_adjust of the stored rtime");
  ok(kacct_find_read(m, 99, &rd) == KACCT_E_NOT_FOUND, "unknown read id: KACCT_E_NOT_FOUND");

  st = kacct_check(m, &v);
  ok(st == KACCT_OK && v.holds == 1 && v.invariant[0] == '\0', "every invariant holds after every event");

  /* the same trace in 17-byte chunks, and as structs: the same predictions */
  kacct_open("x86-64", "6.6-tick-hz250", &chunked);
  st = KACCT_OK;
  for (i = 0; i < strlen(text) && st == KACCT_OK; i += 17) {
    size_t n = strlen(text) - i < 17 ? strlen(text) - i : 17;
    st = kacct_feed_text(chunked, text + i, n);
  }
  ok(st == KACCT_OK && kacct_find_read(chunked, 1, &rd2) == KACCT_OK && kacct_find_read(m, 1, &rd) == KACCT_OK &&
         same_read(&rd, &rd2),
     "text fed in 17-byte chunks: same /proc/PID/stat");
  kacct_open("x86-64", "6.6-tick-hz250", &structs);
  {
    kacct_task t;
    memset(&t, 0, sizeof t);
    t.tid = TID;
    t.comm = "worker";
    t.mm = 1;
    st = kacct_set_ncpus(structs, 1);
    if (st == KACCT_OK) st = kacct_add_task(structs, &t);
    if (st == KACCT_OK) st = kacct_feed_events(structs, events, nevents);
    if (st != KACCT_OK) printf("# %s\n", kacct_error_message(structs));
  }
  ok(st == KACCT_OK && kacct_find_read(structs, 1, &rd2) == KACCT_OK && same_read(&rd, &rd2) && rd2.line == 0,
     "structured events: same /proc/PID/stat");

  /* bad input: a malformed line */
  kacct_open("x86-64", "6.6-tick-hz250", &bad);
  {
    static const char malformed[] =
        "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 100 pid=100 comm=worker mm=1\n"
        "events\n1000000 0 switch prev=0 next=100\n2000000 0 tick bogus=1\n";
    st = kacct_feed_text(bad, malformed, sizeof malformed - 1);
    ok(st == KACCT_E_PARSE && kacct_error_code(bad) == KACCT_E_PARSE, "malformed trace: KACCT_E_PARSE");
    ok(kacct_error_line(bad) == 8 && kacct_error_column(bad) == 16 && contains(kacct_error_message(bad), "line 8") &&
           contains(kacct_error_message(bad), "bogus"),
       "malformed trace: the message names line 8, column 16 and the bad key");
    printf("# %s\n", kacct_error_message(bad));
  }
  /* an impossible order: syscall_enter while the task is still in kernel mode */
  {
    static const char good[] =
        "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 100 pid=100 comm=worker mm=1\n"
        "events\n1000000 0 switch prev=0 next=100\n";
    static const char impossible[] = "1001000 0 syscall_enter nr=1\n";
    kacct_close(bad);
    kacct_open("x86-64", "6.6-tick-hz250", &bad);
    st = kacct_feed_text(bad, good, sizeof good - 1);
    ok(st == KACCT_OK, "a valid prefix is accepted");
    st = kacct_feed_text(bad, impossible, sizeof impossible - 1);
    ok(st == KACCT_E_EVENT && kacct_error_line(bad) == 8 && contains(kacct_error_message(bad), "line 8"),
       "syscall_enter in kernel mode: KACCT_E_EVENT at line 8");
    printf("# %s\n", kacct_error_message(bad));
  }
  {
    kacct_event e;
    uint64_t n = 0;
    memset(&e, 0, sizeof e);
    e.ts = 999; /* before the previous event */
    e.kind = KACCT_EV_TICK;
    st = kacct_feed_event(bad, &e);
    ok(st == KACCT_E_EVENT && contains(kacct_error_message(bad), "event 1 (tick)"),
       "struct event going back in time: KACCT_E_EVENT naming event 1");
    printf("# %s\n", kacct_error_message(bad));
    ok(kacct_event_count(bad, &n) == KACCT_OK && n == 1 && kacct_error_code(bad) == KACCT_OK,
       "rejected events change nothing; the handle stays usable");
    e.kind = 77;
    ok(kacct_feed_event(bad, &e) == KACCT_E_INVALID_ARG, "kind out of range: KACCT_E_INVALID_ARG");
  }

  /* open failures: thread-local last error */
  {
    kacct_model* x = (kacct_model*)&st; /* must be reset to NULL */
    st = kacct_open("POWER9", "6.6-tick-steal-hz250", &x);
    ok(st == KACCT_E_ILLEGAL_CONFIG && x == NULL && contains(kacct_last_error(), "PARAVIRT_TIME_ACCOUNTING"),
       "illegal config rejected with the Kconfig reason");
    printf("# %s\n", kacct_last_error());
    st = kacct_open("Z80", "6.6-tick-hz250", &x);
    ok(st == KACCT_E_UNKNOWN_CPU && contains(kacct_last_error(), "Z80"), "unknown CPU: KACCT_E_UNKNOWN_CPU");
  }
  ok(kacct_feed_text(NULL, "x", 1) == KACCT_E_INVALID_ARG, "NULL handle: KACCT_E_INVALID_ARG, no crash");

  kacct_close(m);
  kacct_close(chunked);
  kacct_close(structs);
  kacct_close(bad);
  kacct_close(NULL);
  free(text);
  if (test_no != NTESTS) printf("# planned %d tests, ran %d\n", NTESTS, test_no);
  return failures == 0 && test_no == NTESTS ? 0 : 1;
}
