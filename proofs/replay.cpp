// Replay commands for counterexamples (proofs/replay.hpp).
#include "proofs/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "model/lazytlb/script.hpp"
#include "model/native/result.hpp"
#include "model/psi/script.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/trace.hpp"

namespace kacct::proofs {
using namespace kacct::model;

namespace {
constexpr std::uint64_t kTickNs = 1'000'000;  // cputime_adjust traces count whole 1 ms ticks

bool same(const AdjustCfg& a, const AdjustCfg& b) { return a.era == b.era && a.div == b.div; }

struct EraName {
  AdjustEra era;
  std::string_view key;
};
constexpr std::array era_names = {
    EraName{AdjustEra::PerFieldMax, "before-9d7fb0427648"}, EraName{AdjustEra::GotoUpdate, "9d7fb0427648"},
    EraName{AdjustEra::ClampAlways, "173be9a14f7b"}, EraName{AdjustEra::ClampToRtime, "77baa5bafcbe"}};
struct DivName {
  ScaleDiv div;
  std::string_view key;
};
constexpr std::array div_names = {DivName{ScaleDiv::Loop32, "scale_stime"}, DivName{ScaleDiv::Exact128, "exact128"},
                                  DivName{ScaleDiv::Generic2020, "generic2020"}};

// The first single-CPU tick config at HZ=1000 without irqtime or steal (what the trace needs).
bool plain_tick_1000(const arch::Config& c) {
  return c.acct == arch::Accounting::Tick && c.hz == 1000 && !c.irq_time && !c.steal;
}
}  // namespace

std::string_view era_key(AdjustEra e) {
  for (const auto& n : era_names)
    if (n.era == e) return n.key;
  return "?";
}
std::string_view div_key(ScaleDiv d) {
  for (const auto& n : div_names)
    if (n.div == d) return n.key;
  return "abstract";  // proofs only; not accepted by parse_adjust
}
std::string adjust_key(const AdjustCfg& a) { return fmt::format("{}:{}", era_key(a.era), div_key(a.div)); }

std::optional<AdjustCfg> parse_adjust(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::optional<AdjustCfg> out;
  for (const auto& e : era_names)
    for (const auto& d : div_names)
      if (e.key == s.substr(0, colon) && d.key == s.substr(colon + 1)) out = AdjustCfg{e.era, d.div};
  return out;
}

std::optional<Releases> shipped(const AdjustCfg& a) {
  std::optional<Releases> r;
  // 3.10 (scale_stime's loop, 55eaa7c1f511) to the newest modelled release.
  for (auto ver = arch::v(3, 10); ver <= arch::tick_versions.back(); ver = arch::next_mainline(ver))
    for (bool exact : {false, true})
      if (same(adjust_cfg(ver, exact), a)) {
        if (!r) r = Releases{ver, ver};
        r->last = ver;
      }
  return r;
}

std::string AdjustReplay::args() const {
  std::string s = fmt::format("kacct check --cpu {} --config {}", cpu.name, cfg.name());
  if (override_adjust) s += " --cputime-adjust " + adjust_key(*override_adjust);
  return s;
}

sim::ModelCfg replay_model_cfg(const AdjustReplay& r) {
  auto m = sim::model_cfg(r.cpu, r.cfg);
  if (r.override_adjust) m.adjust = *r.override_adjust;
  return m;
}

AdjustReplay resolve_adjust(const AdjustCfg& a) {
  auto has = [&](const arch::CpuFacts& cpu, const arch::Config& cfg) {
    const auto m = sim::model_cfg(cpu, cfg);
    return m.acct == arch::Accounting::Tick && m.tick.tick_nsec == kTickNs && same(m.adjust, a);
  };
  // 1. A listed config.
  for (const auto& c : arch::combos())
    if (plain_tick_1000(c.cfg) && has(c.cpu, c.cfg)) return {c.cpu, c.cfg, std::nullopt, ""};
  // 2. A patch release the tick model covers that has it, by name (find_config accepts those).
  const auto rel = shipped(a);
  for (const auto& p : arch::patches)
    for (auto ver : {p.before, p.after}) {
      arch::Config k{ver, arch::Accounting::Tick, false, false, 1000};
      if (!arch::find_config(k.name())) continue;
      for (const auto& cpu : arch::cpus())
        if (arch::legal(cpu, k) && has(cpu, k))
          return {
              cpu, k, std::nullopt,
              fmt::format("{} is not a listed tick release; `kacct check` accepts it as a patch's release", ver.str())};
    }
  // 3. The override, on the first tick release (x86-64: its Kconfig allows every tick config).
  AdjustReplay r{*arch::find_cpu("x86-64"),
                 arch::Config{arch::tick_versions.front(), arch::Accounting::Tick, false, false, 1000}, a, ""};
  r.note = rel ? fmt::format(
                     "the cputime_adjust of {}..{} on {}'s tick accounting: tick accounting is modelled "
                     "from {} on, and no listed config has this era and division",
                     rel->first.str(), rel->last.str(), r.cfg.version.str(), r.cfg.version.str())
               : "a combination no release shipped";
  return r;
}

void derive_command(Result& r) {
  if (r.verdict != Verdict::Violated || !r.counterexample || !r.command.empty()) return;
  const std::string& text = *r.counterexample;
  std::size_t at = 0;  // skip leading comment lines
  while (at < text.size() && text[at] == '#') {
    auto nl = text.find('\n', at);
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  const std::string_view head = std::string_view(text).substr(at);
  if (head.starts_with("psi ")) {
    auto s = psi::parse_script(text);
    if (!s) return;
    auto rr = psi::run_script(s.value(), psi::script_cfg(s.value()));
    if (rr.error) return;
    r.command = {"kacct psi-irq run FILE", rr.violation ? rr.violation->invariant : "", rr.violation ? 1 : 0,
                 rr.violation ? "" : "no invariant is violated: the scenario shows the difference the claim names",
                 "psi"};
  } else if (head.starts_with("lazytlb ")) {
    auto s = lazytlb::parse_script(text);
    if (!s) return;
    auto rr = lazytlb::run_script(s.value());
    if (rr.error) return;
    const bool bad = rr.failed_at && !rr.violations.empty();
    r.command = {"kacct lazy-tlb run FILE", bad ? rr.violations.front().invariant : "", bad ? 1 : 0,
                 bad ? "" : "no invariant is violated: the script shows the behaviour the claim names", "lts"};
  } else if (head.starts_with("kacct-trace") && !r.replay_config.empty()) {
    auto tr = trace::load(text);
    if (!tr) return;
    auto cpu = arch::find_cpu(tr.value().header.cpu_model);
    auto cfg = arch::find_config(r.replay_config);
    if (!cpu || !cfg || !arch::legal(*cpu, *cfg)) return;
    auto prog = sim::compile(tr.value());
    if (!prog) return;
    auto res = sim::run(prog.value(), sim::model_cfg(*cpu, *cfg), {.check = true, .stop_at_violation = true});
    if (res.violation)
      r.command = {fmt::format("kacct check --cpu {} --config {} FILE", cpu->name, cfg->name()),
                   res.violation->invariant, 1, "", "trace"};
    else if (const auto* nr = res.backend_result<model::native::NativeResult>();
             nr && std::any_of(nr->findings.begin(), nr->findings.end(),
                               [&](const auto& f) { return f.invariant == r.name; }))
      // the kernel's own behaviour before the patch: `check` prints it, the model holds
      r.command = {fmt::format("kacct check --cpu {} --config {} FILE", cpu->name, cfg->name()), "", 0,
                   fmt::format("prints `kernel finding {}`: the kernel's own behaviour, not a broken model "
                               "invariant",
                               r.name),
                   "trace"};
    else  // a claim about values (shares, costs, residues), not an invariant
      r.command = {fmt::format("kacct run --cpu {} --config {} FILE", cpu->name, cfg->name()), "", 0,
                   "no invariant is violated: it replays the run the claim measured and prints its accounted "
                   "times, not the gen counters some claims quote (reads going backwards, residues, clock reads)",
                   "trace"};
  }
}

}  // namespace kacct::proofs
