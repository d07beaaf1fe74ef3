// Helpers shared by the perf-script parser and converters (model/trace/perf*.cpp): tokens of a
// tracepoint's text. Internal to kacct_trace.
#pragma once
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kacct::trace::perf::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t'; }
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
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
// key=value fields of a tracepoint's text ("prev_comm=a b" keeps only "a"; we need numbers).
// (Word by word: a search for the key itself stops at every letter it starts with.)
inline std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  const std::size_t n = text.size(), k = key.size();
  for (std::size_t i = 0; i < n;) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    // i starts a word: the start of the text or after a blank
    if (i + k < n && text[i + k] == '=' && text.compare(i, k, key) == 0) {
      std::size_t end = i + k + 1;
      while (end < n && !is_space(text[end])) ++end;
      return text.substr(i + k + 1, end - (i + k + 1));
    }
    while (i < n && !is_space(text[i])) ++i;
  }
  return std::nullopt;
}
inline std::optional<std::uint64_t> num_field(std::string_view text, std::string_view key) {
  auto v = field(text, key);
  if (!v) return std::nullopt;
  return to_u64(*v);
}

}  // namespace kacct::trace::perf::detail
