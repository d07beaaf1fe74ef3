// kacct native-vtime: the native vtime model's own views: `native-vtime cost` (the MPC8xx pthread_yield
// seed scenario's operation counts per iteration, JSON) and `native-vtime seed-trace` (the trace).
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "common.hpp"
#include "arch/config.hpp"
#include "model/native/seed.hpp"
#include "model/trace/scenarios.hpp"

namespace kacct::cli {

void add_native(CLI::App& app) {
  struct Opts {
    std::uint32_t iterations = 1000;
    std::string cpu = "MPC8xx";
  };
  auto o = std::make_shared<Opts>();
  auto* nat = app.add_subcommand(command_name(arch::Mechanism::NativeVtime),
                                 "powerpc native vtime: seed-scenario cost counts and trace");
  nat->require_subcommand(1);
  auto* cost = nat->add_subcommand("cost", "Operation counts per iteration for TICK, NATIVE+scaled, NATIVE (JSON)");
  cost->add_option("--iterations", o->iterations, "yield iterations (default 1000)")
      ->check(CLI::Range(1u, 10'000'000u));
  cost->add_option("--cpu", o->cpu, "CPU (default MPC8xx)");
  cost->callback([o] {
    resolve_cpu(o->cpu);
    nlohmann::ordered_json report;
    try {
      report = model::native::seed_cost_report(o->iterations, o->cpu.c_str());
    } catch (const std::invalid_argument& e) {
      throw Failure(
          fmt::format("native-vtime cost --cpu {}: {} (the seed is a powerpc scenario: give a CPU "
                      "with native vtime, e.g. MPC8xx; see `kacct list combos`)",
                      o->cpu, e.what()));
    }
    print_json(report);
  });
  auto* seed = nat->add_subcommand("seed-trace", "Print the two-thread sched_yield ping-pong trace");
  seed->add_option("--iterations", o->iterations, "yield iterations (default 1000)")
      ->check(CLI::Range(1u, 10'000'000u));
  seed->add_option("--cpu", o->cpu, "CPU (default MPC8xx)");
  seed->callback([o] {
    resolve_cpu(o->cpu);
    const auto text =
        trace::write(trace::scenarios::yield_pingpong(o->iterations, arch::tick_nsec(250), o->cpu.c_str()));
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace kacct::cli
