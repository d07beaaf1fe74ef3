// The mechanism table is the one source of every mechanism's names: each column is unique, one
// spelling per mechanism (proof model = claim prefix = name, subcommand = name with '-'), and
// the names the rest of kacct uses (patch claims, config names, proof models, CLI subcommands,
// docs pages) resolve through it; the old spellings still resolve, as aliases.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "arch/mechanisms.hpp"
#include "arch/registry.hpp"
#include "proofs/registry.hpp"

namespace kacct {
namespace {
using arch::MechanismInfo;

// Every non-empty value of one column appears in one row only.
template <class F>
void expect_unique(const char* column, F get) {
  std::map<std::string, std::string> seen;  // value -> first row's name
  for (const auto& m : arch::mechanisms) {
    const std::string v(get(m));
    if (v.empty()) continue;
    auto [it, fresh] = seen.emplace(v, std::string(m.name));
    EXPECT_TRUE(fresh) << column << " '" << v << "' is used by " << it->second << " and " << m.name;
  }
}

TEST(Mechanisms, NamesAreUniquePerColumn) {
  std::set<arch::Mechanism> ids;
  for (const auto& m : arch::mechanisms) EXPECT_TRUE(ids.insert(m.id).second) << m.name << ": two rows";
  expect_unique("name", [](const MechanismInfo& m) { return m.name; });
  expect_unique("command", [](const MechanismInfo& m) { return arch::command_name(m); });
  expect_unique("doc", [](const MechanismInfo& m) { return m.doc; });
  expect_unique("config part", [](const MechanismInfo& m) { return m.config_part; });
  std::set<arch::Accounting> modes;
  for (const auto& m : arch::mechanisms) {
    if (m.accounting) { EXPECT_TRUE(modes.insert(*m.accounting).second) << m.name << ": accounting mode taken"; }
  }
  // Trace-driven exactly when it has a config-name part.
  for (const auto& m : arch::mechanisms) EXPECT_EQ(m.accounting.has_value(), !m.config_part.empty()) << m.name;
  // Every row has the names every mechanism needs.
  for (const auto& m : arch::mechanisms) {
    EXPECT_FALSE(m.name.empty());
    EXPECT_FALSE(m.doc.empty()) << m.name;
  }
  // Lemma proof models share the proof-model namespace, old spellings included.
  for (const auto& l : arch::lemmas) EXPECT_EQ(arch::find_mechanism(l.proof_model), nullptr) << l.proof_model;
}

// One spelling: a name is lower case with '_' between words; the subcommand is the name with
// '-' for '_'; an old spelling is no other row's name or old spelling, and leads back to its row.
TEST(Mechanisms, OneSpellingPerMechanism) {
  for (const auto& m : arch::mechanisms) {
    for (char c : m.name) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << m.name;
    std::string cmd(m.name);
    for (auto& c : cmd)
      if (c == '_') c = '-';
    EXPECT_EQ(arch::command_name(m), m.command ? cmd : "") << m.name;
    EXPECT_TRUE(m.legacy.command.empty() || m.command) << m.name << ": an alias of no subcommand";
    EXPECT_NE(m.legacy.prefix, m.name);
    if (!m.legacy.command.empty()) { EXPECT_NE(m.legacy.command, arch::command_name(m)); }
    EXPECT_EQ(arch::find_mechanism(m.name), &m);
    EXPECT_EQ(arch::canonical_name(std::string(m.name) + ".x"), std::string(m.name) + ".x");
    if (!m.legacy.prefix.empty()) {
      EXPECT_EQ(arch::find_mechanism(m.legacy.prefix), &m) << m.legacy.prefix;
      EXPECT_EQ(arch::claim_mechanism(std::string(m.legacy.prefix) + ".x"), &m) << m.legacy.prefix;
      EXPECT_EQ(arch::canonical_name(m.legacy.prefix), m.name);
      EXPECT_EQ(arch::canonical_name(std::string(m.legacy.prefix) + ".x"), std::string(m.name) + ".x");
    }
  }
  std::set<std::string> commands;
  for (const auto& m : arch::mechanisms) {
    if (m.command) { EXPECT_TRUE(commands.insert(arch::command_name(m)).second) << m.name; }
    if (!m.legacy.command.empty()) { EXPECT_TRUE(commands.insert(std::string(m.legacy.command)).second) << m.name; }
  }
  // Names nobody has stay as they are.
  EXPECT_EQ(arch::canonical_name("division"), "division");
  EXPECT_EQ(arch::canonical_name("no_such.claim"), "no_such.claim");
  EXPECT_EQ(arch::find_mechanism("lazy-tlb"), nullptr);
}

TEST(Mechanisms, PatchClaimsResolveToTheirMechanism) {
  for (const auto& p : arch::patches)
    for (auto c : p.claims) {
      if (c.empty()) continue;
      const auto* m = arch::claim_mechanism(c);
      ASSERT_NE(m, nullptr) << p.id << ": claim " << c << " has no mechanism's prefix";
      EXPECT_EQ(m->id, p.mechanism) << p.id << ": claim " << c << " belongs to " << m->name;
      EXPECT_EQ(c.substr(0, c.find('.')), m->name) << p.id << ": claim " << c << " not in the one spelling";
    }
}

TEST(Mechanisms, ConfigNamesResolve) {
  for (const auto& k : arch::configs()) {
    const auto n = k.name();
    const auto& m = arch::mechanism(k.acct);
    EXPECT_EQ(n.substr(0, n.find('-', n.find('-') + 1)), k.version.str() + "-" + std::string(m.config_part)) << n;
    const auto back = arch::find_config(n);
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, k) << n;
  }
  // A mechanism's config part is not accepted in another's place.
  EXPECT_FALSE(arch::find_config("6.6-gen_vtime-hz250"));
  EXPECT_TRUE(
      arch::find_config("6.1-" + std::string(arch::mechanism(arch::Mechanism::GenVtime).config_part) + "-hz250"));
}

TEST(Mechanisms, ProofModelsResolve) {
  std::set<std::string> table, registered;
  for (const auto& m : arch::mechanisms) table.emplace(m.name);
  for (const auto& l : arch::lemmas) table.emplace(l.proof_model);
  for (const auto& p : proofs::proof_model_table()) EXPECT_TRUE(registered.emplace(p.name).second) << p.name;
  EXPECT_EQ(registered, table);
  for (const auto& v : proofs::validator_table()) (void)arch::mechanism(v.mechanism);  // throws if no row
}

TEST(Mechanisms, DocsPagesExist) {
  for (const auto& m : arch::mechanisms)
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(KACCT_SOURCE_DIR) / m.doc)) << m.doc;
}

// The help text of `kacct NAME --help`: a subcommand's own usage line names it (an unknown
// name prints the top-level help, also with exit 0).
std::string help_of(std::string_view name) {
  const std::string cmd = std::string("\"") + KACCT_EXE + "\" " + std::string(name) + " --help 2>&1";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    pclose(f);
  }
  return out;
}

TEST(Mechanisms, CommandsAreKacctSubcommands) {
  for (const auto& m : arch::mechanisms) {
    if (!m.command) continue;
    const auto usage = "Usage: kacct " + arch::command_name(m) + " ";
    EXPECT_NE(help_of(arch::command_name(m)).find(usage), std::string::npos) << m.name;
    // The old name is an alias: the same subcommand, which calls itself by its new name.
    if (!m.legacy.command.empty()) {
      EXPECT_NE(help_of(m.legacy.command).find(usage), std::string::npos) << m.legacy.command;
    }
  }
  // A name that is none fails the same check.
  EXPECT_EQ(help_of("no-such-mechanism").find("Usage: kacct no-such-mechanism"), std::string::npos);
}

}  // namespace
}  // namespace kacct
