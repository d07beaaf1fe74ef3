// Hand-written parser for trace format v1 (docs/trace-format.md).
// Errors are thrown internally as Fail and turned into Result at the API
// boundary, so the per-field code stays linear; nothing escapes parse().
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

#include "model/trace/tracker.hpp"

namespace kacct::trace {
namespace {

struct Fail {
  Error e;
};

struct Tok {
  std::string_view s;
  uint32_t col;
};

uint32_t sat32(size_t v) {
  return v > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max() : uint32_t(v);
}

// Quotes untrusted input safely for an error message.
std::string show(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f)
      out += char(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > 40) out += "...";
  return out;
}

// Splits a comment-stripped line into tokens; rejects non-printable bytes.
std::vector<Tok> tokenize(std::string_view line, uint32_t lineno, uint32_t& eol) {
  std::vector<Tok> toks;
  size_t i = 0, n = line.size();
  eol = 1;
  while (i < n && line[i] != '#') {
    auto c = static_cast<unsigned char>(line[i]);
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < n) {
      c = static_cast<unsigned char>(line[i]);
      if (c == ' ' || c == '\t' || c == '#') break;
      if (c < 0x20 || c >= 0x7f)
        throw Fail{{lineno,
                    sat32(i + 1),
                    fmt::format("unexpected byte 0x{:02x}; expected printable ASCII, space, tab "
                                "or '#' comment",
                                c),
                    {}}};
      ++i;
    }
    toks.push_back({line.substr(start, i - start), sat32(start + 1)});
    eol = sat32(i + 1);
  }
  return toks;
}

template <class E, size_t N>
std::optional<E> lookup(std::string_view s, const std::array<E, N>& all) {
  for (E e : all)
    if (name(e) == s) return e;
  return std::nullopt;
}

template <class E, size_t N>
std::string spellings(const std::array<E, N>& all) {
  std::string out;
  for (E e : all) out += fmt::format("{}{}", out.empty() ? "" : ", ", name(e));
  return out;
}

constexpr std::array kAllKinds = [] {
  std::array<Kind, kKindCount> a{};
  for (size_t i = 0; i < kKindCount; ++i) a[i] = Kind(i);
  return a;
}();
constexpr std::array kAllPrev = {PrevState::Runnable, PrevState::Sleeping, PrevState::DiskSleep, PrevState::Dead};
constexpr std::array kAllExc = {ExcKind::PageFault, ExcKind::Other};
constexpr std::array kAllRead = [] {
  std::array<ReadKind, kReadKindCount> a{};
  for (size_t i = 0; i < kReadKindCount; ++i) a[i] = ReadKind(i);
  return a;
}();

struct Arg {
  std::string_view key, val;
  uint32_t col, vcol;
};

class LineParser {
 public:
  LineParser(std::string_view line, uint32_t lineno) : line_(lineno) { toks_ = tokenize(line, lineno, eol_); }
  bool blank() const { return toks_.empty(); }
  const std::vector<Tok>& toks() const { return toks_; }

  [[noreturn]] void fail(uint32_t col, std::string msg) const { throw Fail{{line_, col, std::move(msg), {}}}; }
  const Tok& tok(size_t i, std::string_view expected) const {
    if (i >= toks_.size()) fail(eol_, fmt::format("unexpected end of line; expected {}", expected));
    return toks_[i];
  }
  void expect_end(size_t n) const {
    if (toks_.size() > n) fail(toks_[n].col, fmt::format("unexpected '{}'; expected end of line", show(toks_[n].s)));
  }
  void expect_word(std::string_view word, std::string_view what) const {
    const Tok& t = tok(0, what);
    if (t.s != word) fail(t.col, fmt::format("expected {}, got '{}'", what, show(t.s)));
  }

