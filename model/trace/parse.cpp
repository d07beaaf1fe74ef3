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
#include <span>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

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

// 8 and 4 bytes as a little-endian number (the first byte the lowest), whatever the host.
inline uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}
inline uint64_t load4(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap32(w);
  return w;
}
constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u, kLow7 = 0x7f7f7f7f7f7f7f7fu;

// a == b for the short names of this format without a call to memcmp: two overlapping loads.
constexpr bool same(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (std::is_constant_evaluated() || n > 16) return a == b;
  const char *x = a.data(), *y = b.data();
  if (n >= 8) return load8(x) == load8(y) && load8(x + n - 8) == load8(y + n - 8);
  if (n >= 4) return load4(x) == load4(y) && load4(x + n - 4) == load4(y + n - 4);
  return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

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
    return i >= 0 && same(names_[size_t(i)], s) ? i : -1;
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
  std::vector<PTok> toks = std::vector<PTok>(32);  // the line's tokens are the first ntoks (it only grows)
  size_t ntoks = 0;
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
  const uint64_t below = (w - kOnes * 0x21) & ~w;  // byte < 0x21 (high bit of w clear)
  const uint64_t above = (w + kOnes) | w;          // byte >= 0x7f
  const uint64_t x = w ^ (kOnes * '#');
  const uint64_t hash = (x - kOnes) & ~x;  // byte == '#'
  const uint64_t m = (below | above | hash) & kHigh;
  return m ? unsigned(__builtin_ctzll(m)) / 8 : 8;
}

// The high bit of each byte of `w` that is '=' (exact: no carry crosses a byte).
inline uint64_t eq_bytes(uint64_t w) {
  const uint64_t x = w ^ (kOnes * '=');
  return ~(((x & kLow7) + kLow7) | x) & kHigh;
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_byte(std::string_view line, uint32_t lineno, size_t i) {
  throw Fail{{lineno,
              sat32(i + 1),
              fmt::format("unexpected byte 0x{:02x}; expected printable ASCII, space, tab "
                          "or '#' comment",
                          static_cast<unsigned char>(line[i])),
              {}}};
}

[[gnu::cold, gnu::noinline]] void grow(std::vector<PTok>& toks) { toks.resize(std::max<size_t>(16, 2 * toks.size())); }

// One bit per byte of `w` (bit k for byte k) from the high bits of its bytes.
inline uint64_t byte_bits(uint64_t m) { return ((m >> 7) * 0x0102040810204080u) >> 56; }

// The common line (8..63 bytes: printable ASCII without '#', tokens separated by spaces) as bit
// masks, 8 bytes at a time: the same tokens as the byte-wise loop below. False: use that loop.
bool tokenize_plain(std::string_view line, uint32_t& eol, ParseScratch& s) {
  const size_t n = line.size();
  const char* p = line.data();
  if (n < 8 || n > 63 || s.toks.size() < 32) return false;
  uint64_t space = 0, other = 0;  // bit k: byte k is ' '; high bits: some byte is not a token byte nor ' '
  for (size_t k = 0; k < n; k += 8) {
    // near the end, the line's last 8 bytes shifted down, spaces in place of the bytes past its end
    const uint64_t w =
        k + 8 <= n ? load8(p + k) : load8(p + n - 8) >> (8 * (k + 8 - n)) | (kOnes * ' ') << (8 * (n - k));
    const uint64_t x = w ^ (kOnes * '#'), y = w ^ (kOnes * ' ');
    // has-a-byte tests (a borrow or carry marks only bytes above a marked one: some byte is exact)
    other |= ((w - kOnes * 0x20) & ~w) | ((w + kOnes) | w) | ((x - kOnes) & ~x);  // < 0x20, >= 0x7f, '#'
    space |= byte_bits(~(((y & kLow7) + kLow7) | y) & kHigh) << k;                // == ' ' (exact)
  }
  if (other & kHigh) return false;
  uint64_t tok = ~space & ((uint64_t{1} << n) - 1);
  PTok* out = s.toks.data();
  size_t nt = 0, end = 0;
  while (tok) {  // at most 32 tokens in 63 bytes
    const unsigned b = unsigned(__builtin_ctzll(tok));
    end = b + unsigned(__builtin_ctzll(~(tok >> b)));  // n < 64: a 0 bit follows every token
    out[nt++] = {std::string_view(p + b, end - b), uint32_t(b + 1)};
    tok &= ~uint64_t{0} << end;
  }
  s.ntoks = nt;
  eol = nt ? uint32_t(end + 1) : 1;
  return true;
}

// Splits a comment-stripped line into tokens (s.toks, s.ntoks); rejects non-printable bytes.
void tokenize(std::string_view line, uint32_t lineno, uint32_t& eol, ParseScratch& s) {
  if (tokenize_plain(line, eol, s)) return;
  PTok* out = s.toks.data();
  size_t nt = 0, cap = s.toks.size(), last_end = 0;
  size_t i = 0;
  const size_t n = line.size();
  const char* p = line.data();
  while (i < n) {
    const uint8_t k = kByteClass[static_cast<unsigned char>(p[i])];
    if (k == kBlank) {
      ++i;
      continue;
    }
    if (k == kComment) break;
    if (k == kBadByte) bad_byte(line, lineno, i);
    const size_t start = i++;
    if (n >= 8) {
      // The token's end 8 bytes at a time; near the line's end, the line's last 8 bytes shifted
      // down so that the bytes past its end read as 0 (which ends a token).
      for (unsigned j = 8; j == 8 && i < n; i += j)
        j = first_non_token(i + 8 <= n ? load8(p + i) : load8(p + n - 8) >> (8 * (i + 8 - n)));
      i = std::min(i, n);
    } else {
      while (i < n && kByteClass[static_cast<unsigned char>(p[i])] == kTokenByte) ++i;
    }
    if (i < n && kByteClass[static_cast<unsigned char>(p[i])] == kBadByte) bad_byte(line, lineno, i);
    if (nt == cap) [[unlikely]] {
      grow(s.toks);
      out = s.toks.data(), cap = s.toks.size();
    }
    out[nt++] = {line.substr(start, i - start), sat32(start + 1)};
    last_end = i;
  }
  s.ntoks = nt;
  eol = nt ? sat32(last_end + 1) : 1;
}

// The offset of the first '=' in `s` (npos if none), 8 bytes at a time.
inline size_t find_eq(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8)
    if (const uint64_t m = eq_bytes(load8(s.data() + i))) return i + unsigned(__builtin_ctzll(m)) / 8;
  for (; i < s.size(); ++i)
    if (s[i] == '=') return i;
  return std::string_view::npos;
}

