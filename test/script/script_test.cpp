// The script runtime: a toy format declared in a few lines gets the header, repeat blocks,
// positioned errors, the canonical writer and the run loop; every committed lazy-TLB and PSI
// script (test/*/scripts, the fuzz corpora) round-trips: parse -> write -> parse gives the same
// program and the same text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/lazytlb/script.hpp"
#include "model/psi/script.hpp"
#include "model/script/script.hpp"

namespace kacct {
namespace {

// ---- a toy format: counters that can be bumped and must stay under a cap

struct Bump {
  int kind = 0;  // 0 add, 1 reset
  std::uint64_t counter = 0, by = 0;
  bool loud = false;
  bool operator==(const Bump&) const = default;
};
struct Toy {
  std::uint64_t counters = 1, cap = 100;
  std::vector<Bump> events;
  std::vector<std::uint32_t> lines;
};
using ToyGrammar = script::Grammar<Toy, Bump>;
const ToyGrammar& toy() {
  static const ToyGrammar g([] {
    ToyGrammar::Decl d;
    d.magic = "toy 1";
    d.events_marker = "go";
    d.required = {"counters"};
    d.header = {
        {"counters", "N",
         [](Toy& t, std::span<const script::Arg> a) { t.counters = script::number(a[0], 1, 8, "counters"); }, true},
        {"cap", "N", [](Toy& t, std::span<const script::Arg> a) { t.cap = script::number(a[0], 0, 1000, "cap"); }}};
    d.operands = {{"C", [](const Toy& t, const script::Arg& a) { return script::number(a, 0, t.counters - 1, "C"); }},
                  {"N", [](const Toy&, const script::Arg& a) { return script::number(a, 0, 50, "N"); }}};
    d.events = {{"add", 0, "C by N [loud]"}, {"reset", 1, "C"}, {"zero", 1, "C"}};
    d.make = [](int k, std::span<const std::uint64_t> v) {
      return k == 0 ? Bump{0, v[0], v[1], v[2] != 0} : Bump{1, v[0], 0, false};
    };
    d.kind_of = [](const Bump& b) { return b.kind; };
    d.values = [](const Bump& b) {
      return b.kind == 0 ? std::vector<std::uint64_t>{b.counter, b.by, b.loud} : std::vector<std::uint64_t>{b.counter};
    };
    d.write_header = [](const Toy& t, std::string& o) {
      o += "counters " + std::to_string(t.counters) + "\ncap " + std::to_string(t.cap) + "\n";
    };
    return d;
  }());
  return g;
}

TEST(ScriptRuntime, ToyFormatParsesWritesAndRepeats) {
  auto p = toy().parse(
      "toy 1 # comment\ncounters 2\ngo\nadd 1 by 3 loud\nrepeat 2\n  repeat 2\n    add 0 by 1\n  end\n  zero 1\nend\n",
      100);
  ASSERT_TRUE(p) << p.error().str();
  const auto& t = p.value();
  ASSERT_EQ(t.events.size(), 7u);
  EXPECT_EQ(t.events[0], (Bump{0, 1, 3, true}));
  EXPECT_EQ(t.events[3], (Bump{1, 1, 0, false}));  // "zero" is another name of reset
  EXPECT_EQ(t.lines, (std::vector<std::uint32_t>{4, 7, 7, 9, 7, 7, 9}));
  const auto text = toy().write(t);
  EXPECT_EQ(text,
            "toy 1\ncounters 2\ncap 100\ngo\nadd 1 by 3 loud\nadd 0 by 1\nadd 0 by 1\nreset 1\nadd 0 by 1\nadd 0 by "
            "1\nreset 1\n");
  auto q = toy().parse(text, 100);
  ASSERT_TRUE(q);
  EXPECT_EQ(q.value().events, t.events);
}

TEST(ScriptRuntime, ErrorsHaveLineAndColumn) {
  struct Bad {
    const char* text;
    std::uint32_t line, col;
    const char* message;
  };
  for (auto b :
       {Bad{"", 1, 1, "empty script: expected the header 'toy 1'"},
        Bad{"\n  toy 2\n", 2, 3, "expected the header 'toy 1'"},
        Bad{"toy 1\ncounters 2\ncounters 3\n", 3, 1, "'counters' given twice"},
        Bad{"toy 1\ncap 3\ngo\n", 3, 1, "'counters' must come before 'go'"},
        Bad{"toy 1\ncounters 1\n", 3, 1, "missing 'go' line"},
        Bad{"toy 1\nfrob\n", 2, 1, "unknown header line 'frob'"},
        Bad{"toy 1\ncounters 1\ngo\n cap 2\n", 4, 2, "'cap' must come before 'go'"},
        Bad{"toy 1\ncounters 1\ngo\nfrob 2\n", 4, 1, "unknown statement 'frob'"},
        Bad{"toy 1\ncounters 1\ngo\nadd 0\n", 4, 6, "'add' takes C by N [loud]"},
        Bad{"toy 1\ncounters 1\ngo\nadd 0 with 2\n", 4, 7, "expected 'by'"},
        Bad{"toy 1\ncounters 1\ngo\nadd 0 by 2 quiet\n", 4, 12,
            "'add': unexpected 'quiet' (expected 'loud' or nothing)"},
        Bad{"toy 1\ncounters 1\ngo\nadd 0 by 2 loud x\n", 4, 17, "'add': unexpected 'x'"},
        Bad{"toy 1\ncounters 1\ngo\nadd 1 by 2\n", 4, 5, "C must be in 0..0"},
        Bad{"toy 1\ncounters 1\ngo\nadd -1 by 2\n", 4, 5, "expected an unsigned number, got '-1'"},
        Bad{"toy 1\ncounters 1\ngo\nend\n", 4, 1, "'end' without 'repeat'"},
        Bad{"toy 1\ncounters 1\ngo\nrepeat 2\nreset 0\n", 4, 1, "'repeat' without 'end'"},
        Bad{"toy 1\ncounters 1\ngo\nrepeat 60\nreset 0\nreset 0\nend\n", 4, 8, "expands to more than 100 events"},
        Bad{"toy 1\ncounters 1\ngo\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\nrepeat 1\n", 8, 1,
            "repeat nested too deep (at most 4)"},
        Bad{"toy 1\ncounters 1\ngo\nreset\x01 0\n", 4, 6, "control character"},
        Bad{"toy 1 # \xc3\xa9 is fine here\ncounters 1\ngo\nreset 0\xc3\xa9\n", 4, 8,
            "non-ASCII character outside a comment"}}) {
    auto p = toy().parse(b.text, 100);
    ASSERT_FALSE(p) << b.text;
    EXPECT_EQ(p.error(), (script::ParseError{b.line, b.col, b.message})) << b.text << "\n" << p.error().str();
  }
  std::string many = "toy 1\ncounters 1\ngo\n";
  for (int i = 0; i < 101; ++i) many += "reset 0\n";
  auto p = toy().parse(many, 100);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().str(), "104:1: more than 100 events");
  EXPECT_THROW((void)p.value(), std::logic_error);
}

TEST(ScriptRuntime, RunLoopStopsAtViolationOrImpossibleEvent) {
  auto t = toy().parse("toy 1\ncounters 2\ncap 5\ngo\nadd 0 by 3\nreset 1\nadd 0 by 3\nadd 1 by 1\n", 100).value();
  std::vector<std::uint64_t> c(t.counters, 0);
  auto st = toy().run(t, [&](std::size_t, const Bump& b) {
    if (b.kind == 1 && c[b.counter] == 0)
      return script::impossible("counter " + std::to_string(b.counter) + " is zero");
    c[b.counter] = b.kind == 1 ? 0 : c[b.counter] + b.by;
    return c[b.counter] > t.cap ? script::violated() : script::ok();
  });
  ASSERT_TRUE(st.failed_at);
  EXPECT_EQ(*st.failed_at, 1u);
  EXPECT_EQ(st.steps, 1u);
  ASSERT_TRUE(st.error);
  EXPECT_EQ(st.error->str(), "6:1: event 'reset 1' cannot happen: counter 1 is zero");
  t.events.erase(t.events.begin() + 1);
  t.lines.erase(t.lines.begin() + 1);
  c.assign(2, 0);
  st = toy().run(t, [&](std::size_t, const Bump& b) {
    c[b.counter] += b.by;
    return c[b.counter] > t.cap ? script::violated() : script::ok();
  });
  EXPECT_EQ(st.failed_at, 1u);
  EXPECT_EQ(st.steps, 2u);
  EXPECT_EQ(st.line, 7u);
  EXPECT_FALSE(st.error);
}

// ---- every committed script and corpus entry of the two formats

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::vector<std::filesystem::path> files(const char* dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KACCT_SOURCE_DIR) / dir))
    out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Parses, writes, parses again: the same program and the same canonical text; or an error with