  uint64_t u64(std::string_view s, uint32_t col, std::string_view what) const {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      fail(col, fmt::format("expected {} (unsigned decimal), got '{}'", what, show(s)));
    uint64_t v = 0;
    for (char c : s) {
      auto d = uint64_t(c - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - d) / 10)
        fail(col, fmt::format("value exceeds 2^64-1; expected {} in 0..18446744073709551615", what));
      v = v * 10 + d;
    }
    return v;
  }
  uint64_t u64(const Tok& t, std::string_view what) const { return u64(t.s, t.col, what); }

  // Collects key=value args from token `first` on.  `keys` are allowed keys,
  // `flags` allowed bare words; the hardware counter keys are added if hw.
  void args(size_t first, std::vector<std::string_view> keys, std::vector<std::string_view> flags, std::string_view ctx,
            bool hw) {
    if (hw) keys.insert(keys.end(), {"tb", "purr", "spurr"});
    args_.clear();
    flags_.clear();
    ctx_ = ctx;
    for (size_t i = first; i < toks_.size(); ++i) {
      const Tok& t = toks_[i];
      auto eq = t.s.find('=');
      if (eq == std::string_view::npos) {
        if (std::find(flags.begin(), flags.end(), t.s) == flags.end())
          fail(t.col, fmt::format("expected key=value{}, got '{}'", flags.empty() ? "" : " or 'kthread'", show(t.s)));
        if (flags_.count(t.s)) fail(t.col, fmt::format("duplicate flag '{}'", t.s));
        flags_.insert(t.s);
        continue;
      }
      std::string_view key = t.s.substr(0, eq);
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        fail(t.col, fmt::format("unknown key '{}' for {}; expected {}{}", show(key), ctx,
                                keys.empty() ? "no keys" : "one of ", fmt::join(keys, ", ")));
      if (find(key)) fail(t.col, fmt::format("duplicate key '{}'", key));
      args_.push_back({key, t.s.substr(eq + 1), t.col, sat32(t.col + eq + 1)});
    }
  }
  bool flag(std::string_view f) const { return flags_.count(f) != 0; }
  const Arg* find(std::string_view key) const {
    for (const Arg& a : args_)
      if (a.key == key) return &a;
    return nullptr;
  }
  const Arg& req(std::string_view key, std::string_view what) const {
    const Arg* a = find(key);
    if (!a) fail(eol_, fmt::format("missing required key '{}' for {}; expected {}=<{}>", key, ctx_, key, what));
    return *a;
  }
  std::optional<uint64_t> opt_u64(std::string_view key, std::string_view what) const {
    const Arg* a = find(key);
    if (!a) return std::nullopt;
    return u64(a->val, a->vcol, what);
  }
  uint64_t req_u64(std::string_view key, std::string_view what) const {
    const Arg& a = req(key, what);
    return u64(a.val, a.vcol, what);
  }
  template <class E, size_t N>
  std::optional<E> opt_enum(std::string_view key, const std::array<E, N>& all) const {
    const Arg* a = find(key);
    if (!a) return std::nullopt;
    if (auto e = lookup(a->val, all)) return e;
    fail(a->vcol, fmt::format("expected {}= one of {}, got '{}'", key, spellings(all), show(a->val)));
  }
  std::optional<std::string> opt_comm() const {
    const Arg* a = find("comm");
    if (!a) return std::nullopt;
    if (a->val.empty() || a->val.size() > 15)
      fail(a->vcol, fmt::format("expected comm of 1..15 characters, got '{}'", show(a->val)));
    return std::string(a->val);
  }

 private:
  uint32_t line_;
  uint32_t eol_ = 1;
  std::vector<Tok> toks_;
  std::vector<Arg> args_;
  std::set<std::string_view> flags_;
  std::string_view ctx_;
};

