// kacct list cpus|configs|patches|combos|mechanisms [--json]: views of the one table (arch/).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "common.hpp"

namespace kacct::cli {
namespace {
// The names above, summarised per accounting from the table itself: VERSION-ACCT[-irqtime]
// [-steal]-hzN, with the versions, HZ values and options each accounting has.
std::string config_grammar() {
  struct Part {
    std::vector<arch::KVersion> versions;
    std::vector<unsigned> hz;
    bool irqtime = false, steal = false;
  };
  std::vector<std::pair<std::string, Part>> parts;
  for (const auto& k : arch::all_configs()) {
    const std::string acct(arch::config_part(k.acct));
    auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == acct; });
    if (it == parts.end()) it = parts.insert(parts.end(), {acct, Part{}});
    auto& p = it->second;
    if (std::find(p.versions.begin(), p.versions.end(), k.version) == p.versions.end()) p.versions.push_back(k.version);
    if (std::find(p.hz.begin(), p.hz.end(), k.hz) == p.hz.end()) p.hz.push_back(k.hz);
    p.irqtime = p.irqtime || k.irq_time;
    p.steal = p.steal || k.steal;
  }
  std::string out = "names: VERSION-ACCT[-irqtime][-steal]-hzN (exactly the names listed above):\n";
  for (auto& [acct, p] : parts) {
    std::sort(p.hz.begin(), p.hz.end());
    std::sort(p.versions.begin(), p.versions.end());
    std::vector<std::string> vs;
    for (const auto& v : p.versions) vs.push_back(v.str());
    out += fmt::format("  {}: VERSION {}\n    {}{}-hzN with N {}\n", acct, fmt::join(vs, ", "),
                       p.irqtime ? "[-irqtime]" : "", p.steal ? "[-steal]" : "", fmt::join(p.hz, ", "));
  }
  return out + "  (not every VERSION has every option and HZ: the list above is exact)\n";
}
}  // namespace

