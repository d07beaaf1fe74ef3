// The simulator's accounting backends, registered by arch::Accounting: the one file that names
// them. Each trace-driven mechanism has a row here (Backend<mode>): the result it leaves beside
// the common RunResult fields, how it reads a configuration, and its runner (defined in
// model/<mechanism>/backend.cpp). The machine (machine.hpp, machine_impl.hpp) knows only this
// shape; RunResult::backend holds the result of the mode that ran.
#pragma once
#include <cstddef>
#include <memory>
#include <utility>
#include <variant>

#include "arch/config.hpp"
#include "model/gen/result.hpp"
#include "model/native/result.hpp"
#include "model/tick/tick.hpp"

namespace kacct::sim {

struct Program;
struct RunOptions;
struct RunResult;
struct LiveMachine;  // a LiveRun's machine (machine_impl.hpp)

// The model settings a configuration selects on a CPU: the tick and cputime_adjust settings
// every backend uses, and each backend's own.
struct ModelCfg {
  arch::Accounting acct = arch::Accounting::Tick;  // which backend replays the trace
  model::TickCfg tick;
  model::AdjustCfg adjust;
  model::native::NativeCfg native;  // VIRT_CPU_ACCOUNTING_NATIVE (model/native/)
  model::GenCfg gen;                // gen vtime (acct == Gen): variant, nohz_full CPUs, switch gap
  bool operator==(const ModelCfg&) const = default;
};

template <arch::Accounting>
struct Backend;

// Tick accounting (model/tick/backend.hpp): nothing beyond the common outputs.
template <>
struct Backend<arch::Accounting::Tick> {
  using Result = std::monostate;
  static void configure(ModelCfg&, const arch::CpuFacts&, const arch::Config&) {}
  static RunResult run(const Program&, const ModelCfg&, const RunOptions&);  // model/tick/backend.cpp
  static std::unique_ptr<LiveMachine> live(const Program&, const ModelCfg&, const RunOptions&);
};
// powerpc native vtime (model/native/backend.cpp).
template <>
struct Backend<arch::Accounting::Native> {
  using Result = model::native::NativeResult;
  static void configure(ModelCfg&, const arch::CpuFacts&, const arch::Config&);
  static RunResult run(const Program&, const ModelCfg&, const RunOptions&);
  static std::unique_ptr<LiveMachine> live(const Program&, const ModelCfg&, const RunOptions&);
};
// Gen vtime (model/gen/backend.cpp).
template <>
struct Backend<arch::Accounting::Gen> {
  using Result = model::GenResult;
  static void configure(ModelCfg& m, const arch::CpuFacts& cpu, const arch::Config& cfg) {
    m.gen = model::gen_cfg(cfg.version, cfg.hz, cpu.platform);
  }
  static RunResult run(const Program&, const ModelCfg&, const RunOptions&);
  static std::unique_ptr<LiveMachine> live(const Program&, const ModelCfg&, const RunOptions&);
};

// Calls f(Backend<mode>{}) for the backend of `a`; false if none is registered.
template <class F>
bool with_backend(arch::Accounting a, F&& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ((a == arch::Accounting(I) ? (f(Backend<arch::Accounting(I)>{}), true) : false) || ...);
  }
  (std::make_index_sequence<arch::accounting_modes>{});
}

// The backends' results, alternative i for arch::Accounting(i).
template <class>
struct ResultsOf;
template <std::size_t... I>
struct ResultsOf<std::index_sequence<I...>> {
  using type = std::variant<typename Backend<arch::Accounting(I)>::Result...>;
};
using BackendResult = ResultsOf<std::make_index_sequence<arch::accounting_modes>>::type;

}  // namespace kacct::sim
