// libkacct: the C API (include/kacct/kacct.h) over the trace library and the simulator.
// Text and structs both go through trace::parse and trace::Tracker; predictions come from
// sim::compile + sim::run. Nothing here models the kernel; no exception leaves this file.
#include "kacct/kacct.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/registry.hpp"
#include "model/gen/result.hpp"
#include "model/native/result.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"
#include "model/trace/tracker.hpp"

#ifndef KACCT_PROJECT_VERSION
#error "KACCT_PROJECT_VERSION must be defined by the build"
#endif

using namespace kacct;

// The C enums mirror the trace and model enums value for value.
static_assert(int(KACCT_NR_KINDS) == int(trace::kKindCount));
static_assert(int(KACCT_EV_READ) == int(trace::Kind::Read) && int(KACCT_EV_SWITCH) == int(trace::Kind::Switch) &&
              int(KACCT_EV_TICK) == int(trace::Kind::Tick) && int(KACCT_EV_FORK) == int(trace::Kind::Fork));
static_assert(int(KACCT_PREV_X) == int(trace::PrevState::Dead) &&
              int(KACCT_PREV_D) == int(trace::PrevState::DiskSleep));
static_assert(int(KACCT_EXC_PAGE_FAULT) == int(trace::ExcKind::PageFault));
static_assert(int(KACCT_READ_PROCESS_CPUTIME) == int(trace::ReadKind::ProcessCputime) &&
              int(KACCT_READ_TASK_STAT) == int(trace::ReadKind::TaskStat) &&
              int(KACCT_READ_TASKSTATS) == int(trace::ReadKind::Taskstats) &&
              int(KACCT_READ_TASKSTATS) + 1 == int(trace::kReadKindCount));
static_assert(int(KACCT_NR_BUCKETS) == int(model::NR_STATS) && int(KACCT_CPUTIME_STEAL) == int(model::STEAL) &&
              int(KACCT_CPUTIME_GUEST_NICE) == int(model::GUEST_NICE));

struct kacct_model {
  arch::CpuFacts cpu;
  arch::Config cfg;
  sim::ModelCfg mcfg;

  trace::Trace tr;          // header + every accepted event
  bool header_set = false;  // by text or by kacct_set_ncpus
  bool header_from_text = false;
  std::optional<trace::Tracker> tracker;  // state after the accepted events (made at the first event)
  std::string pending;                    // text not parsed yet (incomplete header or last line)
  std::string text;                       // the complete text lines accepted so far
  std::uint32_t text_lines = 0;

  kacct_status err = KACCT_OK;
  std::string err_msg;
  std::uint32_t err_line = 0, err_col = 0;

  std::optional<sim::Program> prog;  // caches, dropped whenever an event is accepted
  std::optional<sim::RunResult> result, checked;
  std::string v_invariant, v_detail, v_line, v_obligation;
};

namespace {

constexpr std::uint64_t kNsPerUserTick = 10'000'000;  // NSEC_PER_SEC / USER_HZ (100)

thread_local std::string t_last_error;

// Internal failure; turned into a status code at the API boundary.
struct Fail {
  kacct_status code;
  std::string msg;
  std::uint32_t line = 0, column = 0;
};

Fail text_error(const trace::Error& e, kacct_status code) { return {code, e.to_string(), e.line, e.column}; }

const std::vector<std::string>& cpu_names() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (const auto& c : arch::cpus()) out.emplace_back(c.name);
    return out;
  }();
  return v;
}
const std::vector<std::string>& config_names() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (const auto& k : arch::all_configs()) out.push_back(k.name());
    return out;
  }();
  return v;
}

std::uint32_t count_lines(std::string_view s) { return std::uint32_t(std::count(s.begin(), s.end(), '\n')); }

// Event lines are parsed below this header: parse_event needs only ncpus.
std::string mini_header(std::uint32_t ncpus) {
  trace::Trace t;
  t.header.cpu_model = "kacct";
  t.header.ncpus = ncpus;
  return trace::write(t);
}

// Reserves room for `extra` more elements, growing geometrically (amortised O(1) appends), so
// that the appends after it cannot fail.
template <class C>
void make_room(C& c, std::size_t extra) {
  if (c.size() + extra > c.capacity()) c.reserve(std::max(c.size() + extra, 2 * c.capacity()));
}

