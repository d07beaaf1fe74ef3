#include "model/native/seed.hpp"

#include <stdexcept>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/scenarios.hpp"

namespace kacct::model::native {

namespace {
nlohmann::ordered_json per_iter(const Cost& c, double n) {
  nlohmann::ordered_json j;
  auto f = [&](const char* k, std::uint64_t v) { j[k] = double(v) / n; };
  f("hooks", c.hooks);
  f("tb_reads", c.tb_reads);
  f("spurr_reads", c.spurr_reads);
  f("purr_reads", c.purr_reads);
  f("multiplies", c.muls);
  f("divides", c.divs);
  f("tb_to_ns", c.conversions);
  f("loads", c.loads);
  f("stores", c.stores);
  f("branches", c.branches);
  f("sink_calls", c.sink_calls);
  return j;
}
std::uint64_t total_ops(const Cost& c) {
  return c.tb_reads + c.spurr_reads + c.purr_reads + c.muls + c.divs + c.conversions + c.loads + c.stores + c.branches +
         c.sink_calls;
}
}  // namespace

nlohmann::ordered_json seed_cost_report(std::uint32_t iterations, const char* cpu_name) {
  if (iterations == 0) throw std::invalid_argument("iterations must be positive");
  const auto cpu = arch::find_cpu(cpu_name);
  if (!cpu) throw std::invalid_argument(std::string("unknown CPU ") + cpu_name);
  const auto t = trace::scenarios::yield_pingpong(iterations, arch::tick_nsec(250), cpu_name);
  auto prog = sim::compile(t);
  if (!prog) throw std::logic_error("seed trace invalid: " + prog.error().to_string());
  const double n = iterations;
  struct Run {
    const char* name;
    arch::Config cfg;
    double measured_ms;
  };
  const Run runs[] = {
      {"TICK_CPU_ACCOUNTING", {arch::v(4, 19), arch::Accounting::Tick, false, false, 250}, 6633.062518},
      {"NATIVE + scaled (4.19)", {arch::v(4, 19), arch::Accounting::Native, false, false, 250}, 8228.476465},
      {"NATIVE, scaled dropped (4.20, abcff86df2d2)",
       {arch::v(4, 20), arch::Accounting::Native, false, false, 250},
       7649.070444}};
  nlohmann::ordered_json out;
  out["scenario"] = {{"cpu", cpu_name},
                     {"iterations", iterations},
                     {"switches", iterations},
                     {"hz", 250},
                     {"events", t.events.size()},
                     {"measured", "perf stat task-clock, 2 x 100000 pthread_yield, chrt -f 98 (linuxppc/issues#171)"}};
  std::uint64_t ops[3] = {0, 0, 0};
  std::uint64_t ticks = 0;
  for (const auto& e : t.events) ticks += e.kind == trace::Kind::Tick;
  auto& rows = out["configs"] = nlohmann::ordered_json::array();
  for (int k = 0; k < 3; ++k) {
    const auto& r = runs[k];
    if (const auto why = arch::illegal_reason(*cpu, r.cfg); !why.empty())
      throw std::invalid_argument("the seed scenario runs config " + r.cfg.name() + " (" + r.name +
                                  "), which is not legal on " + cpu_name + ": " + std::string(why));
    auto res = sim::run(prog.value(), sim::model_cfg(*cpu, r.cfg), {.check = true});
    nlohmann::ordered_json row;
    row["config"] = r.name;
    row["kconfig"] = r.cfg.name();
    row["measured_ms"] = r.measured_ms;
    row["violation"] = res.violation ? res.violation->invariant : "";
    if (res.backend_result<model::native::NativeResult>()) {
      row["scaled_compiled"] = sim::model_cfg(*cpu, r.cfg).native.scaled;
      row["per_iteration"] = per_iter(res.backend_result<model::native::NativeResult>()->cost, n);
      ops[k] = total_ops(res.backend_result<model::native::NativeResult>()->cost);
    } else {
      // Tick accounting runs no accounting code on syscalls or switches; its only hook is the
      // tick (account_process_tick), counted here from the trace the model replayed.
      nlohmann::ordered_json j;
      j["hooks"] = double(ticks) / n;
      j["note"] = "tick mode: per-tick operations of account_process_tick are not instrumented";
      row["per_iteration"] = j;
    }
    row["ops_per_iteration"] = double(ops[k]) / n;
    rows.push_back(row);
  }
  const double tick = runs[0].measured_ms, sc = runs[1].measured_ms, un = runs[2].measured_ms;
  nlohmann::ordered_json ratios;
  ratios["native_scaled_vs_tick"] = sc / tick;
  ratios["native_unscaled_vs_tick"] = un / tick;
  ratios["unscaled_vs_scaled"] = un / sc;
  ratios["overhead_us_per_iteration_scaled"] = (sc - tick) * 1000.0 / 200004.0;
  ratios["overhead_us_per_iteration_unscaled"] = (un - tick) * 1000.0 / 200004.0;
  ratios["saved_us_per_iteration_by_abcff86df2d2"] = (sc - un) * 1000.0 / 200004.0;
  // If every counted operation cost the same, the two native deltas would stand in the ratio
  // of their operation counts: compare with the measured ratio of the time deltas.
  ratios["measured_saving_share_of_overhead"] = (sc - un) / (sc - tick);
  ratios["model_ops_saving_share"] = ops[1] ? double(ops[1] - ops[2]) / double(ops[1]) : 0.0;
  ratios["implied_ns_per_op_native_unscaled"] = ops[2] ? (un - tick) * 1e6 / 200004.0 / (double(ops[2]) / n) : 0.0;
  ratios["implied_ns_per_op_scaled_extra"] =
      ops[1] > ops[2] ? (sc - un) * 1e6 / 200004.0 / (double(ops[1] - ops[2]) / n) : 0.0;
  out["ratios"] = ratios;
  return out;
}

}  // namespace kacct::model::native
