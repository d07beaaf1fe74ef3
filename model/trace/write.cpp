// Canonical writer and the name tables shared with the parser.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <iterator>

#include "model/trace/trace.hpp"

namespace kacct::trace {

std::string_view name(Kind k) { return size_t(k) < kKindNames.size() ? kKindNames[size_t(k)] : "?"; }

std::string_view name(PrevState s) { return size_t(s) < kPrevStateNames.size() ? kPrevStateNames[size_t(s)] : "?"; }

std::string_view name(ExcKind k) { return kExcKindNames[k == ExcKind::PageFault]; }

std::string_view name(ReadKind k) { return size_t(k) < kReadKindNames.size() ? kReadKindNames[size_t(k)] : "?"; }

std::string Error::to_string() const {
  if (line == 0) return message;
  if (column == 0) return fmt::format("line {}: {}", line, message);
  return fmt::format("line {}, column {}: {}", line, column, message);
}

void append_header(std::string& buf, const Header& h) {
  auto out = std::back_inserter(buf);
  fmt::format_to(out, "kacct-trace {}\ncpu {}\nncpus {}\nclock ns\n", h.version, h.cpu_model, h.ncpus);
  if (h.rtime_events) fmt::format_to(out, "rtime events\n");
  for (const TaskDecl& d : h.tasks) {
    fmt::format_to(out, "task {} pid={}{} comm={} nice={}", d.tid, d.pid, d.kthread ? " kthread" : "", d.comm, d.nice);
    if (d.mm) fmt::format_to(out, " mm={}", *d.mm);
    const std::pair<const char*, const std::optional<uint64_t>*> state[] = {{"utime", &d.utime},
                                                                            {"stime", &d.stime},
                                                                            {"vtime_utime", &d.vtime_utime},
                                                                            {"vtime_stime", &d.vtime_stime},
                                                                            {"vtime_gtime", &d.vtime_gtime}};
    for (auto [k, v] : state)
      if (*v) fmt::format_to(out, " {}={}", k, **v);
    buf.push_back('\n');
  }
  fmt::format_to(out, "events\n");
}

// Optional keys are written only when they differ from the parser's default. Compiled
// format strings: this runs once per event of every trace written.
void append_event(std::string& buf, const Event& e) {
  auto out = std::back_inserter(buf);
  fmt::format_to(out, FMT_COMPILE("{} {} {}"), e.ts, e.cpu, name(e.kind));
  switch (e.kind) {
    case Kind::SyscallEnter: fmt::format_to(out, FMT_COMPILE(" nr={}"), e.a); break;
    case Kind::ExcEnter:
      if (e.exc_kind != ExcKind::Other) fmt::format_to(out, FMT_COMPILE(" kind={}"), name(e.exc_kind));
      break;
    case Kind::IrqEnter:
      if (e.a != 0) fmt::format_to(out, FMT_COMPILE(" vec={}"), e.a);
      break;
    case Kind::SoftirqEnter: fmt::format_to(out, FMT_COMPILE(" vec={}"), e.a); break;
    case Kind::Switch:
      fmt::format_to(out, FMT_COMPILE(" prev={} next={}"), e.a, e.b);
      if (e.prev_state != PrevState::Runnable) fmt::format_to(out, FMT_COMPILE(" prev_state={}"), name(e.prev_state));
      if (e.iowait) fmt::format_to(out, FMT_COMPILE(" iowait=1"));
      if (e.switch_gap) fmt::format_to(out, FMT_COMPILE(" gap={}"), *e.switch_gap);
      break;
    case Kind::Wakeup: fmt::format_to(out, FMT_COMPILE(" tid={}"), e.a); break;
    case Kind::Steal: fmt::format_to(out, FMT_COMPILE(" ns={}"), e.a); break;
    case Kind::Fork:
      fmt::format_to(out, FMT_COMPILE(" parent={} child={}"), e.a, e.b);
      if (e.fork_pid) fmt::format_to(out, FMT_COMPILE(" pid={}"), *e.fork_pid);
      if (e.fork_kthread) fmt::format_to(out, FMT_COMPILE(" kthread"));
      if (!e.fork_comm.empty()) fmt::format_to(out, FMT_COMPILE(" comm={}"), e.fork_comm);
      if (e.fork_mm) fmt::format_to(out, FMT_COMPILE(" mm={}"), *e.fork_mm);
      break;
    case Kind::MmExit: fmt::format_to(out, FMT_COMPILE(" mm={}"), e.a); break;
    case Kind::Runtime: fmt::format_to(out, FMT_COMPILE(" tid={} ns={}"), e.a, e.b); break;
    case Kind::Read:
      fmt::format_to(out, FMT_COMPILE(" kind={}"), name(e.read_kind));
      if (e.a != 0) fmt::format_to(out, FMT_COMPILE(" tid={}"), e.a);
      if (e.read_id != 0) fmt::format_to(out, FMT_COMPILE(" id={}"), e.read_id);
      break;
    default: break;
  }
  if (e.hw.tb) fmt::format_to(out, FMT_COMPILE(" tb={}"), *e.hw.tb);
  if (e.hw.purr) fmt::format_to(out, FMT_COMPILE(" purr={}"), *e.hw.purr);
  if (e.hw.spurr) fmt::format_to(out, FMT_COMPILE(" spurr={}"), *e.hw.spurr);
  buf.push_back('\n');
}

std::string write(const Trace& t) {
  std::string buf;
  append_header(buf, t.header);
  for (const Event& e : t.events) append_event(buf, e);
  return buf;
}

std::string source_line(std::string_view text, uint32_t n) {
  if (n == 0) return {};
  std::size_t pos = 0;
  for (uint32_t i = 1; i < n; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  const std::size_t end = text.find('\n', pos);
  std::string l(text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
  if (!l.empty() && l.back() == '\r') l.pop_back();
  return l;
}

}  // namespace kacct::trace
