#include "common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <algorithm>

#include "xz.hpp"

namespace kacct::cli {

std::string cut(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, max), s.size());
}

std::string input_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string read_file(const std::string& path) {
  const std::string name = input_name(path);
  auto fail = [&](const char* what, int err) {
    return Failure(fmt::format("{}: {}: {}", name, what, std::strerror(err)));
  };
  const int fd = path == "-" ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail("cannot open", errno);
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd > 0) ::close(fd);
    }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw fail("cannot open", EISDIR);
  std::string data;
  if (S_ISREG(st.st_mode) && st.st_size > 0) data.reserve(std::size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fail("cannot read", errno);
    }
    data.append(buf, std::size_t(n));
  }
  return data;
}

std::string read_input(const std::string& path) {
  std::string data = read_file(path);
  if (!is_xz(data)) return data;
  try {
    return decompress_xz(data, input_name(path));
  } catch (const std::runtime_error& e) { throw Failure(e.what()); }
}

std::string Loaded::line(std::uint32_t n) const {
  std::string l = cut(trace::source_line(text, n));
  // Quote only printable bytes: the line may hold anything a comment can.
  for (auto& ch : l)
    if ((unsigned char)ch < 0x20 && ch != '\t')
      ch = '?';
    else if ((unsigned char)ch >= 0x7f)
      ch = '?';
  return l;
}

Loaded load_trace(const std::string& path) {
  Loaded l;
  l.name = input_name(path);
  l.text = read_input(path);
  auto r = trace::load(l.text);
  if (!r) {
    const auto& e = r.error();
    if (e.line == 0)
      fmt::print(stderr, "{}: {}\n", l.name, e.message);
    else if (e.column == 0)
      fmt::print(stderr, "{}:{}: {}\n", l.name, e.line, e.message);
    else
      fmt::print(stderr, "{}:{}:{}: {}\n", l.name, e.line, e.column, e.message);
    if (auto src = l.line(e.line); !src.empty()) fmt::print(stderr, "  {}\n", src);
    throw Exit{kExitUsage};
  }
  l.trace = std::move(r).value();
  return l;
}

