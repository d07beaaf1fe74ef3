// kacct prove --model gen_vtime as a test: every job holds at 64 bits, and the validator gives
// the verdicts docs/models/gen-vtime.md reports for the gen vtime patch rows.
#include <gtest/gtest.h>

#include <map>

#include "proofs/jobs_gen.hpp"
#include "proofs/registry.hpp"

namespace kacct {
namespace {

TEST(GenProofs, EveryJobHolds) {
  const auto rs = proofs::gen_jobs(20'000);
  ASSERT_GT(rs.size(), 150u);  // 6 eras x 5-6 steps x 6-7 invariants
  double total = 0;
  for (const auto& r : rs) {
    total += r.seconds;
    EXPECT_EQ(r.verdict, proofs::Verdict::Holds) << r.name << ": " << r.detail;
  }
  RecordProperty("z3_seconds", std::to_string(total));
}

TEST(GenProofs, PatchVerdicts) {
  auto verdicts = [](const char* id) {
    std::map<std::string, proofs::Verdict> m;
    for (const auto& r : proofs::gen_vtime_claims(*arch::find_patch(id), 20'000)) m[r.name] = r.verdict;
    return m;
  };
  auto jiffy = verdicts("ff9a9b4c4334");
  EXPECT_EQ(jiffy["gen.no_time_lost"], proofs::Verdict::Holds);
  EXPECT_EQ(jiffy["gen.frederic_loops"], proofs::Verdict::Holds);
  EXPECT_EQ(jiffy["gen.attribution_bound"], proofs::Verdict::Violated);
  EXPECT_EQ(jiffy["gen.fewer_clock_reads"], proofs::Verdict::Holds);
  auto accum = verdicts("2a42eb9594a1");
  EXPECT_EQ(accum["gen.no_time_lost"], proofs::Verdict::Holds);
  EXPECT_EQ(accum["gen.attribution_bound"], proofs::Verdict::Holds);
  EXPECT_EQ(accum["gen.reader_monotonic"], proofs::Verdict::Violated);
  EXPECT_EQ(verdicts("8d495477d62e")["gen.seq_brackets"], proofs::Verdict::Holds);
}

}  // namespace
}  // namespace kacct
