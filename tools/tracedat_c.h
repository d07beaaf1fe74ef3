/* trace.dat events through libtracecmd (tools/tracedat_c.c), for tools/tracedat.cpp. */
#pragma once
#ifdef __cplusplus
extern "C" {
#endif

struct kacct_td_event {
  int cpu;
  unsigned long long ts;
  long long missed;          /* events the buffer dropped before this one (-1: some) */
  const char *system, *name; /* NULL: an event id with no format in the file */
  int pid;                   /* common_pid (the tid) */
  const char* comm;          /* from the saved cmdlines, or NULL */
  const char* info;          /* the event's print format applied (no plugins); NULL for a stack */
  unsigned info_len;
  const char* const* frames; /* the kernel stack written right after it: symbols, innermost first */
  const unsigned long long* addrs;
  int nframes;
  int fast; /* 1: the text came from the fast path of plain print formats */
};
/* Where the reader is, kept current for a parent process to read after the reader's process
 * died (shared memory; tools/tracedat.cpp): the library call under way (KACCT_TD_IN_KACCT: the
 * reader's own code), the CPU and file offset of the record it reads or prints. */
enum {
  KACCT_TD_IN_KACCT,
  KACCT_TD_IN_OPEN,
  KACCT_TD_IN_READ,
  KACCT_TD_IN_FORMAT,
  KACCT_TD_IN_FIELD,
  KACCT_TD_IN_PRINT,
  KACCT_TD_IN_SYMBOL,
  KACCT_TD_IN_CLOSE
};
struct kacct_td_where {
  volatile int call;
  volatile int cpu; /* -1: none yet */
  volatile unsigned long long offset;
};
/* The library function a KACCT_TD_IN_* names ("tep_print_event()"), NULL for KACCT_TD_IN_KACCT. */
const char* kacct_td_call_name(int call);
struct kacct_td;
/* The file at path (kept open by libtracecmd). NULL: unreadable. `where` (may be NULL) is kept
 * current from the open on. Damaged files can crash libtracecmd 3.1.6 / libtraceevent 1.7.1
 * inside any of these calls: tools/tracedat.cpp calls them in a child process only.
 * *abandoned (NULL: NULL returned) set: the headers were read but tracecmd_init_data() failed,
 * or libtracecmd could not mmap a CPU's data and fell back to reading pages (refused: its
 * passes differ; tools/tracedat_c.c, stderr_capture());
 * the handle is left unclosed (libtracecmd 3.1.6 crashes closing it): its memory and descriptor
 * stay with the process (tools/tracedat.cpp's child ends after 64 of them). */
struct kacct_td* kacct_td_open(const char* path, struct kacct_td_where* where, int* abandoned);
void kacct_td_rewind(struct kacct_td*);
/* The next event in time order (valid until the next call): 1; 0 at the end; -1: out of memory;
 * -2: a damaged record (a kernel_stack whose caller[] lies outside it; `where` names it); -3: a
 * record past the end of an uncompressed file (libtracecmd read it from beyond its data). */
int kacct_td_next(struct kacct_td*, struct kacct_td_event*);
void kacct_td_close(struct kacct_td*);
/* on: every event's text from libtraceevent's tep_print_event() (the tests' reference for the
 * fast path of plain print formats). */
void kacct_td_library_print(struct kacct_td*, int on);
/* Events whose text the fast path printed so far. */
unsigned long long kacct_td_fast_printed(const struct kacct_td*);

#ifdef __cplusplus
}
#endif
