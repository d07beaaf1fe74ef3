// Blank-separated tokens of one line of a text format (the event scripts of model/script),
// with their 1-based byte columns for error messages.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kacct::text {

struct Tok {
  std::string_view s;
  std::uint32_t col;
};

// Splits on spaces, tabs and CR; with `hash_comments`, '#' ends the line.
inline std::vector<Tok> split(std::string_view line, bool hash_comments) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::vector<Tok> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || (hash_comments && line[i] == '#')) break;
    std::size_t j = i;
    while (j < line.size() && !blank(line[j]) && !(hash_comments && line[j] == '#')) ++j;
    out.push_back({line.substr(i, j - i), std::uint32_t(i + 1)});
    i = j;
  }
  return out;
}

// An error message quoting user input, cut to `max` bytes then "... (N bytes)": a 10 MB bad
// line must not come back whole.
inline std::string cut(std::string s, std::size_t max = 200) {
  if (s.size() <= max) return s;
  const auto n = s.size();
  s.resize(max);
  return s + "... (" + std::to_string(n) + " bytes)";
}

}  // namespace kacct::text
