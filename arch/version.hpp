// Kernel versions as (major, minor); comparisons are all the model needs.
#pragma once
#include <compare>
#include <cstdint>
#include <string>

namespace kacct::arch {

struct KVersion {
  std::uint8_t major = 0, minor = 0;
  constexpr auto operator<=>(const KVersion&) const = default;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};
constexpr KVersion v(unsigned ma, unsigned mi) { return {std::uint8_t(ma), std::uint8_t(mi)}; }

}  // namespace kacct::arch
