// `kacct identify`: which CPU and configuration of the arch table a running kernel is, from the
// files Linux exposes (uname -r, /proc/version, the kernel config, /proc/cmdline, /proc/cpuinfo).
// perf-replay uses it for its default configuration on the machine that recorded a trace.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "arch/registry.hpp"

namespace kacct::cli {

// Where each input is read from: ROOT/proc/sys/kernel/osrelease, ROOT/proc/version,
// ROOT/proc/cmdline, ROOT/proc/cpuinfo, ROOT/boot/config-$(uname -r) or else
// ROOT/proc/config.gz; a non-empty per-file path overrides its default.
struct IdentifySources {
  std::string root = "/";
  std::string osrelease, version, cmdline, cpuinfo, kconfig;
};

struct Identity {
  std::string uname_r;       // uname -r
  std::string proc_version;  // /proc/version's line
  arch::KVersion version;    // the release it runs as
  std::string version_how;   // how `version` was read
  arch::CpuFacts cpu;
  std::string cpu_how;
  std::string kconfig_file;
  // The kernel as built and booted (the Config it would be if the table had it).
  arch::Config kernel;
  bool irq_time_built = false, steal_built = false, no_hz_full = false, ct_force = false;
  bool psi_built = false, psi = false;
  std::uint32_t ncpus = 0;
  std::vector<std::uint32_t> nohz_full;  // CPUs with vtime from context tracking (sorted)
  std::string nohz_how;
  arch::Config config;  // the table's config: `kernel` itself or the nearest legal one
  bool exact = false;
  std::vector<std::string> differences;  // kernel vs config, one line each (empty when exact)
  std::vector<std::string> notes;        // runtime facts the files cannot settle
  std::uint64_t nohz_mask() const;       // bit c: CPU c in nohz_full (c < 64)
};

// Reads and identifies; a file that cannot be read or parsed, or a CPU or arch the table lacks,
// throws Failure("FILE:LINE:COL: message") (exit 3).
Identity identify(const IdentifySources&);
nlohmann::ordered_json identity_json(const Identity&);
// A kernel CPU list ("1", "0-3,8", "all" with ncpus) as a mask of CPUs below 64; a malformed
// list throws Failure("WHAT:1:COL: message").
std::uint64_t parse_cpu_mask(std::string_view list, std::uint32_t ncpus, const std::string& what);
// This machine's identity (files under `root`) if it runs the kernel `recorded_uname` (uname -r,
// e.g. from a fixture's meta.json); nullopt otherwise or if it cannot be identified.
std::optional<Identity> identify_if_recorded_here(const std::string& recorded_uname, const std::string& root = "/");

}  // namespace kacct::cli
