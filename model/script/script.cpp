// The script runtime's non-template parts: lines, signatures, operand helpers (script.hpp).
#include "model/script/script.hpp"

#include <charconv>

namespace kacct::script {

void Arg::fail(std::string message) const { detail::fail(line, col, std::move(message)); }

std::uint64_t number(const Arg& a, std::uint64_t lo, std::uint64_t hi, std::string_view what) {
  std::uint64_t v = 0;
  auto r = std::from_chars(a.s.data(), a.s.data() + a.s.size(), v);
  if (a.s.empty() || r.ec != std::errc() || r.ptr != a.s.data() + a.s.size())
    a.fail("expected an unsigned number, got '" + text::cut(std::string(a.s), 80) + "'");
  if (v < lo || v > hi) a.fail(std::string(what) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

std::size_t choice(const Arg& a, std::span<const std::string_view> names, std::string_view what) {
  std::string all;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == a.s) return i;
    all += (i ? ", " : "") + std::string(names[i]);
  }
  a.fail("unknown " + std::string(what) + " '" + text::cut(std::string(a.s), 80) + "' (" + all + ")");
}

bool on_off(const Arg& a) {
  static constexpr std::string_view kNames[] = {"off", "on"};
  return choice(a, kNames, "setting") == 1;
}

arch::KVersion version(const Arg& a) {
  const auto ver = arch::parse_version(a.s);
  if (!ver) a.fail("version must be MAJOR.MINOR[.POINT] or a distro build (e.g. 6.6, 6.1.192, 6.1.192-3)");
  if (ver->major < 2 || ver->major > 9 || ver->minor > 99) {
    std::string builds;
    for (const auto& b : arch::distro_builds) builds += (builds.empty() ? "" : ", ") + std::string(b.name);
    a.fail("unknown version " + text::cut(std::string(a.s), 80) +
           ": known are the releases 2.0 to 9.99 with their point releases " +
           "(e.g. 6.6, 6.1.192) and the distro builds " + builds);
  }
  return *ver;
}

namespace detail {

void fail(std::uint32_t line, std::uint32_t col, std::string message) {
  throw Failure{ParseError{line, col, text::cut(std::move(message), 400)}};
}

std::vector<Slot> compile(std::string_view sig) {
  std::vector<Slot> out;
  for (const auto& t : text::split(sig, false)) {
    if (t.s.size() > 2 && t.s.front() == '[' && t.s.back() == ']')
      out.push_back({Slot::Flag, t.s.substr(1, t.s.size() - 2)});
    else if (t.s.front() >= 'A' && t.s.front() <= 'Z')
      out.push_back({Slot::Operand, t.s});
    else
      out.push_back({Slot::Word, t.s});
  }
  return out;
}

std::vector<Line> lines(std::string_view text, std::uint32_t& count) {
  std::vector<Line> out;
  std::size_t pos = 0;
  count = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const auto line = text.substr(pos, nl - pos);
    ++count;
    const auto hash = line.find('#');
    for (std::size_t i = 0; i < line.size(); ++i) {
      const auto ch = static_cast<unsigned char>(line[i]);
      if (ch < 0x20 && ch != '\t' && ch != '\r') fail(count, std::uint32_t(i + 1), "control character");
      if (ch >= 0x80 && i < hash) fail(count, std::uint32_t(i + 1), "non-ASCII character outside a comment");
    }
    auto toks = text::split(line, true);
    if (!toks.empty()) out.push_back({count, std::move(toks)});
    if (nl == text.size()) break;
    pos = nl + 1;
  }
  return out;
}

std::vector<Arg> operands(const Line& l, std::string_view sig, const std::vector<Slot>& slots) {
  const std::string name = "'" + text::cut(std::string(l.toks[0].s), 80) + "'";
  std::size_t required = 0;
  for (const auto& s : slots) required += s.kind != Slot::Flag;
  const std::size_t given = l.toks.size() - 1;
  if (given < required) {
    const auto& last = l.toks.back();
    fail(l.n, last.col + std::uint32_t(last.s.size()), name + " takes " + std::string(sig));
  }
  if (given > slots.size())
    fail(l.n, l.toks[slots.size() + 1].col,
         name + ": unexpected '" + text::cut(std::string(l.toks[slots.size() + 1].s), 80) + "'");
  std::vector<Arg> out;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    if (i + 1 >= l.toks.size()) {  // an absent trailing flag
      out.push_back({});
      continue;
    }
    const Arg a = l.arg(i + 1);
    if (s.kind == Slot::Word) {
      if (a.s != s.text) a.fail("expected '" + std::string(s.text) + "'");
    } else if (s.kind == Slot::Flag) {
      if (a.s != s.text)
        a.fail(name + ": unexpected '" + text::cut(std::string(a.s), 80) + "' (expected '" + std::string(s.text) +
               "' or nothing)");
      out.push_back(a);
    } else {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace detail
}  // namespace kacct::script