TaskDecl parse_task(LineParser& p) {
  TaskDecl d;
  d.tid = p.u64(p.tok(1, "task tid"), "task tid");
  if (d.tid == 0) p.fail(p.toks()[1].col, "expected a non-zero tid (0 is the idle task)");
  p.args(2, {"pid", "comm", "nice", "mm", "utime", "stime", "vtime_utime", "vtime_stime", "vtime_gtime"}, {"kthread"},
         "task", false);
  d.pid = p.opt_u64("pid", "thread-group id").value_or(d.tid);
  d.kthread = p.flag("kthread");
  if (!p.find("comm")) p.req("comm", "name");
  d.comm = *p.opt_comm();
  if (const Arg* a = p.find("nice")) {
    std::string_view s = a->val;
    bool neg = !s.empty() && s[0] == '-';
    uint64_t v = p.u64(s.substr(neg ? 1 : 0), a->vcol, "nice value -20..19");
    if (neg ? v > 20 : v > 19) p.fail(a->vcol, fmt::format("nice {} out of range; expected -20..19", s));
    d.nice = neg ? -int(v) : int(v);
  }
  d.mm = p.opt_u64("mm", "mm id");
  if (d.kthread && d.mm) p.fail(p.find("mm")->col, "unexpected mm= on a kthread; expected no mm");
  if (!d.kthread && !d.mm) p.req("mm", "mm id (user tasks have an mm)");
  d.utime = p.opt_u64("utime", "ns");
  d.stime = p.opt_u64("stime", "ns");
  d.vtime_utime = p.opt_u64("vtime_utime", "ns");
  d.vtime_stime = p.opt_u64("vtime_stime", "ns");
  d.vtime_gtime = p.opt_u64("vtime_gtime", "ns");
  return d;
}

Event parse_event(LineParser& p, uint32_t lineno, uint32_t ncpus) {
  Event e;
  e.line = lineno;
  e.ts = p.u64(p.tok(0, "timestamp"), "timestamp in ns");
  const Tok& ct = p.tok(1, "cpu number");
  uint64_t cpu = p.u64(ct, "cpu number");
  if (cpu >= ncpus) p.fail(ct.col, fmt::format("cpu {} out of range; expected 0..{}", cpu, ncpus - 1));
  e.cpu = uint32_t(cpu);
  const Tok& kt = p.tok(2, "event kind");
  auto kind = lookup(kt.s, kAllKinds);
  if (!kind)
    p.fail(kt.col, fmt::format("unknown event kind '{}'; expected one of {}", show(kt.s), spellings(kAllKinds)));
  e.kind = *kind;
  std::string_view ctx = name(e.kind);
  auto keys = [&](std::vector<std::string_view> k, std::vector<std::string_view> f = {}) {
    p.args(3, std::move(k), std::move(f), ctx, true);
  };
  switch (e.kind) {
    case Kind::SyscallEnter:
      keys({"nr"});
      e.a = p.req_u64("nr", "syscall number");
      break;
    case Kind::ExcEnter:
      keys({"kind"});
      e.exc_kind = p.opt_enum("kind", kAllExc).value_or(ExcKind::Other);
      break;
    case Kind::IrqEnter:
      keys({"vec"});
      e.a = p.opt_u64("vec", "vector").value_or(0);
      break;
    case Kind::SoftirqEnter:
      keys({"vec"});
      e.a = p.req_u64("vec", "softirq vector");
      break;
    case Kind::Switch:
      keys({"prev", "next", "prev_state", "iowait", "gap"});
      e.a = p.req_u64("prev", "tid");
      e.b = p.req_u64("next", "tid");
      e.prev_state = p.opt_enum("prev_state", kAllPrev).value_or(PrevState::Runnable);
      if (auto io = p.opt_u64("iowait", "0 or 1")) {
        if (*io > 1) p.fail(p.find("iowait")->vcol, "expected iowait=0 or iowait=1");
        e.iowait = *io == 1;
      }
      e.switch_gap = p.opt_u64("gap", "ns between the switch's two clock reads");
      break;
    case Kind::Wakeup:
      keys({"tid"});
      e.a = p.req_u64("tid", "tid");
      break;
    case Kind::Steal:
      keys({"ns"});
      e.a = p.req_u64("ns", "stolen ns");
      break;
    case Kind::Fork:
      keys({"parent", "child", "pid", "comm", "mm"}, {"kthread"});
      e.a = p.req_u64("parent", "tid");
      e.b = p.req_u64("child", "tid");
      e.fork_pid = p.opt_u64("pid", "thread-group id");
      e.fork_mm = p.opt_u64("mm", "mm id");
      e.fork_kthread = p.flag("kthread");
      e.fork_comm = p.opt_comm().value_or("");
      break;
    case Kind::Runtime:
      keys({"tid", "ns"});
      e.a = p.req_u64("tid", "tid");
      e.b = p.req_u64("ns", "runtime ns");
      break;
    case Kind::MmExit:
      keys({"mm"});
      e.a = p.req_u64("mm", "mm id");
      break;
    case Kind::Read: {
      keys({"kind", "tid", "id"});
      if (!p.find("kind")) p.req("kind", spellings(kAllRead));
      e.read_kind = *p.opt_enum("kind", kAllRead);
      e.a = p.opt_u64("tid", "tid").value_or(0);
      if (const Arg* t = p.find("tid"); t && e.a == 0)
        p.fail(t->vcol, "expected a non-zero tid (omit tid= to read the current task)");
      e.read_id = p.opt_u64("id", "read id").value_or(0);
      break;
    }
    default: keys({}); break;
  }
  e.hw.tb = p.opt_u64("tb", "timebase value");
  e.hw.purr = p.opt_u64("purr", "PURR value");
  e.hw.spurr = p.opt_u64("spurr", "SPURR value");
  return e;
}

