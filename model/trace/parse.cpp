// Hand-written parser for trace format v1 (docs/trace-format.md).
// Errors are thrown internally as Fail and turned into Result at the API
// boundary, so the per-field code stays linear; nothing escapes parse().
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <stdexcept>

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

namespace {

// Argument keys of every line kind, one slot each (a line's args are found by index, not by a
// scan).
enum Key : uint8_t {
  kNr,
  kKindKey,
  kVec,
  kPrev,
  kNext,
  kPrevState,
  kIowait,
  kGap,
  kTid,
  kNs,
  kParent,
  kChild,
  kPid,
  kComm,
  kMm,
  kId,
  kNice,
  kUtime,
  kStime,
  kVtimeUtime,
  kVtimeStime,
  kVtimeGtime,
  kTb,
  kPurr,
  kSpurr,
  kKeyCount
};
constexpr std::array<std::string_view, kKeyCount> kKeyNames = {
    "nr",    "kind",        "vec",         "prev",        "next", "prev_state", "iowait", "gap",  "tid",
    "ns",    "parent",      "child",       "pid",         "comm", "mm",         "id",     "nice", "utime",
    "stime", "vtime_utime", "vtime_stime", "vtime_gtime", "tb",   "purr",       "spurr"};
static_assert(kKeyCount <= 32);

// The index of a name in a fixed set by one multiplicative hash of a few of its bytes and one
// compare; the multiplier is searched at compile time so that the set has no collision.
template <size_t N>
class NameIndex {
 public:
  constexpr explicit NameIndex(const std::array<std::string_view, N>& names) : names_(names) {
    for (uint64_t seed = 1;; ++seed) {
      uint64_t z = seed * 0x9e3779b97f4a7c15u;  // splitmix64 finaliser
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
      mul_ = (z ^ (z >> 31)) | 1;
      slot_.fill(-1);
      bool ok = true;
      for (size_t i = 0; i < N && ok; ++i) {
        int8_t& at = slot_[hash(names[i])];
        ok = at < 0;
        at = int8_t(i);
      }
      if (ok) return;
    }
  }
  constexpr int find(std::string_view s) const {
    if (s.empty()) return -1;
    const int i = slot_[hash(s)];
    return i >= 0 && names_[size_t(i)] == s ? i : -1;
  }

 private:
  constexpr size_t hash(std::string_view s) const {
    const size_t n = s.size();
    auto at = [&](size_t i) { return uint64_t(static_cast<unsigned char>(s[i])); };
    const uint64_t x = n ^ at(0) << 8 ^ at(n > 1 ? 1 : 0) << 16 ^ at(n > 1 ? (n + 1) / 2 : 0) << 24 ^ at(n - 1) << 32;
    return size_t((x * mul_) >> 57);  // 128 slots
  }
  std::array<std::string_view, N> names_;
  std::array<int8_t, 128> slot_{};
  uint64_t mul_ = 1;
};
constexpr NameIndex kKeyIndex(kKeyNames);
constexpr NameIndex kKindIndex(kKindNames);
constexpr NameIndex kPrevIndex(kPrevStateNames);
constexpr NameIndex kExcIndex(kExcKindNames);
constexpr NameIndex kReadIndex(kReadKindNames);
// exc_enter's kinds as its error message has always listed them.
constexpr std::array<std::string_view, 2> kExcSpellings = {kExcKindNames[1], kExcKindNames[0]};

// The keys a line kind accepts (in the order its error messages list them), the hardware
// counter keys if `hw`, and whether the bare flag 'kthread' is allowed.
struct KeySet {
  std::array<Key, 12> keys{};
  uint8_t n = 0;
  uint32_t mask = 0;
  bool kthread = false;
  constexpr KeySet() = default;
  constexpr KeySet(std::initializer_list<Key> ks, bool hw, bool kthread_flag = false) : kthread(kthread_flag) {
    for (Key k : ks) keys[n++] = k;
    if (hw)
      for (Key k : {kTb, kPurr, kSpurr}) keys[n++] = k;
    for (size_t i = 0; i < n; ++i) mask |= 1u << keys[i];
  }
};

}  // namespace

// Per-line buffers, kept across the lines of one parse so that a line allocates nothing.
struct ParseScratch {
  std::vector<PTok> toks;
  std::array<PArg, kKeyCount> args{};
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

// What a byte is to the tokenizer: part of a token, a blank, a comment start, or not allowed.
enum ByteClass : uint8_t { kTokenByte, kBlank, kComment, kBadByte };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> a{};
  for (int c = 0; c < 256; ++c) a[size_t(c)] = c < 0x20 || c >= 0x7f ? kBadByte : kTokenByte;
  a[' '] = a['\t'] = kBlank;
  a['#'] = kComment;
  return a;
}();

