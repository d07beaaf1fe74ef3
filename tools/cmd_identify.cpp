// kacct identify [--root DIR] [--osrelease F] [--proc-version F] [--cmdline F] [--cpuinfo F]
// [--kconfig F] [--json]: the arch table's CPU and configuration for a running kernel (see
// identify.hpp), or the nearest configuration with every difference listed.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "common.hpp"
#include "identify.hpp"

namespace kacct::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& file, std::size_t line, std::size_t col, const std::string& msg) {
  if (line == 0) throw Failure(fmt::format("{}: {}", file, msg));
  throw Failure(fmt::format("{}:{}:{}: {}", file, line, col, msg));
}

// The whole file; gzip (config.gz) is inflated.
std::string slurp(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(path, 0, 0, "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(path, 0, 0, "read error");
  std::string s = std::move(ss).str();
  if (s.size() < 2 || (unsigned char)s[0] != 0x1f || (unsigned char)s[1] != 0x8b) return s;
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) fail(path, 0, 0, "cannot inflate");
  std::string out;
  char buf[1 << 15];
  z.next_in = reinterpret_cast<Bytef*>(s.data());
  z.avail_in = uInt(s.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      fail(path, 0, 0, "corrupt gzip data");
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      fail(path, 0, 0, "truncated gzip data");
    }
  }
  inflateEnd(&z);
  return out;
}

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto nl = s.find('\n');
    out.push_back(s.substr(0, nl));
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return out;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// ---- Kconfig: CONFIG_X=VALUE, "# CONFIG_X is not set", other comments, blank lines.
struct Kconfig {
  std::string file;
  std::map<std::string, std::string, std::less<>> values;  // set symbols (without CONFIG_)
  std::map<std::string, std::size_t, std::less<>> line;
  bool y(std::string_view sym) const {
    auto it = values.find(sym);
    return it != values.end() && it->second == "y";
  }
  const std::string* get(std::string_view sym) const {
    auto it = values.find(sym);
    return it == values.end() ? nullptr : &it->second;
  }
};
bool sym_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_'; }

Kconfig parse_kconfig(const std::string& file, std::string_view text) {
  Kconfig k;
  k.file = file;
  const auto ls = lines_of(text);
  for (std::size_t i = 0; i < ls.size(); ++i) {
    auto l = ls[i];
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (trim(l).empty() || l.front() == '#') continue;
    if (l.substr(0, 7) != "CONFIG_") fail(file, i + 1, 1, "not a Kconfig line (CONFIG_NAME=VALUE or a # comment)");
    std::size_t p = 7;
    while (p < l.size() && sym_char(l[p])) ++p;
    if (p == 7) fail(file, i + 1, 8, "empty symbol name");
    if (p >= l.size() || l[p] != '=') fail(file, i + 1, p + 1, "expected '=' after the symbol name");
    const auto val = l.substr(p + 1);
    const bool ok = val == "y" || val == "m" || val == "n" ||
                    (val.size() >= 2 && val.front() == '"' && val.back() == '"') ||
                    (!val.empty() && std::all_of(val.begin(), val.end(), [](char c) {
                      return is_digit(c) || c == '-' || c == 'x' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
                    }));
    if (!ok) fail(file, i + 1, p + 2, fmt::format("bad value '{}' (y, m, a number or a \"string\")", val));
    std::string sym(l.substr(7, p - 7));
    k.line[sym] = i + 1;
    k.values[sym] = std::string(val);
  }
  return k;
}

