/* The libtracecmd side of tools/tracedat.cpp, in C: tracefs.h (included by trace-cmd.h) is not
 * valid C++ (an int passed as an enum in an inline function). */
#include "tracedat_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <trace-cmd.h>
#include <unistd.h>

/* An event's text without libtraceevent's printing (tep_print_event: ~60% of a record's cost, most
 * of it vsnprintf) when its print format is plain: literal text and %d/%u/%x conversions (h, l, ll,
 * L, z; a width, '0') of numeric fields, array elements with a constant index, casts to a 64-bit
 * unsigned type, and %s of char-array fields and __get_str() strings. Each piece prints what
 * libtraceevent 1.7's pretty_print() prints for it (print_arg_number() casts by the length
 * modifier, then printf); any other format, and any record whose data would be read out of its
 * bounds, goes to tep_print_event(). test/tracedat compares the two on every record. */
enum { FP_LIT, FP_NUM, FP_CHARS, FP_DYNSTR };
struct fast_piece {
  int kind;
  const char* lit; /* FP_LIT */
  int lit_len;
  char conv;                      /* FP_NUM: 'd', 'u' or 'x' */
  int bits;                       /* FP_NUM: the cast's width (char, short, int, long, long long) */
  int width, zero;                /* FP_NUM: minimum width, '0' flag */
  int off, size;                  /* the field's (an array element's) bytes */
  struct tep_format_field* field; /* FP_DYNSTR: the __data_loc field */
};
struct fast_fmt {
  int ok; /* 1: fast, -1: libtraceevent */
  int n;
  struct fast_piece* p;
};
/* What an event id's first record found: its format (NULL: none in the file), whether it is a
 * kernel stack, its fast pieces. */
struct id_info {
  struct tep_event* ev;
  int stack;
  struct fast_fmt fast;
};

/* Each CPU's next record is kept (tracecmd_read_data() per CPU: public API), the earliest is
 * given next; a kernel_stack right after an event on its CPU is that event's. */
struct kacct_td {
  struct kacct_td_where* where;
  struct tracecmd_input* h;
  struct tep_handle* tep;
  struct trace_seq seq;
  int ncpus;
  struct tep_record** next;
  const char** frames;
  unsigned long long* addrs;
  int cap;
  int slow;                  /* kacct_td_library_print(): every event through tep_print_event() */
  unsigned long long fast_n; /* events printed by the fast path */
  unsigned long long bytes;  /* the file's length; 0: compressed (offsets are not the file's) */
  struct id_info** ids;      /* by event id (common_type: 16 bits), made at an id's first record */
  int nids;                  /* the largest id seen + 1 */
  struct {
    int pid;
    const char* comm;
  } comms[1024]; /* pid -> saved comm, direct-mapped (the lookup is a search each time) */
  char* text;    /* the fast path's output */
  size_t text_cap;
};

/* where->call says which library call runs (set before, cleared after each). */
#define IN(t, c) ((t)->where->call = (c))
#define OUT(t) ((t)->where->call = KACCT_TD_IN_KACCT)
static struct kacct_td_where no_where;

const char* kacct_td_call_name(int call) {
  switch (call) {
    case KACCT_TD_IN_OPEN: return "libtracecmd's tracecmd_open()";
    case KACCT_TD_IN_READ: return "libtracecmd's tracecmd_read_data()";
    case KACCT_TD_IN_FORMAT: return "libtraceevent's tep_find_event()";
    case KACCT_TD_IN_FIELD: return "libtraceevent's tep_get_field_raw()";
    case KACCT_TD_IN_PRINT: return "libtraceevent's tep_print_event()";
    case KACCT_TD_IN_SYMBOL: return "libtraceevent's tep_find_function()";
    case KACCT_TD_IN_CLOSE: return "libtracecmd's tracecmd_close()";
    default: return NULL;
  }
}

/* ftrace's stack_entry (kernel_stack): int size; unsigned long caller[], innermost first. The
 * format says caller[8] (older kernels' fixed array); the entry holds `size` of them, fewer or
 * more, within the record; 0 or ULONG_MAX ends them. -2: caller[] starts outside the record (a
 * damaged format: libtraceevent does not check a field's offset against the record). */
