// The mechanisms kacct models, one row each: every name a mechanism goes by (CLI subcommand,
// proof model, claim prefix, docs page, config-name part) is written here once and read
// from here everywhere else, so that renaming one is editing one row.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace kacct::arch {

enum class Mechanism { Tick, CputimeAdjust, NativeVtime, GenVtime, LazyTlb, PsiIrq };

// The "CPU/Task time and stats accounting" choice in init/Kconfig: the mechanisms that replay a
// trace (`kacct run`) are one each.
enum class Accounting : std::uint8_t { Tick, Native, Gen };

struct MechanismInfo {
  Mechanism id;
  std::string_view name;          // `kacct list patches` "mechanism"
  std::string_view command;       // its own `kacct` subcommand; "" = none
  std::string_view proof_model;   // `kacct prove --model NAME`
  std::string_view claim_prefix;  // patch claims are "<prefix>.<claim>" (arch/patches.hpp)
  std::string_view doc;           // its page under docs/
  std::optional<Accounting> accounting;  // trace-driven: the accounting mode it replays as
  std::string_view config_part;   // config names VERSION-<part>[-irqtime][-steal]-hzN; "" = none
};

inline constexpr std::array mechanisms = {
    MechanismInfo{Mechanism::Tick, "tick", "", "tick", "tick", "docs/models/tick.md", Accounting::Tick, "tick"},
    MechanismInfo{Mechanism::CputimeAdjust, "cputime_adjust", "", "cputime_adjust", "cputime_adjust",
                  "docs/models/cputime-adjust.md", std::nullopt, ""},
    MechanismInfo{Mechanism::NativeVtime, "native_vtime", "native", "native_vtime", "native",
                  "docs/models/native-vtime.md", Accounting::Native, "native"},
    MechanismInfo{Mechanism::GenVtime, "gen_vtime", "gen-vtime", "gen_vtime", "gen", "docs/models/gen-vtime.md",
                  Accounting::Gen, "gen"},
    MechanismInfo{Mechanism::LazyTlb, "lazy_tlb", "lazytlb", "lazytlb", "lazytlb", "docs/models/lazy-tlb.md",
                  std::nullopt, ""},
    MechanismInfo{Mechanism::PsiIrq, "psi_irq", "psi", "psi_irq", "psi_irq", "docs/models/psi-irq.md", std::nullopt,
                  ""},
};

// Proof models that are not a mechanism: lemmas a mechanism's proofs rest on.
struct LemmaInfo {
  Mechanism of;
  std::string_view proof_model;
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

// Look-ups by name (nullptr if no row has it).
constexpr const MechanismInfo* find_mechanism(std::string_view name) {
  for (const auto& r : mechanisms)
    if (r.name == name) return &r;
  return nullptr;
}
// The mechanism a claim "<prefix>.<rest>" belongs to.
constexpr const MechanismInfo* claim_mechanism(std::string_view claim) {
  const auto dot = claim.find('.');
  if (dot == std::string_view::npos) return nullptr;
  for (const auto& r : mechanisms)
    if (r.claim_prefix == claim.substr(0, dot)) return &r;
  return nullptr;
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
