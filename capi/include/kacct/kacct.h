/* kacct C API: the kacct reference model of Linux CPU-time accounting as an oracle for other
 * test suites (LTP, kselftest, ...). Pure C99; see docs/c-api.md.
 *
 * Use: kacct_open() a model for a CPU and configuration (the names `kacct list cpus|configs`
 * prints), feed it a trace (kacct trace text, docs/trace-format.md, or kacct_event structs),
 * read the predicted counters and the invariant verdict, kacct_close().
 *
 * Errors: every function that can fail returns a kacct_status. After a failure on a handle,
 * kacct_error_message()/_line()/_column() describe it; kacct_open() failures (no handle yet)
 * are described by the thread-local kacct_last_error(). No call ever aborts on bad input.
 *
 * Thread safety: the list functions and kacct_open() may be called from any thread. A handle
 * may be used by one thread at a time (calls on different handles may run concurrently).
 */
#ifndef KACCT_KACCT_H
#define KACCT_KACCT_H

#include <stddef.h>
#include <stdint.h>

/* API version: MAJOR*10000 + MINOR. A MAJOR change breaks source or binary compatibility. */
#define KACCT_API_VERSION_MAJOR 1
#define KACCT_API_VERSION_MINOR 3
#define KACCT_API_VERSION (KACCT_API_VERSION_MAJOR * 10000 + KACCT_API_VERSION_MINOR)

#if defined(__GNUC__) || defined(__clang__)
#define KACCT_EXPORT __attribute__((visibility("default")))
#else
#define KACCT_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ---- */
typedef enum kacct_status {
  KACCT_OK = 0,
  KACCT_E_INVALID_ARG = 1,    /* NULL pointer, index out of range, enum value out of range */
  KACCT_E_UNKNOWN_CPU = 2,    /* kacct_open: no CPU of that name */
  KACCT_E_UNKNOWN_CONFIG = 3, /* kacct_open: no configuration of that name */
  KACCT_E_ILLEGAL_CONFIG = 4, /* kacct_open: Kconfig does not allow the config on the CPU */
  KACCT_E_PARSE = 5,          /* trace text (or an event struct) is malformed: line, column */
  KACCT_E_EVENT = 6,          /* event impossible in the current state (order, context, task) */
  KACCT_E_STATE = 7,          /* call not valid now (e.g. events before a header, incomplete trace) */
  KACCT_E_NOT_FOUND = 8,      /* no such task / read */
  KACCT_E_NO_MEMORY = 9,
  KACCT_E_INTERNAL = 10 /* a bug in kacct; the message says what */
} kacct_status;

/* Spelling of a kacct_status ("KACCT_E_PARSE"); never NULL. */
KACCT_EXPORT const char* kacct_status_name(int s);

/* KACCT_API_VERSION of the library actually loaded (compare with the header's). */
KACCT_EXPORT unsigned kacct_api_version(void);
/* The kacct project version, "MAJOR.MINOR.PATCH". */
KACCT_EXPORT const char* kacct_version_string(void);

/* ---- the arch table: CPUs and configurations (static strings, never freed) ---- */
KACCT_EXPORT size_t kacct_cpu_count(void);
KACCT_EXPORT const char* kacct_cpu_name(size_t i); /* NULL if i >= kacct_cpu_count() */
KACCT_EXPORT size_t kacct_config_count(void);
KACCT_EXPORT const char* kacct_config_name(size_t i); /* NULL if out of range */

/* ---- opening a model ---- */
typedef struct kacct_model kacct_model; /* opaque */

/* Opens a model of `cpu` running `config` (e.g. "x86-64", "6.6-tick-irqtime-hz250").
 * On success *out is a new handle (free it with kacct_close). On failure *out is NULL and
 * kacct_last_error() holds the message (for KACCT_E_ILLEGAL_CONFIG: the Kconfig reason). */
KACCT_EXPORT kacct_status kacct_open(const char* cpu, const char* config, kacct_model** out);
/* Message of this thread's last failed kacct_open() (or of a call made with a NULL handle);
 * "" if none. Valid until the next kacct call on this thread. */
KACCT_EXPORT const char* kacct_last_error(void);
/* Frees the handle and everything it owns; NULL is allowed. */
KACCT_EXPORT void kacct_close(kacct_model* m);

/* The last failure on this handle (cleared by every successful feed call). Strings are valid
 * until the next call on the handle. line/column are 1-based positions in the text fed so far
 * (0 when the failure is not in trace text). */
