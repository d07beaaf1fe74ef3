// The runtime of the event-script formats (docs/script-format.md): lines and tokens, the
// header, repeat blocks, errors at LINE:COL, the canonical writer and the checking run loop.
// A mechanism declares its header directives, its operand kinds and its events (name, operand
// signature); parsing and writing both follow those declarations, so they cannot drift.
//
// Convention: nothing here throws on bad input. parse() returns a Result holding the program or
// the first error with its position; a run reports an event that cannot happen as an error at
// the event's line. (Exceptions are used inside a parse to unwind and never leave it.)
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "arch/version.hpp"
#include "model/trace/tokens.hpp"

namespace kacct::script {

struct ParseError {
  std::uint32_t line = 0, col = 0;  // 1-based; line 0: the program was built, not parsed
  std::string message;
  std::string str() const { return std::to_string(line) + ":" + std::to_string(col) + ": " + message; }
  bool operator==(const ParseError&) const = default;
};

// The program, or the first error.
template <class T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}
  Result(ParseError e) : v_(std::move(e)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Reading the value of a failed parse is a programming error (a built-in script that does
  // not parse), hence logic_error.
  T& value() & { return get(); }
  const T& value() const& { return const_cast<Result*>(this)->get(); }
  T&& value() && { return std::move(get()); }
  const ParseError& error() const { return std::get<1>(v_); }

 private:
  T& get() {
    if (!ok()) throw std::logic_error("script does not parse: " + error().str());
    return std::get<0>(v_);
  }
  std::variant<T, ParseError> v_;
};

// One operand token with its position; fail() reports an error there.
struct Arg {
  std::string_view s;
  std::uint32_t line = 0, col = 0;
  [[noreturn]] void fail(std::string message) const;
};
// An unsigned decimal in lo..hi ("expected an unsigned number" / "WHAT must be in lo..hi").
std::uint64_t number(const Arg&, std::uint64_t lo, std::uint64_t hi, std::string_view what);
// The index of a.s in `names` ("unknown WHAT 'x' (a, b, ...)").
std::size_t choice(const Arg&, std::span<const std::string_view> names, std::string_view what);
bool on_off(const Arg&);
arch::KVersion version(const Arg&);  // MAJOR.MINOR[.POINT] (2..9 . 0..99) or a distro build

// The source line of event i (0 when the program was built in code).
template <class Program>
std::uint32_t line_of(const Program& p, std::size_t i) {
  return i < p.lines.size() ? p.lines[i] : 0;
}

// How a run of a program ended (every mechanism's run result extends this).
struct RunStatus {
  std::size_t steps = 0;                 // events run to completion
  std::optional<std::size_t> failed_at;  // the event the run stopped at (a violation or `error`)
  std::uint32_t line = 0;                // its source line (0: built in code)
  std::optional<ParseError> error;       // failed_at cannot happen in the state it was reached in
};
// What one event of a run did.
struct Step {
  enum Kind { Ok, Violated, Impossible } kind = Ok;
  std::string why;  // Impossible: why the event cannot happen
};
inline Step ok() { return {Step::Ok, {}}; }
inline Step violated() { return {Step::Violated, {}}; }
inline Step impossible(std::string why) { return {Step::Impossible, std::move(why)}; }

namespace detail {
struct Slot {
  enum Kind { Word, Operand, Flag } kind;  // literal word, placeholder, optional trailing word
  std::string_view text;
  int operand = -1;  // index into the operand kinds
};
std::vector<Slot> compile(std::string_view signature);
struct Line {
  std::uint32_t n;
  std::vector<text::Tok> toks;
  Arg arg(std::size_t i) const { return {toks[i].s, n, toks[i].col}; }
};
// The non-blank lines of text (comments stripped); fails on control characters anywhere and
// on non-ASCII bytes outside comments. `count`: the number of lines, blank ones included.
std::vector<Line> lines(std::string_view text, std::uint32_t& count);
// Checks a line against a compiled signature (arity, literal words, flags); returns the
// operand arguments in order, a flag as the word itself or an empty Arg.
std::vector<Arg> operands(const Line&, std::string_view signature, const std::vector<Slot>&);
[[noreturn]] void fail(std::uint32_t line, std::uint32_t col, std::string message);
struct Failure {
  ParseError error;
};
}  // namespace detail

// A script format: what a mechanism declares. Program needs `events` and `lines` vectors.
template <class Program, class Event>
class Grammar {
 public:
  struct Directive {  // a header line: NAME SIGNATURE
    std::string_view name, signature;
    std::function<void(Program&, std::span<const Arg>)> apply;
    bool once = false;  // may appear only once (others: the last one wins, or they accumulate)
  };
  struct Operand {  // a placeholder of the event signatures, e.g. CPU
    std::string_view name;
    std::function<std::uint64_t(const Program&, const Arg&)> read;
    std::function<std::string(std::uint64_t)> show = [](std::uint64_t v) { return std::to_string(v); };
  };
  struct EventKind {  // an event line: NAME SIGNATURE (placeholders, literal words, [flag])
    std::string_view name;
    int kind;  // the mechanism's tag; several names may share one (the first is written)
    std::string_view signature;
  };
  struct Decl {
    std::string_view magic;                  // the first line, e.g. "psi v1"
    std::string_view events_marker;          // a line that ends the header ("" : the first event does)
    std::vector<std::string_view> required;  // directives the header must have
    std::vector<Directive> header;
    std::vector<Operand> operands;
    std::vector<EventKind> events;
    // An event from its kind and its operand values (flags: 0 or 1), in signature order, and back.
    std::function<Event(int kind, std::span<const std::uint64_t>)> make;
    std::function<int(const Event&)> kind_of;
    std::function<std::vector<std::uint64_t>(const Event&)> values;
    std::function<void(const Program&, std::string&)> write_header;  // the lines after the magic
  };

  explicit Grammar(Decl d) : d_(std::move(d)) {
    for (const auto& e : d_.events) {
      auto slots = detail::compile(e.signature);
      for (auto& s : slots)
        if (s.kind == detail::Slot::Operand) s.operand = operand_index(s.text);
      slots_.push_back(std::move(slots));
    }
    for (const auto& h : d_.header) header_slots_.push_back(detail::compile(h.signature));
  }

  static constexpr std::size_t kMaxRepeatDepth = 4;

  // Never throws on bad input. max_events: after repeat blocks are expanded.
  Result<Program> parse(std::string_view text, std::size_t max_events, Program p = {}) const {
    try {
      parse_into(text, max_events, p);
      return p;
    } catch (const detail::Failure& f) { return f.error; }
  }

  // Canonical text: parse(write(p)) == p (source lines aside; repeat blocks come out expanded).
  std::string write(const Program& p) const {
    std::string o = std::string(d_.magic) + "\n";
    d_.write_header(p, o);
    if (!d_.events_marker.empty()) o += std::string(d_.events_marker) + "\n";
    for (const auto& e : p.events) o += event_text(e) + "\n";
    return o;
  }

  std::string event_text(const Event& e) const {
    const int k = d_.kind_of(e);
    const auto vals = d_.values(e);
    for (std::size_t i = 0; i < d_.events.size(); ++i) {
      if (d_.events[i].kind != k) continue;
      std::string o(d_.events[i].name);
      std::size_t v = 0;
      for (const auto& s : slots_[i]) {
        if (s.kind == detail::Slot::Word)
          o += " " + std::string(s.text);
        else if (s.kind == detail::Slot::Operand)
          o += " " + d_.operands[std::size_t(s.operand)].show(vals.at(v++));
        else if (vals.at(v++))
          o += " " + std::string(s.text);
      }
      return o;
    }
    return "?";
  }
  std::string_view name_of(int kind) const {
    for (const auto& e : d_.events)
      if (e.kind == kind) return e.name;
    return "?";
  }

  // The checking run loop: step(i, event) runs one event and judges it. Stops at the first
  // violation or at an event that cannot happen (then `error` says why, at its line).
  template <class Fn>
  RunStatus run(const Program& p, Fn&& step) const {
    RunStatus st;
    for (std::size_t i = 0; i < p.events.size(); ++i) {
      Step r = step(i, p.events[i]);
      if (r.kind == Step::Ok) {
        st.steps = i + 1;
        continue;
      }
      st.failed_at = i;
      st.line = line_of(p, i);
      if (r.kind == Step::Violated) {
        st.steps = i + 1;
      } else {
        st.error = ParseError{st.line, 1, "event '" + event_text(p.events[i]) + "' cannot happen: " + r.why};
      }
      break;
    }
    return st;
  }

 private:
  int operand_index(std::string_view name) const {
    for (std::size_t i = 0; i < d_.operands.size(); ++i)
      if (d_.operands[i].name == name) return int(i);
    throw std::logic_error("script grammar: no operand kind " + std::string(name));
  }

  void parse_into(std::string_view text, std::size_t max_events, Program& p) const {
    using detail::fail;
    std::uint32_t count = 0;
    const auto ls = detail::lines(text, count);
    const std::string magic(d_.magic);
    if (ls.empty()) fail(1, 1, "empty script: expected the header '" + magic + "'");
    {
      const auto& l = ls[0];
      std::string first;
      for (const auto& t : l.toks) first += (first.empty() ? "" : " ") + std::string(t.s);
      if (first != magic) fail(l.n, l.toks[0].col, "expected the header '" + magic + "'");
    }
    const bool marker = !d_.events_marker.empty();
    const std::string before = marker ? "'" + std::string(d_.events_marker) + "'" : "the first event";
    std::vector<char> seen(d_.header.size(), 0);
    std::size_t i = 1;
    bool in_events = !marker;
    for (; i < ls.size(); ++i) {
      const auto& l = ls[i];
      const auto kw = l.toks[0].s;
      if (marker && kw == d_.events_marker) {
        detail::operands(l, "", {});
        check_required(seen, l, before);
        in_events = true;
        ++i;
        break;
      }
      const int h = header_index(kw);
      if (h < 0) {
        if (marker) fail(l.n, l.toks[0].col, "unknown header line '" + text::cut(std::string(kw), 80) + "'");
        break;
      }
      const auto& dir = d_.header[std::size_t(h)];
      if (dir.once && seen[std::size_t(h)])
        fail(l.n, l.toks[0].col, "'" + text::cut(std::string(kw), 80) + "' given twice");
      auto args = detail::operands(l, dir.signature, header_slots_[std::size_t(h)]);
      dir.apply(p, args);
      seen[std::size_t(h)] = 1;
    }
    if (!in_events) fail(count, 1, "missing '" + std::string(d_.events_marker) + "' line");
    if (!marker && i < ls.size()) check_required(seen, ls[i], before);
    const Cursor c{ls, max_events, before};
    events(c, p, i, 0);
  }

  void check_required(const std::vector<char>& seen, const detail::Line& l, const std::string& before) const {
    for (auto r : d_.required) {
      const int h = header_index(r);
      if (h >= 0 && !seen[std::size_t(h)])
        detail::fail(l.n, l.toks[0].col, "'" + std::string(r) + "' must come before " + before);
    }
  }
  int header_index(std::string_view kw) const {
    for (std::size_t h = 0; h < d_.header.size(); ++h)
      if (d_.header[h].name == kw) return int(h);
    return -1;
  }

  // Events in lines [i, end of script), recursively for repeat blocks; returns the index after
  // the block's `end` (0: the block has none), or after the last line at depth 0.
  struct Cursor {
    const std::vector<detail::Line>& lines;
    std::size_t max;
    const std::string& before;  // where header lines belong, for the error
  };
  std::size_t events(const Cursor& c, Program& p, std::size_t i, std::size_t depth) const {
    using detail::fail;
    const auto& ls = c.lines;
    const std::size_t max = c.max;
    while (i < ls.size()) {
      const auto& l = ls[i];
      const auto kw = l.toks[0].s;
      const auto kcol = l.toks[0].col;
      if (kw == "end") {
        if (depth == 0) fail(l.n, kcol, "'end' without 'repeat'");
        detail::operands(l, "", {});
        return i + 1;
      }
      if (kw == "repeat") {
        auto a = detail::operands(l, "N", repeat_slots_);
        if (depth >= kMaxRepeatDepth)
          fail(l.n, kcol, "repeat nested too deep (at most " + std::to_string(kMaxRepeatDepth) + ")");
        const auto times = number(a[0], 0, max, "N");
        const std::size_t start = p.events.size();
        const std::size_t after = events(c, p, i + 1, depth + 1);
        if (after == 0) fail(l.n, kcol, "'repeat' without 'end'");
        const std::size_t len = p.events.size() - start;
        if (times == 0) {
          p.events.resize(start);
          p.lines.resize(start);
        } else if (len * (times - 1) + p.events.size() > max) {
          a[0].fail("expands to more than " + std::to_string(max) + " events");
        }
        for (std::uint64_t k = 1; k < times; ++k)
          for (std::size_t j = 0; j < len; ++j) {
            p.events.push_back(p.events[start + j]);
            p.lines.push_back(p.lines[start + j]);
          }
        i = after;
        continue;
      }
      int e = -1;
      for (std::size_t k = 0; k < d_.events.size() && e < 0; ++k)
        if (d_.events[k].name == kw) e = int(k);
      if (e < 0) {
        if (header_index(kw) >= 0)
          fail(l.n, kcol, "'" + text::cut(std::string(kw), 80) + "' must come before " + c.before);
        fail(l.n, kcol, "unknown statement '" + text::cut(std::string(kw), 80) + "'");
      }
      const auto& decl = d_.events[std::size_t(e)];
      const auto& slots = slots_[std::size_t(e)];
      const auto args = detail::operands(l, decl.signature, slots);
      std::vector<std::uint64_t> vals;
      std::size_t a = 0;
      for (const auto& s : slots) {
        if (s.kind == detail::Slot::Operand)
          vals.push_back(d_.operands[std::size_t(s.operand)].read(p, args[a++]));
        else if (s.kind == detail::Slot::Flag)
          vals.push_back(!args[a++].s.empty());
      }
      if (p.events.size() >= max) fail(l.n, kcol, "more than " + std::to_string(max) + " events");
      p.events.push_back(d_.make(decl.kind, vals));
      p.lines.push_back(l.n);
      ++i;
    }
    return depth > 0 ? 0 : i;
  }

  Decl d_;
  std::vector<std::vector<detail::Slot>> slots_, header_slots_;
  std::vector<detail::Slot> repeat_slots_ = detail::compile("N");
};

}  // namespace kacct::script