// The index of the first byte of `w` (8 bytes, little-endian) that cannot be inside a token
// (below '!', above '~', or '#'); 8 if none. Each test is the usual has-a-byte bit trick: a borrow
// or carry can mark bytes above a marked one, never below, so the lowest mark is exact.
inline unsigned first_non_token(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
  const uint64_t below = (w - ones * 0x21) & ~w;  // byte < 0x21 (high bit of w clear)
  const uint64_t above = (w + ones) | w;          // byte >= 0x7f
  const uint64_t x = w ^ (ones * '#');
  const uint64_t hash = (x - ones) & ~x;  // byte == '#'
  const uint64_t m = (below | above | hash) & high;
  return m ? unsigned(__builtin_ctzll(m)) / 8 : 8;
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_byte(std::string_view line, uint32_t lineno, size_t i) {
  throw Fail{{lineno,
              sat32(i + 1),
              fmt::format("unexpected byte 0x{:02x}; expected printable ASCII, space, tab "
                          "or '#' comment",
                          static_cast<unsigned char>(line[i])),
              {}}};
}

// Splits a comment-stripped line into tokens; rejects non-printable bytes.
void tokenize(std::string_view line, uint32_t lineno, uint32_t& eol, std::vector<PTok>& toks) {
  toks.clear();
  size_t i = 0;
  const size_t n = line.size();
  const char* p = line.data();
  eol = 1;
  while (i < n) {
    const uint8_t k = kByteClass[static_cast<unsigned char>(p[i])];
    if (k == kBlank) {
      ++i;
      continue;
    }
    if (k == kComment) break;
    if (k == kBadByte) bad_byte(line, lineno, i);
    const size_t start = i++;
    for (;;) {  // the token's end: 8 bytes at a time, then byte by byte
      if (std::endian::native == std::endian::little && i + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        const unsigned j = first_non_token(w);
        i += j;
        if (j < 8) break;
        continue;
      }
      while (i < n && kByteClass[static_cast<unsigned char>(p[i])] == kTokenByte) ++i;
      break;
    }
    if (i < n && kByteClass[static_cast<unsigned char>(p[i])] == kBadByte) bad_byte(line, lineno, i);
    toks.push_back({line.substr(start, i - start), sat32(start + 1)});
    eol = sat32(i + 1);
  }
}

template <class E, size_t N>
std::optional<E> lookup(std::string_view s, const NameIndex<N>& index) {
  const int i = index.find(s);
  if (i < 0) return std::nullopt;
  return E(i);
}

template <size_t N>
std::string spellings(const std::array<std::string_view, N>& all) {
  std::string out;
  for (std::string_view s : all) out += fmt::format("{}{}", out.empty() ? "" : ", ", s);
  return out;
}

class LineParser {
 public:
  LineParser(std::string_view line, uint32_t lineno, ParseScratch& s) : line_(lineno), toks_(s.toks), args_(s.args) {
    tokenize(line, lineno, eol_, toks_);
  }
  bool blank() const { return toks_.empty(); }
  const std::vector<PTok>& toks() const { return toks_; }

  [[noreturn, gnu::cold, gnu::noinline]] void fail(uint32_t col, std::string msg) const {
    throw Fail{{line_, col, std::move(msg), {}}};
  }
  [[noreturn, gnu::cold, gnu::noinline]] void missing(std::string_view expected) const {
    fail(eol_, fmt::format("unexpected end of line; expected {}", expected));
  }
  const PTok& tok(size_t i, std::string_view expected) const {
    if (i >= toks_.size()) [[unlikely]]
      missing(expected);
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
    if (s.size() - 1 < 19) {  // 1..19 digits cannot exceed 2^64-1
      uint64_t v = 0;
      bool ok = true;
      for (char c : s) {
        const auto d = unsigned(static_cast<unsigned char>(c)) - unsigned('0');
        ok &= d <= 9;
        v = v * 10 + d;
      }
      if (ok) return v;
    }
    return u64_checked(s, col, what);
  }
  uint64_t u64(const PTok& t, std::string_view what) const { return u64(t.s, t.col, what); }

  // Collects key=value args from token `first` on: only the keys of `ks`, each at most once;
  // the flag 'kthread' if `ks` allows it.
  void args(size_t first, const KeySet& ks, std::string_view ctx) {
    present_ = 0;
    kthread_ = false;
    ctx_ = ctx;
    for (size_t i = first; i < toks_.size(); ++i) {
      const PTok& t = toks_[i];
      auto eq = t.s.find('=');
      if (eq == std::string_view::npos) [[unlikely]] {
        if (!ks.kthread || t.s != "kthread")
          fail(t.col, fmt::format("expected key=value{}, got '{}'", ks.kthread ? " or 'kthread'" : "", show(t.s)));
        if (kthread_) fail(t.col, fmt::format("duplicate flag '{}'", t.s));
        kthread_ = true;
        continue;
      }
      std::string_view key = t.s.substr(0, eq);
      const int k = kKeyIndex.find(key);
      if (k < 0 || !(ks.mask >> k & 1)) [[unlikely]]
        unknown_key(t, key, ks, ctx);
      if (present_ >> k & 1) [[unlikely]]
        fail(t.col, fmt::format("duplicate key '{}'", key));
      present_ |= 1u << k;
      args_[size_t(k)] = {key, t.s.substr(eq + 1), t.col, sat32(t.col + eq + 1)};
    }
  }
  [[noreturn, gnu::cold, gnu::noinline]] void unknown_key(const PTok& t, std::string_view key, const KeySet& ks,
                                                          std::string_view ctx) const {
    std::string all;
    for (size_t j = 0; j < ks.n; ++j) all += fmt::format("{}{}", j ? ", " : "", kKeyNames[ks.keys[j]]);
    fail(t.col,
         fmt::format("unknown key '{}' for {}; expected {}{}", show(key), ctx, ks.n == 0 ? "no keys" : "one of ", all));
  }
  bool flag_kthread() const { return kthread_; }
  bool any_of(uint32_t keys) const { return present_ & keys; }
  const PArg* find(Key key) const { return present_ >> key & 1 ? &args_[key] : nullptr; }
  const PArg& req(Key key, std::string_view what) const {
    const PArg* a = find(key);
    if (!a) [[unlikely]]
      missing_key(key, what);
    return *a;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void missing_key(Key key, std::string_view what) const {
    fail(eol_,
         fmt::format("missing required key '{}' for {}; expected {}=<{}>", kKeyNames[key], ctx_, kKeyNames[key], what));
  }
  std::optional<uint64_t> opt_u64(Key key, std::string_view what) const {
    const PArg* a = find(key);
    if (!a) return std::nullopt;
    return u64(a->val, a->vcol, what);
  }
  uint64_t req_u64(Key key, std::string_view what) const {
    const PArg& a = req(key, what);
    return u64(a.val, a.vcol, what);
  }
  template <class E, size_t N>
  std::optional<E> opt_enum(Key key, const NameIndex<N>& index, const std::array<std::string_view, N>& all) const {
    const PArg* a = find(key);
    if (!a) return std::nullopt;
    if (auto e = lookup<E>(a->val, index)) return e;
    fail(a->vcol, fmt::format("expected {}= one of {}, got '{}'", kKeyNames[key], spellings(all), show(a->val)));
  }
  std::optional<std::string> opt_comm() const {
    const PArg* a = find(kComm);
    if (!a) return std::nullopt;
    if (a->val.empty() || a->val.size() > 15)
      fail(a->vcol, fmt::format("expected comm of 1..15 characters, got '{}'", show(a->val)));
    return std::string(a->val);
  }

 private:
  // Any length: digits only, at most 2^64-1.
  [[gnu::noinline]] uint64_t u64_checked(std::string_view s, uint32_t col, std::string_view what) const {
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

  uint32_t line_;
  uint32_t eol_ = 1;
  std::vector<PTok>& toks_;
  std::array<PArg, kKeyCount>& args_;
  uint32_t present_ = 0;  // bit k: args_[k] holds key k
  bool kthread_ = false;
  std::string_view ctx_;
};

constexpr KeySet kTaskKeys({kPid, kComm, kNice, kMm, kUtime, kStime, kVtimeUtime, kVtimeStime, kVtimeGtime}, false,
                           true);

TaskDecl parse_task(LineParser& p) {
  TaskDecl d;
  d.tid = p.u64(p.tok(1, "task tid"), "task tid");
  if (d.tid == 0) p.fail(p.toks()[1].col, "expected a non-zero tid (0 is the idle task)");
  p.args(2, kTaskKeys, "task");
  d.pid = p.opt_u64(kPid, "thread-group id").value_or(d.tid);
  d.kthread = p.flag_kthread();
  if (!p.find(kComm)) p.req(kComm, "name");
  d.comm = *p.opt_comm();
  if (const PArg* a = p.find(kNice)) {
    std::string_view s = a->val;
    bool neg = !s.empty() && s[0] == '-';
    uint64_t v = p.u64(s.substr(neg ? 1 : 0), a->vcol, "nice value -20..19");
    if (neg ? v > 20 : v > 19) p.fail(a->vcol, fmt::format("nice {} out of range; expected -20..19", s));
    d.nice = neg ? -int(v) : int(v);
  }
  d.mm = p.opt_u64(kMm, "mm id");
  if (d.kthread && d.mm) p.fail(p.find(kMm)->col, "unexpected mm= on a kthread; expected no mm");
  if (!d.kthread && !d.mm) p.req(kMm, "mm id (user tasks have an mm)");
  d.utime = p.opt_u64(kUtime, "ns");
  d.stime = p.opt_u64(kStime, "ns");
  d.vtime_utime = p.opt_u64(kVtimeUtime, "ns");
  d.vtime_stime = p.opt_u64(kVtimeStime, "ns");
  d.vtime_gtime = p.opt_u64(kVtimeGtime, "ns");
  return d;
}

// The keys of each event kind (the hardware counter keys on all).
constexpr std::array<KeySet, kKindCount> kEventKeys = [] {
  std::array<KeySet, kKindCount> a{};
  a.fill(KeySet({}, true));
  a[size_t(Kind::SyscallEnter)] = KeySet({kNr}, true);
  a[size_t(Kind::ExcEnter)] = KeySet({kKindKey}, true);
  a[size_t(Kind::IrqEnter)] = KeySet({kVec}, true);
  a[size_t(Kind::SoftirqEnter)] = KeySet({kVec}, true);
  a[size_t(Kind::Switch)] = KeySet({kPrev, kNext, kPrevState, kIowait, kGap}, true);
  a[size_t(Kind::Wakeup)] = KeySet({kTid}, true);
  a[size_t(Kind::Steal)] = KeySet({kNs}, true);
  a[size_t(Kind::Fork)] = KeySet({kParent, kChild, kPid, kComm, kMm}, true, true);
  a[size_t(Kind::Runtime)] = KeySet({kTid, kNs}, true);
  a[size_t(Kind::MmExit)] = KeySet({kMm}, true);
  a[size_t(Kind::Read)] = KeySet({kKindKey, kTid, kId}, true);
  return a;
}();

// Fills `e`, which holds the defaults of Event (its fields of other kinds must stay so).
void parse_event(LineParser& p, uint32_t lineno, uint32_t ncpus, Event& e) {
  e.line = lineno;
  e.ts = p.u64(p.tok(0, "timestamp"), "timestamp in ns");
  const PTok& ct = p.tok(1, "cpu number");
  uint64_t cpu = p.u64(ct, "cpu number");
  if (cpu >= ncpus) p.fail(ct.col, fmt::format("cpu {} out of range; expected 0..{}", cpu, ncpus - 1));
  e.cpu = uint32_t(cpu);
  const PTok& kt = p.tok(2, "event kind");
  auto kind = lookup<Kind>(kt.s, kKindIndex);
  if (!kind)
    p.fail(kt.col, fmt::format("unknown event kind '{}'; expected one of {}", show(kt.s), spellings(kKindNames)));
  e.kind = *kind;
  p.args(3, kEventKeys[size_t(e.kind)], kKindNames[size_t(e.kind)]);
  switch (e.kind) {
    case Kind::SyscallEnter: e.a = p.req_u64(kNr, "syscall number"); break;
    case Kind::ExcEnter:
      e.exc_kind = p.opt_enum<ExcKind>(kKindKey, kExcIndex, kExcSpellings).value_or(ExcKind::Other);
      break;
    case Kind::IrqEnter: e.a = p.opt_u64(kVec, "vector").value_or(0); break;
    case Kind::SoftirqEnter: e.a = p.req_u64(kVec, "softirq vector"); break;
    case Kind::Switch:
      e.a = p.req_u64(kPrev, "tid");
      e.b = p.req_u64(kNext, "tid");
      e.prev_state = p.opt_enum<PrevState>(kPrevState, kPrevIndex, kPrevStateNames).value_or(PrevState::Runnable);
      if (auto io = p.opt_u64(kIowait, "0 or 1")) {
        if (*io > 1) p.fail(p.find(kIowait)->vcol, "expected iowait=0 or iowait=1");
        e.iowait = *io == 1;
      }
      e.switch_gap = p.opt_u64(kGap, "ns between the switch's two clock reads");
      break;
    case Kind::Wakeup: e.a = p.req_u64(kTid, "tid"); break;
    case Kind::Steal: e.a = p.req_u64(kNs, "stolen ns"); break;
    case Kind::Fork:
      e.a = p.req_u64(kParent, "tid");
      e.b = p.req_u64(kChild, "tid");
      e.fork_pid = p.opt_u64(kPid, "thread-group id");
      e.fork_mm = p.opt_u64(kMm, "mm id");
      e.fork_kthread = p.flag_kthread();
      e.fork_comm = p.opt_comm().value_or("");
      break;
    case Kind::Runtime:
      e.a = p.req_u64(kTid, "tid");
      e.b = p.req_u64(kNs, "runtime ns");
      break;
    case Kind::MmExit: e.a = p.req_u64(kMm, "mm id"); break;
    case Kind::Read: {
      if (!p.find(kKindKey)) p.req(kKindKey, spellings(kReadKindNames));
      e.read_kind = *p.opt_enum<ReadKind>(kKindKey, kReadIndex, kReadKindNames);
      e.a = p.opt_u64(kTid, "tid").value_or(0);
      if (const PArg* t = p.find(kTid); t && e.a == 0)
        p.fail(t->vcol, "expected a non-zero tid (omit tid= to read the current task)");
      e.read_id = p.opt_u64(kId, "read id").value_or(0);
      break;
    }
    default: break;
  }
  if (p.any_of(1u << kTb | 1u << kPurr | 1u << kSpurr)) {
    e.hw.tb = p.opt_u64(kTb, "timebase value");
    e.hw.purr = p.opt_u64(kPurr, "PURR value");
    e.hw.spurr = p.opt_u64(kSpurr, "SPURR value");
  }
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
          const PArg* mm = p.find(kMm);
          p.fail(mm ? mm->vcol : toks[1].col,
                 fmt::format("task {} is a thread of pid {}, whose task {} has {}; expected the same", d.tid, d.pid,
                             o->tid, o->mm ? fmt::format("mm={}", *o->mm) : std::string("no mm (kthread)")));
        }
        header_.tasks.push_back(std::move(d));
      } else {
        p.fail(toks[0].col, fmt::format("expected 'task' or 'events' line, got '{}'", show(toks[0].s)));
      }
      break;
    case kEvents:
      ev = Event{};
      parse_event(p, lineno, header_.ncpus, ev);
      return true;
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

// The number of '\n' in `text`, 8 bytes at a time.
size_t count_lines(std::string_view text) {
  constexpr uint64_t low7 = 0x7f7f7f7f7f7f7f7fu, nl = 0x0a0a0a0a0a0a0a0au;
  size_t n = 0, i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    const uint64_t x = w ^ nl;                   // a zero byte where w has '\n'
    const uint64_t t = ((x & low7) + low7) | x;  // high bit set where x's byte is not zero
    // one bit per '\n' byte, summed by a multiply (no libgcc popcount call on baseline x86-64)
    n += size_t((((~t & ~low7) >> 7) * 0x0101010101010101u) >> 56);
  }
  for (; i < text.size(); ++i) n += text[i] == '\n';
  return n;
}

Trace parse_or_throw(std::string_view text) {
  Trace t;
  // At most one event a line, and a line of an event has at least 8 bytes and its '\n': the
  // vector is allocated once rather than moved through a doubling chain. Only a hint: the pages
  // are touched only as events fill them, and a hostile input (millions of comment lines) that
  // asks for more than the system grants parses without it.
  try {
    t.events.reserve(std::min(count_lines(text) + 1, text.size() / 9 + 1));
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {}
  Parser parser;
  uint32_t last = 0;
  Event header_line;
  for_each_line(text, [&](std::string_view line, uint32_t lineno) {
    last = lineno;
    // An event line is parsed into its place in the vector (not moved there).
    Event& ev = parser.in_events() ? t.events.emplace_back() : header_line;
    auto r = parser.line(line, lineno, ev);
    if (!r) throw Fail{r.error()};
    if (!r.value() && &ev != &header_line) t.events.pop_back();
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
