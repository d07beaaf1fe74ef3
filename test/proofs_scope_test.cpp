// Every proof job and patch claim states its scope: what its model covers and what it omits.
// Enumerated from the tables (proof models, patches' claims) without running a solver.
#include <gtest/gtest.h>

#include <string>

#include "arch/patches.hpp"
#include "proofs/registry.hpp"

namespace kacct::proofs {
namespace {

bool mentions(const std::vector<std::string>& v, const std::string& word) {
  for (const auto& s : v)
    if (s.find(word) != std::string::npos) return true;
  return false;
}

TEST(ProofsScope, EveryProofModelCoversAndOmits) {
  ASSERT_FALSE(proof_model_table().empty());
  for (const auto& m : proof_model_table()) {
    const std::string name(m.name);
    for (const auto& s : {model_scope(name), job_scope(name, name + ".any_job")}) {
      EXPECT_FALSE(s.covers.empty()) << name;
      EXPECT_FALSE(s.omits.empty()) << name;
    }
  }
}

TEST(ProofsScope, EveryPatchClaimCoversAndOmitsItsOwnRange) {
  unsigned claims = 0;
  for (const auto& p : arch::patches) {
    const auto base = claim_scope(p.mechanism, "");
    EXPECT_FALSE(base.covers.empty()) << p.id;
    EXPECT_FALSE(base.omits.empty()) << p.id;
    for (auto c : p.claims) {
      if (c.empty()) continue;
      ++claims;
      const auto s = claim_scope(p.mechanism, c);
      EXPECT_FALSE(s.covers.empty()) << p.id << " " << c;
      EXPECT_FALSE(s.omits.empty()) << p.id << " " << c;
      // Each claim says what it ranges over beyond its mechanism's model (a step, a world, a trace).
      EXPECT_GT(s.covers.size(), base.covers.size()) << p.id << " " << c;
    }
  }
  EXPECT_GT(claims, 0u);
}

// The models without CPU hotplug say so; lazy_tlb models it and says what of it it covers and
// leaves out; the tick model says what of NO_HZ idle it leaves out.
TEST(ProofsScope, HotplugAndIdleOmissionsAreStated) {
  for (const char* m : {"tick", "gen_vtime", "native_vtime", "psi_irq"})
    EXPECT_TRUE(mentions(model_scope(m).omits, "CPU hotplug")) << m;
  const auto lt = model_scope("lazy_tlb");
  EXPECT_TRUE(mentions(lt.covers, "CPU hotplug"));
  EXPECT_TRUE(mentions(lt.covers, "sched_force_init_mm"));
  EXPECT_FALSE(mentions(lt.omits, "no CPU goes offline"));
  EXPECT_TRUE(mentions(lt.omits, "CPU hotplug beyond"));
  EXPECT_TRUE(mentions(lt.omits, "more than one CPU offline"));
  EXPECT_TRUE(mentions(claim_scope(arch::Mechanism::LazyTlb, "lazy_tlb.hotplug_safe").covers, "going offline"));
  EXPECT_TRUE(mentions(job_scope("tick", "tick.account_idle_ticks.monotonic[irqtime]").omits, "tick_nohz_idle"));
}

// tick, gen and native model CPU hotplug on traces: each says so and what of it it leaves out.
TEST(ProofsScope, HotplugModelledWhereItIs) {
  for (const char* m : {"tick", "gen_vtime", "native_vtime"}) {
    const auto s = model_scope(m);
    EXPECT_TRUE(mentions(s.covers, "CPU hotplug")) << m;
    EXPECT_FALSE(mentions(s.omits, "no CPU goes offline")) << m;
    EXPECT_TRUE(mentions(s.omits, "CPU hotplug beyond")) << m;
  }
  EXPECT_TRUE(mentions(model_scope("psi_irq").omits, "no CPU goes offline"));
  EXPECT_TRUE(
      mentions(job_scope("gen_vtime", "gen_vtime.cpu_online.cpu_conserves[5.4-accum]").covers, "vtime_init_idle"));
  EXPECT_TRUE(mentions(job_scope("native_vtime", "native_vtime.vtime_reset(bring-up).tb_conserved[PPC64]").covers,
                       "vtime_reset"));
}

TEST(ProofsScope, JsonHasCoversAndOmits) {
  Result r;
  r.name = "x";
  r.verdict = Verdict::Holds;
  r.scope = {{"a"}, {"b", "c"}};
  const auto j = r.json();
  ASSERT_TRUE(j.contains("scope"));
  EXPECT_EQ(j["scope"]["covers"], nlohmann::ordered_json::array({"a"}));
  EXPECT_EQ(j["scope"]["omits"], nlohmann::ordered_json::array({"b", "c"}));
}

}  // namespace
}  // namespace kacct::proofs