void invalidate(kacct_model* m) {
  m->prog.reset();
  m->result.reset();
  m->checked.reset();
}

// The tracker after the accepted events. Dropped (reset) when events were applied to it but
// not accepted, then rebuilt here by replaying the accepted ones: only the error path pays.
trace::Tracker& tracker(kacct_model* m) {
  if (!m->tracker) {
    trace::Tracker t(m->tr.header);
    for (const auto& e : m->tr.events)
      if (t.apply(e)) throw Fail{KACCT_E_INTERNAL, "replaying the accepted events failed"};
    m->tracker.emplace(std::move(t));
  }
  return *m->tracker;
}

// Applies new events to the tracker; on the first illegal one, undoes the others and calls
// fail(index, error), which throws. Tracker::apply changes nothing when it fails.
template <class OnError>
void apply_events(kacct_model* m, std::vector<trace::Event>& events, OnError fail) {
  auto& tk = tracker(m);
  std::size_t i = 0;
  try {
    for (; i < events.size(); ++i)
      if (auto err = tk.apply(events[i])) {
        if (i > 0) m->tracker.reset();
        fail(i, *err);
      }
  } catch (const Fail&) {
    throw;
  } catch (...) {  // out of memory inside apply: rebuild the tracker when it is next needed
    m->tracker.reset();
    throw;
  }
}

// Parses and checks complete lines of text. Returns false if the header is still incomplete
// (only when !final). Changes *m only on success.
bool consume(kacct_model* m, const std::string& chunk, bool final) {
  if (!m->header_set) {  // the header (and maybe events) in text
    auto r = trace::parse(chunk);
    if (!r) {
      if (!final && r.error().line > count_lines(chunk)) return false;  // header goes on
      throw text_error(r.error(), KACCT_E_PARSE);
    }
    trace::Trace t = std::move(r).value();
    make_room(m->text, chunk.size());  // allocate before anything changes
    trace::Tracker tk(t.header);
    for (const auto& e : t.events)
      if (auto err = tk.apply(e)) {
        err->column = trace::field_column(chunk, err->line, err->field);
        throw text_error(*err, KACCT_E_EVENT);
      }
    m->tr = std::move(t);
    m->tracker.emplace(std::move(tk));
    m->header_set = m->header_from_text = true;
  } else {  // event lines only, parsed under a minimal header and renumbered
    const std::string mini = mini_header(m->tr.header.ncpus) + chunk;
    const std::uint32_t hl = count_lines(mini) - count_lines(chunk);
    auto renumber = [&](std::uint32_t line) { return line > hl ? line - hl + m->text_lines : 0; };
    auto r = trace::parse(mini);
    if (!r) {
      auto e = r.error();
      e.line = renumber(e.line);
      throw text_error(e, KACCT_E_PARSE);
    }
    auto events = std::move(r).value().events;
    for (auto& e : events) e.line = renumber(e.line);
    make_room(m->text, chunk.size());  // allocate before anything changes
    make_room(m->tr.events, events.size());
    apply_events(m, events, [&](std::size_t, trace::Error err) {
      err.column = trace::field_column(mini, err.line - m->text_lines + hl, err.field);
      throw text_error(err, KACCT_E_EVENT);
    });
    m->tr.events.insert(m->tr.events.end(), std::make_move_iterator(events.begin()),
                        std::make_move_iterator(events.end()));
  }
  m->text += chunk;
  m->text_lines += count_lines(chunk);
  invalidate(m);
  return true;
}

// Before a query: the unterminated last line (or an incomplete header) must be complete now.
void finish(kacct_model* m) {
  if (!m->pending.empty()) {
    std::string chunk = std::move(m->pending);
    m->pending.clear();
    if (chunk.back() != '\n') chunk += '\n';
    consume(m, chunk, true);  // on failure the pending text is dropped: it was rejected
  }
  if (!m->header_set)
    throw Fail{KACCT_E_STATE, "no trace yet: feed a header (kacct_feed_text) or call kacct_set_ncpus first"};
}

