// libkacct: the C API (include/kacct/kacct.h) over the trace library and the simulator.
// Text goes through trace::Parser, structs through the same per-line rules, both through
// sim::Compiler (trace::Tracker); the compiled events run at once on a sim::LiveRun kept between
// feeds, so a query answers from the live state. Nothing here models the kernel; no exception
// leaves this file.
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
  const sim::RunOptions plain{.check = false};
  const sim::RunOptions checking{.check = true, .stop_at_violation = true};

  trace::Header header;
  bool header_set = false;  // by text or by kacct_set_ncpus
  bool header_from_text = false;
  std::optional<trace::Parser> parser;  // in its events stage once the header is set
  std::string pending;                  // text not parsed yet (incomplete header or last line)
  std::uint32_t text_lines = 0;
  std::uint64_t nevents = 0;  // accepted events

  // The accepted events, compiled chunk by chunk (one per feed call) and run at once by `run`
  // (no checks: the counters and reads); `checked` (every invariant, stopping at the first
  // violation) starts at the first kacct_check. Until then `history` keeps every compiled event
  // and `text` every accepted line, for it to catch up on; afterwards both run each feed.
  std::optional<sim::Compiler> comp;
  std::optional<sim::LiveRun> run, checked;
  sim::Program history;
  std::string text;
  std::string v_line_text;                    // the checked run's violation line, "" if none or not text
  std::vector<std::uint64_t> read_events;     // index of each read event
  std::optional<sim::BackendResult> backend;  // run's backend outputs, until the next feed
  bool broken = false;                        // a feed failed half-way (out of memory): queries refuse

  kacct_status err = KACCT_OK;
  std::string err_msg;
  std::uint32_t err_line = 0, err_col = 0;

  std::vector<trace::Event> batch;                            // scratch: the events of one feed call
  std::vector<std::pair<std::size_t, std::size_t>> batch_at;  // their lines in the chunk (text)
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

// Event lines after a header made by the API are parsed below this one: parse_event needs only ncpus.
std::string mini_header(std::uint32_t ncpus) {
  trace::Trace t;
  t.header.cpu_model = "kacct";
  t.header.ncpus = ncpus;
  return trace::write(t);
}

// Calls f(line, offset) for each line of `chunk` (complete lines, '\n' ended), without its end
// of line (and a CR before it), as trace::parse splits them.
template <class F>
void each_line(std::string_view chunk, F&& f) {
  for (std::size_t pos = 0; pos < chunk.size();) {
    const std::size_t nl = chunk.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view line = chunk.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, pos);
    pos = end + 1;
  }
}

// Drops the compiled events and the runs (the header changed: no event was accepted yet).
void reset_runs(kacct_model* m) {
  m->checked.reset();
  m->run.reset();
  m->comp.reset();
  m->history = sim::Program{};
  m->backend.reset();
  m->read_events.clear();
  m->v_line_text.clear();
}

// The compiler and the unchecked run, made from the header when the first event (or query) comes.
sim::Compiler& compiler(kacct_model* m) {
  if (!m->comp) {
    m->comp.emplace(m->header);
    m->history.header = m->header;
    m->run.emplace(m->comp->program(), m->mcfg, m->plain);
  }
  return *m->comp;
}

