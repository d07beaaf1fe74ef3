// Kernel versions as people name them: mainline releases (6.1 = 6.1.0), stable point releases
// (6.1.192) and named distro builds (Debian's 6.1.192-3). Ordered by (major, minor, point),
// then the distro build (table order, oldest first, all after the plain point release).
#pragma once
#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kacct::arch {

struct KVersion {
  std::uint8_t major = 0, minor = 0;
  std::uint16_t point = 0;  // stable point release (0: the mainline release itself)
  std::uint8_t build = 0;   // 0: upstream; k: distro_builds[k - 1] (whose base has this point)
  constexpr auto operator<=>(const KVersion&) const = default;
  // The mainline release whose stable series this is (6.1.192-3 -> 6.1).
  constexpr KVersion series() const { return {major, minor, 0, 0}; }
  // The upstream point release (a distro build's base).
  constexpr KVersion upstream() const { return {major, minor, point, 0}; }
  std::string str() const;
};
constexpr KVersion v(unsigned ma, unsigned mi, unsigned point = 0) {
  return {std::uint8_t(ma), std::uint8_t(mi), std::uint16_t(point), 0};
}

// The last minor release of each closed mainline major (the v3.19, v4.20 and v5.19 tags; each
// was followed by X+1.0). Walks over every mainline release go through next_mainline().
struct ClosedMajor {
  std::uint8_t major, last_minor;
};
inline constexpr std::array closed_majors = {ClosedMajor{3, 19}, ClosedMajor{4, 20}, ClosedMajor{5, 19}};
constexpr KVersion next_mainline(KVersion k) {
  for (auto c : closed_majors)
    if (k.major == c.major && k.minor >= c.last_minor) return v(c.major + 1u, 0);
  return v(k.major, k.minor + 1u);
}

// Distro builds by their package version. Each is its base point release plus the distro's
// own patches; none of those touch the modelled accounting code (the changelog entries after
// the upstream merge, read below, are unrelated fixes), so the model runs the base.
struct DistroBuild {
  std::string_view name;  // the package version, as `uname -r`'s distro part and apt show it
  KVersion base;
  std::string_view distro;
  std::string_view source;
};
inline constexpr std::array distro_builds = {
    DistroBuild{"6.1.192-3", v(6, 1, 192), "Debian 12 (bookworm-security)",
                "/usr/share/doc/linux-source-6.1/changelog.Debian.gz: 6.1.192-1 merges ChangeLog-6.1.191/192; "
                "-2 and -3 add an ext4 and an nfsd fix"},
    DistroBuild{"6.12.117-1~deb12u1", v(6, 12, 117), "Debian 12 (bookworm-backports)",
                "/usr/share/doc/linux-source-6.12/changelog.Debian.gz: trixie's 6.12.117-1 rebuilt for bookworm"},
    DistroBuild{"6.12.118-1~deb12u1", v(6, 12, 118), "Debian 12 (bookworm-security)",
                "/usr/share/doc/linux-source-6.12/changelog.Debian.gz: trixie's 6.12.118-1 (ChangeLog-6.12.118: of the "
                "modelled code only a tick/nohz re-evaluation of when the tick stops, not its accounting) rebuilt for "
                "bookworm"},
};
constexpr KVersion distro_build(std::size_t i) {
  auto k = distro_builds[i].base;
  k.build = std::uint8_t(i + 1);
  return k;
}

inline std::string KVersion::str() const {
  if (build) return std::string(distro_builds[build - 1].name);
  std::string s = std::to_string(major) + "." + std::to_string(minor);
  if (point) s += "." + std::to_string(point);
  return s;
}

// MAJOR.MINOR, MAJOR.MINOR.POINT or a distro build's name; nullopt otherwise.
constexpr std::optional<KVersion> parse_version(std::string_view s) {
  for (std::size_t i = 0; i < distro_builds.size(); ++i)
    if (distro_builds[i].name == s) return distro_build(i);
  unsigned part[3] = {0, 0, 0};
  int n = 0;
  while (n < 3) {
    const auto dot = s.find('.');
    const auto tok = s.substr(0, dot);
    if (tok.empty() || tok.size() > 5) return std::nullopt;
    unsigned x = 0;
    for (char c : tok) {
      if (c < '0' || c > '9') return std::nullopt;
      x = x * 10 + unsigned(c - '0');
    }
    part[n++] = x;
    if (dot == std::string_view::npos) break;
    s = s.substr(dot + 1);
    if (n == 3) return std::nullopt;  // a fourth component
  }
  if (n < 2 || part[0] > 255 || part[1] > 255 || part[2] > 65535) return std::nullopt;
  return v(part[0], part[1], part[2]);
}

}  // namespace kacct::arch