// Non-zero if a byte of `w` is not an ASCII digit (exact for each byte).
inline uint64_t non_digits(uint64_t w) {
  const uint64_t lo = w & kLow7;
  return (w | ~(lo + kOnes * (0x80 - '0')) | (lo + kOnes * (0x80 - ':'))) & kHigh;
}
// The value of 8 ASCII digits, the first (lowest) byte the most significant.
inline uint64_t digits8(uint64_t w) {
  w = ((w & 0x0F0F0F0F0F0F0F0Fu) * 2561) >> 8;
  w = ((w & 0x00FF00FF00FF00FFu) * 6553601) >> 16;
  return ((w & 0x0000FFFF0000FFFFu) * 42949672960001u) >> 32;
}
constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

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
  LineParser(std::string_view line, uint32_t lineno, ParseScratch& s) : line_(lineno), args_(s.args) {
    tokenize(line, lineno, eol_, s);
    toks_ = {s.toks.data(), s.ntoks};
  }
  bool blank() const { return toks_.empty(); }
  std::span<const PTok> toks() const { return toks_; }

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
    const size_t n = s.size();
    const char* p = s.data();
    if (n >= 4 && n <= 16) {  // 4..16 digits as one or two words of 8
      uint64_t hi, lo = kOnes * '0';
      if (n < 8) {  // the digits at the word's top, '0's below them (two overlapping loads)
        const unsigned pad = 8 * unsigned(8 - n);
        hi = load4(p + n - 4) << 32 | load4(p) << pad | (kOnes * '0' & ((uint64_t{1} << pad) - 1));
      } else {
        hi = load8(p);
        if (n > 8) {  // the last n - 8 digits, the ones hi has replaced by '0'
          const uint64_t keep = ~uint64_t{0} << 8 * (16 - n);
          lo = (load8(p + n - 8) & keep) | (kOnes * '0' & ~keep);
        }
      }
      if (!(non_digits(hi) | non_digits(lo))) [[likely]]
        return n <= 8 ? digits8(hi) : digits8(hi) * kPow10[n - 8] + digits8(lo);
    } else if (n - 1 < 19) {  // 1..19 digits cannot exceed 2^64-1
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
      const size_t eq = find_eq(t.s);
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
  std::span<const PTok> toks_;
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

// ev = Event{} member by member, keeping fork_comm's storage (a move-assigned temporary cost
// ~60 instructions a line). A member added to Event stops the binding below from compiling.
void reset(Event& e) {
  static const Event d{};
  auto& [ts, cpu, kind, line, a, b, prev_state, iowait, switch_gap, exc_kind, read_kind, read_id, fork_pid, fork_mm,
         fork_kthread, fork_comm, hw] = e;
  ts = d.ts, cpu = d.cpu, kind = d.kind, line = d.line, a = d.a, b = d.b;
  prev_state = d.prev_state, iowait = d.iowait, switch_gap = d.switch_gap, exc_kind = d.exc_kind;
  read_kind = d.read_kind, read_id = d.read_id, fork_pid = d.fork_pid, fork_mm = d.fork_mm;
  fork_kthread = d.fork_kthread, hw = d.hw;
  fork_comm.clear();
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
      reset(ev);
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

// The number of '\n' in `text`, 16 bytes at a time (GCC's generic vectors: SSE2 on x86-64):
// each byte lane counts up to 255 newlines, then the lanes are summed.
size_t count_lines(std::string_view text) {
  using V = unsigned char __attribute__((vector_size(16)));
  const V nl = V{} + '\n';
  size_t n = 0, i = 0;
  while (i + 16 <= text.size()) {
    V acc{};
    for (const size_t stop = std::min(text.size(), i + 255 * 16); i + 16 <= stop; i += 16) {
      V x;
      std::memcpy(&x, text.data() + i, 16);
      acc -= V(x == nl);  // a lane of x == nl is -1 where equal
    }
    for (int k = 0; k < 16; ++k) n += acc[k];
  }
  for (; i < text.size(); ++i) n += text[i] == '\n';
  return n;
}

// Asks for 2 MB pages (transparent huge pages, "madvise" mode) for a large buffer about to be
// filled: with 4 kB pages the page faults of parse()'s event vector took as much CPU time as the
// parsing on this project's (virtualised) machine (docs/performance.md). Only a hint.
void huge_pages([[maybe_unused]] void* p, [[maybe_unused]] size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t huge = uintptr_t{2} << 20;
  if (bytes < 2 * huge) return;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(huge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#endif
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
  huge_pages(t.events.data(), t.events.capacity() * sizeof(Event));
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
      ParseScratch scratch;
      tokenize(s, n, eol, scratch);
      const std::span<const PTok> toks(scratch.toks.data(), scratch.ntoks);
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
