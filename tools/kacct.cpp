// kacct: command-line front end of the CPU-time accounting reference model.
// Exit codes: 0 ok / holds, 1 violated, 2 unknown, 3 usage, input or tool error.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <new>

#include "arch/version.hpp"
#include "common.hpp"

namespace kacct::cli {
void add_report(CLI::App&);  // report (cmd_report.cpp)
}

int main(int argc, char** argv) {
  using namespace kacct::cli;
  CLI::App app{"kacct - formally checked reference model of Linux CPU-time accounting", "kacct"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kacct " KACCT_PROJECT_VERSION " (trace format v1)");
  add_list(app);
  add_identify(app);
  add_random_trace(app);
  add_gen_vtime(app);
  add_run(app);
  add_proofs(app);
  add_findings(app);
  add_perf(app);
  add_lazytlb(app);
  add_psi(app);
  add_native(app);
  add_report(app);
  add_legacy_aliases(app);
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
      app.exit(e);
      return kExitUsage;
    }
  } catch (const Exit& e) {
    std::fflush(stdout);
    return e.code;
  } catch (const Failure& e) {
    std::fflush(stdout);
    fmt::print(stderr, "kacct: {}\n", e.what());
    return e.code;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    fmt::print(stderr, "kacct: out of memory\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "kacct: error: {}\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}
