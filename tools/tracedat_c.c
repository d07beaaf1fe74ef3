/* The libtracecmd side of tools/tracedat.cpp, in C: tracefs.h (included by trace-cmd.h) is not
 * valid C++ (an int passed as an enum in an inline function). */
#include "tracedat_c.h"

#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>

/* Each CPU's next record is kept (tracecmd_read_data() per CPU: public API), the earliest is
 * given next; a kernel_stack right after an event on its CPU is that event's. */
struct kacct_td {
  struct tracecmd_input* h;
  struct tep_handle* tep;
  struct trace_seq seq;
  int ncpus;
  struct tep_record** next;
  const char** frames;
  unsigned long long* addrs;
  int cap;
};

/* ftrace's stack_entry (kernel_stack): int size; unsigned long caller[], innermost first. The
 * format says caller[8] (older kernels' fixed array); the entry holds `size` of them, fewer or
 * more, within the record; 0 or ULONG_MAX ends them. */
static int stack_frames(struct kacct_td* t, struct tep_event* ev, struct tep_record* rec) {
  int len = 0, n = 0;
  unsigned long long size = 0;
  const unsigned char* raw = tep_get_field_raw(NULL, ev, "caller", rec, &len, 0);
  if (!raw || tep_get_field_val(NULL, ev, "size", rec, &size, 0) != 0) return 0;
  const long room = (long)rec->size - (long)(raw - (const unsigned char*)rec->data);
  len = size * 8 < (unsigned long long)room ? (int)size * 8 : (int)room;
  for (int off = 0; off + 8 <= len; off += 8) {
    unsigned long long a;
    memcpy(&a, raw + off, 8);
    if (a == 0 || a == ~0ULL) break;
    if (n == t->cap) {
      const int cap = t->cap ? 2 * t->cap : 64;
      const char** f = realloc(t->frames, sizeof(*f) * (size_t)cap);
      if (!f) return -1;
      t->frames = f;
      unsigned long long* ad = realloc(t->addrs, sizeof(*ad) * (size_t)cap);
      if (!ad) return -1;
      t->addrs = ad;
      t->cap = cap;
    }
    const char* s = tep_find_function(t->tep, a);
    t->addrs[n] = a;
    t->frames[n++] = s ? s : "?";
  }
  return n;
}

static int is_stack(struct tep_event* ev) {
  return ev && ev->system && ev->name && !strcmp(ev->system, "ftrace") && !strcmp(ev->name, "kernel_stack");
}

struct kacct_td* kacct_td_open(const char* path, int fd) {
  const int flags = TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS;
  struct kacct_td* t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  tracecmd_set_loglevel(TEP_LOG_NONE);
  t->h = path ? tracecmd_open(path, flags) : tracecmd_open_fd(fd, flags);
  if (!t->h) {
    free(t);
    return NULL;
  }
  t->tep = tracecmd_get_tep(t->h);
  t->ncpus = tep_get_cpus(t->tep);
  trace_seq_init(&t->seq);
  t->next = calloc((size_t)(t->ncpus > 0 ? t->ncpus : 1), sizeof(*t->next));
  if (!t->next) {
    kacct_td_close(t);
    return NULL;
  }
  kacct_td_rewind(t);
  return t;
}

void kacct_td_rewind(struct kacct_td* t) {
  for (int c = 0; c < t->ncpus; ++c) {
    if (t->next[c]) tracecmd_free_record(t->next[c]);
    t->next[c] = tracecmd_read_cpu_first(t->h, c);
  }
}

int kacct_td_next(struct kacct_td* t, struct kacct_td_event* e) {
  int best = -1;
  for (int c = 0; c < t->ncpus; ++c)
    if (t->next[c] && (best < 0 || t->next[c]->ts < t->next[best]->ts)) best = c;
  memset(e, 0, sizeof(*e));
  if (best < 0) return 0;
  struct tep_record* rec = t->next[best];
  struct tep_event* ev = tep_find_event_by_record(t->tep, rec);
  e->cpu = best;
  e->ts = rec->ts;
  e->missed = rec->missed_events;
  if (ev && !is_stack(ev)) {
    e->system = ev->system;
    e->name = ev->name;
    e->pid = tep_data_pid(t->tep, rec);
    e->comm = tep_data_comm_from_pid(t->tep, e->pid);
    trace_seq_reset(&t->seq);
    tep_print_event(t->tep, &t->seq, rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&t->seq);
    e->info = t->seq.buffer;
    e->info_len = t->seq.len;
  } else if (ev) { /* a stack with no event before it on its CPU: given alone */
    e->system = ev->system;
    e->name = ev->name;
  }
  tracecmd_free_record(rec);
  t->next[best] = tracecmd_read_data(t->h, best);
  rec = t->next[best];
  if (e->info && rec && is_stack(ev = tep_find_event_by_record(t->tep, rec))) {
    const int n = stack_frames(t, ev, rec);
    if (n < 0) return -1;
    e->frames = t->frames;
    e->addrs = t->addrs;
    e->nframes = n;
    tracecmd_free_record(rec);
    t->next[best] = tracecmd_read_data(t->h, best);
  }
  return 1;
}

void kacct_td_close(struct kacct_td* t) {
  if (!t) return;
  for (int c = 0; t->next && c < t->ncpus; ++c)
    if (t->next[c]) tracecmd_free_record(t->next[c]);
  free(t->next);
  free(t->frames);
  free(t->addrs);
  trace_seq_destroy(&t->seq);
  tracecmd_close(t->h);
  free(t);
}