KACCT_EXPORT kacct_status kacct_error_code(const kacct_model* m);
KACCT_EXPORT const char* kacct_error_message(const kacct_model* m);
KACCT_EXPORT uint32_t kacct_error_line(const kacct_model* m);
KACCT_EXPORT uint32_t kacct_error_column(const kacct_model* m);

/* ---- feeding a trace ----
 * A trace is a header (CPUs, tasks that exist at the start) and then events in time order.
 * Text: kacct_feed_text() appends a chunk of trace text (the whole trace, or pieces split
 * anywhere, even inside a line; the first chunks must carry the header). Complete lines are
 * parsed and checked at once; an unterminated last line waits for the next chunk or for the
 * first query. Structs: kacct_set_ncpus() and kacct_add_task() build the header instead of
 * text, then kacct_feed_event(s)() append events; text event lines may be mixed in.
 * A feed call that fails changes nothing: the whole chunk / batch is rejected. */
KACCT_EXPORT kacct_status kacct_feed_text(kacct_model* m, const char* text, size_t len);

/* Header by API: number of CPUs (1..4096); only before any event and without a text header. */
KACCT_EXPORT kacct_status kacct_set_ncpus(kacct_model* m, uint32_t ncpus);
typedef struct kacct_task {
  uint64_t tid;     /* non-zero, unique */
  uint64_t pid;     /* thread-group id; 0 = tid */
  const char* comm; /* 1..15 printable characters, no spaces */
  int32_t nice;     /* -20..19 */
  int32_t kthread;  /* non-zero: kernel thread (no mm: mm must be 0) */
  uint64_t mm;      /* address-space id of a user task (threads of a process share it: a
                       thread declared with another mm is KACCT_E_INVALID_ARG) */
} kacct_task;
/* Declares a task existing at the start; after kacct_set_ncpus, before any event. */
KACCT_EXPORT kacct_status kacct_add_task(kacct_model* m, const kacct_task* t);

/* Event kinds, in the order of the trace format (docs/trace-format.md section 3). */
typedef enum kacct_kind {
  KACCT_EV_SYSCALL_ENTER = 0, /* a = nr */
  KACCT_EV_SYSCALL_EXIT,
  KACCT_EV_EXC_ENTER, /* exc_kind */
  KACCT_EV_EXC_EXIT,
  KACCT_EV_IRQ_ENTER, /* a = vector */
  KACCT_EV_IRQ_EXIT,
  KACCT_EV_SOFTIRQ_ENTER, /* a = vector */
  KACCT_EV_SOFTIRQ_EXIT,
  KACCT_EV_GUEST_ENTER,
  KACCT_EV_GUEST_EXIT,
  KACCT_EV_SWITCH, /* a = prev tid, b = next tid (0 = idle), prev_state, iowait; the trace's gap= key
                      has no struct field (the struct's size is ABI): feed such a switch as a text line */
  KACCT_EV_WAKEUP, /* a = tid */
  KACCT_EV_IDLE_ENTER,
  KACCT_EV_IDLE_EXIT,
  KACCT_EV_TICK,
  KACCT_EV_STEAL, /* a = stolen ns of the interval since this CPU's previous event */
  KACCT_EV_FORK,  /* a = parent, b = child, fork_pid, fork_kthread, fork_comm, fork_mm */
  KACCT_EV_EXIT,
  KACCT_EV_MM_EXIT,     /* a = mm */
  KACCT_EV_READ,        /* a = tid read (0 = the current task), read_kind, read_id */
  KACCT_EV_RUNTIME,     /* a = tid, b = ns of runtime charged (traces with the `rtime events` header) */
  KACCT_EV_CPU_OFFLINE, /* the CPU goes offline (no fields) */
  KACCT_EV_CPU_ONLINE,  /* the CPU comes back online (no fields) */
  KACCT_NR_KINDS
} kacct_kind;
typedef enum kacct_prev_state { KACCT_PREV_R = 0, KACCT_PREV_S, KACCT_PREV_D, KACCT_PREV_X } kacct_prev_state;
typedef enum kacct_exc_kind { KACCT_EXC_OTHER = 0, KACCT_EXC_PAGE_FAULT } kacct_exc_kind;
typedef enum kacct_read_kind {
  KACCT_READ_PROC_STAT = 0,   /* /proc/PID/stat utime/stime (whole process) */
  KACCT_READ_TASK_STAT,       /* /proc/PID/task/TID/stat (one thread) */
  KACCT_READ_RUSAGE_SELF,     /* getrusage(RUSAGE_SELF) */
  KACCT_READ_RUSAGE_THREAD,   /* getrusage(RUSAGE_THREAD) */
  KACCT_READ_THREAD_CPUTIME,  /* clock_gettime(CLOCK_THREAD_CPUTIME_ID) */
  KACCT_READ_PROCESS_CPUTIME, /* clock_gettime(CLOCK_PROCESS_CPUTIME_ID) */
  KACCT_READ_TASKSTATS        /* taskstats reply for one thread (TASKSTATS_CMD_ATTR_PID): ac_utime/ac_stime,
                                 raw task_cputime(), not adjusted (API 1.1) */
} kacct_read_kind;