// ---- cpulist_parse(): "0-3,8,10-15:2/4", "N" = the last CPU; 'all' (5.x+ also accepts it).
std::vector<std::uint32_t> parse_cpulist(std::string_view s, std::uint32_t ncpus, const std::string& file,
                                         std::size_t line, std::size_t col0) {
  std::vector<std::uint32_t> out;
  const std::uint32_t last = ncpus ? ncpus - 1 : 0;
  if (s == "all") {
    for (std::uint32_t c = 0; c < ncpus; ++c) out.push_back(c);
    return out;
  }
  std::size_t pos = 0;
  auto num = [&](std::uint32_t& v) {
    const auto start = pos;
    if (pos < s.size() && s[pos] == 'N') {
      v = last;
      ++pos;
      return;
    }
    std::uint64_t x = 0;
    while (pos < s.size() && is_digit(s[pos])) {
      x = x * 10 + unsigned(s[pos++] - '0');
      if (x > 1u << 20) fail(file, line, col0 + start, "CPU number too large");
    }
    if (pos == start) fail(file, line, col0 + pos, "expected a CPU number");
    v = std::uint32_t(x);
  };
  while (true) {
    std::uint32_t a = 0, b = 0, used = 1, group = 1;
    num(a);
    b = a;
    if (pos < s.size() && s[pos] == '-') {
      ++pos;
      num(b);
      if (pos < s.size() && s[pos] == ':') {
        ++pos;
        num(used);
        if (pos >= s.size() || s[pos] != '/') fail(file, line, col0 + pos, "expected '/' in a CPU group");
        ++pos;
        num(group);
        if (group == 0 || used == 0 || used > group) fail(file, line, col0 + pos - 1, "bad CPU group size");
      }
    }
    if (b < a) fail(file, line, col0 + pos - 1, "CPU range ends before it starts");
    for (std::uint32_t c = a; c <= b; ++c)
      if ((c - a) % group < used) out.push_back(c);
    if (pos == s.size()) break;
    if (s[pos] != ',') fail(file, line, col0 + pos, "expected ',' or the end of the CPU list");
    ++pos;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---- /proc/cmdline: words; quotes group; "--" ends the kernel's part.
struct Param {
  std::string key, value;
  bool has_value = false;
  std::size_t col = 0;  // 1-based column of the value (or of the word)
};
std::vector<Param> parse_cmdline(std::string_view l) {
  std::vector<Param> out;
  std::size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\n')) ++i;
    if (i >= l.size()) break;
    const auto start = i;
    bool q = false;
    std::string word;
    std::size_t eq = std::string::npos;
    for (; i < l.size() && (q || (l[i] != ' ' && l[i] != '\t' && l[i] != '\n')); ++i) {
      if (l[i] == '"') {
        q = !q;
        continue;
      }
      if (l[i] == '=' && eq == std::string::npos) eq = word.size();
      word += l[i];
    }
    if (word == "--") break;
    Param p;
    if (eq == std::string::npos) {
      p.key = word;
      p.col = start + 1;
    } else {
      p.key = word.substr(0, eq);
      p.value = word.substr(eq + 1);
      p.has_value = true;
      p.col = l.find('=', start) + 2;
      if (l[start] == '"' || (p.col - 1 < l.size() && l[p.col - 1] == '"')) ++p.col;
    }
    out.push_back(std::move(p));
  }
  return out;
}

// ---- the CPU from /proc/cpuinfo.
struct CpuSeen {
  arch::CpuFacts cpu;
  std::string how;
  std::uint32_t ncpus = 0;
  bool hypervisor = false;
  std::string platform;  // powerpc "platform" line
};
CpuSeen parse_cpuinfo(const std::string& file, std::string_view text) {
  CpuSeen s;
  std::string vendor, family, model, ppc_cpu;
  std::size_t ppc_line = 0, ppc_col = 0, vendor_line = 0;
  bool lm = false, any_flags = false;
  std::size_t flags_line = 0;
  const auto ls = lines_of(text);
  for (std::size_t i = 0; i < ls.size(); ++i) {
    const auto l = ls[i];
    const auto colon = l.find(':');
    if (colon == std::string_view::npos) {
      if (!trim(l).empty()) fail(file, i + 1, 1, "expected 'key : value'");
      continue;
    }
    const auto key = trim(l.substr(0, colon));
    const auto val = trim(l.substr(colon + 1));
    if (key == "processor") {
      if (val.empty() || !std::all_of(val.begin(), val.end(), is_digit))
        fail(file, i + 1, colon + 2, "processor: expected a CPU number");
      ++s.ncpus;
    } else if (key == "CPU implementer" || key == "CPU architecture") {
      fail(file, i + 1, 1, "an arm64 CPU ('CPU implementer'): the CPU table has no arm64 entry (kacct list cpus)");
    } else if (key == "vendor_id" && vendor.empty()) {
      vendor = val;
      vendor_line = i + 1;
    } else if (key == "cpu family" && family.empty()) {
      family = val;
    } else if (key == "model" && model.empty()) {
      model = val;
    } else if (key == "flags" && !any_flags) {
      any_flags = true;
      flags_line = i + 1;
      const std::string f = " " + std::string(val) + " ";
      lm = f.find(" lm ") != std::string::npos;
      s.hypervisor = f.find(" hypervisor ") != std::string::npos;
    } else if (key == "cpu" && ppc_cpu.empty()) {
      ppc_cpu = val;
      ppc_line = i + 1;
      ppc_col = l.find(val, colon) + 1;
    } else if (key == "platform" && s.platform.empty()) {
      s.platform = val;
    }
  }
  if (vendor == "IBM/S390")
    fail(file, vendor_line, 1, "an s390 CPU: the CPU table has no s390 entry (kacct list cpus)");
  if (!vendor.empty()) {
    if (!any_flags) fail(file, 0, 0, "x86 CPU without a 'flags' line");
    if (!lm)
      fail(file, flags_line, 1, "a 32-bit x86 CPU (no 'lm' flag): the CPU table has x86-64 only (kacct list cpus)");
    s.cpu = *arch::find_cpu("x86-64");
    s.how = fmt::format("{}: {} family {} model {}, 'lm' in flags", file, vendor, family, model);
  } else if (!ppc_cpu.empty()) {
    // cputable.c / cpu_specs_*.h cpu_name: "POWER9 (architected)", "POWER8E (raw)", "POWER5+",
    // "PPC970MP", "e300c3", "e500v2", "e5500", "8xx", "440EPX", "460EX Rev. B", "(generic 44x PPC)".
    std::optional<arch::CpuFacts> hit = arch::find_cpu_by_cpuinfo(ppc_cpu);
    if (!hit)
      fail(file, ppc_line, ppc_col, fmt::format("powerpc CPU '{}' is not in the CPU table (kacct list cpus)", ppc_cpu));
    s.cpu = *hit;
    s.how = fmt::format("{}:{}: cpu {}", file, ppc_line, ppc_cpu);
  } else {
    fail(file, 0, 0, "no CPU recognised (neither x86 'vendor_id' nor powerpc 'cpu' lines)");
  }
  if (s.ncpus == 0) fail(file, 0, 0, "no 'processor' lines");
  return s;
}

std::string first_line(const std::string& file, const std::string& text) {
  const auto l = std::string(trim(lines_of(text).empty() ? std::string_view{} : lines_of(text).front()));
  if (l.empty()) fail(file, 1, 1, "empty");
  return l;
}

// MAJOR.MINOR[.POINT] at the start of s (uname -r: "6.1.0-37-amd64", "6.18.44-fc-v1045").
std::optional<arch::KVersion> leading_version(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && (is_digit(s[n]) || s[n] == '.')) ++n;
  auto t = s.substr(0, n);
  if (!t.empty() && t.back() == '.') t.remove_suffix(1);
  return arch::parse_version(t);
}