// Appends the compiled chunk `c` to the history program h (its side vectors and indices made whole-run).
void keep_history(sim::Program& h, const sim::Program& c) {
  const std::size_t n0 = h.events.size(), wide0 = h.wide.size(), reads0 = h.reads.size();
  h.events.insert(h.events.end(), c.events.begin(), c.events.end());
  for (std::size_t j = n0; j < h.events.size(); ++j) {
    auto& e = h.events[j];
    if (e.kind == trace::Kind::Steal || e.kind == trace::Kind::Runtime) e.arg += std::uint32_t(wide0);
    if (e.kind == trace::Kind::Read) e.arg += std::uint32_t(reads0);
  }
  h.lines.insert(h.lines.end(), c.lines.begin(), c.lines.end());
  h.wide.insert(h.wide.end(), c.wide.begin(), c.wide.end());
  h.reads.insert(h.reads.end(), c.reads.begin(), c.reads.end());
  auto side = [&](auto& to, const auto& from) {  // filled per event once any event has one
    if (from.empty() && to.empty()) return;
    to.resize(n0);
    if (from.empty())
      to.resize(h.events.size());
    else
      to.insert(to.end(), from.begin(), from.end());
  };
  side(h.hw, c.hw);
  side(h.hw_mask, c.hw_mask);
  side(h.gap, c.gap);
}

// The checked run's violation line, when it is in `text` (whose line 1 is trace line `first`).
void violation_line(kacct_model* m, std::string_view text, std::uint32_t first) {
  const auto& v = m->checked->partial().violation;
  if (v && m->v_line_text.empty() && v->line >= first) m->v_line_text = trace::source_line(text, v->line - first + 1);
}

// Starts the checked run: it catches up on the history, which is then no longer kept.
void start_checked(kacct_model* m) {
  auto& p = compiler(m).program();  // between feeds: the current chunk is empty
  std::swap(p.events, m->history.events);
  std::swap(p.lines, m->history.lines);
  std::swap(p.wide, m->history.wide);
  std::swap(p.reads, m->history.reads);
  std::swap(p.hw, m->history.hw);
  std::swap(p.hw_mask, m->history.hw_mask);
  std::swap(p.gap, m->history.gap);
  const std::size_t base = p.base;
  p.base = 0;
  try {
    m->checked.emplace(p, m->mcfg, m->checking);
    m->checked->advance();
  } catch (...) {
    m->checked.reset();
    m->broken = true;
    throw;
  }
  violation_line(m, m->text, 1);
  m->comp->next_chunk();
  p.base = base;
  m->history = sim::Program{};
  m->text = std::string();
}

// Runs the chunk the compiler holds (the feed's events, all accepted) and starts the next one.
void run_chunk(kacct_model* m, std::string_view text, std::uint32_t first_line) {
  auto& c = *m->comp;
  auto& p = c.program();
  try {
    for (std::size_t j = 0; j < p.events.size(); ++j)
      if (p.events[j].kind == trace::Kind::Read) m->read_events.push_back(p.base + j);
    if (!m->checked) keep_history(m->history, p);
    m->run->advance();
    if (m->checked) {
      m->checked->advance();
      violation_line(m, text, first_line);
    }
  } catch (...) {
    m->broken = true;
    throw;
  }
  m->nevents += p.events.size();
  c.next_chunk();
  m->backend.reset();
}

// Compiles a feed call's events (checked against the state so far); on the first illegal one
// nothing of the call stays and fail(index, error) throws. Then runs them.
template <class OnError>
void accept(kacct_model* m, std::string_view text, std::uint32_t first_line, OnError fail) {
  auto& c = compiler(m);
  auto& ev = m->batch;
  if (ev.empty()) return;
  // Compiler::add changes nothing when it fails; a call with more events is undone as a whole.
  const bool batch = ev.size() > 1;
  if (batch) c.begin_batch();
  try {
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (auto err = c.add(ev[i])) {
        if (batch) c.rollback();
        fail(i, *err);
      }
  } catch (const Fail&) { throw; } catch (...) {  // out of memory half-way
    if (batch)
      c.rollback();
    else
      m->broken = true;
    throw;
  }
  if (batch) c.commit();
  if (!m->checked) m->text += text;
  run_chunk(m, text, first_line);
}