/* One event. Zero-initialise it and set what the kind uses; the other fields are ignored.
 * The enum-valued fields are int32_t (a fixed size in the ABI); out-of-range values are
 * rejected with KACCT_E_INVALID_ARG. */
typedef struct kacct_event {
  uint64_t ts;           /* ns since the start of the trace; never decreasing */
  uint32_t cpu;          /* < ncpus */
  int32_t kind;          /* kacct_kind */
  uint64_t a, b;         /* see kacct_kind */
  int32_t prev_state;    /* SWITCH: kacct_prev_state */
  int32_t iowait;        /* SWITCH: non-zero = blocked on I/O (needs S or D) */
  int32_t exc_kind;      /* EXC_ENTER: kacct_exc_kind */
  int32_t read_kind;     /* READ: kacct_read_kind */
  uint64_t read_id;      /* READ: free label, reported back with the result */
  uint64_t fork_pid;     /* FORK: thread-group id of the child; 0 = child (new process) */
  int32_t fork_kthread;  /* FORK: non-zero = kernel thread */
  int32_t fork_has_mm;   /* FORK: non-zero = fork_mm is given */
  uint64_t fork_mm;      /* FORK: mm of a new user process */
  const char* fork_comm; /* FORK: NULL or "" = the parent's */
} kacct_event;

/* Appends one event / n events (a batch is accepted or rejected as a whole; an n no array of
 * kacct_event can have is KACCT_E_INVALID_ARG). On failure the
 * message starts with "event N (kind): " where N is the 0-based index of the event in the
 * whole trace; kacct_error_line() is 0. */
KACCT_EXPORT kacct_status kacct_feed_event(kacct_model* m, const kacct_event* e);
KACCT_EXPORT kacct_status kacct_feed_events(kacct_model* m, const kacct_event* e, size_t n);

/* ---- predictions (each query replays the trace fed so far if it changed since the last) ---- */
/* Number of events accepted so far; CPUs of the header. */
KACCT_EXPORT kacct_status kacct_event_count(kacct_model* m, uint64_t* out);
KACCT_EXPORT kacct_status kacct_ncpus(kacct_model* m, uint32_t* out);

/* enum cpu_usage_stat order (the /proc/stat columns). */
typedef enum kacct_bucket {
  KACCT_CPUTIME_USER = 0,
  KACCT_CPUTIME_NICE,
  KACCT_CPUTIME_SYSTEM,
  KACCT_CPUTIME_SOFTIRQ,
  KACCT_CPUTIME_IRQ,
  KACCT_CPUTIME_IDLE,
  KACCT_CPUTIME_IOWAIT,
  KACCT_CPUTIME_STEAL,
  KACCT_CPUTIME_GUEST,
  KACCT_CPUTIME_GUEST_NICE,
  KACCT_NR_BUCKETS
} kacct_bucket;
KACCT_EXPORT const char* kacct_bucket_name(int b); /* kacct_bucket: "user", ...; NULL if out of range */

/* kcpustat of one CPU at the end of the trace: ns, and /proc/stat's USER_HZ (100) ticks. */
typedef struct kacct_cpustat {
  uint64_t ns[KACCT_NR_BUCKETS];
  uint64_t ticks[KACCT_NR_BUCKETS];
} kacct_cpustat;
KACCT_EXPORT kacct_status kacct_get_cpustat(kacct_model* m, uint32_t cpu, kacct_cpustat* out);

/* A task's raw counters at the end of the trace (ns): tick-sampled utime/stime/gtime and
 * se.sum_exec_runtime. KACCT_E_NOT_FOUND for an unknown tid (idle tasks have tid 0: not here). */
typedef struct kacct_task_times {
  uint64_t utime, stime, gtime, sum_exec_runtime;
} kacct_task_times;
KACCT_EXPORT kacct_status kacct_get_task_times(kacct_model* m, uint64_t tid, kacct_task_times* out);

