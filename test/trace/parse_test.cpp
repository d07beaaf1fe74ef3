// Syntax: round trip, canonical form, parse errors with exact positions,
// number limits and hostile input.
#include <algorithm>
#include <charconv>
#include <random>
#include <string>

#include "test_util.hpp"

namespace kacct::trace::test {
namespace {

Event ev(uint64_t ts, uint32_t cpu, Kind k, uint64_t a = 0, uint64_t b = 0) {
  Event e;
  e.ts = ts, e.cpu = cpu, e.kind = k, e.a = a, e.b = b;
  return e;
}

// A trace built in code that uses every kind and every optional field.
Trace every_kind() {
  Trace t;
  t.header.cpu_model = "POWER9";
  t.header.ncpus = 4;
  t.header.tasks = {task_decl(100, 100, false, "app", -3, 1), task_decl(2, 2, true, "kthreadd", 0, std::nullopt)};
  for (size_t k = 0; k < kKindCount; ++k) t.events.push_back(ev(k, uint32_t(k % 4), Kind(k)));
  auto at = [&](Kind k) -> Event& { return t.events[size_t(k)]; };
  at(Kind::SyscallEnter).a = 18446744073709551615u;
  at(Kind::ExcEnter).exc_kind = ExcKind::PageFault;
  at(Kind::IrqEnter).a = 7;
  at(Kind::SoftirqEnter).a = 3;
  Event& sw = at(Kind::Switch);
  sw.a = 100, sw.b = 0, sw.prev_state = PrevState::DiskSleep, sw.iowait = true, sw.switch_gap = 9;
  at(Kind::Wakeup).a = 100;
  at(Kind::Steal).a = 5;
  Event& f = at(Kind::Fork);
  f.a = 100, f.b = 101, f.fork_pid = 100, f.fork_mm = 1, f.fork_comm = "worker";
  at(Kind::MmExit).a = 1;
  Event& r = at(Kind::Read);
  r.a = 101, r.read_kind = ReadKind::ProcessCputime, r.read_id = 42;
  at(Kind::Tick).hw = {1, 2, 3};
  at(Kind::Exit).hw.purr = 9;
  return t;
}

TEST(TraceParse, RoundTripFromCode) {
  Trace t = every_kind();
  std::string text = write(t);
  auto r = parse(text);
  ASSERT_TRUE(r.ok()) << r.error().to_string() << "\n" << text;
  EXPECT_EQ(r.value(), t);
  EXPECT_EQ(write(r.value()), text);
  EXPECT_EQ(r.value().events[3].line, 11u);  // header is 7 lines, events[0] on line 8
}

TEST(TraceParse, CanonicalForm) {
  const std::string messy =
      "# leading comment\n\n"
      "kacct-trace   1   # version\n"
      "cpu\tPOWER9\n"
      "ncpus 2\n"
      "clock ns\n"
      "task 7 comm=a mm=3     # pid and nice default\n"
      "task 8 kthread comm=k nice=-20 pid=8\n"
      "events\n"
      "  10 1 switch next=7 prev=0 prev_state=R iowait=0\n"
      "11 1 exc_enter kind=other spurr=5 tb=4\n"
      "12 1 irq_enter vec=0\n"
      "13 1 read id=0 kind=proc_stat\n"
      "14 1 fork mm=9 child=9 kthread parent=7\n";
  const std::string canonical =
      "kacct-trace 1\n"
      "cpu POWER9\n"
      "ncpus 2\n"
      "clock ns\n"
      "task 7 pid=7 comm=a nice=0 mm=3\n"
      "task 8 pid=8 kthread comm=k nice=-20\n"
      "events\n"
      "10 1 switch prev=0 next=7\n"
      "11 1 exc_enter tb=4 spurr=5\n"
      "12 1 irq_enter\n"
      "13 1 read kind=proc_stat\n"
      "14 1 fork parent=7 child=9 kthread mm=9\n";
  auto r = parse(messy);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(write(r.value()), canonical);
  auto again = parse(canonical);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value(), r.value());
  EXPECT_EQ(write(again.value()), canonical);
}

// switch gap= and read kind=taskstats: written in the table's key order, an explicit gap=0 kept
// (it differs from "no gap": the model's default then applies), parsed back equal.
TEST(TraceParse, SwitchGapAndTaskstatsRoundTrip) {
  const std::string messy = kHeader +
                            "0 0 switch gap=0 next=100 prev=0\n"
                            "1 0 read id=3 kind=taskstats\n"
                            "2 0 read tid=200 kind=taskstats\n"
                            "3 1 switch iowait=0 gap=250 prev=0 next=200\n"
                            "300 1 switch prev=200 next=0\n";
  auto r = parse(messy);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const auto& ev = r.value().events;
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].switch_gap, std::optional<uint64_t>(0));
  EXPECT_EQ(ev[3].switch_gap, std::optional<uint64_t>(250));
  EXPECT_FALSE(ev[4].switch_gap);
  EXPECT_EQ(ev[1].read_kind, ReadKind::Taskstats);
  EXPECT_EQ(ev[1].read_id, 3u);
  EXPECT_EQ(ev[2].a, 200u);
  const std::string canonical = kHeader +
                                "0 0 switch prev=0 next=100 gap=0\n"
                                "1 0 read kind=taskstats id=3\n"
                                "2 0 read kind=taskstats tid=200\n"
                                "3 1 switch prev=0 next=200 gap=250\n"
                                "300 1 switch prev=200 next=0\n";
  const std::string text = write(r.value());
  EXPECT_EQ(text, canonical);
  auto again = parse(text);
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again.value(), r.value());
  EXPECT_EQ(write(again.value()), text);
  auto c = parse(canonical);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c.value(), r.value());
  // the gap is part of the event's identity
  Event a = ev[0], b = ev[0];
  b.switch_gap.reset();
  EXPECT_NE(a, b);
  EXPECT_EQ(name(ReadKind::Taskstats), "taskstats");
  EXPECT_EQ(name(ReadKind(kReadKindCount)), "?");
}

