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
  c.shootdown = book3s64 && arch::applied("2655421ae69f", ver) && arch::applied("77f68ebeee20", ver);
  c.use_mm_always_grabs = arch::applied("6cad87b0d216", ver);
  c.exit_flush_shoots = a == Arch::PpcRadix && arch::applied("e43c0a0c3c28", ver);
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
