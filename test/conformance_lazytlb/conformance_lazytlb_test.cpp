// Replays recorded lazy-TLB traces (tools/record-qemu/lazytlb-record.sh, lazytlb-reduce.py): each
// fixture is a lazy-TLB script (the state at the trace's start rebuilt by a prefix, then one
// event per probe) and the kernel's view after each step: the CPU's current task, its
// active_mm, that mm's mm_users, mm_count and mm_cpumask. Every row must match the model after
// the same step; the mask is exact where the model follows the arch's mask rule (powerpc) and
// within the model's on x86, which clears bits the model keeps (docs/conformance.md). Negative
// controls: the shootdown rules (ppc64-radix 6.12) and the no-lazy-grab mutant must miss.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/lazytlb/conformance.hpp"
#include "../conformance/fixture_dirs.hpp"

using namespace kacct;
using namespace kacct::model::lazytlb;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Fixture {
  std::string name, mask_rule;
  std::set<std::uint32_t> known_off;   // meta `known_off LINE...`: rows off that are reported, unexplained
  std::optional<std::size_t> bounded;  // meta `bounded_rows N`: exactly N rows inside an exit or fork
  Script script;
  Expected expected;
};

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (const auto& d : conformance::fixture_dirs(KACCT_LAZYTLB_FIXTURES)) {
    Fixture f;
    f.name = d.filename();
    f.mask_rule = conformance::meta_value(d, "mask");
    std::istringstream k(conformance::meta_value(d, "known_off"));
    for (std::uint32_t l; k >> l;) f.known_off.insert(l);
    if (const auto b = conformance::meta_value(d, "bounded_rows"); !b.empty()) f.bounded = std::stoul(b);
    auto s = parse_script(slurp(d / "script.lts"));
    EXPECT_TRUE(s.ok()) << f.name << ": " << (s.ok() ? "" : s.error().str());
    auto e = parse_expected(slurp(d / "expect"));
    EXPECT_TRUE(e.ok()) << f.name << ": " << (e.ok() ? "" : e.error().str());
    if (!s.ok() || !e.ok()) continue;
    f.script = s.value();
    f.expected = e.value();
    out.push_back(std::move(f));
  }
  return out;
}

std::string first_off(const Comparison& c) {
  if (c.run.error) return c.run.error->str();
  if (!c.violations.empty()) return c.violations[0].invariant + ": " + c.violations[0].detail;
  if (c.off.empty()) return "";
  return "expect line " + std::to_string(c.off[0].want.line) + ": " + c.off[0].what;
}

TEST(ConformanceLazyTlb, FixturesExist) { EXPECT_GE(fixtures().size(), 1u); }

TEST(ConformanceLazyTlb, EveryRowMatchesTheModel) {
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.name);
    const Comparison c = compare(f.script, f.expected);
    EXPECT_FALSE(c.run.error) << first_off(c);
    EXPECT_FALSE(c.run.failed_at) << first_off(c);
    EXPECT_EQ(c.run.steps, f.script.events.size());
    // it compared something, and everything it compared
    EXPECT_GT(c.rows, 100u);
    EXPECT_EQ(c.rows, f.expected.rows.size());
    EXPECT_GT(c.counted, 50u);
    // the rows off are exactly the fixture's known ones (docs/conformance.md reports each)
    std::set<std::uint32_t> off;
    for (const auto& m : c.off) off.insert(m.want.line);
    EXPECT_EQ(off, f.known_off) << first_off(c);
    EXPECT_EQ(c.place + c.ipi_rows, c.rows) << first_off(c);  // known rows are counter rows
    EXPECT_EQ(c.ipi_exact, c.ipi_rows) << first_off(c);
    EXPECT_EQ(c.counts_exact + c.counts_bound + f.known_off.size(), c.counted) << first_off(c);
    // rows inside another CPU's exit or fork: pinned per fixture (docs/conformance.md counts them),
    // else no more than the first recordings had
    if (f.bounded)
      EXPECT_EQ(c.counts_bound, *f.bounded);
    else
      EXPECT_LE(c.counts_bound, 16u) << "rows inside another CPU's exit: more than the recordings had";
    ASSERT_TRUE(f.mask_rule == "exact" || f.mask_rule == "subset") << "meta: mask exact|subset";
    if (f.mask_rule == "exact")
      EXPECT_EQ(c.mask_exact, c.counted) << (c.mask_off.empty() ? "" : c.mask_off[0].what);
    else
      EXPECT_EQ(c.mask_subset, c.counted) << (c.mask_off.empty() ? "" : c.mask_off[0].what);
    for (const auto& m : c.off)
      std::printf("  off: expect line %u, after step %zu, CPU %d: %s\n", unsigned(m.want.line), m.want.step, m.want.cpu,
                  m.what.c_str());
    std::printf(
        "%s: %zu rows, %zu counted: counts %zu exact, %zu inside an exit, mask %zu exact / %zu within the model's, "
        "IPI totals %zu/%zu exact\n",
        f.name.c_str(), c.rows, c.counted, c.counts_exact, c.counts_bound, c.mask_exact, c.mask_subset, c.ipi_exact,
        c.ipi_rows);
  }
}

