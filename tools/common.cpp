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

std::string Loaded::line(std::uint32_t n) const { return quote_line(trace::source_line(text, n)); }

std::string quote_line(std::string_view line) {
  std::string l = cut(line);
  // Quote only printable bytes: the line may hold anything a comment can.
  for (auto& ch : l)
    if ((unsigned char)ch < 0x20 && ch != '\t')
      ch = '?';
    else if ((unsigned char)ch >= 0x7f)
      ch = '?';
  return l;
}

// The way load_trace() prints a trace error (then Exit{3}); `src` is the line's text.
[[noreturn]] static void trace_error(const std::string& name, const trace::Error& e, std::string_view src) {
  if (e.line == 0)
    fmt::print(stderr, "{}: {}\n", name, e.message);
  else if (e.column == 0)
    fmt::print(stderr, "{}:{}: {}\n", name, e.line, e.message);
  else
    fmt::print(stderr, "{}:{}:{}: {}\n", name, e.line, e.column, e.message);
  if (auto q = quote_line(src); !q.empty()) fmt::print(stderr, "  {}\n", q);
  throw Exit{kExitUsage};
}

Loaded load_trace(const std::string& path) {
  Loaded l;
  l.name = input_name(path);
  l.text = read_input(path);
  auto r = trace::load(l.text);
  if (!r) trace_error(l.name, r.error(), trace::source_line(l.text, r.error().line));
  l.trace = std::move(r).value();
  return l;
}

InputStream::InputStream(const std::string& path) : name_(input_name(path)) {
  fd_ = path == "-" ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Failure(fmt::format("{}: cannot open: {}", name_, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (fd_ > 0) ::close(fd_);
    fd_ = -1;
    throw Failure(fmt::format("{}: cannot open: {}", name_, std::strerror(EISDIR)));
  }
}

InputStream::~InputStream() {
  if (fd_ > 0) ::close(fd_);
}

std::string_view InputStream::next() {
  if (xz_) {
    const auto n = std::min<std::size_t>(whole_.size() - whole_pos_, 1 << 20);
    std::string_view v(whole_.data() + whole_pos_, n);
    whole_pos_ += n;
    return v;
  }
  buf_.resize(1 << 20);
  std::size_t got = 0;
  // Fill the buffer (a pipe gives less per read), so that pieces are large.
  while (got < buf_.size()) {
    const ssize_t n = ::read(fd_, buf_.data() + got, buf_.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Failure(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
    }
    got += std::size_t(n);
    if (first_ && got >= 6) break;  // enough to see the xz magic
  }
  buf_.resize(got);
  if (first_) {
    first_ = false;
    if (is_xz(buf_)) {  // the whole compressed input, decompressed once
      std::string data = buf_;
      char tmp[1 << 16];
      for (;;) {
        const ssize_t n = ::read(fd_, tmp, sizeof tmp);
        if (n == 0) break;
        if (n < 0) {
          if (errno == EINTR) continue;
          throw Failure(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
        }
        data.append(tmp, std::size_t(n));
      }
      try {
        whole_ = decompress_xz(data, name_);
      } catch (const std::runtime_error& e) { throw Failure(e.what()); }
      xz_ = true;
      return next();
    }
  }
  return buf_;
}

TraceStream::TraceStream(const std::string& path, std::function<void(const trace::Header&)> on_header,
                         std::function<void(const trace::Event&)> on_event, bool keep_text)
    : in_(path),
      on_header_(std::move(on_header)),
      on_event_(std::move(on_event)),
      keep_text_(keep_text),
      loader_(
          [this](const trace::Header& h) {
            compiler_ = std::make_unique<sim::Compiler>(h);
            if (on_header_) on_header_(h);
          },
          [this](const trace::Event& e, std::string_view text) -> std::optional<trace::Error> {
            if (auto err = compiler_->add(e)) return err;
            if (on_event_) on_event_(e);
            if (keep_text_) {
              text_pos_.push_back(text_.size());
              text_.append(text);
            }
            return std::nullopt;
          }) {}

bool TraceStream::feed_piece() {
  if (done_ || error_) return false;
  const auto piece = in_.next();
  if (piece.empty()) {
    done_ = true;
    error_ = loader_.finish();
    return false;
  }
  if ((error_ = loader_.feed(piece))) return false;
  return !loader_.failed();
}

bool TraceStream::start() {
  while (!compiler_ && feed_piece()) {}
  if (!compiler_) {  // the input ended or failed within the header
    finish();
    return false;
  }
  while (compiler_->program().events.size() < kChunk && feed_piece()) {}
  return !error_ && !loader_.failed();
}

bool TraceStream::refill() {
  compiler_->next_chunk();
  text_.clear();
  text_pos_.clear();
  while (compiler_->program().events.size() < kChunk && feed_piece()) {}
  if (error_ || loader_.failed()) return false;
  return !compiler_->program().events.empty();
}

void TraceStream::finish() {
  keep_text_ = false;
  while (feed_piece())
    if (compiler_ && compiler_->program().events.size() >= kChunk) compiler_->next_chunk();
  if (!done_ && !error_) {  // a semantic error stopped the events: the rest is still parsed
    while (!done_ && !error_) {
      const auto piece = in_.next();
      if (piece.empty()) {
        done_ = true;
        error_ = loader_.finish();
      } else {
        error_ = loader_.feed(piece);
      }
    }
  }
  if (error_) trace_error(name(), *error_, loader_.error_line());
}

std::string TraceStream::line(std::uint32_t n) const {
  if (!compiler_ || !keep_text_) return {};
  const auto& lines = compiler_->program().lines;
  const auto it = std::lower_bound(lines.begin(), lines.end(), n);
  if (it == lines.end() || *it != n) return {};
  const auto k = std::size_t(it - lines.begin());
  if (k >= text_pos_.size()) return {};
  const auto end = k + 1 < text_pos_.size() ? text_pos_[k + 1] : text_.size();
  return quote_line(std::string_view(text_).substr(text_pos_[k], end - text_pos_[k]));
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
  for (const auto& h : headers_) w_.push_back(h.size());
}
void Table::measure(const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < w_.size() && i < cells.size(); ++i) w_[i] = std::max(w_[i], cells[i].size());
}
void Table::row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  measure(cells);
  rows_.push_back(std::move(cells));
}
std::string Table::line(const std::vector<std::string>& cells, std::string_view indent) const {
  std::string l(indent);
  for (std::size_t i = 0; i < w_.size(); ++i) {
    if (i) l += "  ";
    const bool last = i + 1 == w_.size();
    const std::string_view c = i < cells.size() ? std::string_view(cells[i]) : std::string_view();
    if (right_[i])
      l += fmt::format("{:>{}}", c, w_[i]);
    else if (last)
      l += c;
    else
      l += fmt::format("{:<{}}", c, w_[i]);
  }
  while (!l.empty() && l.back() == ' ') l.pop_back();
  return l + "\n";
}
std::string Table::head(std::string_view indent) const {
  std::vector<std::string> rule;
  for (auto x : w_) rule.push_back(std::string(x, '-'));
  return line(headers_, indent) + line(rule, indent);
}
std::string Table::str(std::string_view indent) const {
  std::string out = head(indent);
  for (const auto& r : rows_) out += line(r, indent);
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
