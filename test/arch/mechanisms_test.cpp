// The mechanism table is the one source of every mechanism's names: each column is unique, and
// the names the rest of kacct uses (patch claims, config names, proof models, CLI subcommands,
// docs pages) resolve through it.
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
template <class F> void expect_unique(const char* column, F get) {
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
  expect_unique("command", [](const MechanismInfo& m) { return m.command; });
  expect_unique("proof model", [](const MechanismInfo& m) { return m.proof_model; });
  expect_unique("claim prefix", [](const MechanismInfo& m) { return m.claim_prefix; });
  expect_unique("doc", [](const MechanismInfo& m) { return m.doc; });
  expect_unique("config part", [](const MechanismInfo& m) { return m.config_part; });
  std::set<arch::Accounting> modes;
  for (const auto& m : arch::mechanisms) {
    if (m.accounting) {
      EXPECT_TRUE(modes.insert(*m.accounting).second) << m.name << ": accounting mode taken";
    }
  }
  // Trace-driven exactly when it has a config-name part.
  for (const auto& m : arch::mechanisms) EXPECT_EQ(m.accounting.has_value(), !m.config_part.empty()) << m.name;
  // Every row has the names every mechanism needs.
  for (const auto& m : arch::mechanisms) {
    EXPECT_FALSE(m.name.empty());
    EXPECT_FALSE(m.proof_model.empty()) << m.name;
    EXPECT_FALSE(m.claim_prefix.empty()) << m.name;
    EXPECT_FALSE(m.doc.empty()) << m.name;
  }
  // Lemma proof models share the proof-model namespace.
  for (const auto& l : arch::lemmas)
    for (const auto& m : arch::mechanisms) EXPECT_NE(l.proof_model, m.proof_model);
}

TEST(Mechanisms, PatchClaimsResolveToTheirMechanism) {
  for (const auto& p : arch::patches)
    for (auto c : p.claims) {
      if (c.empty()) continue;
      const auto* m = arch::claim_mechanism(c);
      ASSERT_NE(m, nullptr) << p.id << ": claim " << c << " has no mechanism's prefix";
      EXPECT_EQ(m->id, p.mechanism) << p.id << ": claim " << c << " belongs to " << m->name;
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
  EXPECT_TRUE(arch::find_config("6.1-" + std::string(arch::mechanism(arch::Mechanism::GenVtime).config_part) + "-hz250"));
}

TEST(Mechanisms, ProofModelsResolve) {
  std::set<std::string> table, registered;
  for (const auto& m : arch::mechanisms) table.emplace(m.proof_model);
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
    if (m.command.empty()) continue;
    EXPECT_NE(help_of(m.command).find("Usage: kacct " + std::string(m.command) + " "), std::string::npos) << m.command;
  }
  // A name that is none fails the same check.
  EXPECT_EQ(help_of("no-such-mechanism").find("Usage: kacct no-such-mechanism"), std::string::npos);
}

}  // namespace
}  // namespace kacct