static int stack_frames(struct kacct_td* t, struct tep_event* ev, struct tep_record* rec) {
  int len = 0, n = 0;
  unsigned long long size = 0;
  IN(t, KACCT_TD_IN_FIELD);
  const unsigned char* raw = tep_get_field_raw(NULL, ev, "caller", rec, &len, 0);
  const int bad = !raw || tep_get_field_val(NULL, ev, "size", rec, &size, 0) != 0;
  OUT(t);
  if (bad) return 0;
  const long at = (long)(raw - (const unsigned char*)rec->data);
  if (at < 0 || at > (long)rec->size) return -2;
  /* size is the file's: as many frames as it says and the record holds, computed unwrapped */
  const unsigned long long fit = (unsigned long long)((long)rec->size - at) / 8;
  len = (int)(8 * (size < fit ? size : fit));
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
    IN(t, KACCT_TD_IN_SYMBOL);
    const char* s = tep_find_function(t->tep, a);
    OUT(t);
    t->addrs[n] = a;
    t->frames[n++] = s ? s : "?";
  }
  return n;
}

static int fast_add(struct fast_fmt* f, struct fast_piece p) {
  struct fast_piece* q = realloc(f->p, sizeof(*q) * (size_t)(f->n + 1));
  if (!q) return -1;
  f->p = q;
  f->p[f->n++] = p;
  return 0;
}

static int plain_number(const struct tep_format_field* fl) {
  return fl && !(fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) &&
         (fl->size == 1 || fl->size == 2 || fl->size == 4 || fl->size == 8);
}

/* The numeric argument a conversion reads: a field, a 64-bit unsigned cast of one, or an element
 * of an array field with a decimal constant index. 0: not one of these. */
static int fast_number(struct tep_event* ev, struct tep_print_arg* a, struct fast_piece* p) {
  if (a->type == TEP_PRINT_TYPE) {
    const char* t = a->typecast.type;
    if (!t || (strcmp(t, "unsigned long long") && strcmp(t, "u64"))) return 0;
    a = a->typecast.item;
    if (a->type != TEP_PRINT_FIELD) return 0;
    struct tep_format_field* fl = tep_find_any_field(ev, a->field.name);
    if (!plain_number(fl) || fl->size != 8) return 0;
    p->off = fl->offset, p->size = fl->size;
    return 1;
  }
  if (a->type == TEP_PRINT_FIELD) {
    struct tep_format_field* fl = tep_find_any_field(ev, a->field.name);
    if (!plain_number(fl)) return 0;
    p->off = fl->offset, p->size = fl->size;
    return 1;
  }
  if (a->type == TEP_PRINT_OP && a->op.op && !strcmp(a->op.op, "[") && a->op.left && a->op.right &&
      a->op.left->type == TEP_PRINT_FIELD && a->op.right->type == TEP_PRINT_ATOM && a->op.right->atom.atom) {
    const char* idx = a->op.right->atom.atom;
    if (!*idx || strlen(idx) > 4 || strspn(idx, "0123456789") != strlen(idx)) return 0;
    struct tep_format_field* fl = tep_find_any_field(ev, a->op.left->field.name);
    if (!fl || !(fl->flags & TEP_FIELD_IS_ARRAY) || (fl->flags & TEP_FIELD_IS_DYNAMIC)) return 0;
    const int es = (int)fl->elementsize, i = atoi(idx);
    if (es != 1 && es != 2 && es != 4 && es != 8) return 0;
    p->off = fl->offset + i * es, p->size = es;
    return 1;
  }
  return 0;
}