void ensure_prog(kacct_model* m) {
  finish(m);
  if (m->prog) return;
  auto p = sim::compile(m->tr);
  if (!p) throw Fail{KACCT_E_INTERNAL, "compile rejected a validated trace: " + p.error().to_string()};
  m->prog.emplace(std::move(p).value());
}
// The dense index of a declared or forked task of the compiled trace (idle tasks excluded).
std::size_t task_index(kacct_model* m, uint64_t tid) {
  ensure_prog(m);
  const auto& p = *m->prog;
  for (std::size_t i = p.header.ncpus; i < p.tasks.size(); ++i)
    if (p.tasks[i].tid == tid) return i;
  throw Fail{KACCT_E_NOT_FOUND, fmt::format("no task {} in the trace", tid)};
}

const sim::RunResult& result(kacct_model* m) {
  ensure_prog(m);
  if (!m->result) m->result.emplace(sim::run(*m->prog, m->mcfg, {.check = false}));
  return *m->result;
}
const sim::RunResult& checked(kacct_model* m) {
  ensure_prog(m);
  if (!m->checked) m->checked.emplace(sim::run(*m->prog, m->mcfg, {.check = true, .stop_at_violation = true}));
  return *m->checked;
}

std::string_view kind_name(std::uint32_t k) {
  return k < trace::kKindCount ? trace::name(trace::Kind(k)) : std::string_view("?");
}

// A kacct_event as a trace event; ranges of the C enums checked here, the rest by the parser.
trace::Event to_event(const kacct_event& c, std::uint64_t index) {
  auto bad = [&](std::string what) {
    return Fail{KACCT_E_INVALID_ARG, fmt::format("event {} ({}): {}", index, kind_name(std::uint32_t(c.kind)), what)};
  };
  if (std::uint32_t(c.kind) >= trace::kKindCount) throw bad(fmt::format("kind {} out of range", int(c.kind)));
  trace::Event e;
  e.ts = c.ts;
  e.cpu = c.cpu;
  e.kind = trace::Kind(c.kind);
  switch (e.kind) {
    case trace::Kind::SyscallEnter:
    case trace::Kind::IrqEnter:
    case trace::Kind::SoftirqEnter:
    case trace::Kind::Wakeup:
    case trace::Kind::Steal:
    case trace::Kind::MmExit: e.a = c.a; break;
    case trace::Kind::ExcEnter:
      if (std::uint32_t(c.exc_kind) > 1) throw bad(fmt::format("exc_kind {} out of range", int(c.exc_kind)));
      e.exc_kind = trace::ExcKind(c.exc_kind);
      break;
    case trace::Kind::Switch:
      if (std::uint32_t(c.prev_state) > 3) throw bad(fmt::format("prev_state {} out of range", int(c.prev_state)));
      e.a = c.a;
      e.b = c.b;
      e.prev_state = trace::PrevState(c.prev_state);
      e.iowait = c.iowait != 0;
      break;
    case trace::Kind::Fork:
      e.a = c.a;
      e.b = c.b;
      if (c.fork_pid != 0) e.fork_pid = c.fork_pid;
      e.fork_kthread = c.fork_kthread != 0;
      if (c.fork_has_mm) e.fork_mm = c.fork_mm;
      if (c.fork_comm) {
        e.fork_comm = c.fork_comm;
        for (unsigned char ch : e.fork_comm)  // one token in the text form: printable, no space, no '#'
          if (ch <= ' ' || ch > '~' || ch == '#')
            throw bad("fork_comm: expected printable characters without spaces or '#'");
      }
      break;
    case trace::Kind::Runtime:
      e.a = c.a;
      e.b = c.b;
      break;
    case trace::Kind::Read:
      if (std::uint32_t(c.read_kind) >= trace::kReadKindCount)
        throw bad(fmt::format("read_kind {} out of range", int(c.read_kind)));
      e.a = c.a;
      e.read_kind = trace::ReadKind(c.read_kind);
      e.read_id = c.read_id;
      break;
    default: break;
  }
  return e;
}

