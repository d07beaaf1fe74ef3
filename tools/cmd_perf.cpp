// kacct perf-convert / kacct perf-replay: a real kernel's `perf script` output as a kacct trace,
// and the values the kernel reported at the workload's marked reads, predicted (docs/perf.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <map>
#include <set>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common.hpp"
#include "identify.hpp"
#include "model/sim/machine.hpp"
#include "model/sim/oracle.hpp"
#include "model/sim/values.hpp"
#include "model/trace/perf.hpp"
#include "tracedat.hpp"
#include "xz.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;
namespace perf = trace::perf;

// perf-replay's configuration: --config, else the identified one if this machine runs the kernel
// that recorded TRACE (meta.json beside it, as record.sh writes), else the old default.
struct KnownConfig {
  std::string config;
  std::optional<std::uint64_t> nohz_full;
  std::string cpu;  // identify's CPU ("" = --cpu's)
};
KnownConfig default_config(const std::string& given, const std::string& trace_path, const std::string& root) {
  if (!given.empty()) return {given, std::nullopt, ""};
  const KnownConfig fallback{"6.12-tick-steal-hz250", std::nullopt, ""};
  if (trace_path == "-") return fallback;
  const auto meta = std::filesystem::path(trace_path).parent_path() / "meta.json";
  std::ifstream in(meta);
  if (!in) return fallback;
  const auto j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("kernel") || !j["kernel"].is_string()) return fallback;
  const auto id = identify_if_recorded_here(j["kernel"].get<std::string>(), root);
  if (!id) return fallback;
  fmt::print(stderr, "kacct: no --config: using {} from `kacct identify` (this machine runs {}, which {} names)\n",
             id->config.name(), id->uname_r, meta.string());
  return {id->config.name(), id->nohz_mask(), std::string(id->cpu.name)};
}

// A group read after a thread's exit depends on when __exit_signal() folded the thread in, which
// no event marks: a read off with the converter's inferred exit clock is within bounds if the
// kernel's value lies between the predictions with the exit at either end the trace allows.
// predict_with(options): the prediction from the same input converted with other options.
void exit_clock_bounds(std::vector<sim::ReadComparison>& cmp, const std::vector<sim::KernelRead>& kernel,
                       const sim::Prediction& base,
                       const std::function<trace::Result<sim::Prediction>(const perf::Options&)>& predict_with,
                       const perf::Options& o) {
  std::vector<sim::Prediction> ends;
  for (auto& c : cmp) {
    if (c.agreement != sim::Agreement::Off) continue;
    if (ends.empty())
      for (auto at : {perf::Options::ExitAt::ProcessExit, perf::Options::ExitAt::FinalSwitch}) {
        auto oo = o;
        oo.exit_at = at;
        auto p = predict_with(oo);
        if (!p) return;
        ends.push_back(std::move(p).value());
      }
    const auto k = std::find_if(kernel.begin(), kernel.end(),
                                [&](const auto& x) { return x.marker == c.marker && x.kind == c.kind; });
    if (k == kernel.end()) continue;
    std::vector<const sim::PredictedRead*> p;
    for (const sim::Prediction* run : std::array<const sim::Prediction*, 3>{&base, &ends[0], &ends[1]})
      for (const auto& x : run->reads)
        if (x.marker == c.marker && x.kind == c.kind) p.push_back(&x);
    if (p.size() != 3) continue;
    bool inside = true;
    std::string bound;
    auto check = [&](const char* what, std::optional<std::uint64_t> v, auto get) {
      if (!v) return;
      std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
      for (const auto* x : p) lo = std::min(lo, get(*x)), hi = std::max(hi, get(*x));
      inside = inside && *v >= lo && *v <= hi;
      bound += fmt::format("{}{}: kernel {} in [{}, {}]", bound.empty() ? "" : "; ", what, *v, lo, hi);
    };
    check("value", k->value, [](const auto& x) { return x.value; });
    check("utime", k->utime, [](const auto& x) { return x.utime; });
    check("stime", k->stime, [](const auto& x) { return x.stime; });
    if (!inside) continue;
    c.agreement = sim::Agreement::WithinBounds;
    c.how = "exit_clock";
    c.detail = fmt::format("a dead thread's exit clock is not in the trace: {} (inferred: {})", bound, c.detail);
  }
}

