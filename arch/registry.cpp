#include "arch/registry.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <span>

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

std::optional<CpuFacts> find_cpu_by_cpuinfo(std::string_view line) {
  const auto word = line.substr(0, line.find_first_of(" ,("));
  for (const auto& c : cpus()) {
    std::string_view alts = c.cpuinfo;
    while (!alts.empty()) {
      const auto bar = alts.find('|');
      const auto alt = alts.substr(0, bar);
      alts = bar == std::string_view::npos ? std::string_view{} : alts.substr(bar + 1);
      const bool prefix = alt.ends_with('*');
      if (prefix ? line.starts_with(alt.substr(0, alt.size() - 1)) : word == alt) return c;
    }
  }
  return std::nullopt;
}

namespace {
void add_tick(std::vector<Config>& out, KVersion ver, std::span<const unsigned> hzs) {
  for (bool irq : {false, true})
    for (bool steal : {false, true})
      for (unsigned hz : hzs) out.push_back(Config{ver, Accounting::Tick, irq, steal, hz});
}
void add_gen(std::vector<Config>& out, KVersion ver, std::span<const unsigned> hzs) {
  for (bool irq : {false, true})
    for (bool steal : {false, true})
      for (unsigned hz : hzs) out.push_back(Config{ver, Accounting::Gen, irq, steal, hz});
}
// Native vtime: HZ only paces the trace's ticks (no TICK_NSEC in the arithmetic): one value.
void add_native(std::vector<Config>& out, KVersion ver) {
  for (bool steal : {false, true}) out.push_back(Config{ver, Accounting::Native, false, steal, 250});
}
// Within a model's range of mainline series (a point release counts as its series).
template <class A>
bool in_range(const A& versions, KVersion ver) {
  return ver.series() >= versions.front() && ver.series() <= versions.back().series();
}
constexpr std::array kDebianHz = {debian_hz};
}  // namespace

const std::vector<Config>& configs() {
  static const std::vector<Config> list = [] {
    std::vector<Config> out;
    for (auto ver : tick_versions) add_tick(out, ver, hz_values);
    for (auto ver : native_versions) add_native(out, ver);
    for (auto ver : gen_versions) add_gen(out, ver, gen_hz_values);
    for (auto ver : debian_versions) {
      add_tick(out, ver, kDebianHz);
      add_native(out, ver);
      add_gen(out, ver, kDebianHz);
    }
    return out;
  }();
  return list;
}

const std::vector<Config>& all_configs() {
  static const std::vector<Config> list = [] {
    std::vector<Config> out = configs();
    auto seen = [&](const Config& c) { return std::find(out.begin(), out.end(), c) != out.end(); };
    std::vector<Config> more;
    // Gen vtime at every HZ of hz_values (the matrix runs one; Debian's kernels are HZ=250).
    for (auto ver : gen_versions) add_gen(more, ver, hz_values);
    // The releases each patch opens and closes, and the point releases around each backport,
    // within each model's range: what `kacct validate` judges and replays on (e.g. 6.11, the
    // only release of the 77baa5bafcbe era with the generic division; 6.1.104 and 6.1.105).
    std::vector<KVersion> rel;
    for (const auto& p : patches) rel.insert(rel.end(), {p.before, p.after});
    for (const auto& b : backports)
      rel.insert(rel.end(), {v(b.first.major, b.first.minor, b.first.point - 1), b.first});
    for (auto ver : rel) {
      if (in_range(tick_versions, ver)) add_tick(more, ver, hz_values);
      if (in_range(gen_versions, ver)) add_gen(more, ver, hz_values);
    }
    // Native at the point releases of its backports (the mainline releases of native patches
    // past the model's range are not offered).
    for (const auto& b : backports)
      if (find_patch(b.id)->mechanism == Mechanism::NativeVtime && in_range(native_versions, b.first)) {
        add_native(more, v(b.first.major, b.first.minor, b.first.point - 1));
        add_native(more, b.first);
      }
    for (const auto& c : more)
      if (!seen(c)) out.push_back(c);
    return out;
  }();
  return list;
}

std::optional<Config> find_config(std::string_view name) {
  // Names built once (each name() allocates; the C API looks a config up per kacct_open).
  static const std::map<std::string, std::size_t, std::less<>> index = [] {
    std::map<std::string, std::size_t, std::less<>> m;
    const auto& all = all_configs();
    for (std::size_t i = all.size(); i-- > 0;) m[all[i].name()] = i;  // the first of equal names wins
    return m;
  }();
  const auto it = index.find(name);
  if (it == index.end()) return std::nullopt;
  return all_configs()[it->second];
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
