// Shared by the conformance tests of kernels built from Debian's sources (tools/kernel-build):
// fixture directories holding trace.xz, checkpoints.xz and a `meta` file of "key value" lines.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kacct::conformance {

// The fixture directories below root, sorted by name (the same order on every run).
inline std::vector<std::filesystem::path> fixture_dirs(const std::string& root) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : std::filesystem::directory_iterator(root))
    if (d.is_directory()) out.push_back(d.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The value of the fixture's `meta` line "key value", empty when there is none.
inline std::string meta_value(const std::filesystem::path& dir, const std::string& key) {
  std::ifstream m(dir / "meta");
  for (std::string line; std::getline(m, line);)
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return {};
}

}  // namespace kacct::conformance