// perf script text from a path or "-", read in 1 MB pieces, twice (perf::convert_stream): a
// file is read again from its start; standard input (or any other pipe) is copied into an
// unlinked temporary file as the first pass reads it, and the second pass reads that. xz data is
// decompressed whole first (as InputStream does).
class PerfInput {
 public:
  explicit PerfInput(const std::string& path) : name_(input_name(path)) {
    fd_ = path == "-" ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw fail("cannot open", errno);
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      close_fd();
      throw fail("cannot open", EISDIR);
    }
    regular_ = S_ISREG(st.st_mode);
    if (regular_) size_ = std::size_t(st.st_size);
    buf_.resize(1 << 20);
    // The first piece: xz data is decompressed whole.
    fill();
    if (tracedat::is_tracedat_data(buf_)) {  // trace-cmd's trace.dat: libtracecmd reads the file
      if (path != "-") {
        close_fd();
        open_tracedat(tracedat::Input::open(path));
        return;
      }
      std::string data = std::move(buf_);  // standard input: read whole (libtracecmd seeks)
      for (buf_.resize(1 << 20); fill(), !buf_.empty();) data += buf_;
      open_tracedat(tracedat::Input::open_data(data, name_));
      return;
    }
    if (is_xz(buf_)) {
      std::string data = std::move(buf_);
      for (buf_.resize(1 << 20); fill(), !buf_.empty();) data += buf_;
      try {
        whole_ = decompress_xz(data, name_);
      } catch (const std::runtime_error& e) { throw Failure(e.what()); }
      xz_ = true;
      size_ = whole_.size();
      if (tracedat::is_tracedat_data(whole_)) {
        open_tracedat(tracedat::Input::open_data(whole_, name_));
        std::string().swap(whole_);
      }
      return;
    }
    first_ = true;
    if (!regular_) {  // a pipe: the first pass copies it into a temporary file
      const char* dir = std::getenv("TMPDIR");
      std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/kacct-perf-XXXXXX";
      spill_ = ::mkstemp(tmpl.data());
      if (spill_ < 0)
        throw Failure(fmt::format("{}: cannot create a temporary file in {}: {}", name_,
                                  tmpl.substr(0, tmpl.rfind('/')), std::strerror(errno)));
      ::unlink(tmpl.c_str());
    }
  }
  ~PerfInput() {
    close_fd();
    if (spill_ >= 0) ::close(spill_);
  }
  PerfInput(const PerfInput&) = delete;
  PerfInput& operator=(const PerfInput&) = delete;

  // perf script text; a trace.dat rendered as such (tracedat::Input::text(), streamed too).
  perf::Source source() {
    if (td_) {  // the reader's process failing in a pass: an error naming the file
      auto s = td_->text();
      auto named = [this](const auto& f) {
        try {
          return f();
        } catch (const tracedat::Failure& e) { throw Failure(fmt::format("{}: {}", name_, e.what())); }
      };
      return {[named, n = s.next] { return named(n); }, [named, w = s.rewind] { named(w); }, s.size};
    }
    return {[this] { return next(); }, [this] { rewind(); }, size_};
  }

 private:
  Failure fail(const char* what, int err) const {
    return Failure(fmt::format("{}: {}: {}", name_, what, std::strerror(err)));
  }
  void close_fd() {
    if (fd_ > 0) ::close(fd_);
    fd_ = -1;
  }
  // buf_ = the next bytes of fd_ (up to 1 MB; a pipe gives less per read, so fill it up).
  void fill(int fd = -1) {
    if (fd < 0) fd = fd_;
    buf_.resize(1 << 20);
    std::size_t got = 0;
    while (got < buf_.size()) {
      const ssize_t n = ::read(fd, buf_.data() + got, buf_.size() - got);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        throw fail("cannot read", errno);
      }
      got += std::size_t(n);
    }
    buf_.resize(got);
  }
  void spill(std::string_view v) {
    for (std::size_t done = 0; done < v.size();) {
      const ssize_t n = ::write(spill_, v.data() + done, v.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Failure(fmt::format("{}: cannot write its temporary copy: {}", name_, std::strerror(errno)));
      done += std::size_t(n);
    }
  }
  std::string_view next() {
    if (xz_) {
      const auto n = std::min<std::size_t>(whole_.size() - pos_, 1 << 20);
      std::string_view v(whole_.data() + pos_, n);
      pos_ += n;
      return v;
    }
    if (first_) {
      first_ = false;
    } else if (reading_spill_) {
      fill(spill_);
    } else {
      fill();
    }
    if (spill_ >= 0 && !reading_spill_) {
      spill(buf_);
      if (buf_.empty()) in_done_ = true;
    }
    return buf_;
  }
  void rewind() {
    if (xz_) {
      pos_ = 0;
      return;
    }
    first_ = false;
    if (spill_ >= 0) {
      if (!reading_spill_)
        while (!in_done_) next();  // the rest of the pipe, into the copy
      reading_spill_ = true;
      if (::lseek(spill_, 0, SEEK_SET) < 0) throw fail("cannot read its temporary copy", errno);
      return;
    }
    if (::lseek(fd_, 0, SEEK_SET) < 0) throw fail("cannot read", errno);
  }

  void open_tracedat(trace::Result<std::unique_ptr<tracedat::Input>> in) {
    if (!in) throw Failure(fmt::format("{}: {}", name_, in.error().message));
    td_ = std::move(in.value());
  }

  std::string name_;
  std::unique_ptr<tracedat::Input> td_;
  int fd_ = -1, spill_ = -1;
  bool regular_ = false, first_ = false, xz_ = false, reading_spill_ = false, in_done_ = false;
  std::size_t size_ = 0, pos_ = 0;
  std::string buf_, whole_;
};

// sim::predict() on `in` (rewound first when `again`) converted with `o`, streamed: the model runs
// as the converter gives the events (sim::PredictStream), so neither the text nor the events are
// held, unless `keep_events` (--save-trace writes the trace).
trace::Result<sim::Prediction> predict_input(PerfInput& in, const perf::Options& o, bool again,
                                             const arch::CpuFacts& facts, const arch::Config& cfg, std::uint64_t pid,
                                             const std::function<void(sim::ModelCfg&)>& tweak = {},
                                             bool keep_events = false) {
  auto src = in.source();
  if (again) src.rewind();
  sim::PredictStream ps(o, facts, cfg, pid, tweak);
  std::vector<trace::Event> events;
  auto c = perf::convert_stream(
      src, o, [&](const trace::Header& h) { ps.header(h); },
      [&](const trace::Event& e) {
        ps.event(e);
        if (keep_events) events.push_back(e);
      },
      [&](const perf::Stats& st) { ps.stats(st); });
  if (!c) return c.error();
  c.value().trace.events = std::move(events);
  return ps.finish(std::move(c).value());
}

perf::Conversion convert_stream_or_exit(const std::string& path, const perf::Options& o,
                                        const std::function<void(const trace::Header&)>& on_header,
                                        const std::function<void(const trace::Event&)>& on_event) {
  PerfInput in(path);
  auto c = perf::convert_stream(in.source(), o, on_header, on_event);
  if (!c) {
    const auto& e = c.error();
    fmt::print(stderr, "{}:{}:{}: {}\n", path == "-" ? "<stdin>" : path, e.line, e.column, e.message);
    throw Exit{kExitUsage};
  }
  return std::move(c).value();
}

