#include "common.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace kacct::cli {

std::string Loaded::line(std::uint32_t n) const {
  std::string l = trace::source_line(text, n);
  // Quote only printable bytes: the line may hold anything a comment can.
  for (auto& ch : l)
    if ((unsigned char)ch < 0x20 && ch != '\t')
      ch = '?';
    else if ((unsigned char)ch >= 0x7f)
      ch = '?';
  return l;
}

static std::string read_all(std::istream& in) {
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

Loaded load_trace(const std::string& path) {
  Loaded l;
  if (path == "-") {
    l.name = "<stdin>";
    std::ios::sync_with_stdio(false);
    l.text = read_all(std::cin);
    if (std::cin.bad()) throw Failure("cannot read standard input");
  } else {
    l.name = path;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Failure(fmt::format("{}: is a directory", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(fmt::format("{}: cannot open trace file", path));
    l.text = read_all(in);
    if (in.bad()) throw Failure(fmt::format("{}: read error", path));
  }
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

arch::Config resolve_config(const std::string& name) {
  if (auto k = arch::find_config(name)) return *k;
  // Name the closest spelling: same prefix up to the first difference is good enough here.
  std::string hint;
  std::size_t best = 0;
  for (const auto& k : arch::all_configs()) {
    auto n = k.name();
    std::size_t i = 0;
    while (i < n.size() && i < name.size() && n[i] == name[i]) ++i;
    if (i > best) best = i, hint = n;
  }
  throw Failure(
      fmt::format("unknown config '{}'{}; names are VERSION-ACCT[-irqtime][-steal]-hzN, "
                  "e.g. 6.6-tick-irqtime-hz250 (see `kacct list configs`)",
                  name, hint.empty() ? "" : fmt::format(" (did you mean {}?)", hint)));
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

void print_json(const nlohmann::ordered_json& j) {
  std::string s = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace kacct::cli