/* The event's print format as pieces, or ok = -1 if any part of it is not plain. */
static void fast_make(struct tep_event* ev, struct fast_fmt* f) {
  f->ok = -1;
  if (ev->flags || ev->handler || !ev->print_fmt.format) return;
  const char* s = ev->print_fmt.format;
  struct tep_print_arg* a = ev->print_fmt.args;
  while (*s) {
    struct fast_piece p;
    memset(&p, 0, sizeof(p));
    if (*s != '%') {
      const char* e = strchr(s, '%');
      if (!e) e = s + strlen(s);
      for (const char* c = s; c < e; ++c)
        if ((unsigned char)*c < 0x20 || *c == '\\') return;
      p.kind = FP_LIT, p.lit = s, p.lit_len = (int)(e - s);
      if (fast_add(f, p)) return;
      s = e;
      continue;
    }
    ++s;
    if (*s == '0') p.zero = 1, ++s;
    while (*s >= '0' && *s <= '9') p.width = p.width * 10 + (*s++ - '0');
    /* One of the length modifiers glibc's printf takes (hh, h, l, ll, L, z), else the conversion
     * check below leaves the format to libtraceevent: it passes any run of h, l, L, z on to
     * printf, and glibc prints "%hld" as an unknown "%l" then "d" (fuzz_tracedat, session 24:
     * regression hl-length-modifier.dat). */
    static const struct {
      const char* m;
      int ls;
    } mods[] = {{"hh", -2}, {"h", -1}, {"ll", 2}, {"l", 1}, {"L", 2}, {"z", 1}};
    int ls = 0;
    for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); ++i)
      if (!strncmp(s, mods[i].m, strlen(mods[i].m))) {
        ls = mods[i].ls, s += strlen(mods[i].m);
        break;
      }
    if (!a || p.width > 64) return;
    if (*s == 'd' || *s == 'i' || *s == 'u' || *s == 'x') {
      p.kind = FP_NUM;
      p.conv = *s == 'i' ? 'd' : *s;
      p.bits = ls == -2 ? 8 : ls == -1 ? 16 : ls == 0 ? 32 : 64;
      if (!fast_number(ev, a, &p)) return;
    } else if (*s == 's' && !p.width && !p.zero && !ls) {
      if (a->type == TEP_PRINT_FIELD) {
        struct tep_format_field* fl = tep_find_any_field(ev, a->field.name);
        if (!fl || !(fl->flags & TEP_FIELD_IS_ARRAY) || (fl->flags & TEP_FIELD_IS_DYNAMIC) || fl->size <= 0) return;
        p.kind = FP_CHARS, p.off = fl->offset, p.size = fl->size;
      } else if (a->type == TEP_PRINT_STRING && a->string.string) {
        struct tep_format_field* fl = tep_find_any_field(ev, a->string.string);
        if (!fl || (fl->size != 2 && fl->size != 4)) return;
        p.kind = FP_DYNSTR, p.field = fl;
      } else {
        return;
      }
    } else {
      return;
    }
    if (fast_add(f, p)) return;
    a = a->next;
    ++s;
  }
  if (!a) f->ok = 1;
}

static int text_room(struct kacct_td* t, size_t len, size_t more) {
  if (len + more + 1 <= t->text_cap) return 0;
  size_t cap = t->text_cap ? t->text_cap : 256;
  while (cap < len + more + 1) cap *= 2;
  char* b = realloc(t->text, cap);
  if (!b) return -1;
  t->text = b;
  t->text_cap = cap;
  return 0;
}

/* printf's %[0][width]{d,u,x} of v (already cast to the conversion's width). */
static size_t put_number(char* out, unsigned long long v, int neg, int hex, int width, int zero) {
  char d[24];
  int n = 0;
  do {
    const unsigned r = hex ? (unsigned)(v & 15) : (unsigned)(v % 10);
    d[n++] = (char)(r < 10 ? '0' + r : 'a' + r - 10);
    v = hex ? v >> 4 : v / 10;
  } while (v);
  size_t k = 0;
  const int len = n + neg;
  if (!zero)
    for (int i = len; i < width; ++i) out[k++] = ' ';
  if (neg) out[k++] = '-';
  if (zero)
    for (int i = len; i < width; ++i) out[k++] = '0';
  while (n) out[k++] = d[--n];
  return k;
}