json stats_json(const perf::Stats& s) {
  json j;
  j["lines"] = s.lines;
  j["records"] = s.records;
  j["duplicates_dropped"] = s.duplicates;
  j["base_ns"] = s.base_ns;
  j["used"] = s.used;
  j["ignored"] = s.ignored;
  j["unknown_skipped"] = s.unknown;
  j["ticks"] = {{"user", s.ticks_user}, {"kernel", s.ticks_kernel}, {"mode_unknown", s.ticks_mode_unknown}};
  j["repairs"] = s.repairs;
  j["lost_events"] = s.lost_events;
  j["markers"] = s.markers;
  j["reads"] = s.reads;
  j["notes"] = s.notes;
  if (s.tick_steal.records) {
    const auto& t = s.tick_steal;
    j["tick_steal"] = {{"records", t.records},
                       {"ticks", t.ticks},
                       {"ticks_steal", t.ticks_steal},
                       {"ticks_without", t.ticks_without},
                       {"ns", t.ns},
                       {"max_ns", t.max_ns},
                       {"ticks_unplaced", t.ticks_unplaced},
                       {"unplaced_ns", t.unplaced_ns}};
  }
  if (s.vtime.active) {
    const auto& v = s.vtime;
    j["vtime"] = {{"cpus", v.cpus},
                  {"offset", v.offset},
                  {"transitions", v.transitions},
                  {"transitions_exact", v.transitions_exact},
                  {"switches", v.switches},
                  {"switches_exact", v.switches_exact},
                  {"clamped", v.clamped},
                  {"max_clamp_ns", v.max_clamp_ns},
                  {"runtime_restored", v.runtime_restored},
                  {"runtime_restored_ns", v.runtime_restored_ns},
                  {"runtime_excess", v.runtime_excess},
                  {"checkpoints", s.checkpoints.size()}};
  }
  return j;
}

// One object of a JSON-lines file and where it stands. Errors are FILE:LINE:COL in our words
// (nlohmann's "[json.exception...]" text is not for users).
struct JsonLine {
  const std::string& path;
  std::uint32_t n;
  json x;
  Failure error(const std::string& what) const { return Failure(fmt::format("{}:{}:1: {}", path, n, what)); }
  std::optional<std::uint64_t> number(const char* key, bool required) const {
    if (!x.contains(key)) {
      if (required) throw error(fmt::format("field \"{}\" missing", key));
      return std::nullopt;
    }
    if (!x[key].is_number_unsigned()) throw error(fmt::format("field \"{}\" must be an unsigned integer", key));
    return x[key].get<std::uint64_t>();
  }
};
// Calls f(JsonLine) for each non-empty line; each must be a JSON object.
template <class F>
void for_each_json_line(const std::string& path, F&& f) {
  std::istringstream in(read_input(path));
  std::string line;
  for (std::uint32_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    JsonLine j{path, n, {}};
    try {
      j.x = json::parse(line);
    } catch (const json::parse_error& e) {
      throw Failure(fmt::format("{}:{}:{}: not a JSON line", path, n, e.byte == 0 ? 1 : e.byte));
    }
    if (!j.x.is_object()) throw j.error("not a JSON object");
    f(j);
  }
}

// kacct-workload's output: its first line names the run, each further line one read (the
// model library's reader, sim::parse_values; errors as FILE:LINE:COL).
std::vector<sim::KernelRead> load_values(const std::string& path) {
  auto v = sim::parse_values(read_file(path));
  if (!v) throw Failure(fmt::format("{}:{}:{}: {}", path, v.error().line, v.error().column, v.error().message));
  return std::move(v).value();
}

std::string read_name(trace::ReadKind k, std::uint64_t marker) { return fmt::format("{}@{}", trace::name(k), marker); }

// The tids the converted trace knows: declared tasks and forked ones.
// Every --read must have a prediction: else name why (unknown tid, marker absent, read absent).
void require_reads(const std::vector<std::string>& texts, const perf::Options& o, const sim::Prediction& P,
                   std::uint64_t pid) {
  const auto& conv = P.conversion;
  for (std::size_t i = 0; i < o.reads.size(); ++i) {
    const auto& spec = o.reads[i];
    if (spec.tid && !P.tids.count(spec.tid))
      throw Failure(fmt::format("--read '{}': tid {} is not in the trace", texts[i], spec.tid));
    if (!conv.stats.marker_ids.count(spec.marker))
      throw Failure(fmt::format("--read '{}': marker syscall {} ({}+{}) is not in the trace", texts[i],
                                o.marker_base + spec.marker, o.marker_base, spec.marker));
    const bool found = std::any_of(P.reads.begin(), P.reads.end(),
                                   [&](const auto& r) { return r.marker == spec.marker && r.kind == spec.kind; });
    if (!found)
      throw Failure(fmt::format("--read '{}': marker {} is in the trace but no read of pid {} follows it", texts[i],
                                spec.marker, pid));
  }
}

// The values file and the predictions must name the same reads: else list the differences.
void require_same_reads(const std::string& path, const sim::Prediction& P, const std::vector<sim::KernelRead>& kernel) {
  if (kernel.empty()) throw Failure(fmt::format("'{}' has no reads: nothing to compare", path));
  std::vector<std::string> not_predicted, not_in_values;
  for (const auto& k : kernel)
    if (std::none_of(P.reads.begin(), P.reads.end(),
                     [&](const auto& r) { return r.marker == k.marker && r.kind == k.kind; }))
      not_predicted.push_back(read_name(k.kind, k.marker));
  for (const auto& r : P.reads) {
    if (r.marker & perf::kUpperReadBit) continue;  // a bounds read's upper twin
    if (std::none_of(kernel.begin(), kernel.end(),
                     [&](const auto& k) { return r.marker == k.marker && r.kind == k.kind; }))
      not_in_values.push_back(read_name(r.kind, r.marker));
  }
  if (not_predicted.empty() && not_in_values.empty()) return;
  std::string msg = fmt::format("'{}' and the trace's reads differ:", path);
  if (!not_predicted.empty())
    msg += fmt::format(" in the values but not predicted (no --read for it, or not in the trace): {};",
                       fmt::join(not_predicted, ", "));
  if (!not_in_values.empty())
    msg += fmt::format(" predicted but not in the values: {};", fmt::join(not_in_values, ", "));
  msg.pop_back();
  throw Failure(msg);
}

