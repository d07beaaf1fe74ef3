// libFuzzer target for PSI event scripts (model/psi/script.hpp) and the PSI irq invariants.
//
// Input: byte 0 = selector (bits 0-2: version index into kVersions, bit 3: irq time
// accounting off); the rest is script text. The parser must never crash (errors carry a
// position); an accepted script must round-trip through the canonical writer; run on the
// faithful model it must keep every invariant of spec/psi.hpp, except psi_irq.delta_fits_u32, the
// modelled kernel limit (one charge >= 2^32 ns), which is a finding, not a model fault.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "event_mutator.hpp"
#include "heap.hpp"
#include "model/psi/script.hpp"

namespace {
const kacct::arch::KVersion kVersions[] = {kacct::arch::v(5, 10), kacct::arch::v(6, 1),  kacct::arch::v(6, 6),
                                           kacct::arch::v(6, 10), kacct::arch::v(6, 12), kacct::arch::v(6, 14),
                                           kacct::arch::v(6, 17), kacct::arch::v(6, 17)};
// Events after repeat blocks are expanded. A 4 KB script with repeats reached the parser's 20,000
// and each input then cost a second of ASan time (0.1 exec/s); every PSI invariant is per event
// and the u32 limit needs one long wait, not many events, so 2,000 lose no oracle.
constexpr std::size_t kMaxFuzzEvents = 2000;

[[noreturn]] void die(const char* what, const std::string& detail, const std::string& script) {
  std::fprintf(stderr, "kacct fuzz_psi: %s: %s\n--- script ---\n%s--- end ---\n", what, detail.c_str(), script.c_str());
  std::abort();
}
}  // namespace

// The run configuration byte 0 selects (shared by the oracle and the mutator).
kacct::model::psi::PsiCfg fuzz_cfg(const kacct::model::psi::Script& s, std::uint8_t sel) {
  using namespace kacct::model::psi;
  PsiCfg cfg = script_cfg(s);
  cfg.ver = kVersions[sel & 7];
  cfg.irqtime = !(sel & 8);
  cfg.variant = Variant::Faithful;
  return cfg;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct::model::psi;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto p = parse_script(text, kMaxFuzzEvents);
  if (!p) {
    if (p.error().line == 0 || p.error().col == 0) die("error without a position", p.error().str(), std::string(text));
    return 0;
  }
  const Script& s = p.value();
  const std::string canon = write_script(s);
  auto again = parse_script(canon, kMaxFuzzEvents);
  if (!again) die("canonical text does not parse", again.error().str(), canon);
  if (!(again.value() == s)) die("round trip changed the script", "", canon);
  const PsiCfg cfg = fuzz_cfg(s, data[0]);
  // An event that cannot happen (task on two CPUs, ...) ends the run with an error at its line.
  auto r = run_script(s, cfg);
  if (r.error && (r.error->line == 0 || !r.failed_at)) die("run error without a position", r.error->str(), canon);
  if (r.violation && r.violation->invariant != "psi_irq.delta_fits_u32")
    die(r.violation->invariant.c_str(), r.violation->message + " (version " + cfg.ver.str() + ")", canon);
  return 0;
}

// Structure-aware mutation (event_mutator.hpp): events edited within their operands' domains
// (CPU < cpus, task, group, ns), kept if the canonical text parses back and every event can
// happen (the run ends without an error).
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  using namespace kacct::model::psi;
  std::uint8_t sel = size ? data[0] : 0;
  auto parse = [&](const std::uint8_t* d, std::size_t n) -> std::optional<Script> {
    if (n < 1) return std::nullopt;
    auto p = parse_script(std::string_view(reinterpret_cast<const char*>(d + 1), n - 1), kMaxFuzzEvents);
    if (!p) return std::nullopt;
    Script s = std::move(p.value());
    s.lines.clear();  // positions of the parsed text: gone once events move
    return s;
  };
  auto field = [&](Script& s, Event& e, std::mt19937_64& rng) {
    const auto cpu = [&] { return std::uint64_t(rng() % std::uint64_t(s.cpus)); };
    const auto ns = [&] { return rng() % (rng() & 1 ? 5'000 : 10'000'000); };
    const auto task = [&] { return rng() % (s.task_group.size() + 1); };
    const auto group = [&] { return rng() % s.parent.size(); };
    if (rng() % 4 == 0) {
      e = Event{};
      e.kind = Ev(rng() % (std::size_t(Ev::RaceTickMove) + 1));
    }
    switch (e.kind) {
      case Ev::Wait: e.a = ns(); break;
      case Ev::IrqEnter:
        e.a = cpu();
        e.soft = rng() & 1;
        break;
      case Ev::IrqExit:
      case Ev::Tick:
      case Ev::ClockGettime: e.a = cpu(); break;
      case Ev::Irq:
        e.a = cpu();
        e.b = ns();
        e.soft = rng() & 1;
        break;
      case Ev::Schedule:
        e.a = cpu();
        e.b = task();
        break;
      case Ev::Wakeup:
        e.a = cpu();
        e.by = cpu();
        break;
      case Ev::Move:
        e.a = 1 + task() % std::max<std::size_t>(1, s.task_group.size());
        e.b = group();
        e.by = cpu();
        break;
      case Ev::Pressure:
        e.a = group();
        e.b = rng() & 1;
        e.by = cpu();
        break;
      case Ev::RaceTickMove:
        e.a = cpu();
        e.b = 1 + task() % std::max<std::size_t>(1, s.task_group.size());
        e.c = group();
        e.by = cpu();
        break;
    }
    return true;
  };
  auto valid = [&](const Script& s) {
    auto again = parse_script(write_script(s), kMaxFuzzEvents);
    return again && again.value() == s && !run_script(s, fuzz_cfg(s, sel)).error;
  };
  auto write = [&](const Script& s) { return std::string(1, char(sel)) + write_script(s); };
  return kacct::fuzz::mutate_events<Script>(data, size, max_size, seed, kMaxFuzzEvents, parse, field, valid, write);
}