// Structs go through the text form so that the parser's per-line rules apply to them too.
void feed_structs(kacct_model* m, const kacct_event* ev, std::size_t n) {
  if (!m->header_set)
    throw Fail{KACCT_E_STATE, "no header yet: call kacct_set_ncpus (and kacct_add_task) or feed a text header first"};
  if (!m->pending.empty())
    throw Fail{KACCT_E_STATE, "an unterminated text line is pending; end it with a newline before feeding structs"};
  const std::uint64_t base = m->tr.events.size();
  trace::Trace t;
  t.header.cpu_model = "kacct";
  t.header.ncpus = m->tr.header.ncpus;
  t.events.reserve(n);
  for (std::size_t i = 0; i < n; ++i) t.events.push_back(to_event(ev[i], base + i));
  const std::string text = trace::write(t);
  const std::uint32_t hl = count_lines(mini_header(t.header.ncpus));
  auto r = trace::parse(text);
  if (!r) {
    const auto& e = r.error();
    const std::uint64_t i = e.line > hl ? e.line - hl - 1 : 0;
    throw Fail{KACCT_E_PARSE, fmt::format("event {} ({}): {}", base + i,
                                          i < n ? kind_name(std::uint32_t(ev[i].kind)) : "?", e.message)};
  }
  auto events = std::move(r).value().events;
  for (auto& e : events) e.line = 0;
  make_room(m->tr.events, events.size());  // allocate before anything changes
  apply_events(m, events, [&](std::size_t i, const trace::Error& err) {
    throw Fail{KACCT_E_EVENT, fmt::format("event {} ({}): {}", base + i, trace::name(events[i].kind), err.message)};
  });
  m->tr.events.insert(m->tr.events.end(), std::make_move_iterator(events.begin()),
                      std::make_move_iterator(events.end()));
  invalidate(m);
}

void set_error(kacct_model* m, kacct_status code, std::string msg, std::uint32_t line = 0, std::uint32_t col = 0) {
  try {
    m->err_msg = std::move(msg);
  } catch (...) { m->err_msg.clear(); }
  m->err = code;
  m->err_line = line;
  m->err_col = col;
}
void set_last(std::string msg) {
  try {
    t_last_error = std::move(msg);
  } catch (...) { t_last_error.clear(); }
}

// Runs f on a handle; every exception becomes a status code and the handle's error.
template <class F>
kacct_status guarded(kacct_model* m, F&& f) noexcept {
  if (!m) {
    set_last("NULL kacct_model handle");
    return KACCT_E_INVALID_ARG;
  }
  try {
    f();
    m->err = KACCT_OK;
    m->err_msg.clear();
    m->err_line = m->err_col = 0;
    return KACCT_OK;
  } catch (const Fail& e) { set_error(m, e.code, e.msg, e.line, e.column); } catch (const std::bad_alloc&) {
    set_error(m, KACCT_E_NO_MEMORY, "out of memory");
  } catch (const std::length_error&) {  // a reservation beyond max_size(): as much out of memory
    set_error(m, KACCT_E_NO_MEMORY, "out of memory (more elements than a container can hold)");
  } catch (const std::exception& e) {
    set_error(m, KACCT_E_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) { set_error(m, KACCT_E_INTERNAL, "internal error: unknown exception"); }
  return m->err;
}

template <class T>
void need(T* p, const char* what) {
  if (!p) throw Fail{KACCT_E_INVALID_ARG, std::string(what) + " is NULL"};
}

}  // namespace