// The wrong rules must miss: refcount recordings under shootdown and without the lazy grab;
// shootdown recordings under refcounting (x86 6.12, powerpc 6.3) and with a CPU skipped.
TEST(ConformanceLazyTlb, OtherRulesMiss) {
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.name);
    const bool refcount = !f.script.cfg().shootdown;
    std::vector<Script> wrong;
    Script s = f.script;
    if (refcount) {  // shootdown's rules (lazy users hold no mm_count), and no lazy grab
      s.arch = Arch::PpcRadix;
      s.version = arch::v(6, 12);
      wrong.push_back(s);
      s = f.script;
      s.mutants.push_back("no-lazy-grab");
      wrong.push_back(s);
    } else {  // refcounting (x86's rules, and powerpc before 6.4), and a shootdown missing a CPU
      s.arch = Arch::Generic;
      wrong.push_back(s);
      s.arch = Arch::PpcRadix;
      s.version = arch::v(6, 3);
      wrong.push_back(s);
      s = f.script;
      s.mutants.push_back("shoot-skip-cpu");
      wrong.push_back(s);
    }
    for (const auto& w : wrong) {
      const Comparison c = compare(w, f.expected);
      const bool stopped = c.run.error || c.run.failed_at;
      const std::size_t missed =
          c.rows - c.place - c.ipi_rows + (c.counted - c.counts_exact - c.counts_bound) + (c.ipi_rows - c.ipi_exact);
      EXPECT_TRUE(stopped || missed > 0) << mode_name(w.cfg()) << " matched every row";
      std::printf("%s under %s %s%s%s: %zu of %zu rows off%s\n", f.name.c_str(), std::string(arch_name(w.arch)).c_str(),
                  w.version.str().c_str(), w.mutants.empty() ? "" : " ", w.mutants.empty() ? "" : w.mutants[0].c_str(),
                  missed, c.rows, stopped ? " (replay stopped)" : "");
    }
  }
}

// fork@S rows (a CLONE_VM fork under way on another CPU: copy_mm()'s mmget() before the model's
// fork step) are bounded, not waved through: without the mark, with one user more or with the
// count changed they are off.
TEST(ConformanceLazyTlb, ForkRowsAreJudged) {
  std::size_t fixtures_with_fork_rows = 0;
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.name);
    const Comparison good = compare(f.script, f.expected);
    for (int how = 0; how < 3; ++how) {
      Expected e = f.expected;
      std::size_t changed = 0;
      for (auto& x : e.rows) {
        if (!x.fork_step) continue;
        const bool bounded = [&] {  // the row is not exact: it needs the fork's bound
          Expected one = f.expected;
          for (auto& y : one.rows)
            if (y.line == x.line) y.fork_step = 0;
          return compare(f.script, one).off.size() > good.off.size();
        }();
        if (!bounded) continue;
        ++changed;
        if (how == 0) x.fork_step = 0;
        if (how == 1) ++x.users;
        if (how == 2) ++x.count;
      }
      if (!changed) break;
      fixtures_with_fork_rows += how == 0;
      EXPECT_EQ(compare(f.script, e).off.size(), good.off.size() + changed) << "variant " << how;
    }
  }
  EXPECT_GE(fixtures_with_fork_rows, 1u) << "no fixture has a fork@S row that needs its bound";
}

TEST(ConformanceLazyTlb, ExpectFormatErrorsHavePositions) {
  EXPECT_EQ(parse_expected("").error().str(), "1:1: empty: expected 'lazytlb-expect 1'");
  EXPECT_EQ(parse_expected("lazytlb-expect 1\n1 0 0 x 1 1 1\n").error().str(),
            "2:7: expected an unsigned number for MM, got 'x'");
  EXPECT_EQ(parse_expected("lazytlb-expect 1\n1 0 0 init 1 - -\n").error().str(),
            "2:12: init_mm's counters are not tracked: expected '-'");
  EXPECT_EQ(parse_expected("lazytlb-expect 1\n2 0 0 0 1 1 1\n1 0 0 0 1 1 1\n").error().str(),
            "3:1: STEP goes backwards");
  EXPECT_EQ(parse_expected("lazytlb-expect 1\n4 1 idle 0 1 2 3 fork@4\n").error().str(),
            "2:23: the fork step must come after the row's");
  EXPECT_EQ(parse_expected("lazytlb-expect 1\n4 1 idle 0 1 2 3 exec@9\n").error().str(),
            "2:18: expected exit@STEP or fork@STEP on an mm row");
  auto ok = parse_expected("lazytlb-expect 1\nprefix 3\n4 1 idle 0 1 2 3 # c\n5 0 2 init - - -\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().prefix, 3u);
  ASSERT_EQ(ok.value().rows.size(), 2u);
  EXPECT_EQ(ok.value().rows[0].task, kNull);
  EXPECT_EQ(ok.value().rows[0].mask, 3u);
  EXPECT_EQ(ok.value().rows[1].mm, kInitMm);
}

}  // namespace
