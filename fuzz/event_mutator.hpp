// Structure-aware mutation of event scripts for the libFuzzer targets' LLVMFuzzerCustomMutator:
// the input (a selector prefix and the script text) is parsed with the model's own parser, its
// event list edited (delete, swap two neighbours, insert a copy, change a field within its
// domain: `field`, given by the target), and the result kept only if the target's `valid`
// accepts it (its parser reads the canonical text back and the model can run every event);
// it is written back with the model's own writer. 1 in 8 mutations, an input that does not
// parse, or 16 rejected attempts fall back to libFuzzer's byte-level mutator, which keeps the
// parser itself fuzzed. KACCT_FUZZ_BYTES_ONLY=1 turns the edits off (same binary, to compare).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <string_view>

// Weak: the replay build (replay_main.cpp) has no libFuzzer and never calls a mutator.
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                                              std::size_t max_size);

namespace kacct::fuzz {

inline bool bytes_only() {
  static const bool v = [] {
    const char* e = std::getenv("KACCT_FUZZ_BYTES_ONLY");
    return e && *e && *e != '0';
  }();
  return v;
}

// Script: has `events` (a vector). parse(data, size) -> optional<Script> (the prefix handled by
// the target); field(Script&, Event&, rng) -> bool (edited); valid(const Script&) -> bool;
// write(const Script&) -> std::string (the whole input, prefix included).
template <class Script, class Parse, class Field, class Valid, class Write>
std::size_t mutate_events(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                          std::size_t max_events, Parse parse, Field field, Valid valid, Write write) {
  std::mt19937_64 rng(seed);
  if (bytes_only() || rng() % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  // The script this mutator wrote last: libFuzzer mutates its own output again (-mutate_depth,
  // 5 by default), so an input equal to it byte for byte is that script, not parsed again.
  static std::string last_text;
  static std::optional<Script> last;
  std::optional<Script> s;
  if (last && std::string_view(reinterpret_cast<const char*>(data), size) == last_text)
    s = last;
  else
    s = parse(data, size);
  if (!s) return LLVMFuzzerMutate(data, size, max_size);
  for (int attempt = 0; attempt < 16; ++attempt) {
    Script u = *s;
    auto& ev = u.events;
    auto pick = [&](std::size_t n) { return std::size_t(rng() % n); };
    bool changed = false;
    for (int k = 1 + int(rng() % 3); k > 0; --k) {
      switch (rng() % 4) {
        case 0:
          if (!ev.empty()) {
            ev.erase(ev.begin() + pick(ev.size()));
            changed = true;
          }
          break;
        case 1:
          if (ev.size() >= 2) {
            const std::size_t i = pick(ev.size() - 1);
            std::swap(ev[i], ev[i + 1]);
            changed = true;
          }
          break;
        case 2:
          if (!ev.empty() && ev.size() < max_events) {
            auto e = ev[pick(ev.size())];
            ev.insert(ev.begin() + pick(ev.size() + 1), e);
            changed = true;
          }
          break;
        default:
          if (!ev.empty()) changed = field(u, ev[pick(ev.size())], rng) || changed;
          break;
      }
    }
    if (!changed || !valid(u)) continue;
    const std::string out = write(u);
    if (out.size() > max_size) continue;
    std::memcpy(data, out.data(), out.size());
    last_text = out;
    last = std::move(u);
    return out.size();
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

}  // namespace kacct::fuzz