/* taskstats ac_utimescaled/ac_stimescaled of a task at the end of the trace (ns; the reply's
 * fields are these / 1000): task_cputime_scaled(), i.e. the task's utimescaled/stimescaled when
 * the config has ARCH_HAS_SCALED_CPUTIME (powerpc native vtime with scaled compiled in; scaled
 * = 1), else its utime/stime (scaled = 0). KACCT_E_NOT_FOUND for an unknown tid. (API 1.2) */
typedef struct kacct_task_scaled {
  uint64_t utimescaled, stimescaled;
  int32_t scaled;
} kacct_task_scaled;
KACCT_EXPORT kacct_status kacct_get_task_scaled(kacct_model* m, uint64_t tid, kacct_task_scaled* out);

/* /proc/stat of one CPU as the i-th read event saw it (0-based, kacct_get_read's order), with
 * gen vtime: kcpustat_cpu_fetch() adds a nohz_full CPU's pending vtime to its kcpustat.
 * KACCT_E_STATE on other accounting modes (their kcpustat at the end is kacct_get_cpustat).
 * (API 1.2) */
KACCT_EXPORT kacct_status kacct_get_read_cpustat(kacct_model* m, size_t i, uint32_t cpu, kacct_cpustat* out);

/* The result of a `read` event: what the kernel would have returned to the reader.
 * utime/stime are after cputime_adjust() for the stat and rusage kinds (0 for the clocks), and
 * the raw task_cputime() for KACCT_READ_TASKSTATS (whose ac_utime/ac_stime are utime_us/stime_us). */
typedef struct kacct_read {
  uint64_t id;          /* the event's read_id / id= */
  int32_t kind;         /* kacct_read_kind */
  uint64_t tid;         /* task read */
  uint64_t ts;          /* ts of the read event */
  uint64_t event_index; /* 0-based index of the read event */
  uint32_t line;        /* trace line (0 for struct events) */
  uint64_t utime_ns, stime_ns, rtime_ns;
  uint64_t utime_ticks, stime_ticks; /* clock ticks (USER_HZ=100): /proc/.../stat fields 14, 15 */
  uint64_t utime_us, stime_us;       /* microseconds: struct rusage ru_utime/ru_stime; taskstats ac_utime/ac_stime */
  uint64_t clock_ns;                 /* the *_CPUTIME kinds: the clock value (= rtime_ns) */
} kacct_read;
KACCT_EXPORT kacct_status kacct_read_count(kacct_model* m, size_t* out);
KACCT_EXPORT kacct_status kacct_get_read(kacct_model* m, size_t i, kacct_read* out);
/* The first read whose id equals `id`; KACCT_E_NOT_FOUND if none. */
KACCT_EXPORT kacct_status kacct_find_read(kacct_model* m, uint64_t id, kacct_read* out);

/* Invariant verdict: every spec invariant evaluated after every event (`kacct check`).
 * Strings are owned by the handle, valid until the next call on it. */
typedef struct kacct_verdict {
  int32_t holds;                /* 1: no invariant violated and no obligation failed (where judged:
                                   kacct_unjudged_count()) */
  const char* invariant;        /* first violated invariant's name, "" if none */
  uint64_t event_index;         /* 0-based index of the event after which it failed */
  uint32_t line;                /* its trace line (0 for struct events) */
  const char* trace_line;       /* the text of that line, "" if not from text */
  const char* detail;           /* what went wrong */
  size_t obligations_failed;    /* domain obligations (division by zero, ...) that failed */
  const char* first_obligation; /* "" if none */
} kacct_verdict;
KACCT_EXPORT kacct_status kacct_check(kacct_model* m, kacct_verdict* out);

/* An invariant the check stopped judging on a CPU because a kernel finding ended its premise
 * (native_vtime.ns_bounded after a bucket wrap): `holds` does not cover it from that event on.
 * One entry per invariant and CPU, of the checked run (kacct_check). Strings as kacct_verdict's. (API 1.3) */
typedef struct kacct_unjudged {
  const char* invariant; /* e.g. "native_vtime.ns_bounded" */
  uint32_t cpu;
  uint64_t event_index; /* 0-based index of the event from which it is not judged */
  uint32_t line;        /* its trace line (0 for struct events) */
  const char* cause;    /* the kernel finding that ended the premise, e.g. "native_vtime.word_wrap" */
} kacct_unjudged;
KACCT_EXPORT kacct_status kacct_unjudged_count(kacct_model* m, size_t* out);
KACCT_EXPORT kacct_status kacct_get_unjudged(kacct_model* m, size_t i, kacct_unjudged* out);

#ifdef __cplusplus
}
#endif

#endif /* KACCT_KACCT_H */
