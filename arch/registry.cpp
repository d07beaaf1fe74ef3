#include "arch/registry.hpp"

namespace kacct::arch {
namespace hana = boost::hana;

const std::vector<CpuFacts>& cpus() {
  static const std::vector<CpuFacts> list =
      hana::unpack(all_cpus, [](auto... t) { return std::vector<CpuFacts>{decltype(t)::type::facts...}; });
  return list;
}

std::optional<CpuFacts> find_cpu(std::string_view name) {
  for (const auto& c : cpus())
    if (c.name == name) return c;
  return std::nullopt;
}

const std::vector<Config>& configs() {
  static const std::vector<Config> list = [] {
    std::vector<Config> out;
    for (auto ver : tick_versions)
      for (bool irq : {false, true})
        for (bool steal : {false, true})
          for (unsigned hz : hz_values) out.push_back(Config{ver, Accounting::Tick, irq, steal, hz});
    // Native vtime: HZ only paces the trace's ticks (no TICK_NSEC in the arithmetic): one value.
    for (auto ver : native_versions)
      for (bool steal : {false, true}) out.push_back(Config{ver, Accounting::Native, false, steal, 250});
    for (auto ver : gen_versions)
      for (bool irq : {false, true})
        for (bool steal : {false, true})
          for (unsigned hz : gen_hz_values) out.push_back(Config{ver, Accounting::Gen, irq, steal, hz});
    return out;
  }();
  return list;
}

std::optional<Config> find_config(std::string_view name) {
  for (const auto& c : configs())
    if (c.name() == name) return c;
  // The test matrix runs gen vtime at one HZ; any HZ of hz_values names a real kernel too
  // (Debian's 6.1 kernels, the QEMU oracle's, are HZ=250).
  for (auto ver : gen_versions)
    for (bool irq : {false, true})
      for (bool steal : {false, true})
        for (unsigned hz : hz_values)
          if (Config c{ver, Accounting::Gen, irq, steal, hz}; c.name() == name) return c;
  // Tick accounting at the release before or after any patch of the table, within the tick
  // model's range (e.g. 6.11, the only release of the 77baa5bafcbe era with the generic
  // division): unlisted, so the props matrix stays as it is.
  for (const auto& p : patches)
    for (auto ver : {p.before, p.after})
      if (ver >= tick_versions.front() && ver <= tick_versions.back())
        for (bool irq : {false, true})
          for (bool steal : {false, true})
            for (unsigned hz : hz_values)
              if (Config c{ver, Accounting::Tick, irq, steal, hz}; c.name() == name) return c;
  // Gen vtime likewise, within its range (4.6, 4.13: the releases gen vtime patches open).
  for (const auto& p : patches)
    for (auto ver : {p.before, p.after})
      if (ver >= gen_versions.front() && ver <= gen_versions.back())
        for (bool irq : {false, true})
          for (bool steal : {false, true})
            for (unsigned hz : hz_values)
              if (Config c{ver, Accounting::Gen, irq, steal, hz}; c.name() == name) return c;
  return std::nullopt;
}

const std::vector<Combo>& combos() {
  static const std::vector<Combo> list = [] {
    std::vector<Combo> out;
    for (const auto& c : cpus())
      for (const auto& k : configs())
        if (legal(c, k)) out.push_back({c, k});
    return out;
  }();
  return list;
}

std::vector<Combo> combos_of(Accounting a) {
  std::vector<Combo> out;
  for (const auto& c : combos())
    if (c.cfg.acct == a) out.push_back(c);
  return out;
}

}  // namespace kacct::arch