// tools/record-reads/'s output: a header {"recorder", "root", "tids"}, then one line per read the
// program made: {"tid", "seq", "read", "call", "arg0", "target", "utime"/"stime"/"value"}.
struct Recorded {
  std::uint64_t root = 0;
  std::set<std::uint64_t> tids;
  std::vector<sim::RecordedRead> reads;
  std::vector<std::optional<std::uint64_t>> arg0;  // the syscall's first argument, as recorded
};
Recorded load_recorded(const std::string& path) {
  Recorded out;
  bool header = false;
  for_each_json_line(path, [&](const JsonLine& j) {
    const json& x = j.x;
    const auto n = j.n;
    const auto number = [&](const char* key, bool required) { return j.number(key, required); };
    if (x.contains("recorder")) {
      out.root = *number("root", true);
      if (!x.contains("tids") || !x["tids"].is_array())
        throw Failure(fmt::format("{}:{}:1: field \"tids\" missing or not an array", path, n));
      for (const auto& t : x["tids"]) {
        if (!t.is_number_unsigned()) throw Failure(fmt::format("{}:{}:1: a tid is not an unsigned integer", path, n));
        out.tids.insert(t.get<std::uint64_t>());
      }
      header = true;
      return;
    }
    if (!header) throw Failure(fmt::format("{}:{}:1: the header line {{\"recorder\": ...}} must come first", path, n));
    sim::RecordedRead r;
    r.spec.tid = *number("tid", true);
    r.spec.seq = *number("seq", true);
    if (!x.contains("read") || !x["read"].is_string())
      throw Failure(fmt::format("{}:{}:1: field \"read\" missing or not a string", path, n));
    const auto read = x["read"].get<std::string>();
    if (!sim::recorded_kind(read, r)) throw Failure(fmt::format("{}:{}:1: unknown read '{}'", path, n, read));
    if (auto nr = number("nr", false)) r.spec.nr = *nr;
    r.call = x.contains("call") && x["call"].is_string() ? x["call"].get<std::string>() : read;
    if (read == "failed" && x.contains("errno") && x["errno"].is_string())
      sim::recorded_failure(r.call, x["errno"].get<std::string>(), r);
    const auto target = number("target", false).value_or(0);
    r.spec.target = target == r.spec.tid ? 0 : target;
    r.spec.id = perf::kSyscallReadBase + out.reads.size();
    r.utime = number("utime", false);
    r.stime = number("stime", false);
    r.value = number("value", false);
    r.cutime = number("cutime", false);
    r.cstime = number("cstime", false);
    out.arg0.push_back(number("arg0", false));
    out.reads.push_back(std::move(r));
  });
  if (!header) throw Failure(fmt::format("'{}' has no header line {{\"recorder\": ...}}", path));
  if (out.reads.empty()) throw Failure(fmt::format("'{}' has no reads: nothing to compare", path));
  return out;
}

// The recorder's reads and the trace's CPU-time syscalls must be the same ones: a read missing on
// either side, or one whose syscall or first argument differ, is an error (nothing is skipped).
void require_same_syscalls(const std::string& path, const Recorded& rec, const perf::Stats& st) {
  std::vector<std::string> problems;
  std::map<std::array<std::uint64_t, 3>, const perf::Stats::SyscallSeen*> seen;
  for (const auto& s : st.cputime_syscalls) seen[{s.tid, s.nr, s.seq}] = &s;
  for (std::size_t i = 0; i < rec.reads.size(); ++i) {
    const auto& r = rec.reads[i];
    auto it = seen.find({r.spec.tid, r.spec.nr, r.spec.seq});
    if (it == seen.end()) {
      problems.push_back(fmt::format("recorded but not in the trace: tid {} {} (syscall {} #{})", r.spec.tid, r.call,
                                     r.spec.nr, r.spec.seq));
      continue;
    }
    const auto& s = *it->second;
    if (rec.arg0[i] && std::uint32_t(*rec.arg0[i]) != std::uint32_t(s.arg0))
      problems.push_back(fmt::format("tid {} {} #{}: the trace's first argument is {:#x} (perf line {})", r.spec.tid,
                                     r.call, r.spec.seq, s.arg0, s.line));
  }
  std::set<std::array<std::uint64_t, 3>> recorded;
  for (const auto& r : rec.reads) recorded.insert({r.spec.tid, r.spec.nr, r.spec.seq});
  for (const auto& s : st.cputime_syscalls)
    if (!recorded.count({s.tid, s.nr, s.seq}))
      problems.push_back(fmt::format("in the trace but not recorded: tid {} syscall {}({:#x}) #{} (perf line {})",
                                     s.tid, s.nr, s.arg0, s.seq, s.line));
  if (problems.empty()) return;
  const auto shown = std::min<std::size_t>(problems.size(), 10);
  throw Failure(fmt::format("'{}' and the trace's CPU-time reads differ ({}): {}{}", path, problems.size(),
                            fmt::join(problems.begin(), problems.begin() + long(shown), "; "),
                            shown < problems.size() ? "; ..." : ""));
}

// --read-sites FILE, else read-sites.txt beside TRACE (irq-reads-reduce.py copies
// read-sites.py's there), unless --no-read-sites.
void load_read_sites(perf::Options& o, const std::string& given, bool none, const std::string& trace_path) {
  if (none) return;
  std::string p = given;
  if (p.empty()) {
    if (trace_path == "-") return;
    const auto beside = std::filesystem::path(trace_path).parent_path() / "read-sites.txt";
    if (!std::filesystem::exists(beside)) return;
    p = beside.string();
  }
  auto r = perf::parse_read_sites(read_file(p));
  if (!r) {
    fmt::print(stderr, "{}:{}:{}: {}\n", p, r.error().line, r.error().column, r.error().message);
    throw Exit{kExitUsage};
  }
  o.read_sites = std::move(r.value());
}

