// The values file of `kacct perf-replay --values` (model/sim/values.hpp): one reader, used by the
// CLI (tools/cmd_perf.cpp) and the fuzz target fuzz_values. Errors in our words with a position:
// nlohmann's "[json.exception...]" text is not for users.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model/sim/values.hpp"

namespace kacct::sim {

trace::Result<std::vector<KernelRead>> parse_values(std::string_view text) {
  using json = nlohmann::json;
  std::vector<KernelRead> out;
  const auto fail = [](std::uint32_t line, std::uint32_t col, std::string msg) {
    return trace::Error{line, col, std::move(msg), ""};
  };
  std::uint32_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    ++n;
    if (line.empty()) continue;
    json x = json::parse(line, nullptr, false);
    if (x.is_discarded()) {
      // Parse again for the position: the non-throwing parse does not give it. Not every error
      // is a parse_error: a number beyond double's range ("1e999") is out_of_range (406).
      std::size_t byte = 1;
      try {
        const json again = json::parse(line);
        (void)again;
      } catch (const json::parse_error& e) { byte = e.byte == 0 ? 1 : e.byte; } catch (const json::exception&) {
      }
      return fail(n, std::uint32_t(std::min<std::size_t>(byte, UINT32_MAX)), "not a JSON line");
    }
    if (!x.is_object()) return fail(n, 1, "not a JSON object");
    if (!x.contains("marker")) continue;  // the header line {"pid": ...}
    std::optional<std::string> bad;
    const auto number = [&](const char* key, bool required) -> std::optional<std::uint64_t> {
      const auto it = x.find(key);
      if (it == x.end()) {
        if (required && !bad) bad = fmt::format("field \"{}\" missing", key);
        return std::nullopt;
      }
      if (!it->is_number_unsigned()) {
        if (!bad) bad = fmt::format("field \"{}\" must be an unsigned integer", key);
        return std::nullopt;
      }
      return it->get<std::uint64_t>();
    };
    KernelRead r;
    r.marker = number("marker", true).value_or(0);
    if (bad) return fail(n, 1, *bad);
    const auto kit = x.find("kind");
    if (kit == x.end() || !kit->is_string()) return fail(n, 1, "field \"kind\" missing or not a string");
    const auto& kind = kit->get_ref<const std::string&>();
    bool found = false;
    for (std::size_t k = 0; k < trace::kReadKindCount && !found; ++k)
      if (trace::name(trace::ReadKind(k)) == kind) r.kind = trace::ReadKind(k), found = true;
    if (!found) return fail(n, 1, fmt::format("unknown read kind '{}'", kind));
    r.value = number("value", false);
    r.utime = number("utime", false);
    r.stime = number("stime", false);
    if (bad) return fail(n, 1, *bad);
    out.push_back(r);
  }
  return out;
}

}  // namespace kacct::sim
