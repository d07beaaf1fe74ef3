// The simulator on the sample traces (test/traces/*.trace): every legal CPU x config runs them
// with check=true without a violated invariant or failed obligation, and deterministically.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"

namespace kacct {
namespace {

TEST(Machine, SampleTracesPassEveryCheckOnEveryCombo) {
  size_t traces = 0;
  for (const auto& f : std::filesystem::directory_iterator(KACCT_TRACES_DIR)) {
    if (f.path().extension() != ".trace") continue;
    std::ifstream in(f.path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = trace::load(ss.str());
    ASSERT_TRUE(t.ok()) << f.path() << ": " << t.error().to_string();
    auto p = sim::compile(t.value());
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    ++traces;
    for (const auto& c : arch::combos()) {
      const auto m = sim::model_cfg(c.cpu, c.cfg);
      const auto r = sim::run(p.value(), m, {.check = true});
      ASSERT_FALSE(r.violation) << f.path() << " " << c.cpu.name << " " << c.cfg.name() << ": "
                                << r.violation->invariant << " at line " << r.violation->line;
      ASSERT_TRUE(r.obligations_failed.empty()) << r.obligations_failed.front();
      ASSERT_EQ(r.events, t.value().events.size());
      const auto again = sim::run(p.value(), m, {.check = false});
      ASSERT_EQ(to_json(again.cpus), to_json(r.cpus));
      ASSERT_EQ(to_json(again.tasks), to_json(r.tasks));
    }
  }
  EXPECT_GE(traces, 4u);
}

}  // namespace
}  // namespace kacct