TEST(TraceParse, CrlfIsAccepted) {
  std::string crlf;
  for (char c : kHeader + "5 0 tick\n") {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto a = parse(crlf), b = parse(kHeader + "5 0 tick\n");
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a.value(), b.value());
}

TEST(TraceParse, NoTrailingNewlineAndEmptyEvents) {
  auto r = parse("kacct-trace 1\ncpu X\nncpus 1\nclock ns\nevents");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r.value().events.empty());
}

TEST(TraceParse, U64Limits) {
  auto ok = parse(kHeader + "18446744073709551615 0 syscall_enter nr=18446744073709551615\n");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok.value().events[0].ts, 18446744073709551615u);
  EXPECT_EQ(ok.value().events[0].a, 18446744073709551615u);
  expect_error(kHeader + "18446744073709551616 0 tick\n", 8, 1, "value exceeds 2^64-1");
  // "0 0 syscall_enter nr=": the value starts at column 22.
  expect_error(kHeader + "0 0 syscall_enter nr=18446744073709551616\n", 8, 22, "value exceeds 2^64-1");
  expect_error(kHeader + "0 0 tick tb=99999999999999999999999\n", 8, 13, "value exceeds 2^64-1");
}

// Numbers of 1..25 digits (the parser reads 4..16 of them as words of 8 bytes) against
// std::from_chars, with a bad byte at each position: the value or the error and its column.
TEST(TraceParse, NumbersOfEveryLengthAsFromChars) {
  std::mt19937_64 rng(18);
  int checked = 0;
  for (size_t len = 1; len <= 25; ++len)
    for (size_t bad = 0; bad <= len; ++bad)  // bad == len: all digits
      for (int rep = 0; rep < 4; ++rep) {
        std::string v;
        for (size_t i = 0; i < len; ++i) v += char('0' + rng() % 10);
        if (bad < len) v[bad] = "a/:x~_+"[rng() % 7];
        const std::string line = "5 0 steal ns=" + v;  // the value at column 14
        for (const std::string& pad : {std::string(), std::string(" "), std::string(40, ' ')}) {
          const auto r = parse(kHeader + line + pad + "\n");
          uint64_t want = 0;
          const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), want);
          if (ec == std::errc() && end == v.data() + v.size()) {
            ASSERT_TRUE(r.ok()) << v << ": " << r.error().to_string();
            EXPECT_EQ(r.value().events.at(0).a, want) << v;
          } else {
            ASSERT_FALSE(r.ok()) << v;
            EXPECT_EQ(r.error().line, 8u) << v;
            EXPECT_EQ(r.error().column, 14u) << v;
            EXPECT_NE(r.error().message.find(bad < len ? "unsigned decimal" : "exceeds 2^64-1"), std::string::npos)
                << v << ": " << r.error().message;
          }
          ++checked;
        }
      }
  EXPECT_EQ(checked, 350 * 3 * 4);  // sum of len + 1 over 1..25, 3 paddings, 4 draws
}

