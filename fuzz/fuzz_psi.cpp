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

#include "model/psi/script.hpp"

namespace {
const kacct::arch::KVersion kVersions[] = {kacct::arch::v(5, 10), kacct::arch::v(6, 1),  kacct::arch::v(6, 6),
                                           kacct::arch::v(6, 10), kacct::arch::v(6, 12), kacct::arch::v(6, 14),
                                           kacct::arch::v(6, 17), kacct::arch::v(6, 17)};
constexpr std::size_t kMaxFuzzEvents = 20000;

[[noreturn]] void die(const char* what, const std::string& detail, const std::string& script) {
  std::fprintf(stderr, "kacct fuzz_psi: %s: %s\n--- script ---\n%s--- end ---\n", what, detail.c_str(), script.c_str());
  std::abort();
}
}  // namespace

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
  PsiCfg cfg = script_cfg(s);
  cfg.ver = kVersions[data[0] & 7];
  cfg.irqtime = !(data[0] & 8);
  cfg.variant = Variant::Faithful;
  // An event that cannot happen (task on two CPUs, ...) ends the run with an error at its line.
  auto r = run_script(s, cfg);
  if (r.error && (r.error->line == 0 || !r.failed_at)) die("run error without a position", r.error->str(), canon);
  if (r.violation && r.violation->invariant != "psi_irq.delta_fits_u32")
    die(r.violation->invariant.c_str(), r.violation->message + " (version " + cfg.ver.str() + ")", canon);
  return 0;
}