// Parses and checks complete lines of text. Returns false if the header is still incomplete
// (only when !final). Changes *m only on success. As trace::parse on the chunk: a syntax error
// anywhere in it wins over an illegal event before it.
bool consume(kacct_model* m, std::string_view chunk, bool final) {
  if (m->broken)
    throw Fail{KACCT_E_NO_MEMORY, "an earlier feed ran out of memory half-way: the handle's state is lost; close it"};
  auto& ev = m->batch;
  ev.clear();
  m->batch_at.clear();
  std::optional<trace::Parser> fresh;  // the header in text (and maybe events)
  trace::Parser* ps = nullptr;
  if (!m->header_set) {
    fresh.emplace();
    ps = &*fresh;
  } else {
    ps = &*m->parser;
  }
  std::uint32_t lineno = m->text_lines;
  trace::Event e;
  each_line(chunk, [&](std::string_view line, std::size_t at) {
    auto r = ps->line(line, ++lineno, e);
    if (!r) throw text_error(r.error(), KACCT_E_PARSE);
    if (r.value()) {
      ev.push_back(std::move(e));
      m->batch_at.emplace_back(at, line.size());
    }
  });
  if (fresh) {
    if (auto err = fresh->finish(lineno)) {
      if (!final) return false;  // the header goes on in the next chunk
      throw text_error(*err, KACCT_E_PARSE);
    }
    reset_runs(m);
    m->header = fresh->header();
  }
  const auto on_error = [&](std::size_t i, trace::Error err) {
    const auto [at, len] = m->batch_at[i];
    err.column = trace::field_column(chunk.substr(at, len), 1, err.field);
    if (fresh) {  // nothing of the chunk stays, its header neither
      reset_runs(m);
      m->header = trace::Header{};
    }
    throw text_error(err, KACCT_E_EVENT);
  };
  if (fresh) {
    compiler(m);
    accept(m, chunk, 1, on_error);
    m->parser = std::move(fresh);
    m->header_set = m->header_from_text = true;
  } else {
    accept(m, chunk, m->text_lines + 1, on_error);
  }
  if (ev.empty() && !m->checked) m->text += chunk;  // header, blank and comment lines
  m->text_lines = lineno;
  return true;
}

// Before a query: the unterminated last line (or an incomplete header) must be complete now.
void finish(kacct_model* m) {
  if (m->broken)
    throw Fail{KACCT_E_NO_MEMORY, "an earlier feed ran out of memory half-way: the handle's state is lost; close it"};
  if (!m->pending.empty()) {
    std::string chunk = std::move(m->pending);
    m->pending.clear();
    if (chunk.back() != '\n') chunk += '\n';
    consume(m, chunk, true);  // on failure the pending text is dropped: it was rejected
  }
  if (!m->header_set)
    throw Fail{KACCT_E_STATE, "no trace yet: feed a header (kacct_feed_text) or call kacct_set_ncpus first"};
  compiler(m);
}

// The dense index of a declared or forked task of the trace (idle tasks excluded).
std::size_t task_index(kacct_model* m, uint64_t tid) {
  finish(m);
  const auto& p = m->comp->program();
  for (std::size_t i = p.header.ncpus; i < p.tasks.size(); ++i)
    if (p.tasks[i].tid == tid) return i;
  throw Fail{KACCT_E_NOT_FOUND, fmt::format("no task {} in the trace", tid)};
}

const sim::RunResult& result(kacct_model* m) {
  finish(m);
  return m->run->partial();
}
const sim::BackendResult& backend(kacct_model* m) {
  finish(m);
  if (!m->backend) m->backend.emplace(m->run->backend_now());
  return *m->backend;
}
const sim::RunResult& checked(kacct_model* m) {
  finish(m);
  if (!m->checked) start_checked(m);
  return m->checked->partial();
}

std::string_view kind_name(std::uint32_t k) {
  return k < trace::kKindCount ? trace::name(trace::Kind(k)) : std::string_view("?");
}

