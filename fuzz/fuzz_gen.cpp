// libFuzzer target for the gen vtime model (model/gen): every trace runs with check=true on a
// gen combo, with a fuzzed nohz_full mask and switch gap, and on the ns variants with every CPU
// nohz_full and no gap, each task's vtime total must equal its ground-truth time (ledger).
//
// Input: bytes 0-1 = selector (little-endian u16): bit 15 set -> the rest (after byte 3) is trace
// text, clear -> a builder spec (2 bytes) and actions (model/trace/builder.hpp); bits 0-14 pick
// the gen combo (index mod the gen combos of arch::combos()). Byte 2: switch gap in units of
// 64 ns; byte 3: nohz_full mask (0 = every CPU).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "model/trace/ledger.hpp"

namespace {

constexpr std::size_t kMaxActions = 2000;
constexpr std::size_t kMaxTextEvents = 5000;
constexpr std::uint32_t kMaxTextCpus = 16;
constexpr std::uint64_t kMaxTs = std::uint64_t{1} << 50;

[[noreturn]] void die(const kacct::arch::Combo& c, const std::string& what, const kacct::trace::Trace& t) {
  std::fprintf(stderr, "kacct fuzz_gen: %.*s %s: %s\n--- trace ---\n%s--- end ---\n", int(c.cpu.name.size()),
               c.cpu.name.data(), c.cfg.name().c_str(), what.c_str(), kacct::trace::write(t).c_str());
  std::abort();
}
const std::vector<kacct::arch::Combo>& gen_combos() {
  static const auto list = kacct::arch::combos_of(kacct::arch::Accounting::Gen);
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 4) return 0;
  const unsigned sel = unsigned(data[0]) | unsigned(data[1]) << 8;
  const auto& combos = gen_combos();
  const arch::Combo& combo = combos[(sel & 0x7fff) % combos.size()];
  const std::uint64_t gap = std::uint64_t(data[2]) * 64;
  const std::uint64_t mask = data[3];
  const std::span<const std::uint8_t> rest(data + 4, size - 4);

  trace::Trace t;
  if (sel & 0x8000) {
    auto r = trace::load(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
    if (!r.ok()) return 0;
    t = std::move(r).value();
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
  auto cfg = sim::model_cfg(combo.cpu, combo.cfg);
  cfg.gen.switch_gap = gap;
  if (mask) cfg.gen.nohz_full = mask;
  const auto res = sim::run(prog.value(), cfg, {.check = true, .tolerate_known_bugs = true});
  if (res.violation)
    die(combo,
        "invariant " + res.violation->invariant + " violated (" + res.violation->detail + ") at line " +
            std::to_string(res.violation->line),
        t);
  if (!res.obligations_failed.empty())
    die(combo, "obligation failed: " + std::string(res.obligations_failed.front()), t);
  // Differential against the ledger: ns variants, every CPU nohz_full, no gap, no steal or irq
  // time taken out: vtime consumed (plus the pending delta) per task == the task's true time.
  if (gap == 0 && !mask && !combo.cfg.irq_time && !combo.cfg.steal && cfg.gen.variant != model::GenVariant::Jiffy) {
    auto truth = trace::ground_truth(t);
    if (!truth.ok()) die(combo, "ledger rejected a valid trace", t);
    for (std::size_t k = prog.value().header.ncpus; k < prog.value().tasks.size(); ++k) {
      const auto tid = prog.value().tasks[k].tid;
      const auto it = truth.value().task.find(tid);
      if (it == truth.value().task.end()) continue;
      const auto& v = res.backend_result<model::GenResult>()->vtime[k];
      const auto& s = res.backend_result<model::GenResult>()->ctl[k];
      std::uint64_t total =
          v.consumed - res.backend_result<model::GenResult>()
                           ->inherited[k];  // a child's copy of its parent's residues is no time of its own
      const bool running = s.state != model::VT_INACTIVE;
      if (running && truth.value().end_ts > v.starttime) total += truth.value().end_ts - v.starttime;
      if (total != it->second.total())
        die(combo,
            "task " + std::to_string(tid) + ": vtime total " + std::to_string(total) + " != true time " +
                std::to_string(it->second.total()),
            t);
    }
  }
  return 0;
}
