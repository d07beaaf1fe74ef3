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

struct PTok {
  std::string_view s;
  uint32_t col;
};
struct PArg {
  std::string_view key, val;
  uint32_t col, vcol;
};
// Per-line buffers, kept across the lines of one parse so that a line allocates nothing.
struct ParseScratch {
  std::vector<PTok> toks;
  std::vector<PArg> args;
  std::vector<std::string_view> flags;
};

namespace {

struct Fail {
  Error e;
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
void tokenize(std::string_view line, uint32_t lineno, uint32_t& eol, std::vector<PTok>& toks) {
  toks.clear();
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

using Keys = std::initializer_list<std::string_view>;
constexpr std::string_view kHwKeys[] = {"tb", "purr", "spurr"};

class LineParser {
 public:
  LineParser(std::string_view line, uint32_t lineno, ParseScratch& s)
      : line_(lineno), toks_(s.toks), args_(s.args), flags_(s.flags) {
    tokenize(line, lineno, eol_, toks_);
  }
  bool blank() const { return toks_.empty(); }
  const std::vector<PTok>& toks() const { return toks_; }

  [[noreturn]] void fail(uint32_t col, std::string msg) const { throw Fail{{line_, col, std::move(msg), {}}}; }
  const PTok& tok(size_t i, std::string_view expected) const {
    if (i >= toks_.size()) fail(eol_, fmt::format("unexpected end of line; expected {}", expected));
    return toks_[i];
  }
  void expect_end(size_t n) const {
    if (toks_.size() > n) fail(toks_[n].col, fmt::format("unexpected '{}'; expected end of line", show(toks_[n].s)));
  }
  void expect_word(std::string_view word, std::string_view what) const {
    const PTok& t = tok(0, what);
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
  uint64_t u64(const PTok& t, std::string_view what) const { return u64(t.s, t.col, what); }

  // Collects key=value args from token `first` on.  `keys` are allowed keys,
  // `flags` allowed bare words; the hardware counter keys are added if hw.
  void args(size_t first, Keys keys, Keys flags, std::string_view ctx, bool hw) {
    args_.clear();
    flags_.clear();
    ctx_ = ctx;
    for (size_t i = first; i < toks_.size(); ++i) {
      const PTok& t = toks_[i];
      auto eq = t.s.find('=');
      if (eq == std::string_view::npos) {
        if (std::find(flags.begin(), flags.end(), t.s) == flags.end())
          fail(t.col,
               fmt::format("expected key=value{}, got '{}'", flags.size() == 0 ? "" : " or 'kthread'", show(t.s)));
        if (std::find(flags_.begin(), flags_.end(), t.s) != flags_.end())
          fail(t.col, fmt::format("duplicate flag '{}'", t.s));
        flags_.push_back(t.s);
        continue;
      }
      std::string_view key = t.s.substr(0, eq);
      if (std::find(keys.begin(), keys.end(), key) == keys.end() &&
          !(hw && std::find(std::begin(kHwKeys), std::end(kHwKeys), key) != std::end(kHwKeys))) {
        std::vector<std::string_view> all(keys);
        if (hw) all.insert(all.end(), std::begin(kHwKeys), std::end(kHwKeys));
        fail(t.col, fmt::format("unknown key '{}' for {}; expected {}{}", show(key), ctx,
                                all.empty() ? "no keys" : "one of ", fmt::join(all, ", ")));
      }
      if (find(key)) fail(t.col, fmt::format("duplicate key '{}'", key));
      args_.push_back({key, t.s.substr(eq + 1), t.col, sat32(t.col + eq + 1)});
    }
  }
  bool flag(std::string_view f) const { return std::find(flags_.begin(), flags_.end(), f) != flags_.end(); }
  const PArg* find(std::string_view key) const {
    for (const PArg& a : args_)
      if (a.key == key) return &a;
    return nullptr;
  }
  const PArg& req(std::string_view key, std::string_view what) const {
    const PArg* a = find(key);
    if (!a) fail(eol_, fmt::format("missing required key '{}' for {}; expected {}=<{}>", key, ctx_, key, what));
    return *a;
  }
  std::optional<uint64_t> opt_u64(std::string_view key, std::string_view what) const {
    const PArg* a = find(key);
    if (!a) return std::nullopt;
    return u64(a->val, a->vcol, what);
  }
  uint64_t req_u64(std::string_view key, std::string_view what) const {
    const PArg& a = req(key, what);
    return u64(a.val, a.vcol, what);
  }
  template <class E, size_t N>
  std::optional<E> opt_enum(std::string_view key, const std::array<E, N>& all) const {
    const PArg* a = find(key);
    if (!a) return std::nullopt;
    if (auto e = lookup(a->val, all)) return e;
    fail(a->vcol, fmt::format("expected {}= one of {}, got '{}'", key, spellings(all), show(a->val)));
  }
  std::optional<std::string> opt_comm() const {
    const PArg* a = find("comm");
    if (!a) return std::nullopt;
    if (a->val.empty() || a->val.size() > 15)
      fail(a->vcol, fmt::format("expected comm of 1..15 characters, got '{}'", show(a->val)));
    return std::string(a->val);
  }

 private:
  uint32_t line_;
  uint32_t eol_ = 1;
  std::vector<PTok>& toks_;
  std::vector<PArg>& args_;
  std::vector<std::string_view>& flags_;
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
  if (const PArg* a = p.find("nice")) {
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
  const PTok& ct = p.tok(1, "cpu number");
  uint64_t cpu = p.u64(ct, "cpu number");
  if (cpu >= ncpus) p.fail(ct.col, fmt::format("cpu {} out of range; expected 0..{}", cpu, ncpus - 1));
  e.cpu = uint32_t(cpu);
  const PTok& kt = p.tok(2, "event kind");
  auto kind = lookup(kt.s, kAllKinds);
  if (!kind)
    p.fail(kt.col, fmt::format("unknown event kind '{}'; expected one of {}", show(kt.s), spellings(kAllKinds)));
  e.kind = *kind;
  std::string_view ctx = name(e.kind);
  auto keys = [&](Keys k, Keys f = {}) { p.args(3, k, f, ctx, true); };
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
      if (const PArg* t = p.find("tid"); t && e.a == 0)
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

}  // namespace

Parser::Parser() : scratch_(std::make_unique<ParseScratch>()) {}
Parser::~Parser() = default;
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;

Result<bool> Parser::line(std::string_view line, uint32_t lineno, Event& ev) try {
  LineParser p(line, lineno, *scratch_);
  if (p.blank()) return false;
  const auto& toks = p.toks();
  switch (stage_) {
    case kMagic: {
      p.expect_word("kacct-trace", "'kacct-trace 1' as the first line");
      const PTok& v = p.tok(1, "format version");
      uint64_t ver = p.u64(v, "format version");
      if (ver != 1) p.fail(v.col, fmt::format("unsupported version {}; expected 1", ver));
      p.expect_end(2);
      stage_ = kCpu;
      break;
    }
    case kCpu: {
      p.expect_word("cpu", "'cpu <model>' line");
      const PTok& m = p.tok(1, "cpu model name");
      if (!valid_model(m.s))
        p.fail(m.col, fmt::format("expected cpu model name [A-Za-z0-9_.-]{{1,64}}, got '{}'", show(m.s)));
      header_.cpu_model = std::string(m.s);
      p.expect_end(2);
      stage_ = kNcpus;
      break;
    }
    case kNcpus: {
      p.expect_word("ncpus", "'ncpus <n>' line");
      const PTok& n = p.tok(1, "number of cpus");
      uint64_t v = p.u64(n, "number of cpus");
      if (v < 1 || v > 4096) p.fail(n.col, fmt::format("ncpus {} out of range; expected 1..4096", v));
      header_.ncpus = uint32_t(v);
      p.expect_end(2);
      stage_ = kClock;
      break;
    }
    case kClock: {
      p.expect_word("clock", "'clock ns' line");
      const PTok& c = p.tok(1, "clock unit");
      if (c.s != "ns") p.fail(c.col, fmt::format("unsupported clock '{}'; expected ns", show(c.s)));
      p.expect_end(2);
      stage_ = kTasks;
      break;
    }
    case kTasks:
      if (toks[0].s == "rtime" && header_.tasks.empty() && !header_.rtime_events) {
        const PTok& w = p.tok(1, "'events' after 'rtime'");
        if (w.s != "events") p.fail(w.col, fmt::format("expected 'rtime events', got 'rtime {}'", show(w.s)));
        p.expect_end(2);
        header_.rtime_events = true;
      } else if (toks[0].s == "events") {
        p.expect_end(1);
        stage_ = kEvents;
      } else if (toks[0].s == "task") {
        TaskDecl d = parse_task(p);
        if (!tids_.insert(d.tid).second)
          p.fail(toks[1].col, fmt::format("duplicate tid {}; expected a new tid", d.tid));
        // The threads of a process share its mm (check_header says the same without a line).
        const auto [first, fresh] = first_of_pid_.emplace(d.pid, header_.tasks.size());
        if (const TaskDecl* o = fresh ? nullptr : &header_.tasks[first->second];
            o && (o->mm != d.mm || o->kthread != d.kthread)) {
          const PArg* mm = p.find("mm");
          p.fail(mm ? mm->vcol : toks[1].col,
                 fmt::format("task {} is a thread of pid {}, whose task {} has {}; expected the same", d.tid, d.pid,
                             o->tid, o->mm ? fmt::format("mm={}", *o->mm) : std::string("no mm (kthread)")));
        }
        header_.tasks.push_back(std::move(d));
      } else {
        p.fail(toks[0].col, fmt::format("expected 'task' or 'events' line, got '{}'", show(toks[0].s)));
      }
      break;
    case kEvents: ev = parse_event(p, lineno, header_.ncpus); return true;
  }
  return false;
} catch (Fail& f) { return std::move(f.e); }

std::optional<Error> Parser::finish(uint32_t last) const {
  if (stage_ == kEvents) return std::nullopt;
  static constexpr std::string_view what[] = {"'kacct-trace 1'", "'cpu <model>'", "'ncpus <n>'", "'clock ns'",
                                              "'events'"};
  return Error{last + 1, 1, fmt::format("unexpected end of input; expected {} line", what[stage_]), {}};
}

namespace {

Trace parse_or_throw(std::string_view text) {
  Trace t;
  Parser parser;
  uint32_t last = 0;
  Event ev;
  for_each_line(text, [&](std::string_view line, uint32_t lineno) {
    last = lineno;
    auto r = parser.line(line, lineno, ev);
    if (!r) throw Fail{r.error()};
    if (r.value()) t.events.push_back(std::move(ev));
    return true;
  });
  if (auto e = parser.finish(last)) throw Fail{*std::move(e)};
  t.header = parser.header();
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
      std::vector<PTok> toks;
      tokenize(s, n, eol, toks);
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

StreamLoader::StreamLoader(OnHeader on_header, OnEvent on_event)
    : on_header_(std::move(on_header)), on_event_(std::move(on_event)) {}

std::optional<Error> StreamLoader::line(std::string_view text) {
  if (lineno_ == std::numeric_limits<uint32_t>::max())
    return Error{lineno_, 1, "too many lines; expected at most 2^32-2", {}};
  ++lineno_;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);  // CRLF
  const bool header_done = parser_.in_events();
  auto r = parser_.line(text, lineno_, ev_);
  if (!r) {
    error_line_.assign(text);
    return r.error();
  }
  if (!header_done && parser_.in_events()) {  // validate() checks the header before any event
    if (auto err = check_header(parser_.header()))
      semantic_ = std::move(err);
    else if (on_header_)
      on_header_(parser_.header());
  }
  if (r.value() && !semantic_) {
    if (auto err = on_event_(ev_, text)) {
      if (err->line != 0 && !err->field.empty()) err->column = field_column(text, 1, err->field);
      semantic_ = std::move(err);
      semantic_line_.assign(text);
    }
  }
  return std::nullopt;
}

std::optional<Error> StreamLoader::feed(std::string_view piece) {
  if (ended_) return std::nullopt;
  auto fail = [&](Error e) {
    ended_ = true;
    partial_.clear();
    return std::optional<Error>(std::move(e));
  };
  std::size_t pos = 0;
  if (!partial_.empty()) {  // complete the line the last piece left open
    const std::size_t nl = piece.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(piece);
      return std::nullopt;
    }
    partial_.append(piece.substr(0, nl));
    if (auto e = line(partial_)) return fail(*std::move(e));
    partial_.clear();
    pos = nl + 1;
  }
  for (;;) {
    const std::size_t nl = piece.find('\n', pos);
    if (nl == std::string_view::npos) break;
    if (auto e = line(piece.substr(pos, nl - pos))) return fail(*std::move(e));
    pos = nl + 1;
  }
  partial_.assign(piece.substr(pos));
  return std::nullopt;
}

std::optional<Error> StreamLoader::finish() {
  if (ended_) return std::nullopt;
  ended_ = true;
  if (!partial_.empty()) {  // a last line without '\n'
    if (auto e = line(partial_)) return e;
    partial_.clear();
  }
  if (auto e = parser_.finish(lineno_)) {
    error_line_.clear();
    return e;
  }
  error_line_ = semantic_line_;
  return semantic_;
}

}  // namespace kacct::trace