// A kacct_event as a trace event (e: reused storage); ranges of the C enums checked here, the
// text form's per-line rules in parse_checks().
void to_event(const kacct_event& c, std::uint64_t index, trace::Event& e) {
  auto bad = [&](std::string what) {
    return Fail{KACCT_E_INVALID_ARG, fmt::format("event {} ({}): {}", index, kind_name(std::uint32_t(c.kind)), what)};
  };
  if (std::uint32_t(c.kind) >= trace::kKindCount) throw bad(fmt::format("kind {} out of range", int(c.kind)));
  // Every field as a default Event has it (field by field: no temporary, the comm keeps its storage).
  e.line = 0;
  e.a = e.b = 0;
  e.prev_state = trace::PrevState::Runnable;
  e.iowait = false;
  e.switch_gap.reset();
  e.exc_kind = trace::ExcKind::Other;
  e.read_kind = trace::ReadKind::ProcStat;
  e.read_id = 0;
  e.fork_pid.reset();
  e.fork_mm.reset();
  e.fork_kthread = false;
  e.fork_comm.clear();
  e.hw = {};
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
}

// What the parser would reject in the event's text line (trace::write then trace::parse, the way
// structs were first fed): a CPU beyond the header's, a comm longer than the format allows.
// Same messages as the parser's.
std::optional<std::string> parse_checks(const trace::Event& e, std::uint32_t ncpus) {
  if (e.cpu >= ncpus) return fmt::format("cpu {} out of range; expected 0..{}", e.cpu, ncpus - 1);
  if (e.kind == trace::Kind::Fork && e.fork_comm.size() > 15) {
    std::string shown = e.fork_comm.substr(0, 40);
    if (e.fork_comm.size() > 40) shown += "...";
    return fmt::format("expected comm of 1..15 characters, got '{}'", shown);
  }
  return std::nullopt;
}

// Structs: each checked as its text line would be (C enum ranges first, then the parser's rules,
// then the state), in that order over the whole batch, as when they went through the text form.
void feed_structs(kacct_model* m, const kacct_event* ev, std::size_t n) {
  if (m->broken)
    throw Fail{KACCT_E_NO_MEMORY, "an earlier feed ran out of memory half-way: the handle's state is lost; close it"};
  if (!m->header_set)
    throw Fail{KACCT_E_STATE, "no header yet: call kacct_set_ncpus (and kacct_add_task) or feed a text header first"};
  if (!m->pending.empty())
    throw Fail{KACCT_E_STATE, "an unterminated text line is pending; end it with a newline before feeding structs"};
  const std::uint64_t base = m->nevents;
  auto& batch = m->batch;
  batch.resize(n);
  for (std::size_t i = 0; i < n; ++i) to_event(ev[i], base + i, batch[i]);
  for (std::size_t i = 0; i < n; ++i)
    if (auto bad = parse_checks(batch[i], m->header.ncpus))
      throw Fail{KACCT_E_PARSE, fmt::format("event {} ({}): {}", base + i, kind_name(std::uint32_t(ev[i].kind)), *bad)};
  accept(m, {}, 0, [&](std::size_t i, const trace::Error& err) {
    throw Fail{KACCT_E_EVENT, fmt::format("event {} ({}): {}", base + i, trace::name(batch[i].kind), err.message)};
  });
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
    const std::string_view in(text, len);
    if (m->pending.empty()) {  // the usual case: complete lines straight from the caller's text
      const auto cut = in.rfind('\n');
      if (cut == std::string_view::npos) {
        m->pending.assign(in);
        return;
      }
      m->pending.assign(consume(m, in.substr(0, cut + 1), false) ? in.substr(cut + 1) : in);
      return;
    }
    const std::size_t keep = m->pending.size();
    m->pending.append(in);
    const auto cut = m->pending.rfind('\n');
    if (cut == std::string::npos || cut < keep) return;  // no new complete line yet
    try {
      if (consume(m, std::string_view(m->pending).substr(0, cut + 1), false)) m->pending.erase(0, cut + 1);
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
    // Text event lines fed later are parsed below a header with the same ncpus.
    trace::Parser ps;
    trace::Event e;
    std::uint32_t n = 0;
    each_line(mini_header(ncpus), [&](std::string_view line, std::size_t) { (void)ps.line(line, ++n, e); });
    if (!ps.in_events()) throw Fail{KACCT_E_INTERNAL, "the parser rejected kacct's own header"};
    reset_runs(m);
    m->parser = std::move(ps);
    m->header = std::move(h);
    m->header_set = true;
    m->text_lines = 0;
  });
}