// perf-replay --recorded: every read the recorder found, predicted and compared.
void replay_recorded(const std::string& path, const std::string& recorded_path, const std::string& cpu_model,
                     std::uint32_t ncpus, const arch::CpuFacts& facts, const arch::Config& cfg, std::uint64_t pid_opt,
                     std::uint64_t max_unverifiable, bool as_json, const std::string& save, const std::string& sites,
                     bool no_sites) {
  const auto rec = load_recorded(recorded_path);
  perf::Options o;
  load_read_sites(o, sites, no_sites, path);
  o.cpu_model = cpu_model;
  o.ncpus = ncpus;
  // The reads are found by their syscall numbers, which differ per ISA.
  const auto nrs = arch::syscall_numbers(facts.isa);
  if (!nrs)
    throw Failure(
        fmt::format("--cpu {}: kacct has no syscall numbers for this ISA (arch/syscalls.hpp "
                    "syscall_numbers()): its recorded reads cannot be found",
                    facts.name));
  o.syscalls = *nrs;
  o.read_tids = rec.tids;
  for (const auto& r : rec.reads) o.syscall_reads.push_back(r.spec);
  const std::uint64_t pid = pid_opt ? pid_opt : rec.root;
  const std::string shown = path == "-" ? "<stdin>" : path;
  PerfInput in(path);
  auto pr = predict_input(in, o, false, facts, cfg, pid, {}, !save.empty());
  if (!pr) {
    const auto& e = pr.error();
    fmt::print(stderr, "{}:{}:{}: {}\n", shown, e.line, e.column, e.message);
    throw Exit{kExitUsage};
  }
  const auto& P = pr.value();
  if (P.threads.empty()) throw Failure(fmt::format("pid {}: no task of that process in '{}'", pid, shown));
  require_same_syscalls(recorded_path, rec, P.conversion.stats);
  if (!save.empty()) {
    std::ofstream f(save, std::ios::binary);
    if (!(f << trace::write(P.conversion.trace))) throw Failure(fmt::format("cannot write '{}'", save));
  }
  // A read found in the trace but not placed (a read of another process, or a repair at its
  // exit) is not predicted: unverifiable, with the reason. RUSAGE_CHILDREN is never placed (it
  // changes nothing): its sys_exit locates it (Prediction::children).
  auto reads = rec.reads;
  for (auto& r : reads)
    for (const auto& s : P.conversion.stats.cputime_syscalls)
      if (s.tid == r.spec.tid && s.nr == r.spec.nr && s.seq == r.spec.seq && !s.id && r.modeled && r.spec.place) {
        r.modeled = false;
        r.why = s.why;
      }
  auto cmp = sim::compare(P, reads);
  // Gen vtime probes: where the cputime_adjust() probe fired in the read, the kernel's own
  // inputs must match too, as for marked reads (sim::compare of KernelRead).
  const auto& st = P.conversion.stats;
  for (std::size_t i = 0; i < cmp.size(); ++i) {
    auto& c = cmp[i];
    const auto rc = std::find_if(st.read_clocks.begin(), st.read_clocks.end(),
                                 [&](const auto& x) { return x.marker == reads[i].spec.id; });
    if (rc == st.read_clocks.end()) continue;
    c.how = rc->how;
    const auto p = std::find_if(P.reads.begin(), P.reads.end(), [&](const auto& x) { return x.marker == c.marker; });
    if (c.agreement == sim::Agreement::Unverifiable || !rc->raw || p == P.reads.end()) continue;
    std::vector<std::string> bad;
    if (rc->cr != p->rtime_ns) bad.push_back(fmt::format("rtime in: kernel {} kacct {}", rc->cr, p->rtime_ns));
    if (rc->how == "inferred" && rc->cu != rc->model_utime_in)
      bad.push_back(fmt::format("utime in: kernel {} probes {}", rc->cu, rc->model_utime_in));
    if (bad.empty()) continue;
    c.agreement = sim::Agreement::Off;
    c.detail += fmt::format("{}{}", c.detail.empty() ? "" : "; ", fmt::join(bad, "; "));
  }
  // Probes say the kernel ran gen vtime: another config is compared, flagged, and exits 3.
  const bool probes_contradict = st.vtime.active && cfg.acct != arch::Accounting::Gen;
  const std::string contradiction =
      probes_contradict ? fmt::format(
                              "the trace has gen vtime probes (cpus {}) but the config {} is {} accounting; "
                              "give --config VERSION-gen-hzN (meta.json's \"config\")",
                              fmt::join(st.vtime.cpus, ","), cfg.name(), accounting_name(cfg.acct))
                        : "";
  if (probes_contradict) fmt::print(stderr, "kacct: WARNING: {}; comparing anyway, exit 3\n", contradiction);
  std::array<std::uint64_t, 4> count{};
  json j;
  j["pid"] = pid;
  j["cpu"] = facts.name;
  j["config"] = cfg.name();
  j["comparison"] = json::array();
  for (std::size_t i = 0; i < cmp.size(); ++i) {
    const auto& c = cmp[i];
    const auto& r = reads[i];
    ++count[std::size_t(c.agreement)];
    json x = {{"tid", r.spec.tid},           {"call", r.call},
              {"seq", r.spec.seq},           {"read", r.read},
              {"kind", trace::name(c.kind)}, {"agreement", sim::name(c.agreement)},
              {"detail", c.detail}};
    if (!c.how.empty()) x["clock"] = c.how;
    for (const auto& p : P.reads)
      if (p.marker == r.spec.id) x["ts_ns"] = p.ts_ns, x["rtime_ns"] = p.rtime_ns;
    j["comparison"].push_back(x);
  }
  json summary;
  for (auto a :
       {sim::Agreement::Exact, sim::Agreement::WithinBounds, sim::Agreement::Off, sim::Agreement::Unverifiable})
    summary[std::string(sim::name(a))] = count[std::size_t(a)];
  summary["max_unverifiable"] = max_unverifiable;
  j["summary"] = summary;
  j["conversion"] = stats_json(P.conversion.stats);
  const auto unverifiable = count[std::size_t(sim::Agreement::Unverifiable)];
  if (as_json) {
    print_json(j);
  } else {
    Table t({"call", "read", "agreement", "detail"}, {false, false, false, false});
    for (const auto& x : j["comparison"])
      t.row({fmt::format("tid {}: {} #{}", x["tid"].get<std::uint64_t>(), x["call"].get<std::string>(),
                         x["seq"].get<std::uint64_t>()),
             x["read"].get<std::string>(), x["agreement"].get<std::string>(), x["detail"].get<std::string>()});
    fmt::print("pid {} on {} ({}): {} reads found by the recorder\n{}", pid, facts.name, cfg.name(), cmp.size(),
               t.str());
    if (P.conversion.stats.lost_events) fmt::print("perf lost {} events\n", P.conversion.stats.lost_events);
    fmt::print("{} reads compared: {} exact, {} within bounds, {} off, {} unverifiable\n", cmp.size(), count[0],
               count[1], count[2], count[3]);
  }
  std::fflush(stdout);
  if (unverifiable > max_unverifiable)
    fmt::print(stderr, "kacct: {} unverifiable reads, more than --max-unverifiable {}\n", unverifiable,
               max_unverifiable);
  if (probes_contradict) {
    fmt::print(stderr, "kacct: WARNING: {}\n", contradiction);
    throw Exit{kExitUsage};
  }
  if (count[std::size_t(sim::Agreement::Off)] || unverifiable > max_unverifiable) throw Exit{kExitViolation};
  if (unverifiable == cmp.size())  // allowed, but then nothing was checked
    throw Failure(fmt::format("nothing compared: all {} reads are unverifiable", cmp.size()));
}

