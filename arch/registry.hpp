// Runtime views of the one table (arch/cpus.hpp, arch/config.hpp, arch/patches.hpp), generated
// with Boost.Hana: CPU names, legal CPU x config combinations, a stable index for fuzzers.
#pragma once
#include <boost/hana.hpp>

#include <optional>
#include <string_view>
#include <vector>

#include "arch/config.hpp"
#include "arch/cpus.hpp"
#include "arch/patches.hpp"

namespace kacct::arch {

// Every CPU's facts, in table order.
const std::vector<CpuFacts>& cpus();
std::optional<CpuFacts> find_cpu(std::string_view name);
// The CPU whose cpuinfo names match a powerpc /proc/cpuinfo "cpu" line; nullopt for CPUs the
// table lacks (e500mc, 47x, 40x, 6xx/7xx/74xx, Cell, ...).
std::optional<CpuFacts> find_cpu_by_cpuinfo(std::string_view cpu_line);
// The configurations the property tests iterate (legal on at least one CPU or not): each
// model's releases, and Debian 12's point releases (debian_versions) at HZ=250.
const std::vector<Config>& configs();
// Every configuration a name is accepted for (`kacct list configs`, `check --all-configs`):
// configs(), gen vtime at every HZ, and tick / gen (native: backports only) at the releases and
// point releases the patch table opens and closes.
const std::vector<Config>& all_configs();
// By name: one of all_configs().
std::optional<Config> find_config(std::string_view name);
struct Combo {
  CpuFacts cpu;
  Config cfg;
};
// Every legal CPU x config combination, in a stable order.
const std::vector<Combo>& combos();
// The legal combinations of one accounting mode (same order).
std::vector<Combo> combos_of(Accounting);

// Call f(hana::type_c<Cpu>) for the CPU type named `name`; false if there is none.
template <class F>
bool with_cpu_type(std::string_view name, F&& f) {
  bool found = false;
  boost::hana::for_each(all_cpus, [&](auto t) {
    using Cpu = typename decltype(t)::type;
    if (!found && Cpu::facts.name == name) {
      found = true;
      f(t);
    }
  });
  return found;
}

}  // namespace kacct::arch