KACCT_EXPORT kacct_status kacct_add_task(kacct_model* m, const kacct_task* t) {
  return guarded(m, [&] {
    need(t, "task");
    if (!m->header_set || m->header_from_text)
      throw Fail{KACCT_E_STATE,
                 "kacct_add_task needs a header made by kacct_set_ncpus (text headers declare tasks in text)"};
    if (m->nevents) throw Fail{KACCT_E_STATE, "tasks can only be declared before the first event"};
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
    m->header.tasks.push_back(d);
    if (auto e = trace::check_header(m->header)) {
      m->header.tasks.pop_back();
      throw Fail{KACCT_E_INVALID_ARG, e->message};
    }
    reset_runs(m);  // made again from the new header at the first event
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
    *out = m->nevents;
  });
}
KACCT_EXPORT kacct_status kacct_ncpus(kacct_model* m, uint32_t* out) {
  return guarded(m, [&] {
    need(out, "out");
    finish(m);
    *out = m->header.ncpus;
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
  const auto& rd = m->run->partial().reads[i];
  const std::uint64_t index = m->read_events[i];
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
    const auto* n = std::get_if<model::native::NativeResult>(&backend(m));
    if (n && m->mcfg.native.scaled && i < n->task_scaled.size())
      *out = {n->task_scaled[i].utimescaled, n->task_scaled[i].stimescaled, 1};
    else
      *out = {r.tasks[i].utime, r.tasks[i].stime, 0};
  });
}

KACCT_EXPORT kacct_status kacct_get_read_cpustat(kacct_model* m, size_t i, uint32_t cpu, kacct_cpustat* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto* g = std::get_if<model::GenResult>(&backend(m));
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
    const auto obligations = m->checked->obligations_now();
    m->v_invariant.clear();
    m->v_detail.clear();
    m->v_line.clear();
    m->v_obligation.clear();
    *out = kacct_verdict{};
    if (r.violation) {
      m->v_invariant = r.violation->invariant;
      m->v_detail = r.violation->detail;
      m->v_line = m->v_line_text;
      out->event_index = r.violation->event;
      out->line = r.violation->line;
    }
    if (!obligations.empty()) m->v_obligation = obligations.front();
    out->holds = !r.violation && obligations.empty();
    out->invariant = m->v_invariant.c_str();
    out->detail = m->v_detail.c_str();
    out->trace_line = m->v_line.c_str();
    out->obligations_failed = obligations.size();
    out->first_obligation = m->v_obligation.c_str();
  });
}

KACCT_EXPORT kacct_status kacct_unjudged_count(kacct_model* m, size_t* out) {
  return guarded(m, [&] {
    need(out, "out");
    *out = checked(m).unjudged.size();
  });
}
KACCT_EXPORT kacct_status kacct_get_unjudged(kacct_model* m, size_t i, kacct_unjudged* out) {
  return guarded(m, [&] {
    need(out, "out");
    const auto& u = checked(m).unjudged;
    if (i >= u.size())
      throw Fail{KACCT_E_INVALID_ARG,
                 fmt::format("unjudged entry {} out of range; the check has {} (kacct_unjudged_count)", i, u.size())};
    *out = kacct_unjudged{u[i].invariant.c_str(), u[i].cpu, u[i].event, u[i].line, u[i].cause.c_str()};
  });
}

}  // extern "C"