extern "C" {

KACCT_EXPORT const char* kacct_status_name(int s) {
  switch (s) {
    case KACCT_OK: return "KACCT_OK";
    case KACCT_E_INVALID_ARG: return "KACCT_E_INVALID_ARG";
    case KACCT_E_UNKNOWN_CPU: return "KACCT_E_UNKNOWN_CPU";
    case KACCT_E_UNKNOWN_CONFIG: return "KACCT_E_UNKNOWN_CONFIG";
    case KACCT_E_ILLEGAL_CONFIG: return "KACCT_E_ILLEGAL_CONFIG";
    case KACCT_E_PARSE: return "KACCT_E_PARSE";
    case KACCT_E_EVENT: return "KACCT_E_EVENT";
    case KACCT_E_STATE: return "KACCT_E_STATE";
    case KACCT_E_NOT_FOUND: return "KACCT_E_NOT_FOUND";
    case KACCT_E_NO_MEMORY: return "KACCT_E_NO_MEMORY";
    case KACCT_E_INTERNAL: return "KACCT_E_INTERNAL";
  }
  return "KACCT_E_UNKNOWN_STATUS";
}

KACCT_EXPORT unsigned kacct_api_version(void) { return KACCT_API_VERSION; }
KACCT_EXPORT const char* kacct_version_string(void) { return KACCT_PROJECT_VERSION; }

KACCT_EXPORT size_t kacct_cpu_count(void) {
  try {
    return cpu_names().size();
  } catch (...) { return 0; }
}
KACCT_EXPORT const char* kacct_cpu_name(size_t i) {
  try {
    return i < cpu_names().size() ? cpu_names()[i].c_str() : nullptr;
  } catch (...) { return nullptr; }
}
KACCT_EXPORT size_t kacct_config_count(void) {
  try {
    return config_names().size();
  } catch (...) { return 0; }
}
KACCT_EXPORT const char* kacct_config_name(size_t i) {
  try {
    return i < config_names().size() ? config_names()[i].c_str() : nullptr;
  } catch (...) { return nullptr; }
}

KACCT_EXPORT kacct_status kacct_open(const char* cpu, const char* config, kacct_model** out) {
  try {
    if (out) *out = nullptr;
    if (!cpu || !config || !out) {
      set_last("kacct_open: cpu, config and out must not be NULL");
      return KACCT_E_INVALID_ARG;
    }
    auto c = arch::find_cpu(cpu);
    if (!c) {
      std::string names;
      for (const auto& n : cpu_names()) names += (names.empty() ? "" : ", ") + n;
      set_last(fmt::format("unknown CPU '{}'; known CPUs: {}", cpu, names));
      return KACCT_E_UNKNOWN_CPU;
    }
    auto k = arch::find_config(config);
    if (!k) {
      set_last(
          fmt::format("unknown config '{}'; names are VERSION-ACCT[-irqtime][-steal]-hzN, "
                      "e.g. 6.6-tick-irqtime-hz250 (kacct_config_name lists them)",
                      config));
      return KACCT_E_UNKNOWN_CONFIG;
    }
    if (auto why = arch::illegal_reason(*c, *k); !why.empty()) {
      set_last(fmt::format("config {} is not legal on {}: {}", k->name(), c->name, why));
      return KACCT_E_ILLEGAL_CONFIG;
    }
    auto* m = new kacct_model;
    m->cpu = *c;
    m->cfg = *k;
    m->mcfg = sim::model_cfg(*c, *k);
    *out = m;
    set_last("");
    return KACCT_OK;
  } catch (const std::bad_alloc&) {
    set_last("out of memory");
    return KACCT_E_NO_MEMORY;
  } catch (const std::exception& e) {
    set_last(std::string("internal error: ") + e.what());
    return KACCT_E_INTERNAL;
  } catch (...) {
    set_last("internal error: unknown exception");
    return KACCT_E_INTERNAL;
  }
}

KACCT_EXPORT const char* kacct_last_error(void) { return t_last_error.c_str(); }

KACCT_EXPORT void kacct_close(kacct_model* m) { delete m; }

KACCT_EXPORT kacct_status kacct_error_code(const kacct_model* m) { return m ? m->err : KACCT_E_INVALID_ARG; }
KACCT_EXPORT const char* kacct_error_message(const kacct_model* m) {
  return m ? m->err_msg.c_str() : "NULL kacct_model handle";
}
KACCT_EXPORT uint32_t kacct_error_line(const kacct_model* m) { return m ? m->err_line : 0; }
KACCT_EXPORT uint32_t kacct_error_column(const kacct_model* m) { return m ? m->err_col : 0; }

KACCT_EXPORT kacct_status kacct_feed_text(kacct_model* m, const char* text, size_t len) {
  return guarded(m, [&] {
    if (len == 0) return;
    need(text, "text");
    const std::size_t keep = m->pending.size();
    m->pending.append(text, len);
    const auto cut = m->pending.rfind('\n');
    if (cut == std::string::npos || cut < keep) return;  // no new complete line yet
    try {
      if (consume(m, m->pending.substr(0, cut + 1), false)) m->pending.erase(0, cut + 1);
    } catch (...) {
      m->pending.resize(keep);  // the whole chunk is rejected
      throw;
    }
  });
}

KACCT_EXPORT kacct_status kacct_set_ncpus(kacct_model* m, uint32_t ncpus) {
  return guarded(m, [&] {
    if (m->header_set || !m->pending.empty())
      throw Fail{KACCT_E_STATE, "the trace already has a header (or text is pending)"};
    trace::Header h;
    h.cpu_model = std::string(m->cpu.name);
    h.ncpus = ncpus;
    if (auto e = trace::check_header(h)) throw Fail{KACCT_E_INVALID_ARG, e->message};
    m->tr.header = std::move(h);
    m->header_set = true;
    m->text_lines = 0;
    invalidate(m);
  });
}

KACCT_EXPORT kacct_status kacct_add_task(kacct_model* m, const kacct_task* t) {
  return guarded(m, [&] {
    need(t, "task");
    if (!m->header_set || m->header_from_text)
      throw Fail{KACCT_E_STATE,
                 "kacct_add_task needs a header made by kacct_set_ncpus (text headers declare tasks in text)"};
    if (!m->tr.events.empty()) throw Fail{KACCT_E_STATE, "tasks can only be declared before the first event"};
    m->tracker.reset();  // made again from the new header at the first event
    trace::TaskDecl d;
    d.tid = t->tid;
    d.pid = t->pid ? t->pid : t->tid;
    d.kthread = t->kthread != 0;
    d.comm = t->comm ? t->comm : "";
    for (unsigned char ch : d.comm)
      if (ch <= ' ' || ch > '~' || ch == '#')
        throw Fail{KACCT_E_INVALID_ARG,
                   fmt::format("task {}: comm: expected printable characters without spaces or '#'", d.tid)};
    d.nice = t->nice;
    // As in the text format: a user task has an mm, a kthread none (mm must be 0).
    if (!d.kthread || t->mm) d.mm = t->mm;
    m->tr.header.tasks.push_back(d);
    if (auto e = trace::check_header(m->tr.header)) {
      m->tr.header.tasks.pop_back();
      throw Fail{KACCT_E_INVALID_ARG, e->message};
    }
    invalidate(m);
  });
}

KACCT_EXPORT kacct_status kacct_feed_event(kacct_model* m, const kacct_event* e) {
  return guarded(m, [&] {
    need(e, "event");
    feed_structs(m, e, 1);
  });
}
KACCT_EXPORT kacct_status kacct_feed_events(kacct_model* m, const kacct_event* e, size_t n) {
  return guarded(m, [&] {
    if (n == 0) return;
    need(e, "events");
    // No array of kacct_event is that long: n is wrong (and e[n - 1] could not be read).
    if (n > std::size_t(PTRDIFF_MAX) / sizeof(kacct_event))
      throw Fail{KACCT_E_INVALID_ARG, fmt::format("n = {} is larger than any array of kacct_event", n)};
    feed_structs(m, e, n);
  });
}

KACCT_EXPORT kacct_status kacct_event_count(kacct_model* m, uint64_t* out) {
  return guarded(m, [&] {
    need(out, "out");
    finish(m);
    *out = m->tr.events.size();
  });
}
KACCT_EXPORT kacct_status kacct_ncpus(kacct_model* m, uint32_t* out) {
  return guarded(m, [&] {
    need(out, "out");
    finish(m);
    *out = m->tr.header.ncpus;
  });
}

KACCT_EXPORT const char* kacct_bucket_name(int b) {
  return b >= 0 && unsigned(b) < model::NR_STATS ? model::usage_names[unsigned(b)] : nullptr;
}

KACCT_EXPORT kacct_status kacct_get_cpustat(kacct_model* m, uint32_t cpu, kacct_cpustat* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = result(m);
    if (cpu >= r.cpus.size())
      throw Fail{KACCT_E_INVALID_ARG, fmt::format("cpu {} out of range; the trace has {} CPUs", cpu, r.cpus.size())};
    for (unsigned b = 0; b < model::NR_STATS; ++b) {
      out->ns[b] = r.cpus[cpu].cpustat[b];
      out->ticks[b] = r.cpus[cpu].cpustat[b] / kNsPerUserTick;  // nsec_to_clock_t()
    }
  });
}

