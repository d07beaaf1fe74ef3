// Helpers shared by the perf-script parser and converters (model/trace/perf*.cpp): tokens of a
// tracepoint's text. Internal to kacct_trace.
#pragma once
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace kacct::trace::perf::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t'; }

// 8 bytes of text from p as a little-endian number (the first byte the lowest).
inline std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}
// The high bit of each byte of w that is c (exact: no carry crosses a byte).
inline std::uint64_t bytes_eq(std::uint64_t w, char c) {
  constexpr std::uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
  const std::uint64_t x = w ^ (ones * static_cast<unsigned char>(c));
  return ~(((x & low7) + low7) | x) & ~low7;
}
// The first byte of s at or after i that is (want_blank) or is not (!want_blank) a blank (' ' or
// '\t'), or ':' if `colon`; s.size() if none. 8 bytes at a time: perf script pads its columns
// with runs of blanks, and a sched_switch's text is ~110 bytes.
template <bool want_blank, bool colon = false>
inline std::size_t scan(std::string_view s, std::size_t i) {
  const std::size_t n = s.size();
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = load8(s.data() + i);
    const std::uint64_t blank = bytes_eq(w, ' ') | bytes_eq(w, '\t');
    std::uint64_t m = want_blank ? blank : ~blank & 0x8080808080808080u;
    if (colon) m |= bytes_eq(w, ':');
    if (m) return i + unsigned(__builtin_ctzll(m)) / 8;
  }
  while (i < n && is_space(s[i]) != want_blank && !(colon && s[i] == ':')) ++i;
  return i;
}
// The first blank of s at or after i; s.size() if none.
inline std::size_t next_space(std::string_view s, std::size_t i) { return scan<true>(s, i); }
// s.find_first_of(" \t") without a memchr call per byte.
inline std::size_t find_blank(std::string_view s) {
  const std::size_t i = next_space(s, 0);
  return i == s.size() ? std::string_view::npos : i;
}
inline std::string_view trim(std::string_view s) {
  s.remove_prefix(scan<false>(s, 0));
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
inline std::optional<std::uint64_t> to_u64(std::string_view s, int base = 10) {
  std::uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  if (base == 10) {  // from_chars' answer without its generality (6 calls a sample: 5% of perf-convert)
    for (const char c : s) {
      const unsigned d = static_cast<unsigned char>(c) - unsigned{'0'};
      if (d > 9 || __builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) return std::nullopt;
    }
    return v;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
inline bool all_hex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}
// key=value fields of a tracepoint's text ("prev_comm=a b" keeps only "a"; we need numbers): the
// first word (at the text's start or after a blank) that is key followed by '='. Found from the
// text's '=' signs, 8 bytes at a time (a key has none, so its '=' is the first of its word); a
// search for the key itself stops at every letter it starts with.
inline std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  const std::size_t n = text.size(), k = key.size();
  auto match = [&](std::size_t q) {  // text[q] == '='
    return q >= k && (q == k || is_space(text[q - k - 1])) && text.compare(q - k, k, key) == 0;
  };
  auto value = [&](std::size_t q) { return text.substr(q + 1, next_space(text, q + 1) - (q + 1)); };
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::uint64_t m = bytes_eq(load8(text.data() + i), '='); m; m &= m - 1)
      if (const std::size_t q = i + unsigned(__builtin_ctzll(m)) / 8; match(q)) return value(q);
  for (; i < n; ++i)
    if (text[i] == '=' && match(i)) return value(i);
  return std::nullopt;
}
inline std::optional<std::uint64_t> num_field(std::string_view text, std::string_view key) {
  auto v = field(text, key);
  if (!v) return std::nullopt;
  return to_u64(*v);
}

}  // namespace kacct::trace::perf::detail