// Lines of printable ASCII and spaces are split by bit masks, other lines (tabs, comments, lines
// shorter than 8 or longer than 63 bytes) byte by byte: both give the same events and columns.
TEST(TraceParse, PlainAndOtherLinesSplitAlike) {
  const std::string ev = "123456789012 1 switch prev=100 next=200 prev_state=S iowait=1 gap=7";
  const auto plain = parse(kHeader + ev + "\n");
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  std::string tabs = ev;
  std::replace(tabs.begin(), tabs.end(), ' ', '\t');
  for (const std::string& line : {tabs, ev + " # a comment", ev + std::string(30, ' '), "  " + ev}) {
    const auto r = parse(kHeader + line + "\n");
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r.value(), plain.value()) << line;
  }
  // The same column for an error on a plain line and on one split byte by byte.
  for (const std::string& sep : {std::string(" "), std::string("\t")}) {
    expect_error(kHeader + "12345678" + sep + "1" + sep + "tick" + sep + "tb=x\n", 8, 20, "timebase value");
    expect_error(kHeader + "12345678" + sep + "1" + sep + "tick" + sep + "kthread\n", 8, 17, "expected key=value");
  }
}

struct ParseErrorCase {
  const char* name;
  std::string text;
  uint32_t line, column;
  const char* message;
};

