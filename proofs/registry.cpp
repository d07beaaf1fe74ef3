// The tables of proofs/registry.hpp: one row per mechanism.
#include "proofs/registry.hpp"

#include <array>

namespace kacct::proofs {

std::span<const ProofModel> proof_model_table() {
  static constexpr std::array table = {
      ProofModel{"division", division_all_jobs},
      ProofModel{"cputime_adjust", cputime_all_jobs},
      ProofModel{"tick", tick_all_jobs},
      ProofModel{"lazytlb", lazytlb_all_jobs},
      ProofModel{"psi_irq", psi_all_jobs},
      ProofModel{"native_vtime", native_all_jobs},
      ProofModel{"gen_vtime", gen_all_jobs},
  };
  return table;
}

std::span<const PatchValidator> validator_table() {
  static constexpr std::array table = {
      PatchValidator{arch::Mechanism::CputimeAdjust, cputime_adjust_claims},
      PatchValidator{arch::Mechanism::LazyTlb, lazytlb_claims},
      PatchValidator{arch::Mechanism::PsiIrq, psi_irq_claims},
      PatchValidator{arch::Mechanism::NativeVtime, native_vtime_claims},
      PatchValidator{arch::Mechanism::GenVtime, gen_vtime_claims},
  };
  return table;
}

}  // namespace kacct::proofs
