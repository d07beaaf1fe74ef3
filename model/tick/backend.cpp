// The tick backend's runner (registered in model/sim/backends.hpp).
#include "model/tick/backend.hpp"

namespace kacct::sim {

RunResult Backend<arch::Accounting::Tick>::run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  return run_with<TickBackend>(p, cfg, o);
}
std::unique_ptr<LiveMachine> Backend<arch::Accounting::Tick>::live(const Program& p, const ModelCfg& cfg,
                                                                   const RunOptions& o) {
  return live_with<TickBackend>(p, cfg, o);
}

}  // namespace kacct::sim
