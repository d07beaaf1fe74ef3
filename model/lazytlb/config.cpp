// Lazy-TLB names and configurations: arch names, the code of an arch in a release (from the
// patch table), the mode name and the deliberately broken variants.
#include "model/lazytlb/script.hpp"

namespace kacct::model::lazytlb {

std::string_view arch_name(Arch a) {
  switch (a) {
    case Arch::Generic: return "generic";
    case Arch::PpcRadix: return "ppc64-radix";
    case Arch::PpcHash: return "ppc64-hash";
  }
  return "generic";
}
std::optional<Arch> parse_arch(std::string_view s) {
  for (Arch a : {Arch::Generic, Arch::PpcRadix, Arch::PpcHash})
    if (arch_name(a) == s) return a;
  return std::nullopt;
}

Cfg config_for(Arch a, arch::KVersion ver) {
  Cfg c;
  c.arch = a;
  const bool book3s64 = a == Arch::PpcRadix || a == Arch::PpcHash;
  c.shootdown =
      book3s64 &&
      KACCT_MUTANT(527, arch::applied("2655421ae69f", ver), arch::applied("2655421ae69f", arch::next_mainline(ver))) &&
      arch::applied("77f68ebeee20", ver);
  c.use_mm_always_grabs = arch::applied("6cad87b0d216", KACCT_MUTANT(528, ver, arch::next_mainline(ver)));
  c.exit_flush_shoots =
      a == Arch::PpcRadix && arch::applied("e43c0a0c3c28", KACCT_MUTANT(529, ver, arch::next_mainline(ver)));
  c.force_init_mm = arch::applied("21641bd9a7a7", KACCT_MUTANT(530, ver, arch::next_mainline(ver)));
  // cleanup_cpu_mmu_context() in pseries/powernv cpu_disable since 01b0f0eae081 (5.11); the
  // model trims at offline in every release (before 5.11 powerpc was refcount-only, where a
  // trimmed bit changes no invariant).
  c.offline_trims_masks = book3s64;
  return c;
}
std::string mode_name(const Cfg& c) { return c.shootdown ? "shootdown" : "refcount"; }

bool apply_mutant(Cfg& c, std::string_view n) {
  if (n == "no-lazy-grab")
    c.mut_no_lazy_grab = true;
  else if (n == "shoot-skip-cpu")
    c.mut_shoot_skip_cpu = true;
  else if (n == "clear-wrong-cpu")
    c.mut_clear_wrong_cpu = true;
  else if (n == "no-force-init-mm")
    c.mut_no_force_init_mm = true;
  else if (n == "dead-no-drop")
    c.mut_dead_no_drop = true;
  else if (n == "offline-clear-all")
    c.mut_offline_clear_all = true;
  else
    return false;
  return true;
}
Cfg Script::cfg() const {
  Cfg c = config_for(arch, version);
  c.debug_shoot_lazies = debug_shoot_lazies && c.shootdown;
  for (const auto& m : mutants) apply_mutant(c, m);
  return c;
}

}  // namespace kacct::model::lazytlb