bool valid_model(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

// Iterates over lines (without the '\n' and an optional trailing '\r').
template <class F>
void for_each_line(std::string_view text, F&& f) {
  uint32_t lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (lineno == std::numeric_limits<uint32_t>::max())
      throw Fail{{lineno, 1, "too many lines; expected at most 2^32-2", {}}};
    ++lineno;
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF
    if (!f(line, lineno)) return;
    pos = end + 1;
  }
}

Trace parse_or_throw(std::string_view text) {
  Trace t;
  enum Stage { kMagic, kCpu, kNcpus, kClock, kTasks, kEvents } stage = kMagic;
  std::set<uint64_t> tids;
  std::map<uint64_t, std::size_t> first_of_pid;  // index in header.tasks
  uint32_t last = 0;
  for_each_line(text, [&](std::string_view line, uint32_t lineno) {
    last = lineno;
    LineParser p(line, lineno);
    if (p.blank()) return true;
    const auto& toks = p.toks();
    switch (stage) {
      case kMagic: {
        p.expect_word("kacct-trace", "'kacct-trace 1' as the first line");
        const Tok& v = p.tok(1, "format version");
        uint64_t ver = p.u64(v, "format version");
        if (ver != 1) p.fail(v.col, fmt::format("unsupported version {}; expected 1", ver));
        p.expect_end(2);
        stage = kCpu;
        break;
      }
      case kCpu: {
        p.expect_word("cpu", "'cpu <model>' line");
        const Tok& m = p.tok(1, "cpu model name");
        if (!valid_model(m.s))
          p.fail(m.col, fmt::format("expected cpu model name [A-Za-z0-9_.-]{{1,64}}, got '{}'", show(m.s)));
        t.header.cpu_model = std::string(m.s);
        p.expect_end(2);
        stage = kNcpus;
        break;
      }
      case kNcpus: {
        p.expect_word("ncpus", "'ncpus <n>' line");
        const Tok& n = p.tok(1, "number of cpus");
        uint64_t v = p.u64(n, "number of cpus");
        if (v < 1 || v > 4096) p.fail(n.col, fmt::format("ncpus {} out of range; expected 1..4096", v));
        t.header.ncpus = uint32_t(v);
        p.expect_end(2);
        stage = kClock;
        break;
      }
      case kClock: {
        p.expect_word("clock", "'clock ns' line");
        const Tok& c = p.tok(1, "clock unit");
        if (c.s != "ns") p.fail(c.col, fmt::format("unsupported clock '{}'; expected ns", show(c.s)));
        p.expect_end(2);
        stage = kTasks;
        break;
      }
      case kTasks:
        if (toks[0].s == "rtime" && t.header.tasks.empty() && !t.header.rtime_events) {
          const Tok& w = p.tok(1, "'events' after 'rtime'");
          if (w.s != "events") p.fail(w.col, fmt::format("expected 'rtime events', got 'rtime {}'", show(w.s)));
          p.expect_end(2);
          t.header.rtime_events = true;
        } else if (toks[0].s == "events") {
          p.expect_end(1);
          stage = kEvents;
        } else if (toks[0].s == "task") {
          TaskDecl d = parse_task(p);
          if (!tids.insert(d.tid).second)
            p.fail(toks[1].col, fmt::format("duplicate tid {}; expected a new tid", d.tid));
          // The threads of a process share its mm (check_header says the same without a line).
          const auto [first, fresh] = first_of_pid.emplace(d.pid, t.header.tasks.size());
          if (const TaskDecl* o = fresh ? nullptr : &t.header.tasks[first->second];
              o && (o->mm != d.mm || o->kthread != d.kthread)) {
            const Arg* mm = p.find("mm");
            p.fail(mm ? mm->vcol : toks[1].col,
                   fmt::format("task {} is a thread of pid {}, whose task {} has {}; expected the same", d.tid, d.pid,
                               o->tid, o->mm ? fmt::format("mm={}", *o->mm) : std::string("no mm (kthread)")));
          }
          t.header.tasks.push_back(std::move(d));
        } else {
          p.fail(toks[0].col, fmt::format("expected 'task' or 'events' line, got '{}'", show(toks[0].s)));
        }
        break;
      case kEvents: t.events.push_back(parse_event(p, lineno, t.header.ncpus)); break;
    }
    return true;
  });
  if (stage != kEvents) {
    static constexpr std::string_view what[] = {"'kacct-trace 1'", "'cpu <model>'", "'ncpus <n>'", "'clock ns'",
                                                "'events'"};
    throw Fail{{last + 1, 1, fmt::format("unexpected end of input; expected {} line", what[stage]), {}}};
  }
  return t;
}

}  // namespace

