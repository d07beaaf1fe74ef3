// libFuzzer target for the native vtime backend (model/native/).
//
// Input: byte 0 picks a native CPU x config combo (index mod the native combos), byte 1 the
// synthetic SPURR/PURR rate (1/1, 1/2, 13/10, 7/8), bytes 2-3 the builder spec, the rest actions
// (8 bytes each, model/trace/builder.hpp). The built trace runs with check=true; oracles:
//  - no must-hold native invariant is violated and no domain obligation fails;
//  - the same run with the scaled code switched off gives identical unscaled outputs (kcpustat,
//    task times): the scaled split never feeds back into them (abcff86df2d2's claim, per trace).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "model/domain/reflect.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {

constexpr std::size_t kMaxActions = 2000;

[[noreturn]] void die(const kacct::arch::Combo& c, const std::string& what, const kacct::trace::Trace& t) {
  std::fprintf(stderr, "kacct fuzz_native: %.*s %s: %s\n--- trace ---\n%s--- end ---\n", int(c.cpu.name.size()),
               c.cpu.name.data(), c.cfg.name().c_str(), what.c_str(), kacct::trace::write(t).c_str());
  std::abort();
}

const std::vector<kacct::arch::Combo>& native_combos() {
  static const auto list = kacct::arch::combos_of(kacct::arch::Accounting::Native);
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 4) return 0;
  const auto& combos = native_combos();
  const arch::Combo& combo = combos[data[0] % combos.size()];
  static constexpr std::uint32_t ratios[4][2] = {{1, 1}, {1, 2}, {13, 10}, {7, 8}};
  const auto* ratio = ratios[data[1] % 4];
  const auto spec = trace::spec_from_bytes(data[2], data[3], std::string(combo.cpu.name));
  auto actions = trace::actions_from_bytes(std::span<const std::uint8_t>(data + 4, size - 4));
  if (actions.size() > kMaxActions) actions.resize(kMaxActions);
  const trace::Trace t = trace::build(spec, actions);
  if (auto err = trace::validate(t)) die(combo, "builder produced an invalid trace: " + err->to_string(), t);
  auto prog = sim::compile(t);
  if (!prog.ok()) die(combo, "a valid trace did not compile: " + prog.error().to_string(), t);
  auto m = sim::model_cfg(combo.cpu, combo.cfg);
  m.native.spurr_num = ratio[0];
  m.native.spurr_den = ratio[1];
  const auto res = sim::run(prog.value(), m, {.check = true, .tolerate_known_bugs = true});
  if (res.violation)
    die(combo, "invariant " + res.violation->invariant + " violated (" + res.violation->detail + ")", t);
  if (!res.obligations_failed.empty())
    die(combo, "obligation failed: " + std::string(res.obligations_failed.front()), t);
  auto off = m;
  off.native.scaled = !m.native.scaled;
  off.native.copy_startspurr = false;
  const auto other = sim::run(prog.value(), off, {.check = false});
  // Field by field (model/domain/reflect.hpp's equal), not through JSON: this runs per input.
  Concrete d;
  const auto same = [&](const auto& x, const auto& y) { return x.size() == y.size() && equal(d, x, y); };
  if (!same(res.cpus, other.cpus) || !same(res.tasks, other.tasks))
    die(combo, "switching the scaled code changed the unscaled outputs", t);
  return 0;
}
