// The CPU table's /proc/cpuinfo names: each powerpc cpu_name the kernel prints maps onto one
// entry (the names below are cputable cpu_name strings as /proc/cpuinfo shows them), CPUs the
// table lacks map onto none, and no two entries claim the same name.
#include <gtest/gtest.h>

#include <string>

#include "arch/registry.hpp"

namespace kacct {
namespace {

std::string cpu_of(const char* line) {
  const auto c = arch::find_cpu_by_cpuinfo(line);
  return c ? std::string(c->name) : "-";
}

TEST(Cpus, CpuinfoNamesMapOntoTheTable) {
  EXPECT_EQ(cpu_of("POWER9 (architected), altivec supported"), "POWER9");
  EXPECT_EQ(cpu_of("POWER8E (raw), altivec supported"), "POWER8");
  EXPECT_EQ(cpu_of("POWER10 (raw)"), "POWER10");
  EXPECT_EQ(cpu_of("POWER5+ (gs)"), "POWER5");
  EXPECT_EQ(cpu_of("PPC970MP, altivec supported"), "PPC970");
  EXPECT_EQ(cpu_of("e300c3"), "e300");
  EXPECT_EQ(cpu_of("e500v2"), "e500");
  EXPECT_EQ(cpu_of("e5500"), "e5500");
  EXPECT_EQ(cpu_of("e6500"), "e6500");
  EXPECT_EQ(cpu_of("8xx"), "MPC8xx");
  EXPECT_EQ(cpu_of("440EPX"), "44x");
  EXPECT_EQ(cpu_of("460EX Rev. B"), "44x");
  EXPECT_EQ(cpu_of("(generic 44x PPC)"), "44x");
  EXPECT_EQ(cpu_of("PA6T"), "PA6T");
  // Not in the table: no guess.
  EXPECT_EQ(cpu_of("e500mc"), "-");
  EXPECT_EQ(cpu_of("Cell Broadband Engine"), "-");
  EXPECT_EQ(cpu_of("7447A"), "-");
  EXPECT_EQ(cpu_of(""), "-");
}

TEST(Cpus, EveryNameMatchesItsOwnEntryOnly) {
  for (const auto& c : arch::cpus()) {
    std::string_view alts = c.cpuinfo;
    while (!alts.empty()) {
      const auto bar = alts.find('|');
      std::string alt(alts.substr(0, bar));
      alts = bar == std::string_view::npos ? std::string_view{} : alts.substr(bar + 1);
      if (alt.ends_with('*')) alt.pop_back();  // the prefix itself is a line that must match
      EXPECT_EQ(cpu_of(alt.c_str()), c.name) << alt;
    }
  }
}

}  // namespace
}  // namespace kacct
