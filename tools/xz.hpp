// Input files for the CLI and the conformance tests: plain text, or xz-compressed (detected by
// the xz magic bytes), from a path or "-" (stdin). Throws std::runtime_error with the path.
#pragma once
#include <string>

namespace kacct::cli {
std::string decompress_xz(const std::string& data, const std::string& name);
std::string read_input_maybe_xz(const std::string& path);
bool is_xz(const std::string& data);  // starts with the xz magic bytes
}  // namespace kacct::cli
