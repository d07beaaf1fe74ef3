// Shared RapidCheck generators and helpers for the property tests.
#pragma once
#include <algorithm>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <ostream>
#include <string>
#include <vector>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace kacct::trace {
// Shown by RapidCheck in counterexamples.
inline void showValue(const Action& a, std::ostream& os) {
  os << "{op=" << unsigned(a.op) << " cpu=" << unsigned(a.cpu) << " arg=" << a.arg << " dt=" << a.dt << "}";
}
inline void showValue(const BuildSpec& s, std::ostream& os) {
  os << "{" << s.cpu_model << " ncpus=" << s.ncpus << " processes=" << s.processes << " threads=" << s.threads
     << " kthread=" << s.kthread << " ksoftirqd=" << s.ksoftirqd << " vcpu=" << s.vcpu << " nice=" << s.nice
     << " vcpu_nice=" << s.vcpu_nice << " hotplug=" << s.hotplug << "}";
}
}  // namespace kacct::trace

namespace kacct::props {

// dt: a quarter zero (same instant), a quarter short (irq-sized), half around half a tick.
inline rc::Gen<std::uint32_t> gen_dt() {
  return rc::gen::weightedOneOf<std::uint32_t>({{1, rc::gen::just<std::uint32_t>(0)},
                                                {1, rc::gen::inRange<std::uint32_t>(1, 20'001)},
                                                {2, rc::gen::inRange<std::uint32_t>(100'000, 4'000'001)}});
}
// op and arg uniform (op 0 = tick is what they shrink to), cpu 0..3.
inline rc::Gen<trace::Action> gen_action() {
  return rc::gen::build<trace::Action>(
      rc::gen::set(&trace::Action::op, rc::gen::cast<std::uint8_t>(rc::gen::inRange<unsigned>(0, 256))),
      rc::gen::set(&trace::Action::cpu, rc::gen::cast<std::uint8_t>(rc::gen::inRange<unsigned>(0, 4))),
      rc::gen::set(&trace::Action::arg, rc::gen::cast<std::uint16_t>(rc::gen::inRange<unsigned>(0, 65536))),
      rc::gen::set(&trace::Action::dt, gen_dt()));
}
// Up to 300 actions at the default max size (100); shrinking drops actions, and the builder
// skips the ones that are no longer legal, so every shrunk vector still builds a valid trace.
inline rc::Gen<std::vector<trace::Action>> gen_actions() {
  return rc::gen::map(rc::gen::scale(3.0, rc::gen::container<std::vector<trace::Action>>(gen_action())),
                      [](std::vector<trace::Action> v) {
                        if (v.size() > 300) v.resize(300);
                        return v;
                      });
}
inline rc::Gen<trace::BuildSpec> gen_spec(std::string cpu_model) {
  return rc::gen::build<trace::BuildSpec>(
      rc::gen::set(&trace::BuildSpec::cpu_model, rc::gen::just(std::move(cpu_model))),
      rc::gen::set(&trace::BuildSpec::ncpus, rc::gen::inRange<std::uint32_t>(1, 5)),
      rc::gen::set(&trace::BuildSpec::processes, rc::gen::inRange<std::uint32_t>(1, 4)),
      rc::gen::set(&trace::BuildSpec::threads, rc::gen::inRange<std::uint32_t>(1, 4)),
      rc::gen::set(&trace::BuildSpec::kthread, rc::gen::arbitrary<bool>()),
      rc::gen::set(&trace::BuildSpec::ksoftirqd, rc::gen::arbitrary<bool>()),
      rc::gen::set(&trace::BuildSpec::vcpu, rc::gen::weightedElement<bool>({{1, false}, {2, true}})),
      rc::gen::set(&trace::BuildSpec::nice, rc::gen::element(0, 0, 5, 19, -5)),
      rc::gen::set(&trace::BuildSpec::vcpu_nice, rc::gen::element(0, 10)));
}

// Every legal config of one CPU, with its model settings.
struct CfgCase {
  arch::Config cfg;
  sim::ModelCfg model;
};
// Configs whose model configuration equals an earlier one's run the same model on every trace
// (release boundaries of other mechanisms' patches make such configs): each model once.
inline std::vector<CfgCase> configs_of(const arch::CpuFacts& cpu) {
  std::vector<CfgCase> out;
  for (const auto& c : arch::combos()) {
    if (c.cpu.name != cpu.name) continue;
    auto m = sim::model_cfg(c.cpu, c.cfg);
    if (std::none_of(out.begin(), out.end(), [&](const CfgCase& o) { return o.model == m; }))
      out.push_back({c.cfg, std::move(m)});
  }
  return out;
}

// Run a property as the current gtest test with `cases` successful cases unless RC_PARAMS
// sets max_success (RC_PARAMS seed=/reproduce= work as usual).
template <class Testable>
void check(Testable&& testable, int cases) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata meta;
  meta.id = std::string(info->test_suite_name()) + "/" + info->name();
  meta.description = info->name();
  const auto& conf = rc::detail::configuration();
  auto params = conf.testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (!env || std::string(env).find("max_success") == std::string::npos) params.maxSuccess = cases;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(testable)), meta, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str();
  }
}

}  // namespace kacct::props

namespace kacct::arch {
// GoogleTest prints a parameter in test names and failures: the CPU's name, not its bytes.
inline void PrintTo(const CpuFacts& c, std::ostream* os) { *os << c.name; }
}  // namespace kacct::arch

namespace kacct::props {

// Everything a run produced, as JSON (for determinism comparisons and failure messages).
inline nlohmann::ordered_json result_json(const sim::RunResult& r) {
  nlohmann::ordered_json j;
  j["cpus"] = to_json(r.cpus);
  j["tasks"] = to_json(r.tasks);
  auto& g = j["groups"] = nlohmann::ordered_json::array();
  for (const auto& x : r.groups) g.push_back({{"dead", to_json(x.dead)}, {"prev", to_json(x.prev)}});
  auto& rd = j["reads"] = nlohmann::ordered_json::array();
  for (const auto& x : r.reads) rd.push_back({x.id, int(x.kind), x.tid, x.ts, x.line, x.utime, x.stime, x.rtime});
  j["violation"] = r.violation ? r.violation->invariant + ": " + r.violation->detail : "";
  j["obligations_failed"] = r.obligations_failed;
  j["events"] = r.events;
  return j;
}

// Every CPU of the one table, as the parameter of a value-parameterised suite: the property's
// body is compiled once for all CPUs (as a typed test it was instantiated once per CPU, which
// made these the slowest files of the build).
//   class P : public CpuTest {};  TEST_P(P, Name) { const arch::CpuFacts cpu = GetParam(); ... }
//   KACCT_EVERY_CPU(P);
using CpuTest = ::testing::TestWithParam<arch::CpuFacts>;
// The CPU's name as an identifier.
inline std::string cpu_param_name(const ::testing::TestParamInfo<arch::CpuFacts>& i) {
  std::string s(i.param.name);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}
#define KACCT_EVERY_CPU(suite) \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::ValuesIn(::kacct::arch::cpus()), ::kacct::props::cpu_param_name)

// The CPUs with at least one legal config of accounting mode `acct` (a suite over one mode is
// instantiated only for them: no test that can only skip).
inline std::vector<arch::CpuFacts> cpus_with(arch::Accounting acct) {
  std::vector<arch::CpuFacts> out;
  for (const auto& cpu : arch::cpus())
    for (const auto& c : configs_of(cpu))
      if (c.cfg.acct == acct) {
        out.push_back(cpu);
        break;
      }
  return out;
}
#define KACCT_CPUS_WITH(suite, acct)                                                         \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::ValuesIn(::kacct::props::cpus_with(acct)), \
                           ::kacct::props::cpu_param_name)

// A failure report: the combo, what went wrong, and the trace to replay it with `kacct check`.
inline std::string report(const arch::CpuFacts& cpu, const arch::Config& cfg, const std::string& what,
                          const trace::Trace& t) {
  return std::string(cpu.name) + " " + cfg.name() + ": " + what + "\n--- trace ---\n" + trace::write(t);
}

}  // namespace kacct::props