// Column of the field a semantic error names, found by re-tokenizing the line.
uint32_t field_column(std::string_view text, uint32_t line, std::string_view field) {
  uint32_t col = 1;
  try {
    for_each_line(text, [&](std::string_view s, uint32_t n) {
      if (n != line) return true;
      uint32_t eol = 1;
      auto toks = tokenize(s, n, eol);
      // "ts", "cpu", a key name, or anything else ("event"): the kind token.
      int pos = field == "ts" ? 0 : field == "cpu" ? 1 : 2;
      for (size_t i = 3; i < toks.size(); ++i) {
        std::string_view k = toks[i].s.substr(0, toks[i].s.find('='));
        if (k == field) pos = int(i);
      }
      if (size_t(pos) < toks.size()) col = toks[size_t(pos)].col;
      return false;
    });
  } catch (const Fail&) {}
  return col;
}

Result<Trace> parse(std::string_view text) {
  try {
    return parse_or_throw(text);
  } catch (Fail& f) { return std::move(f.e); }
}

Result<Trace> load(std::string_view text) {
  auto r = parse(text);
  if (!r) return r;
  if (auto err = validate(r.value())) {
    if (err->line != 0 && !err->field.empty()) err->column = field_column(text, err->line, err->field);
    return *std::move(err);
  }
  return r;
}

}  // namespace kacct::trace
