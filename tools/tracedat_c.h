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
  const char* info;          /* the event's print format applied (no plugins) */
  unsigned info_len;
  const char* const* frames; /* ftrace:kernel_stack: its callers' symbols, innermost first */
  int nframes;
};
/* Called for each event in time order; non-zero stops the walk and is returned. */
typedef int (*kacct_td_fn)(const struct kacct_td_event*, void* data);
enum { KACCT_TD_UNREADABLE = -1000 };
/* The file at path, or (path NULL) the open file fd, which the walk closes. */
int kacct_td_read(const char* path, int fd, kacct_td_fn fn, void* data);

#ifdef __cplusplus
}
#endif