std::uint64_t vkey(arch::KVersion k) {
  return (std::uint64_t(k.major) << 32) | (std::uint64_t(k.minor) << 16) | k.point;
}

std::string onoff(bool b) { return b ? "y" : "n"; }
}  // namespace

std::uint64_t Identity::nohz_mask() const {
  std::uint64_t m = 0;
  for (auto c : nohz_full)
    if (c < 64) m |= std::uint64_t{1} << c;
  return m;
}

Identity identify(const IdentifySources& src) {
  Identity id;
  auto at = [&](const std::string& given, const char* rel) {
    return given.empty() ? (fs::path(src.root) / rel).string() : given;
  };
  const auto f_rel = at(src.osrelease, "proc/sys/kernel/osrelease");
  const auto f_ver = at(src.version, "proc/version");
  const auto f_cmd = at(src.cmdline, "proc/cmdline");
  const auto f_cpu = at(src.cpuinfo, "proc/cpuinfo");

  // The release: /proc/version names it ("Linux version 6.1.0-37-amd64 (...) ... Debian
  // 6.1.140-1 (date)"); Debian's uname -r holds the ABI name, the package version the point.
  id.proc_version = first_line(f_ver, slurp(f_ver));
  constexpr std::string_view lv = "Linux version ";
  if (id.proc_version.rfind(lv, 0) != 0) fail(f_ver, 1, 1, "expected 'Linux version '");
  const auto pv_uname = id.proc_version.substr(lv.size(), id.proc_version.find(' ', lv.size()) - lv.size());
  {
    std::error_code ec;
    if (src.osrelease.empty() && !fs::exists(f_rel, ec))
      id.uname_r = pv_uname;  // an old capture without osrelease: /proc/version has it too
    else
      id.uname_r = first_line(f_rel, slurp(f_rel));
  }
  if (id.uname_r != pv_uname)
    fail(f_ver, 1, lv.size() + 1,
         fmt::format("names kernel '{}' but {} says '{}': the two files are from different kernels", pv_uname, f_rel,
                     id.uname_r));
  std::optional<arch::KVersion> ver;
  if (auto d = id.proc_version.rfind(" Debian "); d != std::string::npos) {  // the last: gcc names Debian too
    const auto b = d + 8;
    const auto pkg = id.proc_version.substr(b, id.proc_version.find(' ', b) - b);
    if (auto k = arch::parse_version(pkg); k && k->build) {
      ver = k;
      id.version_how = fmt::format("{}: Debian package {}, a distro build the model runs as its base {}", f_ver, pkg,
                                   k->upstream().str());
    } else if (auto up = leading_version(pkg); up && pkg.find_first_not_of("0123456789.") != std::string::npos &&
                                               pkg[pkg.find_first_not_of("0123456789.")] == '-') {
      ver = up;
      id.version_how = fmt::format(
          "{}: Debian package {}: its upstream point release {} (the table has no distro build of that name)", f_ver,
          pkg, up->str());
    } else {
      fail(f_ver, 1, b + 1, fmt::format("cannot read Debian package version '{}'", pkg));
    }
  }
  if (!ver) {
    ver = leading_version(id.uname_r);
    if (!ver) fail(f_rel, 1, 1, fmt::format("uname -r '{}' does not start with a kernel version", id.uname_r));
    id.version_how = fmt::format("uname -r {}", id.uname_r);
  }
  id.version = *ver;

  // The CPU.
  const auto cpu = parse_cpuinfo(f_cpu, slurp(f_cpu));
  id.cpu = cpu.cpu;
  id.cpu_how = cpu.how;
  id.ncpus = cpu.ncpus;

  // The config of the booted kernel.
  std::string f_cfg = src.kconfig;
  if (f_cfg.empty()) {
    std::error_code ec;
    const auto boot = (fs::path(src.root) / "boot" / ("config-" + id.uname_r)).string();
    const auto gz = (fs::path(src.root) / "proc/config.gz").string();
    if (fs::exists(boot, ec))
      f_cfg = boot;
    else if (fs::exists(gz, ec))
      f_cfg = gz;
    else
      throw Failure(fmt::format("no kernel config: neither {} nor {} exists (give --kconfig FILE)", boot, gz));
  }
  id.kconfig_file = f_cfg;
  const auto kc = parse_kconfig(f_cfg, slurp(f_cfg));
  // The arch the config was built for must be the CPU's.
  const bool x86 = kc.y("X86_64"), ppc64 = kc.y("PPC64"), ppc32 = kc.y("PPC32") || (kc.y("PPC") && !ppc64);
  if (kc.y("ARM64")) fail(f_cfg, kc.line.at("ARM64"), 1, "an arm64 kernel: the CPU table has no arm64 entry");
  if (!x86 && !ppc64 && !ppc32)
    fail(f_cfg, 0, 0, "neither CONFIG_X86_64 nor CONFIG_PPC64/PPC32: an arch the CPU table does not have");
  const bool cpu_x86 = id.cpu.isa == arch::Isa::X86_64;
  if (x86 != cpu_x86 || (!cpu_x86 && ppc64 != (id.cpu.isa == arch::Isa::PPC64)))
    fail(f_cfg, kc.line.count(x86 ? "X86_64" : "PPC64") ? kc.line.at(x86 ? "X86_64" : "PPC64") : 0, 1,
         fmt::format("built for {} but {} shows a {} CPU", x86 ? "x86-64" : (ppc64 ? "PPC64" : "PPC32"), f_cpu,
                     id.cpu.name));
  arch::Config k;
  k.version = id.version.upstream();  // a distro build runs its base (arch/version.hpp)
  if (kc.y("VIRT_CPU_ACCOUNTING_NATIVE"))
    k.acct = arch::Accounting::Native;
  else if (kc.y("VIRT_CPU_ACCOUNTING_GEN"))
    k.acct = arch::Accounting::Gen;
  else if (kc.y("TICK_CPU_ACCOUNTING"))
    k.acct = arch::Accounting::Tick;
  else
    fail(f_cfg, 0, 0, "no CPU time accounting choice (TICK_CPU_ACCOUNTING, VIRT_CPU_ACCOUNTING_GEN or _NATIVE)");
  const auto* hz = kc.get("HZ");
  if (!hz || hz->empty() || !std::all_of(hz->begin(), hz->end(), is_digit) || hz->size() > 5)
    fail(f_cfg, hz ? kc.line.at("HZ") : 0, 1, "no decimal CONFIG_HZ");
  k.hz = unsigned(std::stoul(*hz));
  id.irq_time_built = kc.y("IRQ_TIME_ACCOUNTING");
  // Steal: PARAVIRT_TIME_ACCOUNTING for tick and gen; native reads the pseries dispatch trace log.
  id.steal_built = k.acct == arch::Accounting::Native ? kc.y("PPC_SPLPAR") : kc.y("PARAVIRT_TIME_ACCOUNTING");
  id.no_hz_full = kc.y("NO_HZ_FULL");
  id.ct_force = kc.y("CONTEXT_TRACKING_USER_FORCE") || kc.y("CONTEXT_TRACKING_FORCE");
  id.psi_built = kc.y("PSI");
  id.psi = id.psi_built && !kc.y("PSI_DEFAULT_DISABLED");
  k.irq_time = id.irq_time_built;
  k.steal = id.steal_built;

  // The command line: what the kernel reads of it for these choices.
  const auto cmd_text = slurp(f_cmd);
  const auto cmd_line = std::string(lines_of(cmd_text).empty() ? std::string_view{} : lines_of(cmd_text).front());
  std::optional<std::vector<std::uint32_t>> nohz;
  for (const auto& p : parse_cmdline(cmd_line)) {
    if (p.key == "nohz_full" || p.key == "isolcpus") {
      std::string_view v = p.value;
      std::size_t col = p.col;
      bool tick = p.key == "nohz_full";
      if (p.key == "isolcpus") {  // isolcpus=[flag,]...LIST; only the nohz flag stops the tick
        while (!v.empty() && ((v[0] >= 'a' && v[0] <= 'z') || (v[0] >= 'A' && v[0] <= 'Z'))) {
          const auto comma = v.find(',');
          if (comma == std::string_view::npos) fail(f_cmd, 1, col, "isolcpus: flag without a CPU list");
          tick = tick || v.substr(0, comma) == "nohz";
          v.remove_prefix(comma + 1);
          col += comma + 1;
        }
      }
      if (!p.has_value || v.empty()) fail(f_cmd, 1, col, fmt::format("{}= without a CPU list", p.key));
      auto list = parse_cpulist(v, id.ncpus, f_cmd, 1, col);
      // housekeeping_setup(): the first option with the tick flag sets the nohz_full mask.
      if (tick && !nohz) {
        nohz = list;
        id.nohz_how = fmt::format("{}: {}={}", f_cmd, p.key, p.value);
      }
    } else if (p.key == "tsc" && (p.value.rfind("noirqtime", 0) == 0 || p.value == "unstable") && cpu_x86) {
      // tsc_init() enables irq time only without tsc=noirqtime; an unstable TSC disables it.
      if (k.irq_time) id.notes.push_back(fmt::format("{}: tsc={} turns IRQ time accounting off", f_cmd, p.value));
      k.irq_time = false;
    } else if (p.key == "notsc" && cpu_x86) {
      if (k.irq_time) id.notes.push_back(fmt::format("{}: notsc turns IRQ time accounting off", f_cmd));
      k.irq_time = false;
    } else if (p.key == "no-steal-acc" && cpu_x86) {
      if (k.steal) id.notes.push_back(fmt::format("{}: no-steal-acc: KVM steal time is not accounted", f_cmd));
      k.steal = false;
    } else if (p.key == "nohz" && (p.value == "off" || p.value == "0" || p.value == "n" || p.value == "N")) {
      // tick_nohz_activate() returns early: no CPU ever stops its tick; context tracking (vtime
      // on nohz_full CPUs) is set up regardless, in tick_nohz_init().
      id.notes.push_back(
          fmt::format("{}: nohz={}: the tick never stops, idle or nohz_full; vtime still runs on the "
                      "nohz_full CPUs",
                      f_cmd, p.value));
    } else if (p.key == "psi" && id.psi_built) {
      const auto& b = p.value;
      if (b == "1" || b == "y" || b == "Y" || b == "on") id.psi = true;
      if (b == "0" || b == "n" || b == "N" || b == "off") id.psi = false;
    }
  }
  if (nohz) {
    auto& n = *nohz;
    n.erase(std::remove_if(n.begin(), n.end(), [&](auto c) { return c >= id.ncpus; }), n.end());
    if (!id.no_hz_full) {
      id.notes.push_back(fmt::format("{} is ignored: the kernel is built without NO_HZ_FULL", id.nohz_how));
      n.clear();
    } else if (n.size() == id.ncpus && !n.empty()) {
      n.erase(n.begin());  // housekeeping_setup() keeps the boot CPU
      id.notes.push_back("nohz_full names every CPU: the kernel keeps the boot CPU 0 for housekeeping");
    } else if (!n.empty() && n.front() == 0 && kc.y("PM_SLEEP_SMP") && !kc.y("PM_SLEEP_SMP_NONZERO_CPU")) {
      n.erase(n.begin());  // tick_nohz_init(): the boot CPU keeps the tick for suspend
      id.notes.push_back("tick_nohz_init() clears the boot CPU 0 from nohz_full (PM_SLEEP_SMP)");
    }
    id.nohz_full = n;
  } else {
    id.nohz_how = fmt::format("{}: no nohz_full= or isolcpus=nohz,", f_cmd);
  }
  if (id.ct_force) {  // context_tracking_init(): every possible CPU runs vtime
    id.nohz_full.clear();
    for (std::uint32_t c = 0; c < id.ncpus; ++c) id.nohz_full.push_back(c);
    id.nohz_how = fmt::format("{}: CONTEXT_TRACKING_USER_FORCE tracks every CPU", f_cfg);
  }
  if (k.steal && cpu_x86 && !cpu.hypervisor)
    id.notes.push_back("steal is built in, but the CPU has no 'hypervisor' flag: bare metal has no steal clock");
  if (k.irq_time && cpu_x86)
    id.notes.push_back(
        "IRQ time also goes off if the TSC is marked unstable at run time (dmesg: 'Marking TSC unstable')");
  id.kernel = k;

  // The table's configuration: the kernel itself, or the nearest legal one.
  const auto& all = arch::all_configs();
  auto legal = [&](const arch::Config& c) { return arch::legal(id.cpu, c); };
  auto it = std::find(all.begin(), all.end(), k);
  if (it != all.end() && legal(*it)) {
    id.config = *it;
    id.exact = true;
    return id;
  }
  // Patches of another accounting mode's mechanism do not change this kernel's numbers.
  auto relevant = [&](const arch::Patch& p) {
    const auto a = arch::mechanism(p.mechanism).accounting;
    return !a || *a == k.acct;
  };
  // Nearest: the same accounting mode, irq time and steal, HZ, then the closest release (an
  // older one first: the kernel carries everything it has).
  const arch::Config* best = nullptr;
  std::tuple<int, int, int, int, std::uint64_t> best_key{};
  for (const auto& c : all) {
    if (!legal(c)) continue;
    const auto a = vkey(k.version), b = vkey(c.version);
    const int same_patches = [&] {
      for (const auto& p : arch::patches)
        if (relevant(p) && arch::applied(p.id, k.version) != arch::applied(p.id, c.version)) return 1;
      return 0;
    }();
    std::tuple<int, int, int, int, std::uint64_t> key{c.acct != k.acct,
                                                      int(c.irq_time != k.irq_time) + int(c.steal != k.steal),
                                                      c.hz != k.hz, same_patches * 2 + (b > a), b > a ? b - a : a - b};
    if (!best || key < best_key) best = &c, best_key = key;
  }
  if (!best)
    throw Failure(fmt::format("no configuration of the table is legal on {} (kacct list combos)", id.cpu.name));
  const auto& c = *best;
  id.config = c;
  auto& d = id.differences;
  if (c.acct != k.acct)
    d.push_back(
        fmt::format("accounting: the kernel is {}, the config {}", accounting_name(k.acct), accounting_name(c.acct)));
  if (c.irq_time != k.irq_time)
    d.push_back(fmt::format("IRQ time accounting: the kernel {}, the config {}", onoff(k.irq_time), onoff(c.irq_time)));
  if (c.steal != k.steal)
    d.push_back(fmt::format("steal accounting: the kernel {}, the config {}", onoff(k.steal), onoff(c.steal)));
  if (c.hz != k.hz) d.push_back(fmt::format("HZ: the kernel {}, the config {}", k.hz, c.hz));
  if (c.version != k.version) {
    std::vector<std::string> pd;
    for (const auto& p : arch::patches) {
      const bool in_k = arch::applied(p.id, k.version), in_c = arch::applied(p.id, c.version);
      if (in_k != in_c && relevant(p))
        pd.push_back(fmt::format("{} [{}] ({}) is {} the kernel, {} the config", p.id, mechanism_name(p.mechanism),
                                 p.title, in_k ? "in" : "not in", in_c ? "in" : "not in"));
    }
    const bool beyond = vkey(k.version) > vkey(c.version) && c.version.series() != k.version.series();
    d.push_back(fmt::format("version: the kernel is {}, the config {}{}{}", k.version.str(), c.version.str(),
                            beyond ? " (the newest the model has for this mode)" : "",
                            pd.empty() ? ": the patch table has no change between them" : ""));
    if (beyond) d.back() += "; changes after it are not in the patch table";
    for (auto& x : pd) d.push_back("patch " + x);
  }
  return id;
}