KACCT_EXPORT kacct_status kacct_get_task_times(kacct_model* m, uint64_t tid, kacct_task_times* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& t = result(m).tasks[task_index(m, tid)];
    *out = {t.utime, t.stime, t.gtime, t.sum_exec_runtime};
  });
}

namespace {
void fill_read(const kacct_model* m, std::size_t i, kacct_read* out) {
  const auto& rd = m->result->reads[i];
  std::uint64_t index = 0;  // reads[k] is the k-th read event
  for (std::size_t e = 0, k = 0; e < m->prog->events.size(); ++e)
    if (m->prog->events[e].kind == trace::Kind::Read && k++ == i) {
      index = e;
      break;
    }
  const bool clock = rd.kind == trace::ReadKind::ThreadCputime || rd.kind == trace::ReadKind::ProcessCputime;
  *out = kacct_read{};
  out->id = rd.id;
  out->kind = std::int32_t(rd.kind);
  out->tid = rd.tid;
  out->ts = rd.ts;
  out->event_index = index;
  out->line = rd.line;
  out->utime_ns = rd.utime;
  out->stime_ns = rd.stime;
  out->rtime_ns = rd.rtime;
  out->utime_ticks = rd.utime / kNsPerUserTick;  // nsec_to_clock_t()
  out->stime_ticks = rd.stime / kNsPerUserTick;
  out->utime_us = rd.utime / 1000;  // ns_to_kernel_old_timeval(): whole microseconds
  out->stime_us = rd.stime / 1000;
  out->clock_ns = clock ? rd.rtime : 0;
}
}  // namespace

