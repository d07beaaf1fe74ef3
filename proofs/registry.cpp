// The tables of proofs/registry.hpp: one row per mechanism.
#include "proofs/registry.hpp"

#include <array>

namespace kacct::proofs {

std::span<const ProofModel> proof_model_table() {
  static constexpr std::array table = {
      ProofModel{arch::lemmas[0].proof_model, division_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::CputimeAdjust).name, cputime_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::Tick).name, tick_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::LazyTlb).name, lazytlb_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::PsiIrq).name, psi_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::NativeVtime).name, native_all_jobs},
      ProofModel{arch::mechanism(arch::Mechanism::GenVtime).name, gen_all_jobs},
  };
  return table;
}

std::span<const PatchValidator> validator_table() {
  static constexpr std::array table = {
      PatchValidator{arch::Mechanism::Tick, tick_claims},
      PatchValidator{arch::Mechanism::CputimeAdjust, cputime_adjust_claims},
      PatchValidator{arch::Mechanism::LazyTlb, lazytlb_claims},
      PatchValidator{arch::Mechanism::PsiIrq, psi_irq_claims},
      PatchValidator{arch::Mechanism::NativeVtime, native_vtime_claims},
      PatchValidator{arch::Mechanism::GenVtime, gen_vtime_claims},
  };
  return table;
}

}  // namespace kacct::proofs
