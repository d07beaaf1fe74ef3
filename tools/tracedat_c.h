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
};
struct kacct_td;
/* The file at path, or (path NULL) the open file fd (closed here). NULL: unreadable. */
struct kacct_td* kacct_td_open(const char* path, int fd);
void kacct_td_rewind(struct kacct_td*);
/* The next event in time order (valid until the next call): 1; 0 at the end; -1: out of memory. */
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
