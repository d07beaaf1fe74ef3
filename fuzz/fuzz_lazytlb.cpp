// libFuzzer target for the lazy-TLB event-script parser and the model's invariant checks.
//
// Input: byte 0 = selector. Bit 7 set: the rest is script text; parse_script must never crash
// (an error carries its line and column), an accepted script must round-trip through
// write_script, and is run (events that cannot happen are reported, not run). Bit 7 clear:
// bits 0-1 pick arch (generic, ppc64-radix, ppc64-hash), bit 2 the release (6.3 or 6.12), and
// each further byte b picks an event enabled in the current state of a 3-CPU, 3-task, 2-mm
// world: the first enabled candidate event from number b % candidates on, cyclically. Any invariant or obligation
// failure of the unmutated model prints the script and aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "event_mutator.hpp"
#include "heap.hpp"
#include "model/lazytlb/explore.hpp"

namespace {
// Longer scripts are parsed, not run: 3 CPUs x 3 tasks x 2 mms reach every state in far fewer
// events, and each event of an actions input enumerates and checks every candidate event.
constexpr std::size_t kMaxJudged = 1000;

[[noreturn]] void die(const std::string& what, const kacct::model::lazytlb::Script& s) {
  std::fprintf(stderr, "kacct fuzz_lazytlb: %s\n--- script ---\n%s--- end ---\n", what.c_str(),
               kacct::model::lazytlb::write_script(s).c_str());
  std::abort();
}
void judge(const kacct::model::lazytlb::Script& s) {
  using namespace kacct::model::lazytlb;
  auto r = run_script(s);
  const Cfg cfg = s.cfg();
  // The runner's incremental check against check(), the oracle, on the same events: the same
  // step fails with the same violations (none before an event that cannot happen).
  {
    World<kacct::Concrete> w = initial(s.sizes);
    StepLog log;
    Costs c;
    std::vector<kacct::spec::lazytlb::Violation> bad;
    std::optional<std::size_t> at;
    for (std::size_t i = 0; i < s.events.size() && !at; ++i) {
      if (!why_not_enabled(w, cfg, s.events[i]).empty()) break;
      if (!checked_step(cfg, w, s.events[i], c, log, bad)) at = i;
    }
    if (r.error ? at.has_value() : (at != r.failed_at || bad != r.violations))
      die("the runner's incremental check differs from check()", s);
  }
  // The kernel's own hotplug race (shootdown before 21641bd9a7a7) is a finding, not a crash.
  bool hotplug = false;
  for (const auto& e : s.events) hotplug = hotplug || e.op == Op::Offline;
  if (hotplug && cfg.shootdown && !cfg.force_init_mm) return;
  if (r.failed_at && !r.error && s.mutants.empty())
    die(r.violations.front().invariant + ": " + r.violations.front().detail, s);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct::model::lazytlb;
  if (size < 1) return 0;
  const unsigned sel = data[0];
  if (sel & 0x80) {
    auto p = parse_script(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    if (!p) {
      if (p.error().line == 0 || p.error().col == 0) die("error without a position: " + p.error().str(), {});
      return 0;
    }
    const Script& s = p.value();
    const std::string text = write_script(s);
    auto q = parse_script(text);
    if (!q || write_script(q.value()) != text || !(q.value() == s)) die("write/parse round trip differs", s);
    if (s.events.size() <= kMaxJudged && s.sizes.cpus <= 64) judge(s);
    return 0;
  }
  Script s;
  s.sizes = {3, 3, 2};
  s.arch = (sel & 3) == 1 ? Arch::PpcRadix : (sel & 3) == 2 ? Arch::PpcHash : Arch::Generic;
  s.version = (sel & 4) ? kacct::arch::v(6, 12) : kacct::arch::v(6, 3);
  const Cfg cfg = s.cfg();
  World<kacct::Concrete> w = initial(s.sizes);
  // One candidate buffer, reused: a vector grown afresh per byte took 27% of the samples under
  // ASan+UBSan, most in ASan's allocator and malloc stacks (docs/fuzzing.md, fourth round).
  static std::vector<Event> cands;
  for (std::size_t i = 1; i < size && s.events.size() < kMaxJudged; ++i) {
    // The first enabled candidate at or after candidate number data[i] % n, cyclically: every
    // enabled event is still some byte's choice (this world has fewer than 256 candidates), and
    // only the candidates up to the first enabled one are asked (asking all of them was half of
    // the target's time). why_not_enabled: not_enabled's decision without building its message.
    candidate_events_into(cands, w, cfg);
    const std::size_t n = cands.size();
    std::optional<Event> pick;
    for (std::size_t k = 0; k < n && !pick; ++k)
      if (const Event& c = cands[(data[i] + k) % n]; why_not_enabled(w, cfg, c).empty()) pick = c;
    if (!pick) break;
    const Event e = *pick;
    s.events.push_back(e);
    kacct::Concrete d;
    Decider<kacct::Concrete> dec;
    Costs c;
    StepLog log;
    Stepper<kacct::Concrete>(d, cfg, w, c, log, dec).run(e);
  }
  judge(s);
  return 0;
}

// Structure-aware mutation (event_mutator.hpp) of script inputs (action inputs get libFuzzer's
// byte mutator): events edited within their domains (op, CPU < cpus, task or mm by op),
// kept if the canonical text parses back and every event is enabled when it runs.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  using namespace kacct::model::lazytlb;
  auto parse = [&](const std::uint8_t* d, std::size_t n) -> std::optional<Script> {
    if (n < 1 || !(d[0] & 0x80)) return std::nullopt;
    auto p = parse_script(std::string_view(reinterpret_cast<const char*>(d + 1), n - 1));
    if (!p || p.value().events.size() > kMaxJudged) return std::nullopt;
    Script s = std::move(p.value());
    s.lines.clear();  // positions of the parsed text: gone once events move
    return s;
  };
  auto field = [&](Script& s, Event& e, std::mt19937_64& rng) {
    if (rng() % 3 == 0) e.op = Op(rng() % kNumOps);
    e.cpu = std::int16_t(rng() % std::uint64_t(s.sizes.cpus));
    switch (e.op) {
      case Op::Switch:
      case Op::Fork:
      case Op::ForkVm: e.arg = std::int16_t(rng() % std::uint64_t(s.sizes.tasks)); break;
      case Op::Use:
      case Op::MmGet:
      case Op::MmPut:
      case Op::MmGrab:
      case Op::MmDrop:
      case Op::Flush: e.arg = std::int16_t(rng() % std::uint64_t(s.sizes.mms)); break;
      default: e.arg = 0; break;
    }
    return true;
  };
  auto valid = [&](const Script& s) {
    auto again = parse_script(write_script(s));
    return again && again.value() == s && !run_script(s).error;
  };
  auto write = [&](const Script& s) { return std::string(1, char(0x80)) + write_script(s); };
  return kacct::fuzz::mutate_events<Script>(data, size, max_size, seed, kMaxJudged, parse, field, valid, write);
}
