// Counterexamples a user can replay: the kacct command line for each one, and the (CPU,
// config) a cputime_adjust trace replays on. What the command names is what the proofs ran.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "arch/registry.hpp"
#include "model/cputime/cputime_adjust.hpp"
#include "model/sim/backends.hpp"
#include "proofs/verdict.hpp"

namespace kacct::proofs {

// `kacct check --cputime-adjust ERA:DIVISION` names: an era by the patch that opens it
// ("before-9d7fb0427648" for the per-field max era), a division by its routine
// (scale_stime, exact128, generic2020).
std::string_view era_key(model::AdjustEra);
std::string_view div_key(model::ScaleDiv);
std::string adjust_key(const model::AdjustCfg&);                 // "ERA:DIVISION"
std::optional<model::AdjustCfg> parse_adjust(std::string_view);  // nullopt if unknown

// The releases (3.10 .. 6.12) whose cputime_adjust is `a` on some CPU; nullopt if none shipped.
struct Releases {
  arch::KVersion first, last;
};
std::optional<Releases> shipped(const model::AdjustCfg&);

// Where a cputime_adjust counterexample trace (single CPU, 1 ms ticks) replays: a listed tick
// config at HZ=1000 whose model_cfg() has exactly this era and division; else a tick config of
// a release find_config() accepts; else the override on the first tick config.
struct AdjustReplay {
  arch::CpuFacts cpu;
  arch::Config cfg;
  std::optional<model::AdjustCfg> override_adjust;  // --cputime-adjust
  std::string note;
  std::string args() const;  // "kacct check --cpu C --config K [--cputime-adjust E:D]"
};
AdjustReplay resolve_adjust(const model::AdjustCfg&);
// The model settings `kacct check` runs for it (model_cfg() plus the override).
sim::ModelCfg replay_model_cfg(const AdjustReplay&);

// The name of the gen vtime config (no irq time, no steal) a claim's scenario trace ran on.
inline std::string gen_config_name(arch::KVersion v, unsigned hz) {
  return arch::Config{v, arch::Accounting::Gen, false, false, hz}.name();
}

// Sets r.command for a violated result whose counterexample is a PSI or lazy-TLB script, or a
// trace with r.replay_config set, by running it as the command would (the invariant it trips;
// a trace that trips none replays with `kacct run`, which prints the values the claim quotes).
// Leaves a command already set alone.
void derive_command(Result& r);

}  // namespace kacct::proofs