/* 1: the text is in t->text (len in *len); 0: a read would leave the record: use libtraceevent. */
static int fast_print(struct kacct_td* t, const struct fast_fmt* f, struct tep_record* rec, unsigned* len) {
  const char* data = rec->data;
  const int size = rec->size;
  size_t k = 0;
  for (int i = 0; i < f->n; ++i) {
    const struct fast_piece* p = &f->p[i];
    if (p->kind == FP_LIT) {
      if (text_room(t, k, (size_t)p->lit_len)) return -1;
      memcpy(t->text + k, p->lit, (size_t)p->lit_len);
      k += (size_t)p->lit_len;
    } else if (p->kind == FP_NUM) {
      if (p->off < 0 || p->off + p->size > size) return 0;
      unsigned long long v = tep_read_number(t->tep, data + p->off, p->size);
      int neg = 0;
      if (p->bits < 64) v &= (1ULL << p->bits) - 1;
      if (p->conv == 'd' && (v >> (p->bits - 1)) & 1) {
        neg = 1;
        v = p->bits < 64 ? ((1ULL << p->bits) - v) : (~v + 1);
      }
      if (text_room(t, k, 24 + (size_t)p->width)) return -1;
      k += put_number(t->text + k, v, neg, p->conv == 'x', p->width, p->zero);
    } else {
      const char* str;
      size_t n;
      if (p->kind == FP_CHARS) {
        if (p->off < 0 || p->off + p->size > size) return 0;
        str = data + p->off;
        const char* z = memchr(str, 0, (size_t)p->size);
        n = z ? (size_t)(z - str) : (size_t)p->size;
      } else {
        const struct tep_format_field* fl = p->field;
        if (fl->offset < 0 || fl->offset + fl->size > size) return 0;
        const unsigned long long v = tep_read_number(t->tep, data + fl->offset, fl->size);
        const unsigned o = (unsigned)(v & 0xffff);
        const unsigned l = fl->size == 2 ? (unsigned)(size - (int)o) : (unsigned)((v >> 16) & 0xffff);
        if (o > (unsigned)size || o + l > (unsigned)size) return 0;
        unsigned off = o;
        if (fl->flags & TEP_FIELD_IS_RELATIVE) off += (unsigned)(fl->offset + fl->size);
        if (l == 0) continue; /* libtraceevent prints nothing for an empty string */
        if (off >= (unsigned)size) return 0;
        str = data + off;
        const char* z = memchr(str, 0, (size_t)(size - (int)off));
        if (!z) return 0; /* libtraceevent would read past the record */
        n = (size_t)(z - str);
      }
      if (text_room(t, k, n)) return -1;
      memcpy(t->text + k, str, n);
      k += n;
    }
  }
  if (text_room(t, k, 0)) return -1;
  t->text[k] = 0;
  *len = (unsigned)k;
  return 1;
}

static int is_stack(struct tep_event* ev) {
  return ev && ev->system && ev->name && !strcmp(ev->system, "ftrace") && !strcmp(ev->name, "kernel_stack");
}

/* tep_find_event_by_record() (its checks, then the event by id), remembered per id; NULL on no
 * memory too (then libtraceevent's own lookup). */
static struct id_info* id_of(struct kacct_td* t, struct tep_record* rec) {
  if (rec->size < 0) return NULL;
  const int id = tep_data_type(t->tep, rec);
  if (id < 0 || id > 0xffff) return NULL;
  /* One table for every id, at the first record: grown id by id (a damaged file's ids are
   * anything) it was copied at each new largest id, a fifth of the reader's time under
   * fuzz_tracedat (perf). 512 KB, zeroed by calloc. */
  if (!t->ids && !(t->ids = calloc(0x10000, sizeof(*t->ids)))) return NULL;
  if (id >= t->nids) t->nids = id + 1;
  struct id_info* i = t->ids[id];
  if (!i) {
    if (!(i = calloc(1, sizeof(*i)))) return NULL;
    IN(t, KACCT_TD_IN_FORMAT);
    i->ev = tep_find_event(t->tep, id);
    OUT(t);
    i->stack = is_stack(i->ev);
    if (i->ev)
      fast_make(i->ev, &i->fast);
    else
      i->fast.ok = -1;
    t->ids[id] = i;
  }
  return i;
}

static struct tep_event* event_of(struct kacct_td* t, struct tep_record* rec, int* stack) {
  const struct id_info* i = id_of(t, rec);
  if (i) {
    *stack = i->stack;
    return i->ev;
  }
  IN(t, KACCT_TD_IN_FORMAT);
  struct tep_event* ev = tep_find_event_by_record(t->tep, rec);
  OUT(t);
  *stack = is_stack(ev);
  return ev;
}

