// libFuzzer target for the values file of `kacct perf-replay --values` (sim::parse_values, the
// CLI's reader) and sim::compare() of what it read against a prediction.
//
// Input: byte 0 = selector, the rest is the values text (JSON lines). Oracles:
//  - parse_values never crashes; an error names a line that exists and a column >= 1, with a
//    message;
//  - no more reads than lines;
//  - compare() against a prediction made from the reads themselves (every field the kernel gave,
//    equal) answers one comparison per read, in order; each read whose (marker, kind) is unique
//    and has a prediction agrees exactly; with an upper twin (selector bit 0, the bounds reads'
//    twin kUpperReadBit above) it is exact or within bounds; a read left without a prediction
//    (selector bit 1: every third) is unverifiable; a prediction moved by one (bit 2) is off and
//    the detail names the field.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "heap.hpp"
#include "model/sim/values.hpp"

namespace {
[[noreturn]] void die(const std::string& what, std::string_view text) {
  std::fprintf(stderr, "kacct fuzz_values: %s\n--- values ---\n%.*s\n--- end ---\n", what.c_str(), int(text.size()),
               text.data());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 1) return 0;
  const unsigned sel = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto v = sim::parse_values(text);
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size(); ++lines) {  // lines as the reader splits them
    const auto nl = text.find('\n', at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  if (!v) {
    const auto& e = v.error();
    if (e.line == 0 || e.line > lines || e.column == 0 || e.message.empty())
      die("error without a valid position: line " + std::to_string(e.line) + " of " + std::to_string(lines) +
              ", column " + std::to_string(e.column) + ": " + e.message,
          text);
    return 0;
  }
  const auto& reads = v.value();
  if (reads.size() > lines) die("more reads than lines", text);

  // A marker with the upper-twin bit makes another read's twin: then only the shape is checked.
  std::map<std::pair<std::uint64_t, trace::ReadKind>, int> seen;
  bool upper = false;
  for (const auto& k : reads) {
    ++seen[{k.marker, k.kind}];
    upper = upper || (k.marker & trace::perf::kUpperReadBit);
  }
  // A prediction from the reads themselves.
  const bool twin = sel & 1, drop = sel & 2, moved = sel & 4;
  sim::Prediction P;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const auto& k = reads[i];
    if (drop && i % 3 == 0) continue;
    sim::PredictedRead r;
    r.marker = k.marker;
    r.kind = k.kind;
    r.utime = k.utime.value_or(7) + (moved ? 1 : 0);
    r.stime = k.stime.value_or(7);
    r.value = k.value.value_or(7) + (moved ? 1 : 0);
    P.reads.push_back(r);
    if (twin) {
      r.marker |= trace::perf::kUpperReadBit;
      r.utime += 5, r.stime += 5, r.value += 5;
      P.reads.push_back(r);
    }
  }
  const auto cmp = sim::compare(P, reads);
  if (cmp.size() != reads.size()) die("compare answered " + std::to_string(cmp.size()) + " reads", text);
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const auto& k = reads[i];
    const auto& c = cmp[i];
    if (c.marker != k.marker || c.kind != k.kind) die("comparison " + std::to_string(i) + " is of another read", text);
    if (seen[{k.marker, k.kind}] != 1 || upper) continue;
    const std::string at =
        "read " + std::to_string(i) + " (" + std::string(sim::name(c.agreement)) + ": " + c.detail + ")";
    if (drop && i % 3 == 0) {
      if (c.agreement != sim::Agreement::Unverifiable) die(at + ": no prediction, yet not unverifiable", text);
      continue;
    }
    const bool clock = k.kind == trace::ReadKind::ProcessCputime || k.kind == trace::ReadKind::ThreadCputime;
    const bool compared = clock ? bool(k.value) : bool(k.utime) || bool(k.stime);
    // Moved by one and, with a twin, 5 more: off unless that wraps past 2^64 around the kernel's value.
    const bool wraps = twin && !clock && k.utime && *k.utime > ~std::uint64_t{0} - 8;
    const bool off = moved && !wraps && (clock ? bool(k.value) : bool(k.utime));
    if (off) {
      if (c.agreement != sim::Agreement::Off || c.detail.find(clock ? "value" : "utime") == std::string::npos)
        die(at + ": a prediction moved by one is not off on its field", text);
    } else if (!moved && (c.agreement == sim::Agreement::Off || c.agreement == sim::Agreement::Unverifiable)) {
      die(at + ": the read's own values do not agree", text);
    } else if (c.agreement == sim::Agreement::WithinBounds && !(twin && compared)) {
      die(at + ": within bounds without an upper twin", text);
    }
  }
  return 0;
}
