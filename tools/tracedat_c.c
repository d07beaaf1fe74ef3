/* The libtracecmd side of tools/tracedat.cpp, in C: tracefs.h (included by trace-cmd.h) is not
 * valid C++ (an int passed as an enum in an inline function). */
#include "tracedat_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>

struct walk {
  struct tep_handle* tep;
  struct trace_seq seq;
  kacct_td_fn fn;
  void* data;
  const char** frames;
  int cap;
};

/* ftrace's stack_entry (kernel_stack): int size; unsigned long caller[], innermost first, 0 ends */
static int stack_frames(struct walk* w, struct tep_event* ev, struct tep_record* rec) {
  int len = 0, n = 0;
  unsigned long long size = 0;
  const unsigned char* raw = tep_get_field_raw(NULL, ev, "caller", rec, &len, 0);
  /* the format says caller[8] (older kernels' fixed array); the entry holds `size` of them,
   * fewer or more, within the record */
  if (!raw || tep_get_field_val(NULL, ev, "size", rec, &size, 0) != 0) return 0;
  long room = (long)rec->size - (long)(raw - (const unsigned char*)rec->data);
  len = size * 8 < (unsigned long long)room ? (int)size * 8 : (int)room;
  for (int off = 0; off + 8 <= len; off += 8) {
    unsigned long long a;
    memcpy(&a, raw + off, 8);
    if (a == 0 || a == ~0ULL) break;
    if (n == w->cap) {
      int cap = w->cap ? 2 * w->cap : 64;
      const char** f = realloc(w->frames, sizeof(*f) * (size_t)cap);
      if (!f) return -1;
      w->frames = f;
      w->cap = cap;
    }
    const char* s = tep_find_function(w->tep, a);
    w->frames[n++] = s ? s : "?";
  }
  return n;
}

static int on_record(struct tracecmd_input* h, struct tep_record* rec, int cpu, void* data) {
  struct walk* w = data;
  struct kacct_td_event e = {0};
  struct tep_event* ev = tep_find_event_by_record(w->tep, rec);
  (void)h;
  e.cpu = cpu;
  e.ts = rec->ts;
  e.missed = rec->missed_events;
  if (!ev) return w->fn(&e, w->data);
  e.system = ev->system;
  e.name = ev->name;
  e.pid = tep_data_pid(w->tep, rec);
  e.comm = tep_data_comm_from_pid(w->tep, e.pid);
  if (ev->system && ev->name && !strcmp(ev->system, "ftrace") && !strcmp(ev->name, "kernel_stack")) {
    e.nframes = stack_frames(w, ev, rec);
    if (e.nframes < 0) return -1;
    e.frames = w->frames;
    return w->fn(&e, w->data);
  }
  trace_seq_reset(&w->seq);
  tep_print_event(w->tep, &w->seq, rec, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&w->seq);
  e.info = w->seq.buffer;
  e.info_len = w->seq.len;
  return w->fn(&e, w->data);
}

int kacct_td_read(const char* path, int fd, kacct_td_fn fn, void* data) {
  struct walk w = {0};
  int rc;
  const int flags = TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS;
  tracecmd_set_loglevel(TEP_LOG_NONE);
  struct tracecmd_input* h = path ? tracecmd_open(path, flags) : tracecmd_open_fd(fd, flags);
  if (!h) return KACCT_TD_UNREADABLE;
  w.tep = tracecmd_get_tep(h);
  w.fn = fn;
  w.data = data;
  trace_seq_init(&w.seq);
  rc = tracecmd_iterate_events(h, NULL, 0, on_record, &w);
  trace_seq_destroy(&w.seq);
  free(w.frames);
  tracecmd_close(h);
  return rc;
}