/* The file's length, 0 if its CPU data is compressed (a v7 file whose header names an algorithm
 * other than "none": record offsets are then the uncompressed data's) or it cannot be read. */
static unsigned long long file_bytes(const char* path) {
  struct stat st;
  unsigned char h[64] = {0};
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  const size_t n = fread(h, 1, sizeof h - 1, f);
  const int ok = fstat(fileno(f), &st) == 0;
  fclose(f);
  if (!ok || n < 20) return 0;
  /* magic (10 bytes), version "7\0", endian, long size, page size (4), compression name */
  if (h[10] == '7' && h[11] == 0 && strcmp((const char*)h + 18, "none") != 0) return 0;
  return (unsigned long long)st.st_size;
}

/* libtracecmd 3.1.6 hands out records from pages a damaged header places past the end of the
 * file, and what they hold depends on the process's memory (two opens of the same file gave 327
 * and 334 records; fuzz_tracedat). Likely read beyond its mmap of the CPU's data, which
 * allocate_page_map() clamps to the size the header claims but does not check offsets against. */
static int past_end(const struct kacct_td* t, const struct tep_record* rec) {
  return t->bytes && (rec->offset >= t->bytes || rec->size < 0 || rec->offset + (unsigned)rec->size > t->bytes);
}

static const char* comm_of(struct kacct_td* t, int pid) {
  const unsigned k = (unsigned)pid & 1023u;
  if (!t->comms[k].comm || t->comms[k].pid != pid) {
    t->comms[k].pid = pid;
    IN(t, KACCT_TD_IN_FORMAT);
    t->comms[k].comm = tep_data_comm_from_pid(t->tep, pid);
    OUT(t);
  }
  return t->comms[k].comm;
}

/* libtracecmd 3.1.6 says on stderr, and only there, when it cannot mmap a CPU's data (a size
 * from a damaged header) and falls back to reading pages: that fallback gave other records on
 * the first pass than on the passes after a rewind (14, then 4: fuzz_tracedat, session 22). The
 * open's stderr goes to a temporary file (the library's messages are not kacct's) and is
 * searched for that message. Returns the saved stderr, -1 if not captured. */
static int stderr_capture(FILE** tf) {
  fflush(stderr);
  *tf = tmpfile();
  const int saved = *tf ? dup(2) : -1;
  if (saved < 0 || dup2(fileno(*tf), 2) < 0) {
    if (saved >= 0) close(saved);
    if (*tf) fclose(*tf);
    *tf = NULL;
    return -1;
  }
  return saved;
}

/* Restores stderr; 1 if what was written holds `needle`. */
static int stderr_release(FILE* tf, int saved, const char* needle) {
  if (saved < 0) return 0;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  const size_t nl = strlen(needle);
  char buf[4096];
  size_t have = 0;
  int found = 0;
  rewind(tf);
  for (size_t n; !found && (n = fread(buf + have, 1, sizeof buf - have, tf)) > 0;) {
    have += n;
    for (size_t k = 0; !found && k + nl <= have; ++k) found = memcmp(buf + k, needle, nl) == 0;
    if (have >= nl) { /* the tail that may start the needle stays */
      memmove(buf, buf + have - (nl - 1), nl - 1);
      have = nl - 1;
    }
  }
  fclose(tf);
  return found;
}

struct kacct_td* kacct_td_open(const char* path, struct kacct_td_where* where, int* abandoned) {
  const int flags = TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS;
  *abandoned = 0;
  struct kacct_td* t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->where = where ? where : &no_where;
  t->where->cpu = -1;
  t->where->offset = 0;
  tracecmd_set_loglevel(TEP_LOG_NONE);
  IN(t, KACCT_TD_IN_OPEN);
  /* tracecmd_open() in libtracecmd 3.1.6 is these two and tracecmd_close() when the second
   * fails; that close is unsafe (read_cpu_data() gave up with the per-CPU state zeroed: it
   * close()s fd 0 and walks a list head never set up, SIGSEGV; for the fuzzer's 2^31 CPUs,
   * 1 s of loop), so the handle is left, as `trace-cmd report` leaves it (it exits; kacct's
   * reader goes on to the next file, up to 64 such handles). */
  FILE* tf = NULL;
  const int saved = stderr_capture(&tf);
  t->h = tracecmd_open_head(path, flags);
  const int init = t->h ? tracecmd_init_data(t->h) : 0;
  const int read_pages = stderr_release(tf, saved, "Can not mmap file, will read instead");
  if (t->h && (init < 0 || read_pages)) { /* read_pages: refused, left as a failed one is */
    *abandoned = 1;
    t->h = NULL;
  }
  OUT(t);
  if (!t->h) {
    free(t);
    return NULL;
  }
  t->bytes = file_bytes(path);
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
    t->where->cpu = c;
    IN(t, KACCT_TD_IN_READ);
    if (t->next[c]) tracecmd_free_record(t->next[c]);
    t->next[c] = tracecmd_read_cpu_first(t->h, c);
    OUT(t);
  }
}