KACCT_EXPORT kacct_status kacct_read_count(kacct_model* m, size_t* out) {
  return guarded(m, [&] {
    need(out, "out");
    *out = result(m).reads.size();
  });
}
KACCT_EXPORT kacct_status kacct_get_read(kacct_model* m, size_t i, kacct_read* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = result(m);
    if (i >= r.reads.size())
      throw Fail{KACCT_E_INVALID_ARG, fmt::format("read {} out of range; the trace has {} reads", i, r.reads.size())};
    fill_read(m, i, out);
  });
}
KACCT_EXPORT kacct_status kacct_find_read(kacct_model* m, uint64_t id, kacct_read* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = result(m);
    for (std::size_t i = 0; i < r.reads.size(); ++i)
      if (r.reads[i].id == id) return fill_read(m, i, out);
    throw Fail{KACCT_E_NOT_FOUND, fmt::format("no read with id {}", id)};
  });
}

KACCT_EXPORT kacct_status kacct_get_task_scaled(kacct_model* m, uint64_t tid, kacct_task_scaled* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = result(m);
    const std::size_t i = task_index(m, tid);
    const auto* n = r.backend_result<model::native::NativeResult>();
    if (n && m->mcfg.native.scaled && i < n->task_scaled.size())
      *out = {n->task_scaled[i].utimescaled, n->task_scaled[i].stimescaled, 1};
    else
      *out = {r.tasks[i].utime, r.tasks[i].stime, 0};
  });
}

KACCT_EXPORT kacct_status kacct_get_read_cpustat(kacct_model* m, size_t i, uint32_t cpu, kacct_cpustat* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = result(m);
    const auto* g = r.backend_result<model::GenResult>();
    if (!g) throw Fail{KACCT_E_STATE, "reader views of /proc/stat are recorded with gen vtime configs only"};
    if (i >= g->procstat.size())
      throw Fail{KACCT_E_INVALID_ARG,
                 fmt::format("read {} out of range; the trace has {} reads", i, g->procstat.size())};
    const auto& v = g->procstat[i];
    if (cpu >= v.cpus.size())
      throw Fail{KACCT_E_INVALID_ARG, fmt::format("cpu {} out of range; the trace has {} CPUs", cpu, v.cpus.size())};
    for (unsigned b = 0; b < model::NR_STATS; ++b) {
      out->ns[b] = v.cpus[cpu][b];
      out->ticks[b] = v.cpus[cpu][b] / kNsPerUserTick;
    }
  });
}

KACCT_EXPORT kacct_status kacct_check(kacct_model* m, kacct_verdict* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& r = checked(m);
    m->v_invariant.clear();
    m->v_detail.clear();
    m->v_line.clear();
    m->v_obligation.clear();
    *out = kacct_verdict{};
    if (r.violation) {
      m->v_invariant = r.violation->invariant;
      m->v_detail = r.violation->detail;
      m->v_line = trace::source_line(m->text, r.violation->line);
      out->event_index = r.violation->event;
      out->line = r.violation->line;
    }
    if (!r.obligations_failed.empty()) m->v_obligation = r.obligations_failed.front();
    out->holds = !r.violation && r.obligations_failed.empty();
    out->invariant = m->v_invariant.c_str();
    out->detail = m->v_detail.c_str();
    out->trace_line = m->v_line.c_str();
    out->obligations_failed = r.obligations_failed.size();
    out->first_obligation = m->v_obligation.c_str();
  });
}

}  // extern "C"
