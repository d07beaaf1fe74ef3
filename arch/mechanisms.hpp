// The mechanisms kacct models, one row each. A mechanism has one spelling, its row's name:
// it is the proof model (`kacct prove --model NAME`), the prefix of its patch claims and
// invariants ("NAME.<claim>"), and, with '_' as '-', its `kacct` subcommand. The spellings
// used before (`legacy`) are still accepted where a user types them, for one release.
// Config names (VERSION-native-hz250, VERSION-gen-..., VERSION-tick-...) are not mechanism
// names: `config_part` names the Kconfig accounting choice (VIRT_CPU_ACCOUNTING_NATIVE/GEN,
// TICK_CPU_ACCOUNTING) and stays as it is.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <stdexcept>
#include <string_view>

namespace kacct::arch {

enum class Mechanism { Tick, CputimeAdjust, NativeVtime, GenVtime, LazyTlb, PsiIrq };

// The "CPU/Task time and stats accounting" choice in init/Kconfig: the mechanisms that replay a
// trace (`kacct run`) are one each.
enum class Accounting : std::uint8_t { Tick, Native, Gen };

// Old spellings, accepted as aliases ("" = none).
struct Legacy {
  std::string_view command;  // old subcommand: an alias of command_name()
  std::string_view prefix;   // old proof model / claim and invariant prefix
};

struct MechanismInfo {
  Mechanism id;
  std::string_view name;                 // the one spelling: proof model, claim prefix, `kacct list patches`
  bool command;                          // has its own `kacct` subcommand (command_name())
  std::string_view doc;                  // its page under docs/
  std::optional<Accounting> accounting;  // trace-driven: the accounting mode it replays as
  std::string_view config_part;          // config names VERSION-<part>[-irqtime][-steal]-hzN; "" = none
  Legacy legacy;
};

inline constexpr std::array mechanisms = {
    MechanismInfo{Mechanism::Tick, "tick", false, "docs/models/tick.md", Accounting::Tick, "tick", {}},
    MechanismInfo{
        Mechanism::CputimeAdjust, "cputime_adjust", false, "docs/models/cputime-adjust.md", std::nullopt, "", {}},
    MechanismInfo{Mechanism::NativeVtime,
                  "native_vtime",
                  true,
                  "docs/models/native-vtime.md",
                  Accounting::Native,
                  "native",
                  {"native", "native"}},
    MechanismInfo{
        Mechanism::GenVtime, "gen_vtime", true, "docs/models/gen-vtime.md", Accounting::Gen, "gen", {"", "gen"}},
    MechanismInfo{
        Mechanism::LazyTlb, "lazy_tlb", true, "docs/models/lazy-tlb.md", std::nullopt, "", {"lazytlb", "lazytlb"}},
    MechanismInfo{Mechanism::PsiIrq, "psi_irq", true, "docs/models/psi-irq.md", std::nullopt, "", {"psi", "psi"}},
};

// The `kacct` subcommand of a row: its name with '-' for '_' ("" if it has none).
inline std::string command_name(const MechanismInfo& m) {
  std::string s = m.command ? std::string(m.name) : std::string();
  for (auto& c : s)
    if (c == '_') c = '-';
  return s;
}

// Proof models that are not a mechanism: lemmas a mechanism's proofs rest on.
struct LemmaInfo {
  Mechanism of;
  std::string_view proof_model;  // shares the namespace of the mechanisms' names
};
inline constexpr std::array lemmas = {
    LemmaInfo{Mechanism::CputimeAdjust, "division"},  // mul_u64_u64_div_u64 and the exact-division facts
};

// The row of a mechanism (every enumerator has one: checked below).
constexpr const MechanismInfo& mechanism(Mechanism m) {
  for (const auto& r : mechanisms)
    if (r.id == m) return r;
  throw std::logic_error("arch::mechanism: a Mechanism without a row in arch/mechanisms.hpp");
}
// The row of the mechanism that replays traces in accounting mode `a`.
constexpr const MechanismInfo& mechanism(Accounting a) {
  for (const auto& r : mechanisms)
    if (r.accounting == a) return r;
  throw std::logic_error("arch::mechanism: an Accounting mode without a row in arch/mechanisms.hpp");
}
constexpr std::string_view config_part(Accounting a) { return mechanism(a).config_part; }
// The accounting modes are the enumerators 0 .. accounting_modes - 1 (the simulator's backends
// are indexed by them).
inline constexpr std::size_t accounting_modes = [] {
  std::size_t n = 0;
  for (const auto& r : mechanisms) n += r.accounting.has_value();
  return n;
}();

// Look-ups by name or its old spelling, `legacy.prefix` (nullptr if no row has it).
constexpr const MechanismInfo* find_mechanism(std::string_view name) {
  for (const auto& r : mechanisms)
    if (r.name == name || (!r.legacy.prefix.empty() && r.legacy.prefix == name)) return &r;
  return nullptr;
}
// The mechanism a claim "<name>.<rest>" (or "<legacy prefix>.<rest>") belongs to.
constexpr const MechanismInfo* claim_mechanism(std::string_view claim) {
  const auto dot = claim.find('.');
  return dot == std::string_view::npos ? nullptr : find_mechanism(claim.substr(0, dot));
}
// A proof-model or claim name in the one spelling: an old prefix becomes the row's name;
// anything else is returned as it is.
inline std::string canonical_name(std::string_view name) {
  const auto dot = name.find('.');
  const auto* m = find_mechanism(name.substr(0, dot));
  if (!m) return std::string(name);
  return std::string(m->name) + (dot == std::string_view::npos ? "" : std::string(name.substr(dot)));
}

namespace detail {
constexpr bool rows_complete() {
  for (auto m : {Mechanism::Tick, Mechanism::CputimeAdjust, Mechanism::NativeVtime, Mechanism::GenVtime,
                 Mechanism::LazyTlb, Mechanism::PsiIrq})
    (void)mechanism(m);
  for (std::size_t a = 0; a < accounting_modes; ++a) (void)mechanism(Accounting(a));
  return true;
}
}  // namespace detail
static_assert(detail::rows_complete());

}  // namespace kacct::arch