// MB/s of perf text parsed, on a terminal's stderr (Progress); cleared when parsing ends.
void show_ingestion(perf::Options& o, Progress& progress) {
  if (!progress.on()) return;
  const auto t0 = std::chrono::steady_clock::now();
  o.progress = [&progress, t0](std::size_t done, std::size_t total) {
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = dt > 0 ? double(done) / dt / 1e6 : 0.0;
    // A pipe's size is not known before its end.
    progress.show(total ? fmt::format("perf: {} of {} MB parsed, {:.0f} MB/s", done >> 20, total >> 20, rate)
                        : fmt::format("perf: {} MB parsed, {:.0f} MB/s", done >> 20, rate));
  };
}

void add_common(CLI::App* c, std::string& cpu, std::uint32_t& ncpus, bool& quiet) {
  c->add_flag("-q,--quiet", quiet, "no progress on stderr (shown only when stderr is a terminal)");
  c->add_option("--cpu", cpu, "CPU model from the arch table (default x86-64)");
  c->add_option("--ncpus", ncpus,
                "number of CPUs, 1..4096 (default: highest CPU seen + 1); a sample beyond is an error")
      ->check(CLI::Range(1u, 4096u));
}

}  // namespace

void add_perf(CLI::App& app) {
  {
    auto* c = app.add_subcommand("perf-convert", "convert `perf script` output into a kacct trace");
    auto path = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto cpu = std::make_shared<std::string>("x86-64");
    auto ncpus = std::make_shared<std::uint32_t>(0);
    auto stats = std::make_shared<bool>(false);
    c->add_option("INPUT", *path, "perf script text or trace-cmd's trace.dat, plain or .xz, or - for stdin")
        ->required();
    c->add_option("-o,--output", *out, "write the trace here (default stdout)");
    c->add_flag("--stats", *stats, "print the conversion statistics (JSON) to stderr");
    auto quiet = std::make_shared<bool>(false);
    add_common(c, *cpu, *ncpus, *quiet);
    c->callback([=] {
      const auto cpu_facts = resolve_cpu(*cpu);
      perf::Options o;
      o.cpu_model = *cpu;
      o.ncpus = *ncpus;
      if (const auto nrs = arch::syscall_numbers(cpu_facts.isa)) o.syscalls = *nrs;  // the reaps' wait4/waitid
      Progress progress(*quiet);
      show_ingestion(o, progress);
      // The trace is written as it is converted, in 1 MB pieces; the output file is opened only
      // once the input is known to be good.
      std::FILE* f = nullptr;
      std::string buf;
      auto flush = [&] {
        if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f) != buf.size())
          throw Failure(fmt::format("cannot write '{}'", out->empty() ? "<stdout>" : *out));
        buf.clear();
      };
      const auto conv = convert_stream_or_exit(
          *path, o,
          [&](const trace::Header& h) {
            progress.clear();
            f = out->empty() ? stdout : std::fopen(out->c_str(), "wb");
            if (!f) throw Failure(fmt::format("cannot write '{}'", *out));
            trace::append_header(buf, h);
          },
          [&](const trace::Event& e) {
            trace::append_event(buf, e);
            if (buf.size() >= (1u << 20)) flush();
          });
      progress.clear();
      flush();
      if (f && f != stdout && std::fclose(f) != 0) throw Failure(fmt::format("cannot write '{}'", *out));
      if (*stats) fmt::print(stderr, "{}\n", stats_json(conv.stats).dump(2));
    });
  }
  {
    auto* c = app.add_subcommand("perf-replay", "predict what the kernel reported at a workload's marked reads");
    auto path = std::make_shared<std::string>();
    auto cpu = std::make_shared<std::string>("x86-64");
    auto config = std::make_shared<std::string>();
    auto nohz_full = std::make_shared<std::string>();
    auto machine = std::make_shared<std::string>("/");
    auto ncpus = std::make_shared<std::uint32_t>(0);
    auto pid = std::make_shared<std::uint64_t>(0);
    auto reads = std::make_shared<std::vector<std::string>>();
    auto as_json = std::make_shared<bool>(false);
    auto save = std::make_shared<std::string>();
    auto values = std::make_shared<std::string>();
    auto max_unverifiable = std::make_shared<std::uint64_t>(0);
    c->add_option("TRACE", *path, "perf script text or trace-cmd's trace.dat, plain or .xz, or - for stdin")
        ->required();
    c->add_option("--values", *values,
                  "kacct-workload's output (what the kernel returned): compare; exit 1 if a read is off");
    c->add_option("--pid", *pid, "the workload's process id (with --recorded: default the recorded root)");
    auto recorded = std::make_shared<std::string>();
    c->add_option("--recorded", *recorded,
                  "tools/record-reads/ output: every CPU-time read the unmodified program made; predict and "
                  "compare them all (instead of --read/--values)");
    c->add_option("--read", *reads, "KIND[:TID]@K: the read that follows marker syscall 100000+K");
    c->add_option("--max-unverifiable", *max_unverifiable,
                  "with --values: exit 1 if more reads than this cannot be verified (default 0)");
    c->add_option("--config", *config,
                  "kernel configuration (default: `kacct identify`'s if this machine runs the kernel named in "
                  "meta.json beside TRACE, else 6.12-tick-steal-hz250)");
    c->add_option("--nohz-full", *nohz_full,
                  "gen configs without vtime probes: the nohz_full= CPU list (default: identify's, else none)");
    c->add_option("--machine-root", *machine, "where identify reads this machine's /proc and /boot (default /)");
    c->add_option("--save-trace", *save, "also write the converted kacct trace here");
    auto sites = std::make_shared<std::string>();
    auto no_sites = std::make_shared<bool>(false);
    auto* so = c->add_option("--read-sites", *sites,
                             "tools/record-qemu/read-sites.py's file for the recorded kernel: a read with no runtime "
                             "update of its own goes before a tick that came after it sampled (default: "
                             "read-sites.txt beside TRACE, if there)");
    c->add_flag("--no-read-sites", *no_sites, "ignore read-sites.txt beside TRACE")->excludes(so);
    c->add_flag("--json", *as_json, "JSON output");
    auto quiet = std::make_shared<bool>(false);
    add_common(c, *cpu, *ncpus, *quiet);
    c->callback([=] {
      const auto known = default_config(*config, *path, *machine);
      const auto cpu_name = c->count("--cpu") || known.cpu.empty() ? *cpu : known.cpu;
      const auto facts = resolve_cpu(cpu_name);
      const auto cfg = resolve_config(known.config);
      require_legal(facts, cfg);
      if (!recorded->empty()) {
        if (!reads->empty() || !values->empty()) throw Failure("--recorded replaces --read and --values");
        return replay_recorded(*path, *recorded, cpu_name, *ncpus, facts, cfg, *pid, *max_unverifiable, *as_json, *save,
                               *sites, *no_sites);
      }
      if (!*pid) throw Failure("--pid is required (or --recorded FILE)");
      perf::Options o;
      load_read_sites(o, *sites, *no_sites, *path);
      o.cpu_model = cpu_name;
      o.ncpus = *ncpus;
      if (const auto nrs = arch::syscall_numbers(facts.isa)) o.syscalls = *nrs;  // the reaps' wait4/waitid
      for (const auto& r : *reads) {
        std::string err;
        auto spec = perf::parse_read_spec(r, &err);
        if (!spec) throw Failure(fmt::format("--read '{}': {}", r, err));
        o.reads.push_back(*spec);
      }
      Progress progress(*quiet);
      show_ingestion(o, progress);
      PerfInput in(*path);
      // --nohz-full wins; the identified set stands in only where no vtime probe fired.
      std::optional<std::uint64_t> nohz;
      if (!nohz_full->empty()) nohz = parse_cpu_mask(*nohz_full, 64, "--nohz-full");
      const auto tweak = [&](sim::ModelCfg& m) {
        if (nohz)
          m.gen.nohz_full = *nohz;
        else if (known.nohz_full && m.gen.nohz_full == 0)
          m.gen.nohz_full = *known.nohz_full;
      };
      auto pr = predict_input(in, o, false, facts, cfg, *pid, tweak, !save->empty());
      progress.clear();
      if (!pr) {
        const auto& e = pr.error();
        fmt::print(stderr, "{}:{}:{}: {}\n", *path == "-" ? "<stdin>" : *path, e.line, e.column, e.message);
        throw Exit{kExitUsage};
      }
      const auto& P = pr.value();
      const auto& conv = P.conversion;
      // Gen vtime probes in the trace say the kernel ran gen accounting there: any other config
      // would be compared silently against the wrong model.
      const bool probes_contradict = conv.stats.vtime.active && cfg.acct != arch::Accounting::Gen;
      const std::string contradiction =
          probes_contradict ? fmt::format(
                                  "the trace has gen vtime probes (cpus {}) but the config {} is {} accounting{}; "
                                  "give --config VERSION-gen-hzN (meta.json's \"config\")",
                                  fmt::join(conv.stats.vtime.cpus, ","), cfg.name(), accounting_name(cfg.acct),
                                  config->empty() ? " (no --config given)" : "")
                            : "";
      if (probes_contradict && values->empty()) throw Failure("perf-replay refuses: " + contradiction);
      if (probes_contradict) fmt::print(stderr, "kacct: WARNING: {}; comparing anyway, exit 3\n", contradiction);
      if (P.threads.empty())
        throw Failure(fmt::format("--pid {}: no task of that process in '{}'", *pid, *path == "-" ? "<stdin>" : *path));
      require_reads(*reads, o, P, *pid);
      std::vector<sim::KernelRead> kernel;
      if (!values->empty()) {
        kernel = load_values(*values);
        require_same_reads(*values, P, kernel);
      } else if (reads->empty() && !P.checkpoints.total) {
        throw Failure("nothing to predict or compare: give --read KIND@K (and --values FILE to compare)");
      }
      if (!save->empty()) {
        std::ofstream f(*save, std::ios::binary);
        if (!(f << trace::write(conv.trace))) throw Failure(fmt::format("cannot write '{}'", *save));
      }
      json j;
      j["pid"] = *pid;
      j["cpu"] = facts.name;
      j["config"] = cfg.name();
      j["reads"] = json::array();
      for (const auto& r : P.reads) {
        json x;
        x["marker"] = r.marker;
        x["kind"] = trace::name(r.kind);
        x["tid"] = r.tid;
        x["ts_ns"] = r.ts_ns;
        x["unit"] = r.unit;
        if (r.kind == trace::ReadKind::ThreadCputime || r.kind == trace::ReadKind::ProcessCputime) {
          x["value"] = r.value;
        } else {
          x["utime"] = r.utime;
          x["stime"] = r.stime;
          x["utime_ns"] = r.utime_ns;
          x["stime_ns"] = r.stime_ns;
        }
        x["rtime_ns"] = r.rtime_ns;
        x["lost_events_before"] = r.lost_events_before;
        if (r.steal_unknown_before) x["steal_unknown_before"] = r.steal_unknown_before;
        j["reads"].push_back(x);
      }
      json by_tid = json::object();
      for (const auto& [tid, t] : P.ticks_by_tid) by_tid[std::to_string(tid)] = {{"user", t[0]}, {"kernel", t[1]}};
      const auto tu = P.ticks_user, tk = P.ticks_kernel;
      j["ticks"] = {{"user", tu}, {"kernel", tk}, {"by_tid", by_tid}};
      j["conversion"] = stats_json(conv.stats);
      bool off = false;
      if (P.checkpoints.total) {
        j["checkpoints"] = {
            {"total", P.checkpoints.total}, {"exact", P.checkpoints.exact}, {"diffs", P.checkpoints.diffs}};
        off = off || P.checkpoints.exact != P.checkpoints.total;
      }
      std::array<std::uint64_t, 4> count{};  // by sim::Agreement
      if (!values->empty()) {
        j["comparison"] = json::array();
        auto comparison = sim::compare(P, kernel);
        if (conv.stats.vtime.active)
          exit_clock_bounds(
              comparison, kernel, P,
              [&](const perf::Options& oo) { return predict_input(in, oo, true, facts, cfg, *pid, tweak); }, o);
        for (const auto& r : comparison) {
          j["comparison"].push_back({{"marker", r.marker},
                                     {"kind", trace::name(r.kind)},
                                     {"agreement", sim::name(r.agreement)},
                                     {"how", r.how},
                                     {"detail", r.detail}});
          ++count[std::size_t(r.agreement)];
          off = off || r.agreement == sim::Agreement::Off;
        }
        json summary;
        for (auto a :
             {sim::Agreement::Exact, sim::Agreement::WithinBounds, sim::Agreement::Off, sim::Agreement::Unverifiable})
          summary[std::string(sim::name(a))] = count[std::size_t(a)];
        summary["max_unverifiable"] = *max_unverifiable;
        j["summary"] = summary;
      }
      const auto unverifiable = count[std::size_t(sim::Agreement::Unverifiable)];
      // Printed after the output, so a failure's reason is the last line.
      auto finish = [&] {
        std::fflush(stdout);
        if (values->empty())
          fmt::print(stderr, "kacct: 0 reads compared (no --values): {} predicted\n",
                     std::count_if(P.reads.begin(), P.reads.end(),
                                   [](const auto& r) { return !(r.marker & perf::kUpperReadBit); }));
        if (unverifiable > *max_unverifiable)
          fmt::print(stderr, "kacct: {} unverifiable reads, more than --max-unverifiable {}\n", unverifiable,
                     *max_unverifiable);
        if (probes_contradict) {
          fmt::print(stderr, "kacct: WARNING: {}\n", contradiction);
          throw Exit{kExitUsage};
        }
        if (off || unverifiable > *max_unverifiable) throw Exit{kExitViolation};
        if (!values->empty() && unverifiable == kernel.size())  // allowed, but then nothing was checked
          throw Failure(fmt::format("nothing compared: all {} reads are unverifiable", kernel.size()));
      };
      if (*as_json) {
        print_json(j);
        finish();
        return;
      }
      fmt::print("pid {} on {} ({}): {} user ticks, {} kernel ticks\n", *pid, facts.name, cfg.name(), tu, tk);
      Table t({"marker", "kind", "tid", "ts_ns", "utime", "stime", "unit", "rtime_ns"},
              {true, false, true, true, true, true, false, true});
      for (const auto& x : j["reads"])
        t.row({x["marker"].dump(), x["kind"].get<std::string>(), x["tid"].dump(), x["ts_ns"].dump(),
               x.contains("utime") ? x["utime"].dump() : x["value"].dump(),
               x.contains("stime") ? x["stime"].dump() : "-", x["unit"].get<std::string>(), x["rtime_ns"].dump()});
      fmt::print("{}", t.str());
      if (conv.stats.lost_events)
        fmt::print("perf lost {} events: predictions after the first loss may differ from the kernel\n",
                   conv.stats.lost_events);
      if (const auto& ts = conv.stats.tick_steal; ts.records)
        fmt::print(
            "tick steal: {} ns over {} of {} ticks (largest {} ns); {} ticks without a record, {} ns did not fit\n",
            ts.ns, ts.ticks_steal, ts.ticks + ts.ticks_without, ts.max_ns, ts.ticks_without, ts.unplaced_ns);
      if (!conv.stats.repairs.empty()) {
        fmt::print("repairs (events perf did not record, inferred):\n");
        for (const auto& [k, v] : conv.stats.repairs) fmt::print("  {:>8}  {}\n", v, k);
      }
      if (conv.stats.vtime.active) {
        const auto& v = conv.stats.vtime;
        fmt::print(
            "gen vtime probes on cpus {}: {} transitions ({} at the kernel's clock), {} switches ({} with both "
            "clocks); checkpoints {}/{} exact\n",
            fmt::join(v.cpus, ","), v.transitions, v.transitions_exact, v.switches, v.switches_exact,
            P.checkpoints.exact, P.checkpoints.total);
        for (const auto& d : P.checkpoints.diffs) fmt::print("  checkpoint off: {}\n", d);
      }
      if (j.contains("comparison")) {
        Table cmp({"marker", "kind", "agreement", "clock", "detail"}, {true, false, false, false, false});
        for (const auto& x : j["comparison"])
          cmp.row({x["marker"].dump(), x["kind"].get<std::string>(), x["agreement"].get<std::string>(),
                   x["how"].get<std::string>(), x["detail"].get<std::string>()});
        fmt::print("against the kernel's values:\n{}", cmp.str());
        fmt::print("{} reads compared: {} exact, {} within bounds, {} off, {} unverifiable\n", j["comparison"].size(),
                   count[0], count[1], count[2], count[3]);
      }
      finish();
    });
  }
}

}  // namespace kacct::cli