json identity_json(const Identity& id) {
  json k{{"name", id.kernel.name()},
         {"version", id.version.str()},
         {"version_from", id.version_how},
         {"accounting", accounting_name(id.kernel.acct)},
         {"hz", id.kernel.hz},
         {"irq_time", id.kernel.irq_time},
         {"irq_time_built", id.irq_time_built},
         {"steal", id.kernel.steal},
         {"steal_built", id.steal_built},
         {"no_hz_full", id.no_hz_full},
         {"context_tracking_force", id.ct_force},
         {"nohz_full", id.nohz_full},
         {"nohz_full_from", id.nohz_how},
         {"psi_built", id.psi_built},
         {"psi", id.psi}};
  return json{{"uname_r", id.uname_r},
              {"proc_version", id.proc_version},
              {"kconfig", id.kconfig_file},
              {"cpu", id.cpu.name},
              {"cpu_from", id.cpu_how},
              {"ncpus", id.ncpus},
              {"kernel", k},
              {"config", id.config.name()},
              {"exact", id.exact},
              {"differences", id.differences},
              {"notes", id.notes}};
}

std::uint64_t parse_cpu_mask(std::string_view list, std::uint32_t ncpus, const std::string& what) {
  std::uint64_t m = 0;
  for (auto c : parse_cpulist(list, ncpus, what, 1, 1))
    if (c < 64) m |= std::uint64_t{1} << c;
  return m;
}

