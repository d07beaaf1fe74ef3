// The values file of `kacct perf-replay --values` (kacct-workload's JSON lines: a header line
// without "marker", then one object per read: marker, kind, value or utime/stime), read into the
// oracle's KernelRead. One reader: the CLI (tools/cmd_perf.cpp) and the fuzz target fuzz_values.
#pragma once
#include <string_view>
#include <vector>

#include "model/sim/oracle.hpp"

namespace kacct::sim {

// An error names its line and column (1-based; the JSON parser's byte within the line, else 1).
trace::Result<std::vector<KernelRead>> parse_values(std::string_view text);

}  // namespace kacct::sim