static std::string cpu_names() {
  std::string s;
  for (const auto& c : arch::cpus()) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

arch::CpuFacts resolve_cpu(const std::string& name) {
  if (auto c = arch::find_cpu(name)) return *c;
  throw Failure(fmt::format("unknown CPU '{}'; known CPUs: {} (see `kacct list cpus`)", name, cpu_names()));
}

// The closest listed config to a name that is not one: the same accounting first (native stays
// native), then the same irqtime/steal/HZ, then the nearest version. Also says, when the
// accounting exists but not at that version, which versions it has.
static std::string config_hint(const std::string& name) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i <= name.size();) {
    const auto j = std::min(name.find('-', i), name.size());
    parts.push_back(name.substr(i, j - i));
    i = j + 1;
  }
  const auto ver = parts.empty() ? std::nullopt : arch::parse_version(parts[0]);
  const std::string acct = parts.size() > 1 ? parts[1] : "";
  auto has = [&](std::string_view p) { return std::find(parts.begin(), parts.end(), p) != parts.end(); };
  const bool irq = has("irqtime"), steal = has("steal");
  const std::string hz = parts.empty() ? "" : parts.back();
  auto key = [](arch::KVersion k) { return std::int64_t(k.major) * 1'000'000 + k.minor * 10'000 + k.point; };
  const arch::Config* best = nullptr;
  std::int64_t best_score = 0;
  std::vector<std::string> versions;  // of the same accounting
  for (const auto& k : arch::all_configs()) {
    const bool same_acct = arch::config_part(k.acct) == acct;
    if (same_acct) {
      auto v = k.version.str();
      if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
    }
    std::int64_t score = (same_acct ? 1'000'000'000 : 0) + (k.irq_time == irq ? 1'000'000 : 0) +
                         (k.steal == steal ? 1'000'000 : 0) + ("hz" + std::to_string(k.hz) == hz ? 2'000'000 : 0);
    if (ver) {
      score -= std::min<std::int64_t>(std::abs(key(k.version) - key(*ver)), 899'999);
      if (k.version.upstream().point != ver->point || k.version.build != ver->build) score -= 100'000;  // 6.6 -> 6.1
    }
    if (!best || score > best_score) best = &k, best_score = score;
  }
  std::string out;
  if (best) out = fmt::format(" (did you mean {}?)", best->name());
  if (!versions.empty() && ver && std::find(versions.begin(), versions.end(), ver->str()) == versions.end())
    out += fmt::format("; {} configs exist for {}", acct, fmt::join(versions, ", "));
  return out;
}

arch::Config resolve_config(const std::string& name) {
  if (auto k = arch::find_config(name)) return *k;
  throw Failure(
      fmt::format("unknown config '{}'{}; names are VERSION-ACCT[-irqtime][-steal]-hzN, "
                  "e.g. 6.6-tick-irqtime-hz250 (see `kacct list configs`)",
                  cut(name), config_hint(name)));
}

// Mirrors arch::legal() (arch/config.hpp) rule by rule, with the Kconfig text of each rule.
std::string illegal_reason(const arch::CpuFacts& c, const arch::Config& k) {
  const auto why = arch::illegal_reason(c, k);  // the one definition, in arch/config.hpp
  if (why.empty()) return {};
  return fmt::format("{} ({} is {}, {} accounting)", why, c.name, platform_name(c.platform), accounting_name(k.acct));
}

void require_legal(const arch::CpuFacts& c, const arch::Config& k) {
  auto why = cli::illegal_reason(c, k);
  if (why.empty()) return;
  throw Failure(
      fmt::format("config {} is not legal on {}: {}. Legal configs: `kacct list configs` "
                  "(or `kacct list combos`)",
                  k.name(), c.name, why));
}

std::string_view isa_name(arch::Isa i) {
  switch (i) {
    case arch::Isa::X86_64: return "x86_64";
    case arch::Isa::PPC32: return "ppc32";
    case arch::Isa::PPC64: return "ppc64";
  }
  return "?";
}
std::string_view platform_name(arch::Platform p) {
  using P = arch::Platform;
  switch (p) {
    case P::X86: return "X86";
    case P::PPC_8xx: return "PPC_8xx";
    case P::PPC_BOOK3S_32: return "PPC_BOOK3S_32";
    case P::PPC_44x: return "PPC_44x";
    case P::PPC_E500: return "PPC_E500";
    case P::PPC_BOOK3E_64: return "PPC_BOOK3E_64";
    case P::PPC_BOOK3S_64: return "PPC_BOOK3S_64";
  }
  return "?";
}
// Both from the mechanism table (arch/mechanisms.hpp).
std::string_view mechanism_name(arch::Mechanism m) { return arch::mechanism(m).name; }
std::string_view accounting_name(arch::Accounting a) { return arch::config_part(a); }
std::string command_name(arch::Mechanism m) { return arch::command_name(arch::mechanism(m)); }
void add_legacy_aliases(CLI::App& app) {
  for (const auto& m : arch::mechanisms)
    if (!m.legacy.command.empty()) app.get_subcommand(arch::command_name(m))->alias(std::string(m.legacy.command));
}

Table::Table(std::vector<std::string> headers, std::vector<bool> right)
    : headers_(std::move(headers)), right_(std::move(right)) {
  right_.resize(headers_.size(), false);
}
void Table::row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}
std::string Table::str(std::string_view indent) const {
  std::vector<std::size_t> w(headers_.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = headers_[i].size();
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l(indent);
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (i) l += "  ";
      const bool last = i + 1 == w.size();
      if (right_[i])
        l += fmt::format("{:>{}}", cells[i], w[i]);
      else if (last)
        l += cells[i];
      else
        l += fmt::format("{:<{}}", cells[i], w[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  std::vector<std::string> rule;
  for (auto x : w) rule.push_back(std::string(x, '-'));
  line(rule);
  for (const auto& r : rows_) line(r);
  return out;
}

Progress::Progress(bool quiet) : on_(!quiet && ::isatty(STDERR_FILENO) == 1) {}
void Progress::show(const std::string& text) {
  if (!on_) return;
  std::fflush(stdout);
  fmt::print(stderr, "\r\033[K{}", text);
  std::fflush(stderr);
  shown_ = true;
}
void Progress::clear() {
  if (!on_ || !shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

void print_json(const nlohmann::ordered_json& j) {
  std::string s = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace kacct::cli