std::optional<Identity> identify_if_recorded_here(const std::string& recorded_uname, const std::string& root) {
  try {
    IdentifySources s;
    s.root = root;
    auto id = identify(s);
    if (id.uname_r == recorded_uname) return id;
  } catch (const Failure&) {}
  return std::nullopt;
}

void add_identify(CLI::App& app) {
  auto* c =
      app.add_subcommand("identify", "the CPU and configuration of the arch table this kernel is (or the nearest)");
  auto s = std::make_shared<IdentifySources>();
  auto as_json = std::make_shared<bool>(false);
  c->add_option("--root", s->root, "read ROOT/proc/... and ROOT/boot/config-* (default /)");
  c->add_option("--osrelease", s->osrelease, "uname -r (default ROOT/proc/sys/kernel/osrelease)");
  c->add_option("--proc-version", s->version, "default ROOT/proc/version");
  c->add_option("--cmdline", s->cmdline, "default ROOT/proc/cmdline");
  c->add_option("--cpuinfo", s->cpuinfo, "default ROOT/proc/cpuinfo");
  c->add_option("--kconfig", s->kconfig,
                "kernel config, plain or gzip (default ROOT/boot/config-$(uname -r), else "
                "ROOT/proc/config.gz)");
  c->add_flag("--json", *as_json, "JSON output");
  c->callback([=] {
    const auto id = identify(*s);
    if (*as_json) return print_json(identity_json(id));
    std::string nohz = "none (the tick accounts every CPU)";
    if (!id.nohz_full.empty()) {
      nohz.clear();
      for (auto x : id.nohz_full) nohz += (nohz.empty() ? "" : ",") + std::to_string(x);
    }
    auto row = [](std::string_view k, const std::string& v) { fmt::print("{:<10} {}\n", k, v); };
    row("kernel", id.uname_r);
    row("version", fmt::format("{} ({})", id.version.str(), id.version_how));
    row("cpu", fmt::format("{} ({}; {} CPUs)", id.cpu.name, id.cpu_how, id.ncpus));
    row("kconfig", fmt::format("{}: {}, HZ={}, IRQ_TIME_ACCOUNTING={}, steal={}, NO_HZ_FULL={}", id.kconfig_file,
                               accounting_name(id.kernel.acct), id.kernel.hz, onoff(id.irq_time_built),
                               onoff(id.steal_built), onoff(id.no_hz_full)));
    row("nohz_full", fmt::format("{} ({})", nohz, id.nohz_how));
    row("psi", id.psi_built ? (id.psi ? "on" : "off") : "not built");
    row("config", id.exact ? id.config.name() + " (exact)"
                           : fmt::format("{} (nearest; the kernel is {})", id.config.name(), id.kernel.name()));
    for (const auto& d : id.differences) fmt::print("  differs: {}\n", d);
    for (const auto& n : id.notes) fmt::print("  note: {}\n", n);
  });
}

}  // namespace kacct::cli
