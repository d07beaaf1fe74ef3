// Mutants: each gen vtime invariant must reject a deliberately broken state or step.
#include <gtest/gtest.h>

#include "proofs/jobs_gen.hpp"
#include "spec/gen_vtime.hpp"

namespace kacct {
namespace {
using namespace model;

VtimeTask<Concrete> sample() {
  Concrete d;
  auto v = zero_vtime(d);
  v.consumed = 10'000;
  v.flushed = 7'000;
  v.other = 1'000;
  v.utime = 1'500;
  v.stime = 500;
  v.seq = 4;
  v.starttime = 12'000;
  return v;
}

TEST(GenMutants, ConcreteInvariantsCatchCorruption) {
  Concrete d;
  GenCfg g;
  TickCfg tc;
  auto v = sample();
  ASSERT_TRUE(spec::gen::gen_task_conserves(d, v));
  ASSERT_TRUE(spec::gen::gen_residues_bounded(d, g, tc, v));
  ASSERT_TRUE(spec::gen::gen_seq_even(d, v));
  VtimeCpu<Concrete> vc{11'000, 1'000};
  ASSERT_TRUE(spec::gen::gen_cpu_conserves(d, g, vc, v));
  auto m = v;
  m.flushed += 1;  // time created
  EXPECT_FALSE(spec::gen::gen_task_conserves(d, m));
  m = v;
  m.utime = tc.tick_nsec;  // residue not flushed
  EXPECT_FALSE(spec::gen::gen_residues_bounded(d, g, tc, m));
  m = v;
  m.seq += 1;  // section left open
  EXPECT_FALSE(spec::gen::gen_seq_even(d, m));
  EXPECT_FALSE(spec::gen::gen_seq_brackets(d, v, m));
  m = v;
  m.starttime += 5;  // write without a section
  EXPECT_FALSE(spec::gen::gen_seq_brackets(d, v, m));
  vc.lost += 1;  // gap counted twice
  EXPECT_FALSE(spec::gen::gen_cpu_conserves(d, g, vc, v));
  m = v;
  m.consumed -= 1;
  EXPECT_FALSE(spec::gen::gen_vtime_monotonic(d, v, m));
}

// The Z3 jobs catch a mutated step (one per invariant).
TEST(GenMutants, ProofJobsCatchMutatedSteps) {
  for (const auto& [inv, mut] : proofs::gen_mutations()) {
    auto rs = proofs::gen_jobs(10'000, mut, inv);
    ASSERT_FALSE(rs.empty()) << inv;
    bool caught = false;
    for (const auto& r : rs) {
      caught = caught || r.verdict == proofs::Verdict::Violated;
      EXPECT_NE(r.verdict, proofs::Verdict::Error) << inv << ": " << r.name << ": " << r.detail;
      if (r.verdict == proofs::Verdict::Violated) { EXPECT_EQ(r.replay, "concrete step") << r.name; }
    }
    EXPECT_TRUE(caught) << inv << " mutant not caught";
  }
}

}  // namespace
}  // namespace kacct