namespace {
using json = nlohmann::ordered_json;

json cpu_json(const arch::CpuFacts& c) {
  return json{{"name", c.name},
              {"isa", isa_name(c.isa)},
              {"word_bits", c.word_bits},
              {"platform", platform_name(c.platform)},
              {"purr", c.purr},
              {"spurr", c.spurr},
              {"tb_hz", c.tb_hz},
              {"smt", c.smt},
              {"exact_mul_u64_u64_div_u64", c.exact_mul_u64_u64_div_u64},
              {"kconfig", c.kconfig},
              {"source", c.source}};
}
json config_json(const arch::Config& k) {
  json legal = json::object(), why = json::object();
  for (const auto& c : arch::cpus()) {
    legal[std::string(c.name)] = arch::legal(c, k);
    if (auto r = cli::illegal_reason(c, k); !r.empty()) why[std::string(c.name)] = r;
  }
  const auto& m = arch::configs();
  const bool in_props = std::find(m.begin(), m.end(), k) != m.end();
  return json{{"name", k.name()},
              {"version", k.version.str()},
              {"accounting", accounting_name(k.acct)},
              {"irq_time", k.irq_time},
              {"steal", k.steal},
              {"hz", k.hz},
              {"props", in_props},
              {"legal", legal},
              {"illegal_reasons", why}};
}
json patch_json(const arch::Patch& p) {
  json claims = json::array();
  for (auto c : p.claims)
    if (!c.empty()) claims.push_back(c);
  json backports = json::array();
  for (const auto& b : arch::backports)
    if (b.id == p.id)
      backports.push_back(json{{"series", b.first.series().str()}, {"first", b.first.str()}, {"source", b.source}});
  return json{{"id", p.id},
              {"title", p.title},
              {"before", p.before.str()},
              {"after", p.after.str()},
              {"mechanism", mechanism_name(p.mechanism)},
              {"claims", claims},
              {"backports", backports},
              {"why", p.why}};
}
json mechanism_json(const arch::MechanismInfo& m) {
  auto opt = [](std::string_view s) { return s.empty() ? json(nullptr) : json(s); };
  return json{{"name", m.name},
              {"command", opt(arch::command_name(m))},
              {"proof_model", m.name},
              {"claim_prefix", m.name},
              {"doc", m.doc},
              {"config_part", opt(m.config_part)},
              {"legacy", json{{"command", opt(m.legacy.command)}, {"prefix", opt(m.legacy.prefix)}}}};
}
std::string yn(bool b) { return b ? "yes" : "no"; }

void list(const std::string& what, bool as_json) {
  if (what == "cpus") {
    if (as_json) {
      json a = json::array();
      for (const auto& c : arch::cpus()) a.push_back(cpu_json(c));
      return print_json(a);
    }
    Table t({"cpu", "isa", "bits", "platform", "purr", "spurr", "tb_hz", "smt", "exact_muldiv", "kconfig"},
            {false, false, true, false, false, false, true, true, false, false});
    for (const auto& c : arch::cpus())
      t.row({std::string(c.name), std::string(isa_name(c.isa)), std::to_string(c.word_bits),
             std::string(platform_name(c.platform)), yn(c.purr), yn(c.spurr), std::to_string(c.tb_hz),
             std::to_string(c.smt), yn(c.exact_mul_u64_u64_div_u64), std::string(c.kconfig)});
    fmt::print("{}\nsources:\n", t.str());
    for (const auto& c : arch::cpus()) fmt::print("  {}: {}\n", c.name, c.source);
  } else if (what == "configs") {
    if (as_json) {
      json a = json::array();
      for (const auto& k : arch::all_configs()) a.push_back(config_json(k));
      return print_json(a);
    }
    const auto n = arch::cpus().size();
    const auto& m = arch::configs();
    Table t({"config", "props", "legal on"});
    for (const auto& k : arch::all_configs()) {
      std::string on;
      std::size_t count = 0;
      for (const auto& c : arch::cpus())
        if (arch::legal(c, k)) ++count, on += (on.empty() ? "" : ",") + std::string(c.name);
      t.row({k.name(), std::find(m.begin(), m.end(), k) != m.end() ? "yes" : "-",
             count == n   ? "all CPUs"
             : count == 0 ? "none"
                          : on});
    }
    fmt::print("{}{} configs, {} of them in the props matrix\n", t.str(), arch::all_configs().size(), m.size());
    fmt::print("\n{}", config_grammar());
  } else if (what == "patches") {
    if (as_json) {
      json a = json::array();
      for (const auto& p : arch::patches) a.push_back(patch_json(p));
      return print_json(a);
    }
    for (const auto& p : arch::patches) {
      fmt::print("{}  {}\n  {} -> {}  mechanism: {}\n  {}\n  claims:", p.id, p.title, p.before.str(), p.after.str(),
                 mechanism_name(p.mechanism), p.why);
      for (auto c : p.claims)
        if (!c.empty()) fmt::print(" {}", c);
      fmt::print("\n");
      for (const auto& b : arch::backports)
        if (b.id == p.id) fmt::print("  stable {}.y: from {} ({})\n", b.first.series().str(), b.first.str(), b.source);
      fmt::print("\n");
    }
  } else if (what == "mechanisms") {
    if (as_json) {
      json a = json::array();
      for (const auto& m : arch::mechanisms) a.push_back(mechanism_json(m));
      return print_json(a);
    }
    Table t({"mechanism", "command", "proof model", "claims", "config", "doc", "old names"});
    for (const auto& m : arch::mechanisms) {
      std::string old;
      if (!m.legacy.command.empty()) old = "command " + std::string(m.legacy.command);
      if (!m.legacy.prefix.empty())
        old += (old.empty() ? "" : ", ") + std::string("prefix ") + std::string(m.legacy.prefix);
      t.row({std::string(m.name), m.command ? arch::command_name(m) : "-", std::string(m.name),
             std::string(m.name) + ".*", m.config_part.empty() ? "-" : "VERSION-" + std::string(m.config_part),
             std::string(m.doc), old.empty() ? "-" : old});
    }
    fmt::print("{}", t.str());
    for (const auto& l : arch::lemmas)
      fmt::print("proof model {}: lemmas of {}\n", l.proof_model, arch::mechanism(l.of).name);
  } else {  // combos
    if (as_json) {
      json a = json::array();
      for (const auto& c : arch::combos()) a.push_back(json{{"cpu", c.cpu.name}, {"config", c.cfg.name()}});
      return print_json(a);
    }
    Table t({"cpu", "config"});
    for (const auto& c : arch::combos()) t.row({std::string(c.cpu.name), c.cfg.name()});
    fmt::print("{}{} combinations\n", t.str(), arch::combos().size());
  }
}

}  // namespace

void add_list(CLI::App& app) {
  struct Opts {
    std::string what;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub =
      app.add_subcommand("list", "List CPUs, configurations, patches, legal CPU x config combinations or mechanisms");
  sub->add_option("what", o->what, "cpus | configs | patches | combos | mechanisms")
      ->required()
      ->check(CLI::IsMember({"cpus", "configs", "patches", "combos", "mechanisms"}));
  sub->add_flag("--json", o->json, "JSON output");
  sub->callback([o] { list(o->what, o->json); });
}

}  // namespace kacct::cli