int kacct_td_next(struct kacct_td* t, struct kacct_td_event* e) {
  int best = -1;
  for (int c = 0; c < t->ncpus; ++c)
    if (t->next[c] && (best < 0 || t->next[c]->ts < t->next[best]->ts)) best = c;
  memset(e, 0, sizeof(*e));
  if (best < 0) return 0;
  struct tep_record* rec = t->next[best];
  t->where->cpu = best;
  t->where->offset = rec->offset;
  if (past_end(t, rec)) return -3;
  int stack = 0;
  struct tep_event* ev = event_of(t, rec, &stack);
  e->cpu = best;
  e->ts = rec->ts;
  e->missed = rec->missed_events;
  if (ev && !stack) {
    e->system = ev->system;
    e->name = ev->name;
    IN(t, KACCT_TD_IN_FORMAT);
    e->pid = tep_data_pid(t->tep, rec);
    OUT(t);
    e->comm = comm_of(t, e->pid);
    const struct id_info* i = t->slow ? NULL : id_of(t, rec);
    const int fast = i && i->fast.ok > 0 ? fast_print(t, &i->fast, rec, &e->info_len) : 0;
    if (fast < 0) return -1;
    if (fast) {
      ++t->fast_n;
      e->fast = 1;
      e->info = t->text;
    } else {
      trace_seq_reset(&t->seq);
      IN(t, KACCT_TD_IN_PRINT);
      tep_print_event(t->tep, &t->seq, rec, "%s", TEP_PRINT_INFO);
      OUT(t);
      trace_seq_terminate(&t->seq);
      e->info = t->seq.buffer;
      e->info_len = t->seq.len;
    }
  } else if (ev) { /* a stack with no event before it on its CPU: given alone */
    e->system = ev->system;
    e->name = ev->name;
  }
  IN(t, KACCT_TD_IN_READ);
  tracecmd_free_record(rec);
  t->next[best] = tracecmd_read_data(t->h, best);
  OUT(t);
  rec = t->next[best];
  if (rec) t->where->offset = rec->offset;
  if (e->info && rec && past_end(t, rec)) return -3;
  if (e->info && rec && (ev = event_of(t, rec, &stack)) && stack) {
    const int n = stack_frames(t, ev, rec);
    if (n < 0) return n;
    e->frames = t->frames;
    e->addrs = t->addrs;
    e->nframes = n;
    IN(t, KACCT_TD_IN_READ);
    tracecmd_free_record(rec);
    t->next[best] = tracecmd_read_data(t->h, best);
    OUT(t);
  }
  return 1;
}

void kacct_td_library_print(struct kacct_td* t, int on) { t->slow = on; }
unsigned long long kacct_td_fast_printed(const struct kacct_td* t) { return t->fast_n; }

void kacct_td_close(struct kacct_td* t) {
  if (!t) return;
  for (int c = 0; t->next && c < t->ncpus; ++c)
    if (t->next[c]) tracecmd_free_record(t->next[c]);
  free(t->next);
  if (t->ids)
    for (int i = 0; i < t->nids; ++i)
      if (t->ids[i]) {
        free(t->ids[i]->fast.p);
        free(t->ids[i]);
      }
  free(t->ids);
  free(t->text);
  free(t->frames);
  free(t->addrs);
  trace_seq_destroy(&t->seq);
  IN(t, KACCT_TD_IN_CLOSE);
  tracecmd_close(t->h);
  OUT(t);
  free(t);
}
