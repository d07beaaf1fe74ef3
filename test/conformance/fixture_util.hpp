// Shared by the conformance tests: recorded fixture directories (meta.json, values.jsonl,
// trace.perf.xz) and the perf options their `reads` spec gives.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/perf.hpp"
#include "xz.hpp"

namespace kacct::conformance {

struct FixtureDir {
  std::string name;
  nlohmann::json meta;
  std::vector<nlohmann::json> values;  // what the kernel returned, one per read (header line left out)
  std::string text;                    // perf script text
};

inline std::vector<FixtureDir> load_fixtures(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<FixtureDir> out;
  for (const auto& d : fs::directory_iterator(root)) {
    if (!d.is_directory()) continue;
    FixtureDir f;
    f.name = d.path().filename();
    std::ifstream m(d.path() / "meta.json");
    f.meta = nlohmann::json::parse(m);
    std::ifstream v(d.path() / "values.jsonl");
    std::string line;
    for (bool first = true; std::getline(v, line); first = false)
      if (!first) f.values.push_back(nlohmann::json::parse(line));  // first: {"pid": ..., "mode": ...}
    f.text = cli::read_input_maybe_xz((d.path() / "trace.perf.xz").string());
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const FixtureDir& a, const FixtureDir& b) { return a.name < b.name; });
  return out;
}

// The marked reads of meta["reads"] ("proc_stat@1 task_stat:42@2 ...").
inline trace::perf::Options read_options(const FixtureDir& f) {
  trace::perf::Options o;
  std::istringstream in(f.meta["reads"].get<std::string>());
  std::string spec, err;
  while (in >> spec) {
    auto r = trace::perf::parse_read_spec(spec, &err);
    EXPECT_TRUE(r) << f.name << ": " << spec << ": " << err;
    if (r) o.reads.push_back(*r);
  }
  return o;
}

}  // namespace kacct::conformance
