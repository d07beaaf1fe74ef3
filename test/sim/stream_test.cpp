// Streamed runs (trace::StreamLoader + sim::Compiler chunks + RunOptions::refill, the path of
// `kacct run` and `kacct check`) give what the whole-trace run gives: the same counters, reads,
// violations and events, on every combination, for builder traces with forks (tasks grow
// between chunks) and hotplug, fed in pieces that split lines anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace kacct {
namespace {

struct Streamed {
  sim::RunResult r;
  std::size_t chunks = 0;
};

// Feeds `text` in pieces of `piece` bytes; chunks of at least `chunk` events.
Streamed run_streamed(const std::string& text, const sim::ModelCfg& m, bool check, std::size_t piece,
                      std::size_t chunk) {
  std::unique_ptr<sim::Compiler> comp;
  trace::StreamLoader loader([&](const trace::Header& h) { comp = std::make_unique<sim::Compiler>(h); },
                             [&](const trace::Event& e, std::string_view) { return comp->add(e); });
  std::size_t pos = 0;
  auto feed = [&] {
    if (pos >= text.size()) {
      EXPECT_FALSE(loader.finish());
      return false;
    }
    const auto n = std::min(piece, text.size() - pos);
    EXPECT_FALSE(loader.feed(std::string_view(text).substr(pos, n)));
    pos += n;
    return true;
  };
  while (!comp && feed()) {}
  EXPECT_TRUE(comp);
  while (comp->program().events.size() < chunk && feed()) {}
  Streamed s;
  std::vector<sim::ReadResult> reads;
  sim::RunOptions o{.check = check, .stop_at_violation = true};
  o.refill = [&](sim::RunResult& r) {
    ++s.chunks;
    reads.insert(reads.end(), r.reads.begin(), r.reads.end());  // taken out, as `kacct run` does
    r.reads.clear();
    comp->next_chunk();
    while (comp->program().events.size() < chunk && feed()) {}
    return !comp->program().events.empty();
  };
  s.r = sim::run(comp->program(), m, o);
  reads.insert(reads.end(), s.r.reads.begin(), s.r.reads.end());
  s.r.reads = std::move(reads);
  return s;
}

void expect_same(const sim::RunResult& a, const sim::RunResult& b, const std::string& what) {
  ASSERT_EQ(to_json(a.cpus), to_json(b.cpus)) << what;
  // A run stopped at a violation has not compiled the tasks forked after it; the whole trace's
  // run has them, untouched.
  auto tasks = b.tasks;
  if (b.violation && a.tasks.size() < tasks.size()) {
    for (std::size_t i = a.tasks.size(); i < tasks.size(); ++i)
      ASSERT_TRUE(tasks[i].utime == 0 && tasks[i].stime == 0 && tasks[i].sum_exec_runtime == 0) << what;
    tasks.resize(a.tasks.size());
  }
  ASSERT_EQ(to_json(a.tasks), to_json(tasks)) << what;
  ASSERT_EQ(a.reads.size(), b.reads.size()) << what;
  for (std::size_t i = 0; i < a.reads.size(); ++i) {
    const auto &x = a.reads[i], &y = b.reads[i];
    ASSERT_TRUE(x.id == y.id && x.kind == y.kind && x.tid == y.tid && x.ts == y.ts && x.line == y.line &&
                x.utime == y.utime && x.stime == y.stime && x.rtime == y.rtime)
        << what << " read " << i;
  }
  ASSERT_EQ(a.violation.has_value(), b.violation.has_value()) << what;
  if (a.violation) {
    ASSERT_EQ(a.violation->event, b.violation->event) << what;
    ASSERT_EQ(a.violation->line, b.violation->line) << what;
    ASSERT_EQ(a.violation->invariant, b.violation->invariant) << what;
    ASSERT_EQ(a.violation->detail, b.violation->detail) << what;
  }
  ASSERT_EQ(a.known_bugs.size(), b.known_bugs.size()) << what;
  ASSERT_EQ(a.obligations_failed, b.obligations_failed) << what;
  ASSERT_EQ(a.backend.index(), b.backend.index()) << what;
  if (const auto* g = a.backend_result<model::GenResult>()) {
    const auto* h = b.backend_result<model::GenResult>();
    ASSERT_EQ(g->fork_line, h->fork_line) << what;
    ASSERT_EQ(g->fork_finding, h->fork_finding) << what;
    ASSERT_EQ(g->procstat.size(), h->procstat.size()) << what;
    ASSERT_EQ(g->first_backwards, h->first_backwards) << what;
  }
  if (const auto* n = a.backend_result<model::native::NativeResult>()) {
    const auto* m = b.backend_result<model::native::NativeResult>();
    ASSERT_EQ(n->findings.size(), m->findings.size()) << what;
    for (std::size_t i = 0; i < n->findings.size(); ++i) {
      ASSERT_EQ(n->findings[i].line, m->findings[i].line) << what;
      ASSERT_EQ(n->findings[i].detail, m->findings[i].detail) << what;
    }
  }
}

// Every combo's backend and config values stream the same way; three seeds over an interleaved
// third of the combos each (under ASan the whole product took 85 s) still reach every CPU and
// every accounting kind, which the end checks.
TEST(Stream, SameAsWholeRunOnEveryCombo) {
  std::size_t runs = 0, chunked = 0;
  std::set<std::string> cpus_seen, all_cpus;
  std::set<int> kinds_seen, all_kinds;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    trace::BuildSpec spec;
    spec.cpu_model = "x86-64";
    spec.ncpus = 3;
    spec.hotplug = seed == 3;
    const auto t = trace::random_trace(seed, spec, 3000);
    const std::string text = trace::write(t);
    const auto p = sim::compile(trace::load(text).value()).value();
    std::size_t k = 0;
    for (const auto& c : arch::combos()) {
      all_cpus.insert(std::string(c.cpu.name));
      all_kinds.insert(int(c.cfg.acct));
      if (k++ % 3 != seed - 1) continue;
      cpus_seen.insert(std::string(c.cpu.name));
      kinds_seen.insert(int(c.cfg.acct));
      const auto m = sim::model_cfg(c.cpu, c.cfg);
      for (bool check : {false, true}) {
        const auto whole = sim::run(p, m, {.check = check, .stop_at_violation = true});
        const auto s = run_streamed(text, m, check, seed == 1 ? 7 : 4096, 37);
        expect_same(s.r, whole, std::string(c.cpu.name) + " " + c.cfg.name() + (check ? " check" : ""));
        if (!whole.violation) { ASSERT_EQ(s.r.events, whole.events); }
        chunked += s.chunks > 1;
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 0u);
  EXPECT_GT(chunked, 0u);  // the runs did go chunk by chunk
  EXPECT_EQ(cpus_seen, all_cpus);
  EXPECT_EQ(kinds_seen, all_kinds);
}

// The loader reports what load() reports, wherever the pieces split the text: a syntax error
// after a semantic one wins, columns of semantic errors, the end of a header.
TEST(Stream, ErrorsAsLoad) {
  const std::string head = "kacct-trace 1\ncpu x86-64\nncpus 2\nclock ns\ntask 100 comm=a mm=1\nevents\n";
  const std::vector<std::string> texts = {
      head + "10 0 tick\n5 0 tick\n",              // semantic: time goes back
      head + "10 0 tick\n5 0 tick\n20 0 bogus\n",  // a later syntax error wins
      head + "10 0 switch prev=0 next=999\n",      // semantic with a field column
      head + "10 0 tick\r\n20 1 tick",             // CRLF, no final newline: fine
      "kacct-trace 1\ncpu x86-64\n",               // the header ends early
      head + "10 5 tick\n",                        // cpu out of range (syntax)
      "kacct-trace 1\ncpu x86-64\nncpus 2\nclock ns\ntask 1 pid=2 comm=a mm=1\nevents\n1 0 tick\n",
  };
  for (const auto& text : texts)
    for (std::size_t piece : {1u, 3u, 1000u}) {
      const auto want = trace::load(text);
      std::vector<trace::Event> got;
      trace::Tracker* trk = nullptr;
      std::unique_ptr<trace::Tracker> tr;
      trace::StreamLoader l([&](const trace::Header& h) { tr = std::make_unique<trace::Tracker>(h), trk = tr.get(); },
                            [&](const trace::Event& e, std::string_view) -> std::optional<trace::Error> {
                              if (auto err = trk->apply(e)) return err;
                              got.push_back(e);
                              return std::nullopt;
                            });
      std::optional<trace::Error> err;
      for (std::size_t pos = 0; pos < text.size() && !err; pos += piece) err = l.feed(text.substr(pos, piece));
      if (!err) err = l.finish();
      ASSERT_EQ(err.has_value(), !want.ok()) << text;
      if (err) {
        ASSERT_EQ(*err, want.error()) << text << " piece " << piece;
      } else {
        ASSERT_EQ(got, want.value().events);
        ASSERT_EQ(l.header(), want.value().header);
      }
    }
}

}  // namespace
}  // namespace kacct
