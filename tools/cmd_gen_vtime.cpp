// kacct gen-vtime cost [--syscalls N]: the seed microbenchmark of ff9a9b4c4334 (N invalid
// syscalls on one nohz_full CPU) as a generated trace, replayed under each gen vtime variant and
// on a CPU without nohz_full; prints the model's work counters per syscall beside the seed's
// measured run times (JSON).
#include <fmt/format.h>

#include <iostream>

#include "common.hpp"
#include "model/trace/scenarios.hpp"
#include "model/sim/machine.hpp"

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;

struct Row {
  const char* kernel;
  arch::KVersion ver;
  bool nohz;
  std::uint64_t ns_per_syscall;  // the seed's run time / 10M (the trace's syscall period)
  const char* seed;
};
// Seed (tip commit ff9a9b4c4334 message): 4.4 3.8 s, 4.5-rc1 3.7 s, +first patch 3.3 s, +first 3
// 3.1 s, +all (jiffies) 2.3 s; non-nohz_full CPU 1.86 s. 6.1 was not measured by the seed.
constexpr Row rows[] = {{"4.4 (ns snapshots)", arch::v(4, 4), true, 380, "3.8 s"},
                        {"4.6 (jiffy vtime, whole series)", arch::v(4, 6), true, 230, "2.3 s"},
                        {"4.9 (jiffy vtime + other time)", arch::v(4, 9), true, 230, "(not in seed)"},
                        {"6.1 (accumulated ns)", arch::v(6, 1), true, 230, "(not in seed)"},
                        {"6.1 CPU without nohz_full", arch::v(6, 1), false, 186, "1.86 s (all kernels)"}};

int cost(std::uint64_t n) {
  json out = json::object();
  out["syscalls"] = n;
  out["rows"] = json::array();
  for (const auto& row : rows) {
    const std::uint64_t in_kernel = row.ns_per_syscall * 2 / 5;
    const auto text = trace::scenarios::syscall_loop(n, in_kernel, row.ns_per_syscall - in_kernel, 999);
    auto t = trace::load(text);
    auto p = sim::compile(t.value());
    const auto cpu = *arch::find_cpu("x86-64");
    auto m = sim::model_cfg(cpu, arch::Config{row.ver, arch::Accounting::Gen, false, false, 1000});
    if (!row.nohz) m.gen.nohz_full = 0;
    const auto r = sim::run(p.value(), m, {});
    const auto& c = r.backend_result<model::GenResult>()->cost;
    const double k = double(n);
    out["rows"].push_back(json{{"kernel", row.kernel},
                               {"variant", row.nohz ? model::variant_name(m.gen.variant) : "tick"},
                               {"seed_runtime_10M", row.seed},
                               {"ns_per_syscall_in_trace", row.ns_per_syscall},
                               {"clock_reads", c.clock_reads / k},
                               {"jiffies_loads", c.jiffies_loads / k},
                               {"seq_write_sections", c.seq_sections / k},
                               {"account_calls", c.account_calls / k},
                               {"acct_update_integrals", c.acct_integrals / k},
                               {"account_other_time", c.other_time_calls / k}});
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

void add_gen_vtime(CLI::App& app) {
  auto* g = app.add_subcommand(command_name(arch::Mechanism::GenVtime), "Gen vtime (nohz_full) model tools");
  g->require_subcommand(1);
  auto* c = g->add_subcommand("cost", "Per-syscall work counters of the seed microbenchmark, per variant (JSON)");
  auto n = std::make_shared<std::uint64_t>(100'000);
  c->add_option("--syscalls", *n, "syscalls in the generated trace (the seed ran 10,000,000)")
      ->check(CLI::Range(1ull, 20'000'000ull));
  c->callback([n] { cost(*n); });
}

}  // namespace kacct::cli