TEST(TraceParse, ErrorsNameLineAndColumn) {
  const std::string h3 = "kacct-trace 1\ncpu POWER9\nncpus 2\n";
  const ParseErrorCase cases[] = {
      {"empty input", "", 1, 1, "expected 'kacct-trace 1' line"},
      {"missing magic", "cpu POWER9\n", 1, 1, "expected 'kacct-trace 1' as the first line, got 'cpu'"},
      {"version", "kacct-trace 2\n", 1, 13, "unsupported version 2; expected 1"},
      {"version junk", "kacct-trace 1 x\n", 1, 15, "unexpected 'x'; expected end of line"},
      {"header order", "kacct-trace 1\nncpus 2\n", 2, 1, "expected 'cpu <model>' line, got 'ncpus'"},
      {"bad model", "kacct-trace 1\ncpu POWER/9\n", 2, 5, "expected cpu model name"},
      {"ncpus 0", "kacct-trace 1\ncpu P\nncpus 0\n", 3, 7, "ncpus 0 out of range; expected 1..4096"},
      {"ncpus big", "kacct-trace 1\ncpu P\nncpus 4097\n", 3, 7, "out of range"},
      {"clock", h3 + "clock us\n", 4, 7, "unsupported clock 'us'; expected ns"},
      {"truncated header", h3 + "clock ns\ntask 5 comm=a mm=1\n", 6, 1,
       "unexpected end of input; expected 'events' line"},
      {"task junk", h3 + "clock ns\ntasks\n", 5, 1, "expected 'task' or 'events' line"},
      {"task tid 0", h3 + "clock ns\ntask 0 comm=a mm=1\n", 5, 6, "non-zero tid"},
      {"dup tid", h3 + "clock ns\ntask 5 comm=a mm=1\ntask 5 comm=b mm=2\n", 6, 6, "duplicate tid 5"},
      {"task no comm", h3 + "clock ns\ntask 5 mm=1\n", 5, 12, "missing required key 'comm'"},
      {"task no mm", h3 + "clock ns\ntask 5 comm=a\n", 5, 14, "missing required key 'mm'"},
      {"kthread mm", h3 + "clock ns\ntask 5 kthread comm=a mm=1\n", 5, 23, "unexpected mm= on a kthread"},
      {"nice range", h3 + "clock ns\ntask 5 comm=a nice=20 mm=1\n", 5, 20, "nice 20 out of range"},
      {"nice -21", h3 + "clock ns\ntask 5 comm=a nice=-21 mm=1\n", 5, 20, "out of range; expected -20..19"},
      {"long comm", h3 + "clock ns\ntask 5 comm=0123456789abcdef mm=1\n", 5, 13, "1..15 characters"},
      {"no cpu", kHeader + "5\n", 8, 2, "unexpected end of line; expected cpu number"},
      {"no kind", kHeader + "5 0\n", 8, 4, "expected event kind"},
      {"bad ts", kHeader + "-5 0 tick\n", 8, 1, "expected timestamp in ns (unsigned decimal), got '-5'"},
      {"unknown cpu", kHeader + "5 2 tick\n", 8, 3, "cpu 2 out of range; expected 0..1"},
      {"unknown kind", kHeader + "5 0 tock\n", 8, 5, "unknown event kind 'tock'; expected one of syscall_enter"},
      {"unknown key", kHeader + "5 0 tick foo=1\n", 8, 10,
       "unknown key 'foo' for tick; expected one of tb, purr, spurr"},
      {"bare word", kHeader + "5 0 tick now\n", 8, 10, "expected key=value, got 'now'"},
      {"dup key", kHeader + "5 0 wakeup tid=1 tid=2\n", 8, 18, "duplicate key 'tid'"},
      {"missing key", kHeader + "5 0 syscall_enter\n", 8, 18, "missing required key 'nr' for syscall_enter"},
      {"missing next", kHeader + "5 0 switch prev=0\n", 8, 18, "missing required key 'next'"},
      {"empty value", kHeader + "5 0 steal ns=\n", 8, 14, "expected stolen ns (unsigned decimal), got ''"},
      {"prev_state", kHeader + "5 0 switch prev=0 next=1 prev_state=Z\n", 8, 37,
       "expected prev_state= one of R, S, D, X, got 'Z'"},
      {"iowait 2", kHeader + "5 0 switch prev=0 next=1 iowait=2\n", 8, 33, "expected iowait=0 or iowait=1"},
      {"read kind", kHeader + "5 0 read kind=proc_status\n", 8, 15, "expected kind= one of proc_stat"},
      {"read no kind", kHeader + "5 0 read\n", 8, 9, "missing required key 'kind'"},
      {"read tid 0", kHeader + "5 0 read kind=task_stat tid=0\n", 8, 29, "non-zero tid"},
      {"taskstats tid 0", kHeader + "5 0 read kind=taskstats tid=0\n", 8, 29, "non-zero tid"},
      {"read kind list", kHeader + "5 0 read kind=task_stats\n", 8, 15, "process_cputime, taskstats, got 'task_stats'"},
      {"gap not a number", kHeader + "5 0 switch prev=0 next=1 gap=-1\n", 8, 30,
       "expected ns between the switch's two clock reads"},
      {"gap too big", kHeader + "5 0 switch prev=0 next=1 gap=18446744073709551616\n", 8, 30, "value exceeds 2^64-1"},
      {"gap twice", kHeader + "5 0 switch prev=0 next=1 gap=1 gap=2\n", 8, 32, "duplicate key 'gap'"},
      {"gap on wakeup", kHeader + "5 0 wakeup tid=1 gap=1\n", 8, 18, "unknown key 'gap' for wakeup"},
      {"exc kind", kHeader + "5 0 exc_enter kind=gp\n", 8, 20, "expected kind= one of pf, other"},
      {"fork flag twice", kHeader + "5 0 fork parent=1 child=2 kthread kthread\n", 8, 35, "duplicate flag"},
      {"NUL byte", kHeader + std::string("5 0 ti\0ck\n", 10), 8, 7, "unexpected byte 0x00"},
      {"lone CR", kHeader + "5 0\rtick\n", 8, 4, "unexpected byte 0x0d"},
      {"UTF-8", kHeader + "5 0 tick tb=\xc3\xa9\n", 8, 13, "unexpected byte 0xc3"},
      {"header keyword in events", kHeader + "task 5 comm=a mm=1\n", 8, 1, "expected timestamp"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = parse(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().line, c.line) << r.error().to_string();
    EXPECT_EQ(r.error().column, c.column) << r.error().to_string();
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

TEST(TraceParse, ErrorToString) {
  Error e{12, 7, "expected x", {}};
  EXPECT_EQ(e.to_string(), "line 12, column 7: expected x");
  e.column = 0;
  EXPECT_EQ(e.to_string(), "line 12: expected x");
}

TEST(TraceParse, CommentsMayHoldAnyByte) {
  const char line[] = "5 0 tick # caf\xc3\xa9 \0 \x01\n";
  auto r = parse(kHeader + std::string(line, sizeof line - 1));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
}

// Every truncation and many single-byte corruptions of a valid trace must
// yield a value or a positioned error, never a crash.  Deterministic.
TEST(TraceParse, HostileInputNeverCrashes) {
  auto check = [](std::string_view text) {
    auto r = load(text);
    if (!r.ok()) {
      EXPECT_GE(r.error().line, 1u);
      EXPECT_FALSE(r.error().message.empty());
      return;
    }
    (void)ground_truth(r.value());
    EXPECT_TRUE(parse(write(r.value())).ok());
  };
  const char bytes[] = {'\0', '\r', '\n', ' ', '=', '#', '9', 'x', '\xff', '\x80', '-'};
  for (const std::string& good : {write(every_kind()) + "# end\n", kGolden}) {
    for (size_t n = 0; n <= good.size(); ++n) check(std::string_view(good).substr(0, n));
    for (size_t i = 0; i < good.size(); ++i)
      for (char b : bytes) {
        std::string bad = good;
        bad[i] = b;
        check(bad);
      }
  }
  std::string noise;
  uint32_t x = 12345;  // fixed-seed LCG: same bytes every run
  for (int i = 0; i < 4096; ++i) noise += char((x = x * 1103515245u + 12345u) >> 24);
  check(noise);
  check(kHeader + noise);
}

}  // namespace
}  // namespace kacct::trace::test
