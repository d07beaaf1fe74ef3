// The trace builder (model/trace/builder.hpp): every built trace is valid, building is
// deterministic, dropping actions keeps validity, and random traces reach the interesting
// accounting paths often enough for the property tests to mean something.
#include "model/trace/builder.hpp"

#include <gtest/gtest.h>

#include <random>

#include "model/trace/tracker.hpp"

namespace kacct::trace {
namespace {

BuildSpec spec_for(uint64_t seed) {
  return spec_from_bytes(uint8_t(seed * 0x9e37), uint8_t((seed * 0x9e3779b97f4a7c15ull) >> 56), "POWER9");
}

TEST(Builder, EveryBuiltTraceValidatesAndRoundTrips) {
  size_t events = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const Trace t = random_trace(seed, spec_for(seed), 300);
    events += t.events.size();
    auto err = validate(t);
    ASSERT_FALSE(err) << "seed " << seed << ": " << err->to_string() << "\n" << write(t);
    auto back = load(write(t));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_EQ(back.value(), t) << "seed " << seed;
  }
  // Most actions must turn into events, or the generators waste their budget.
  EXPECT_GT(events, 300u * 300u / 2) << "too many actions skipped";
}

TEST(Builder, ArbitraryBytesAndDroppedActionsStayValid) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bytes(8 * (rng() % 200));
    for (auto& b : bytes) b = uint8_t(rng());
    auto actions = actions_from_bytes(bytes);
    const BuildSpec s = spec_from_bytes(uint8_t(rng()), uint8_t(rng()), "x86-64");
    auto err = validate(build(s, actions));
    ASSERT_FALSE(err) << err->to_string();
    // What shrinking does: drop a random subset of the actions.
    std::vector<Action> kept;
    for (const auto& a : actions)
      if (rng() % 3 != 0) kept.push_back(a);
    err = validate(build(s, kept));
    ASSERT_FALSE(err) << err->to_string();
  }
}

TEST(Builder, SameSeedSameTextAndPrefixStable) {
  const BuildSpec s = spec_for(7);
  EXPECT_EQ(write(random_trace(7, s, 250)), write(random_trace(7, s, 250)));
  EXPECT_NE(write(random_trace(7, s, 250)), write(random_trace(8, s, 250)));
  // The builder is online: the trace of a prefix of the actions is a prefix of the trace.
  const auto actions = random_actions(7, 250);
  const Trace all = build(s, actions);
  const Trace half = build(s, std::span(actions).first(125));
  ASSERT_LE(half.events.size(), all.events.size());
  EXPECT_TRUE(std::equal(half.events.begin(), half.events.end(), all.events.begin()));
  EXPECT_EQ(spec_from_bytes(1, 2, "e500"), spec_from_bytes(1, 2, "e500"));
}

// random-trace streams: the same events as the whole-trace builder, cut at n events or at
// the action budget, whichever comes first, with hotplug and every spec byte pattern.
TEST(Builder, StreamGivesTheWholeTracesEvents) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    BuildSpec s = spec_for(seed);
    s.hotplug = seed % 2 == 1;
    const Trace whole = random_trace(seed, s, 600);
    for (size_t n : {size_t{0}, size_t{1}, size_t{250}, size_t{100000}}) {
      std::vector<Event> got;
      const size_t count = random_trace_stream(seed, s, n, 600, [&](const Event& e) { got.push_back(e); });
      ASSERT_EQ(count, got.size());
      ASSERT_EQ(got.size(), std::min(n, whole.events.size())) << "seed " << seed << " n " << n;
      EXPECT_TRUE(std::equal(got.begin(), got.end(), whole.events.begin())) << "seed " << seed << " n " << n;
    }
    // The streamed text is the whole trace's text.
    std::string text;
    append_header(text, build_header(s));
    random_trace_stream(seed, s, SIZE_MAX, 600, [&](const Event& e) { append_event(text, e); });
    EXPECT_EQ(text, write(whole)) << "seed " << seed;
  }
}

// Which interesting paths a trace reaches (idle ticks judged at HZ=250).
struct Reach {
  bool irq = false, nested_irq = false, softirq = false, steal = false, guest = false, nice_user = false,
       iowait = false, idle_ticks = false, exit = false, fork = false, read_other = false, tick_in_irq = false;
};
Reach reach(const Trace& t) {
  Reach r;
  Tracker tr(t.header);
  std::vector<uint64_t> idle_since(t.header.ncpus, 0);
  for (const Event& e : t.events) {
    const CpuContext c = tr.cpu(e.cpu);
    const TaskState& cur = tr.current(e.cpu);
    switch (e.kind) {
      case Kind::IrqEnter: r.irq = true, r.nested_irq |= c.irq_depth > 0; break;
      case Kind::SoftirqEnter: r.softirq = true; break;
      case Kind::Steal: r.steal = true; break;
      case Kind::GuestEnter: r.guest = true; break;
      case Kind::Switch: r.iowait |= e.iowait; break;
      case Kind::IdleEnter: idle_since[e.cpu] = e.ts; break;
      case Kind::IdleExit: r.idle_ticks |= e.ts / 4'000'000 > idle_since[e.cpu] / 4'000'000; break;
      case Kind::Exit: r.exit = true; break;
      case Kind::Fork: r.fork = true; break;
      case Kind::Read: r.read_other |= e.a != 0 && e.a != c.current; break;
      case Kind::Tick:
        r.nice_user |= c.current != 0 && cur.nice > 0 && c.mode == Mode::User && c.irq_depth == 0;
        r.tick_in_irq |= c.irq_depth > 0;
        break;
      default: break;
    }
    EXPECT_FALSE(tr.apply(e));
  }
  return r;
}

TEST(Builder, RandomTracesReachEveryAccountingPath) {
  constexpr int n = 200;
  int irq = 0, nested = 0, softirq = 0, steal = 0, guest = 0, nice = 0, iowait = 0, idle = 0, exit = 0, fork = 0,
      other = 0, tick_irq = 0;
  for (int seed = 0; seed < n; ++seed) {
    const Reach r = reach(random_trace(uint64_t(seed), spec_for(uint64_t(seed)), 300));
    irq += r.irq, nested += r.nested_irq, softirq += r.softirq, steal += r.steal, guest += r.guest;
    nice += r.nice_user, iowait += r.iowait, idle += r.idle_ticks, exit += r.exit, fork += r.fork;
    other += r.read_other, tick_irq += r.tick_in_irq;
  }
  const int want = n / 4;  // each path in at least a quarter of the traces
  EXPECT_GE(irq, want);
  EXPECT_GE(nested, want);
  EXPECT_GE(softirq, want);
  EXPECT_GE(steal, want);
  EXPECT_GE(guest, want);
  EXPECT_GE(nice, want);
  EXPECT_GE(iowait, want);
  EXPECT_GE(idle, want);
  EXPECT_GE(exit, want);
  EXPECT_GE(fork, want);
  EXPECT_GE(other, want);
  EXPECT_GE(tick_irq, want);
  std::printf(
      "of %d traces: irq %d nested %d softirq %d steal %d guest %d nice-user-tick %d iowait %d "
      "idle-ticks %d exit %d fork %d read-other %d tick-in-irq %d\n",
      n, irq, nested, softirq, steal, guest, nice, iowait, idle, exit, fork, other, tick_irq);
}

}  // namespace
}  // namespace kacct::trace
