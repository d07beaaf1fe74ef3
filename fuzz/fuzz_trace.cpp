// libFuzzer target for the trace parser and the simulator's invariant checks.
//
// Input: bytes 0-1 = selector (little-endian u16): bit 15 set -> the rest is trace text,
// clear -> the rest is a builder spec (2 bytes) and actions (8 bytes each, see
// model/trace/builder.hpp); bits 0-14 pick the CPU x config combo (index mod arch::combos()).
//  (a) text: trace::load must never crash; a trace it accepts (within realistic bounds) is run.
//  (b) actions: the built trace must validate and compile.
// Every trace is run with check=true on the combo; a violated invariant or failed obligation
// prints the combo, the invariant and the trace text, then aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {

constexpr std::size_t kMaxActions = 2000;
constexpr std::size_t kMaxTextEvents = 5000;
constexpr std::uint32_t kMaxTextCpus = 64;
constexpr std::uint64_t kMaxTs = std::uint64_t{1} << 50;  // ~13 days of ns: no counter wraps

[[noreturn]] void die(const kacct::arch::Combo& c, const std::string& what, const kacct::trace::Trace& t) {
  std::fprintf(stderr, "kacct fuzz: %.*s %s: %s\n--- trace ---\n%s--- end ---\n", int(c.cpu.name.size()),
               c.cpu.name.data(), c.cfg.name().c_str(), what.c_str(), kacct::trace::write(t).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 2) return 0;
  const unsigned sel = unsigned(data[0]) | unsigned(data[1]) << 8;
  const auto& combos = arch::combos();
  const arch::Combo& combo = combos[(sel & 0x7fff) % combos.size()];
  const std::span<const std::uint8_t> rest(data + 2, size - 2);

  trace::Trace t;
  if (sel & 0x8000) {
    auto r = trace::load(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
    if (!r.ok()) {
      (void)r.error().to_string();
      return 0;
    }
    t = std::move(r).value();
    if (trace::write(t).empty()) std::abort();  // the canonical writer accepts whatever load accepts
    if (t.header.ncpus > kMaxTextCpus || t.events.size() > kMaxTextEvents ||
        (!t.events.empty() && t.events.back().ts > kMaxTs))
      return 0;
  } else {
    if (rest.size() < 2) return 0;
    const auto spec = trace::spec_from_bytes(rest[0], rest[1], std::string(combo.cpu.name));
    auto actions = trace::actions_from_bytes(rest.subspan(2));
    if (actions.size() > kMaxActions) actions.resize(kMaxActions);
    t = trace::build(spec, actions);
    if (auto err = trace::validate(t)) die(combo, "builder produced an invalid trace: " + err->to_string(), t);
  }
  auto prog = sim::compile(t);
  if (!prog.ok()) die(combo, "a valid trace did not compile: " + prog.error().to_string(), t);
  const auto res =
      sim::run(prog.value(), sim::model_cfg(combo.cpu, combo.cfg), {.check = true, .tolerate_known_bugs = true});
  if (res.violation)
    die(combo,
        "invariant " + res.violation->invariant + " violated (" + res.violation->detail + ") at event " +
            std::to_string(res.violation->event),
        t);
  if (!res.obligations_failed.empty())
    die(combo, "obligation failed: " + std::string(res.obligations_failed.front()), t);
  return 0;
}