// a position. Returns whether the text parsed.
template <class Parse, class Write>
bool round_trips(const std::string& text, const std::string& what, Parse parse, Write write) {
  auto p = parse(text);
  if (!p) {
    EXPECT_GT(p.error().line, 0u) << what;
    EXPECT_GT(p.error().col, 0u) << what;
    return false;
  }
  const auto canon = write(p.value());
  auto q = parse(canon);
  EXPECT_TRUE(q) << what << ": canonical text does not parse: " << q.error().str() << "\n" << canon;
  if (!q) return true;
  EXPECT_TRUE(q.value() == p.value()) << what << "\n" << canon;
  EXPECT_EQ(write(q.value()), canon) << what;
  return true;
}

TEST(ScriptRoundTrip, EveryCommittedLazyTlbScript) {
  auto parse = [](std::string_view t) { return model::lazytlb::parse_script(t); };
  int parsed = 0, rejected = 0;
  for (const auto& f : files("test/lazytlb/scripts"))
    (round_trips(slurp(f), f.string(), parse, model::lazytlb::write_script) ? parsed : rejected)++;
  // The fuzz corpus: byte 0 is the selector; bit 7 set means the rest is script text.
  for (const auto& f : files("fuzz/corpus-lazytlb")) {
    const auto bytes = slurp(f);
    if (bytes.empty() || !(static_cast<unsigned char>(bytes[0]) & 0x80)) continue;
    (round_trips(bytes.substr(1), f.string(), parse, model::lazytlb::write_script) ? parsed : rejected)++;
  }
  // pin.lts, not-enabled.lts, hotplug-race.lts, hotplug-cycle.lts, text-pin, text-hotplug-cycle,
  // text-hotplug-fixed; bad-version.lts, hotplug-bad.lts, text-bad-version, text-hotplug-bad; the
  // fuzz campaign's text inputs: 3 parse, 1 is rejected
  EXPECT_EQ(parsed, 7 + 3);
  EXPECT_EQ(rejected, 4 + 1);
}

TEST(ScriptRoundTrip, EveryCommittedPsiScript) {
  auto parse = [](std::string_view t) { return model::psi::parse_script(t); };
  int parsed = 0, rejected = 0;
  for (const char* dir : {"test/psi/scripts", "test/psi"})
    for (const auto& f : files(dir))
      if (f.extension() == ".psi")
        (round_trips(slurp(f), f.string(), parse, model::psi::write_script) ? parsed : rejected)++;
  for (const auto& f : files("fuzz/corpus-psi")) {  // byte 0: the run selector
    const auto bytes = slurp(f);
    if (!bytes.empty())
      (round_trips(bytes.substr(1), f.string(), parse, model::psi::write_script) ? parsed : rejected)++;
  }
  EXPECT_EQ(parsed, 6 + 7 + 6);    // 5 scripts + seed.psi; 7 corpus scripts; 6 campaign inputs
  EXPECT_EQ(rejected, 1 + 1 + 6);  // malformed.psi, bad-operand; 6 campaign inputs (mutated bytes)
}

}  // namespace
}  // namespace kacct
