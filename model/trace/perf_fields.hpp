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
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
inline bool all_hex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}
// key=value fields of a tracepoint's text ("prev_comm=a b" keeps only "a"; we need numbers).
inline std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  for (std::size_t i = text.find(key); i != std::string_view::npos; i = text.find(key, i + 1)) {
    if ((i == 0 || is_space(text[i - 1])) && i + key.size() < text.size() && text[i + key.size()] == '=') {
      std::string_view v = text.substr(i + key.size() + 1);
      std::size_t end = 0;
      while (end < v.size() && !is_space(v[end])) ++end;
      return v.substr(0, end);
    }
  }
  return std::nullopt;
}
inline std::optional<std::uint64_t> num_field(std::string_view text, std::string_view key) {
  auto v = field(text, key);
  if (!v) return std::nullopt;
  return to_u64(*v);
}

}  // namespace kacct::trace::perf::detail
