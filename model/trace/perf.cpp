#include "model/trace/perf.hpp"
#include "model/trace/tokens.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_map>

#include "model/trace/perf_convert.hpp"
#include "model/trace/perf_fields.hpp"

namespace kacct::trace::perf {
namespace detail {
[[noreturn]] void fail(std::uint32_t line, std::size_t col, std::string msg) {
  throw Fail{Error{line, std::uint32_t(col), text::cut(std::move(msg), 400), "perf"}};
}
}  // namespace detail

namespace {

using detail::all_hex;
using detail::fail;
using detail::Fail;
using detail::field;
using detail::is_space;
using detail::num_field;
using detail::to_u64;
using detail::trim;

// "  comm 123/456 [001] 12059.417560968: sched:sched_switch: fields..." into r (every member
// set; its strings' storage reused).
void parse_header(std::string_view s, std::uint32_t line, Record& r) {
  r.line = line;
  r.chain.clear();
  r.irq_ip = 0;
  r.irq_frame = 0;
  r.fields_col = 0;
  // The CPU field: the first " [digits]" (comm itself may contain spaces and brackets, but not
  // followed by its pid and a CPU number).
  // (Searched by its '[': comm is right-aligned in blanks, so a search for the blank is slow.)
  std::size_t lb = std::string_view::npos;
  for (std::size_t b = s.find('['); b != std::string_view::npos; b = s.find('[', b + 1)) {
    if (b == 0 || s[b - 1] != ' ') continue;
    const std::size_t i = b - 1;
    std::size_t j = i + 2;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i + 2 && j < s.size() && s[j] == ']') {
      lb = i;
      break;
    }
  }
  if (lb == std::string_view::npos)
    fail(line, 1, "expected a perf script sample: 'comm tid [cpu] time: event: fields'");
  const std::string_view left = trim(s.substr(0, lb));
  std::size_t sp = left.size();  // left.find_last_of(" \t") without a memchr call per byte
  while (sp > 0 && !is_space(left[sp - 1])) --sp;
  sp = sp ? sp - 1 : std::string_view::npos;
  if (sp == std::string_view::npos) fail(line, 1, "expected 'comm tid' or 'comm pid/tid' before the [cpu] field");
  r.comm.assign(trim(left.substr(0, sp)));
  const std::string_view ids = left.substr(sp + 1);
  const std::size_t ids_col = std::size_t(ids.data() - s.data()) + 1;
  // perf prints -1 for a thread it no longer knows (e.g. the final switch of an exited thread).
  auto id = [](std::string_view v) -> std::optional<std::optional<std::uint64_t>> {
    if (v == "-1") return std::optional<std::uint64_t>{};
    if (auto n = to_u64(v)) return std::optional<std::uint64_t>{*n};
    return std::nullopt;
  };
  const std::size_t slash = ids.find('/');
  // No slash (perf's default fields): no thread-group id, an engaged "unknown".
  auto p = slash == std::string_view::npos ? std::optional<std::optional<std::uint64_t>>{std::in_place}
                                           : id(ids.substr(0, slash));
  auto t = id(slash == std::string_view::npos ? ids : ids.substr(slash + 1));
  if (!p || !t) fail(line, ids_col, fmt::format("expected 'tid' or 'pid/tid' numbers, got '{}'", ids));
  r.pid = *p;
  r.ids_col = std::uint32_t(ids_col);
  r.tid_known = t->has_value();
  r.tid = t->value_or(0);
  const std::size_t rb = s.find(']', lb);
  r.cpu_col = std::uint32_t(lb + 3);
  const auto cpu = to_u64(s.substr(lb + 2, rb - lb - 2));
  // CONFIG_NR_CPUS is at most 4096 on the architectures kacct models (and the trace's limit).
  if (!cpu || *cpu >= 4096)
    fail(line, r.cpu_col, fmt::format("CPU number {} out of range; expected 0..4095", s.substr(lb + 2, rb - lb - 2)));
  r.cpu = std::uint32_t(*cpu);
  std::string_view rest = s.substr(rb + 1);
  rest.remove_prefix(detail::scan<false>(rest, 0));
  // time "sec.frac:" (frac: 6 digits by default, 9 with --ns)
  const std::size_t tcol = std::size_t(rest.data() - s.data()) + 1;
  r.ts_col = std::uint32_t(tcol);
  const std::size_t colon = rest.find(':');
  const std::size_t dot = rest.find('.');
  if (colon == std::string_view::npos || dot == std::string_view::npos || dot > colon)
    fail(line, tcol, "expected a timestamp 'seconds.fraction:'");
  auto sec = to_u64(rest.substr(0, dot));
  const std::string_view frac = rest.substr(dot + 1, colon - dot - 1);
  auto f = to_u64(frac);
  if (!sec || !f || frac.size() > 9 || *sec > 18'000'000'000ull)
    fail(line, tcol, fmt::format("bad timestamp '{}'", rest.substr(0, colon)));
  std::uint64_t scale = 1;
  for (std::size_t k = frac.size(); k < 9; ++k) scale *= 10;
  r.ts = *sec * 1'000'000'000ull + *f * scale;
  rest = rest.substr(colon + 1);
  rest.remove_prefix(detail::scan<false>(rest, 0));
  if (rest.rfind("PERF_RECORD_", 0) == 0) {  // --show-lost-events: "PERF_RECORD_LOST lost 6481"
    const std::size_t sp = detail::find_blank(rest);
    r.event.assign(rest.substr(0, sp));
    if (sp == std::string_view::npos)
      r.fields.clear();
    else
      r.fields.assign(trim(rest.substr(sp)));
    return;
  }
  // The event name ends at the first ':' followed by a blank or the end of the line.
  std::size_t e = 0;
  for (;; ++e) {  // the first blank, or ':' before a blank or the end
    e = detail::scan<true, true>(rest, e);
    if (e == rest.size() || rest[e] != ':' || e + 1 == rest.size() || is_space(rest[e + 1])) break;
  }
  if (e == 0 || e >= rest.size() || rest[e] != ':')
    fail(line, std::size_t(rest.data() - s.data()) + 1, "expected an event name 'system:event:'");
  r.event.assign(rest.substr(0, e));
  const std::string_view fields = trim(rest.substr(e + 1));
  r.fields.assign(fields);
  r.fields_col = std::uint32_t(fields.data() - s.data()) + 1;
}

// A decimal number below 2^63: the kernel prints these fields from s64/long values.
bool fits_s64(std::string_view v) {
  const auto n = to_u64(v);
  return n && *n <= std::uint64_t(INT64_MAX);
}

// Values no kernel prints are input errors, not repairs (the converter's repairs are for
// events perf did not record, not for corrupted ones).
void check_values(const Record& r, std::unordered_map<std::uint32_t, std::uint64_t>& last_ts) {
  // perf script sorts samples by time; across CPUs a small reordering is tolerated (the
  // converter keeps its trace monotonic), but one CPU's ring buffer is in time order.
  if (auto [it, fresh] = last_ts.try_emplace(r.cpu, r.ts); !fresh) {
    if (r.ts < it->second)
      fail(r.line, r.ts_col,
           fmt::format("timestamp goes backwards on cpu {}: {} ns before the previous sample", r.cpu,
                       it->second - r.ts));
    it->second = r.ts;
  }
  auto col = [&](std::string_view v) { return r.fields_col + std::size_t(v.data() - r.fields.data()); };
  if (std::string_view(r.event) == "sched:sched_stat_runtime") {
    if (auto v = field(r.fields, "runtime"); v && !fits_s64(*v))
      fail(r.line, col(*v), fmt::format("bad runtime={}: expected a decimal number of ns below 2^63", *v));
  } else if (std::string_view(r.event) == "raw_syscalls:sys_enter" ||
             std::string_view(r.event) == "raw_syscalls:sys_exit") {
    std::optional<std::string_view> v = field(r.fields, "NR");
    if (!v && r.fields.rfind("NR ", 0) == 0) {
      const std::string_view rest = std::string_view(r.fields).substr(3);
      v = rest.substr(0, rest.find_first_of(" (="));
    }
    if (!v) return;
    const std::string_view digits = !v->empty() && v->front() == '-' ? v->substr(1) : *v;
    // NR is a long; -1 is what the kernel prints for a syscall a tracer or seccomp cancelled.
    if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
        !fits_s64(digits))
      fail(r.line, col(*v), fmt::format("syscall number {} overflows a long", *v));
  }
}

std::string sanitize_comm(std::string_view c) {
  std::string out;
  for (char ch : c) {
    if (out.size() == 15) break;
    out.push_back(ch > ' ' && ch <= '~' && ch != '#' ? ch : '_');
  }
  return out.empty() ? std::string("_") : out;
}

}  // namespace

Result<std::map<std::string, std::vector<std::array<std::uint64_t, 2>>, std::less<>>> parse_read_sites(
    std::string_view text) {
  std::map<std::string, std::vector<std::array<std::uint64_t, 2>>, std::less<>> sites;
  std::uint32_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    std::string_view s = text.substr(at, nl - at);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    at = nl + 1;
    ++line;
    const auto col = [&](std::string_view part) { return std::uint32_t(part.data() - s.data() + 1); };
    const auto err = [&](std::string_view part, std::string msg) {
      return Error{line, part.empty() ? std::uint32_t(s.size() + 1) : col(part), std::move(msg), {}};
    };
    std::vector<std::string_view> words;
    for (std::size_t k = 0; k < s.size();) {
      if (is_space(s[k])) {
        ++k;
        continue;
      }
      std::size_t e = k;
      while (e < s.size() && !is_space(s[e])) ++e;
      words.push_back(s.substr(k, e - k));
      k = e;
    }
    if (words.empty() || words[0].front() == '#') continue;
    for (char ch : s)
      if (static_cast<unsigned char>(ch) < 0x20 && !is_space(ch))
        return err(s, fmt::format("unexpected control byte 0x{:02x}", static_cast<unsigned char>(ch)));
    if (words.size() < 3) return err({}, "expected FUNCTION SAMPLER[,SAMPLER...] LO-HI [LO-HI...]");
    auto& ranges = sites[std::string(words[0])];
    for (std::size_t w = 2; w < words.size(); ++w) {
      const auto d = words[w].find('-');
      const auto lo = d == std::string_view::npos ? std::nullopt : to_u64(words[w].substr(0, d), 16);
      const auto hi = d == std::string_view::npos ? std::nullopt : to_u64(words[w].substr(d + 1), 16);
      if (!lo || !hi || d == 0 || d + 1 == words[w].size())
        return err(words[w], "expected LO-HI: two hex addresses below 2^64");
      if (*lo >= *hi) return err(words[w], "empty range: LO must be below HI");
      ranges.push_back({*lo, *hi});
    }
  }
  if (sites.empty()) return Error{line, 1, "no read sites (FUNCTION SAMPLER LO-HI lines)", {}};
  return sites;
}

bool is_cputime_syscall(std::uint64_t nr, std::uint64_t arg0, const arch::SyscallNumbers& s) {
  if (nr == s.getrusage || nr == s.times) return true;
  if (nr != s.clock_gettime) return false;
  const auto clk = std::int32_t(std::uint32_t(arg0));  // clockid_t is an int
  // CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID; negative: a CPU clock made from a pid
  // (low bits 0-2: PROF, VIRT, SCHED, +4 per thread), or 3: a dynamic (fd) clock.
  return clk == 2 || clk == 3 || (clk < 0 && (clk & 7) != 3 && (clk & 7) != 7);
}

std::optional<ReadSpec> parse_read_spec(std::string_view s, std::string* error) {
  auto bad = [&](std::string m) {
    if (error) *error = std::move(m);
    return std::nullopt;
  };
  const auto at = s.rfind('@');
  if (at == std::string_view::npos) return bad("expected KIND[:TID]@MARKER, e.g. proc_stat@1");
  auto marker = to_u64(s.substr(at + 1));
  if (!marker) return bad(fmt::format("bad marker number '{}'", s.substr(at + 1)));
  std::string_view kind = s.substr(0, at);
  ReadSpec r;
  r.marker = *marker;
  if (auto c = kind.find(':'); c != std::string_view::npos) {
    auto t = to_u64(kind.substr(c + 1));
    if (!t || *t == 0) return bad(fmt::format("bad tid '{}'", kind.substr(c + 1)));
    r.tid = *t;
    kind = kind.substr(0, c);
  }
  static constexpr std::pair<std::string_view, ReadKind> kinds[] = {
      {"proc_stat", ReadKind::ProcStat},           {"task_stat", ReadKind::TaskStat},
      {"rusage_self", ReadKind::RusageSelf},       {"rusage_thread", ReadKind::RusageThread},
      {"thread_cputime", ReadKind::ThreadCputime}, {"process_cputime", ReadKind::ProcessCputime},
      {"taskstats", ReadKind::Taskstats}};
  for (auto [n, k] : kinds)
    if (n == kind) {
      r.kind = k;
      if (r.tid && k != ReadKind::TaskStat && k != ReadKind::ThreadCputime && k != ReadKind::Taskstats)
        return bad(fmt::format("{} reads the marking thread's own process or thread; no :TID", n));
      return r;
    }
  return bad(
      fmt::format("unknown read kind '{}' (proc_stat, task_stat[:TID], rusage_self, rusage_thread, "
                  "thread_cputime[:TID], process_cputime, taskstats[:TID])",
                  kind));
}

Result<std::vector<Record>> parse_script(std::string_view text,
                                         const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<Record> out;
  bool given = false;
  Source src{[&]() -> std::string_view {
               if (given) return {};
               given = true;
               return text;
             },
             [&] { given = false; }, text.size()};
  try {
    detail::ScriptReader rd(src);
    std::size_t next_report = std::size_t{8} << 20;
    for (Record r; rd.next(r);) {
      if (progress && rd.bytes() >= next_report) {
        progress(rd.bytes(), text.size());
        next_report = rd.bytes() + (std::size_t{8} << 20);
      }
      out.push_back(std::move(r));
      r = Record{};
    }
  } catch (const Fail& f) { return f.e; }
  return out;
}

namespace detail {

bool ScriptReader::line(std::string_view& s) {
  if (carry_used_) {
    carry_.clear();
    carry_used_ = false;
  }
  for (;;) {
    if (const std::size_t nl = piece_.find('\n'); nl != std::string_view::npos) {
      if (carry_.empty()) {
        s = piece_.substr(0, nl);
      } else {
        carry_.append(piece_.substr(0, nl));
        s = carry_;
        carry_used_ = true;
      }
      piece_.remove_prefix(nl + 1);
      ++newlines_;
      ++line_;
      return true;
    }
    carry_.append(piece_);
    piece_ = {};
    if (!end_) {
      piece_ = src_.next();
      bytes_ += piece_.size();
      end_ = piece_.empty();
    }
    if (end_) {
      if (carry_.empty()) return false;
      s = carry_;  // the last line, with no '\n'
      carry_used_ = true;
      ++line_;
      return true;
    }
  }
}

// True if some byte of s is below 0x20 or 0x7f..: only then is each byte looked at.
bool maybe_control(std::string_view s) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  std::size_t k = 0;
  // 16 bytes at a time (GCC's generic vectors: SSE2 on x86-64): a byte outside 0x20..0x7f is
  // one whose distance above 0x20 (mod 256) exceeds 0x5f
  using V = unsigned char __attribute__((vector_size(16)));
  V any{};
  for (; k + 16 <= s.size(); k += 16) {
    V x;
    std::memcpy(&x, s.data() + k, 16);
    any |= V((x - 0x20) > 0x5f);
  }
  std::uint64_t half[2];
  std::memcpy(half, &any, 16);
  if (half[0] | half[1]) return true;
  for (; k + 8 <= s.size(); k += 8) {
    std::uint64_t x;
    std::memcpy(&x, s.data() + k, 8);
    if (((x - 0x20 * ones) | x) & highs) return true;  // a byte < 0x20 or >= 0x80
  }
  for (; k < s.size(); ++k)
    if (static_cast<unsigned char>(s[k]) < 0x20) return true;
  return false;
}

bool ScriptReader::next(Record& r) {
  std::string_view s;
  while (line(s)) {
    if (maybe_control(s))
      for (std::size_t k = 0; k < s.size(); ++k) {
        const unsigned char ch = static_cast<unsigned char>(s[k]);
        if (ch == 0 || (ch < 0x20 && ch != '\t' && !(ch == '\r' && k + 1 == s.size())))
          fail(line_, k + 1, fmt::format("unexpected control byte 0x{:02x}", ch));
      }
    const std::string_view t = trim(s);
    if (t.empty()) continue;
    if (is_space(s.front()) && all_hex(t.substr(0, detail::find_blank(t)))) {
      // A callchain frame "  ffffffff813300d2 __sysvec_apic_timer_interrupt+0x52 ([kernel.kallsyms])"
      // belongs to the previous sample; a frame line with no sample before it is an error.
      if (!pending_) fail(line_, 1, "callchain frame before any sample");
      const std::size_t sp = detail::find_blank(t);
      // the interrupted frame's address (all hex, checked above; over 16 digits: 0, in no read site)
      if (!rec_.irq_ip && !rec_.chain.empty() && rec_.chain.back().starts_with("asm_")) {
        const std::string_view hex = t.substr(0, sp);
        if (hex.size() <= 16)
          for (const char ch : hex)
            rec_.irq_ip = rec_.irq_ip << 4 | unsigned(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
        rec_.irq_frame = std::uint32_t(rec_.chain.size());
      }
      std::string_view sym = sp == std::string_view::npos ? std::string_view{} : trim(t.substr(sp));
      if (auto paren = sym.find(" ("); paren != std::string_view::npos) sym = sym.substr(0, paren);
      if (auto plus = sym.find("+0x"); plus != std::string_view::npos) sym = sym.substr(0, plus);
      rec_.chain.emplace_back(sym);
      continue;
    }
    const bool give = pending_;
    if (give) std::swap(r, rec_);
    parse_header(s, line_, rec_);
    check_values(rec_, last_ts_);
    pending_ = true;
    if (give) return true;
  }
  if (!pending_) return false;
  std::swap(r, rec_);
  pending_ = false;
  return true;
}

bool Dedup::dup(const Record& r) const {
  const auto it = cpus_.find(r.cpu);
  if (it == cpus_.end() || !it->second.n || it->second.at[0].ts != r.ts) return false;
  for (std::size_t k = 0; k < it->second.n; ++k) {
    const Record& q = it->second.at[k];
    if (q.tid == r.tid && q.event == r.event && q.fields == r.fields && q.chain == r.chain) return true;
  }
  return false;
}
void Dedup::keep(Record& r) {
  auto& c = cpus_[r.cpu];
  if (c.n && c.at[0].ts != r.ts) c.n = 0;
  if (c.n == c.at.size()) c.at.emplace_back();
  std::swap(c.at[c.n++], r);
}

const Record* Window::at(std::size_t i) {
  while (i >= head_ + size_) {
    if (end_) return nullptr;
    if (size_ == cap_) {  // grow: records stay where they are, only the ring of pointers moves
      const std::size_t cap = cap_ ? cap_ * 2 : 64;
      std::vector<std::unique_ptr<Record>> ring(cap);
      for (std::size_t k = 0; k < size_; ++k)
        ring[(head_ + k) & (cap - 1)] = std::move(ring_[(head_ + k) & (cap_ - 1)]);
      for (auto& p : ring)
        if (!p) p = std::make_unique<Record>();
      ring_ = std::move(ring);
      cap_ = cap;
    }
    Record& slot = *ring_[(head_ + size_) & (cap_ - 1)];
    bool got = false;
    while ((got = rd_.next(slot)) && dup_next_ < dups_.size() && dups_[dup_next_] == raw_) ++raw_, ++dup_next_;
    ++raw_;
    if (!got) {
      end_ = true;
      return nullptr;
    }
    ++size_;
  }
  return i < head_ ? nullptr : ring_[i & (cap_ - 1)].get();
}

void Window::drop_before(std::size_t i) {
  while (size_ && head_ < i) ++head_, --size_;
}

}  // namespace detail

namespace detail {

Conversion Converter::run() {
  for (std::size_t i = 0; i < o_.syscall_reads.size(); ++i) {
    const auto& q = o_.syscall_reads[i];
    syscall_read_index_[{q.tid, q.nr, q.seq}] = i;
  }
  vtime_setup();
  declare();
  // The header the samples' tasks make must be one the tracker takes (else it has no CPUs and
  // every sample is out of range): fuzz_perf found samples that make one invalid.
  if (auto bad = check_header(conv_.trace.header); bad && !task_error_ && !recs_.empty())
    task_error_ = Error{recs_.front().line, 1, "the samples' tasks make no valid trace: " + bad->message, "perf"};
  if (task_error_) return std::move(conv_);  // the caller reports it
  steal_setup();
  Tracker tr(conv_.trace.header);
  tr_ = &tr;
  for (const auto& r : recs_) {
    cur_ = std::size_t(&r - recs_.data());
    feed_steal(r);
    record(r);
  }
  tr_ = nullptr;
  return std::move(conv_);
}

Conversion Converter::run_stream(const std::function<void(const Header&)>& on_header,
                                 const std::function<void(const Event&)>& on_event,
                                 const std::function<void(const Stats&)>& on_stats) {
  for (std::size_t i = 0; i < o_.syscall_reads.size(); ++i) {
    const auto& q = o_.syscall_reads[i];
    syscall_read_index_[{q.tid, q.nr, q.seq}] = i;
  }
  vtime_setup();  // no probes here (such traces are converted whole): sets the empty stats
  declare_finish();
  if (auto bad = check_header(conv_.trace.header); bad && !task_error_) {  // as in run()
    const Record* first = win_->at(0);
    task_error_ = Error{first ? first->line : 1, 1, "the samples' tasks make no valid trace: " + bad->message, "perf"};
  }
  if (task_error_) return std::move(conv_);  // the caller reports it
  if (on_stats) on_stats(conv_.stats);
  on_header(conv_.trace.header);
  Tracker tr(conv_.trace.header);
  tr_ = &tr;
  sink_ = &on_event;
  for (std::size_t i = 0;; ++i) {
    const Record* r = win_->at(i);
    if (!r) break;
    cur_ = i;
    feed_steal(*r);
    record(*r);
    win_->drop_before(i + 1);
  }
  tr_ = nullptr;
  sink_ = nullptr;
  return std::move(conv_);
}

// Pass 1: every task that appears, its thread group, whether it ever ran in user mode.
void Converter::declare() {
  for (const auto& r : recs_) declare_note(r);
  declare_finish();
}

void Converter::declare_note(const Record& r) {
  if (first_) {
    first_ = false;
    conv_.stats.base_ns = last_ts_ = r.ts;
  }
  auto note = [&](std::uint64_t tid, const std::string& comm, std::optional<std::uint64_t> pid) {
    if (tid == 0) return;
    auto& i = info_[tid];
    if (i.comm.empty() || !comm.empty()) i.comm = comm.empty() ? i.comm : comm;
    if (pid && i.tgid_shown && i.tgid != *pid && !task_error_)
      task_error_ = Error{r.line, r.ids_col,
                          fmt::format("task {} in thread group {}, earlier in {}: a thread never changes its "
                                      "process (a tid reused by another process is not supported)",
                                      tid, *pid, i.tgid),
                          "perf"};
    if (pid) {
      i.tgid = *pid;
      i.tgid_shown = true;
    }
    if (i.tgid == 0) i.tgid = tid;
  };
  {
    std::uint32_t& maxcpu = maxcpu_;
    maxcpu = std::max(maxcpu, r.cpu);
    if (r.tid_known) note(r.tid, r.comm, r.pid);
    if (std::string_view(r.event) == "sched:sched_process_fork") {
      if (auto c = num_field(r.fields, "child_pid")) {
        note(*c, std::string(field(r.fields, "child_comm").value_or("")), std::nullopt);
        if (!seen_before_fork_.count(*c)) info_[*c].forked = true;
      }
    } else if (std::string_view(r.event) == "sched:sched_switch") {
      if (auto n = num_field(r.fields, "next_pid"); n && *n) {
        note(*n, std::string(field(r.fields, "next_comm").value_or("")), std::nullopt);
        seen_before_fork_.insert(*n);
      }
    } else if (std::string_view(r.event) == "sched:sched_stat_runtime") {
      if (auto p = num_field(r.fields, "pid"); p && *p) {
        note(*p, std::string(field(r.fields, "comm").value_or("")), std::nullopt);
        seen_before_fork_.insert(*p);
      }
    }
    if (r.tid && r.tid_known) seen_before_fork_.insert(r.tid);
    if (std::string_view(r.event) == "raw_syscalls:sys_enter" && r.tid) info_[r.tid].user_evidence = true;
    if (r.tid && (std::string_view(r.event) == "kprobes:vtime_user_exit" ||
                  std::string_view(r.event) == "kprobes:vtime_user_enter"))
      info_[r.tid].user_evidence = true;
    if (std::string_view(r.event) == "irq_vectors:local_timer_entry" && r.tid && chain_says_user(r) == 1)
      info_[r.tid].user_evidence = true;
  }
}

void Converter::declare_finish() {
  const std::uint32_t maxcpu = maxcpu_;
  std::set<std::uint64_t> user_groups;
  for (auto& [tid, i] : info_)
    if (i.user_evidence) user_groups.insert(i.tgid);
  for (auto& [tid, i] : info_) i.user_evidence = i.user_evidence || user_groups.count(i.tgid);
  auto& h = conv_.trace.header;
  h.cpu_model = o_.cpu_model;
  h.ncpus = o_.ncpus ? o_.ncpus : maxcpu + 1;
  h.rtime_events = true;
  for (auto& [tid, i] : info_) {
    if (i.forked) continue;
    TaskDecl d;
    d.tid = tid;
    d.kthread = !i.user_evidence;
    d.pid = d.kthread ? tid : i.tgid;
    if (!d.kthread) d.mm = d.pid;
    d.comm = sanitize_comm(i.comm);
    vtime_declare(d, i);
    h.tasks.push_back(std::move(d));
  }
}

// 1: the timer interrupted user mode (the unwound kernel stack ends at the entry stub),
// 0: kernel mode, -1: no callchain.
int Converter::chain_says_user(const Record& r) {
  // The first entry stub (asm_sysvec_apic_timer_interrupt on x86) is this interrupt's entry;
  // frames beyond it are the interrupted kernel code (syscall, exception, idle, ...).
  for (std::size_t i = 0; i < r.chain.size(); ++i)
    if (r.chain[i].rfind("asm_", 0) == 0) return i + 1 == r.chain.size() ? 1 : 0;
  return -1;
}

void Converter::repair(const char* what, const Record& r) {
  ++conv_.stats.repairs[what];
  if (conv_.stats.notes.size() < 20)
    conv_.stats.notes.push_back(fmt::format("perf line {}: {} ({} on cpu {})", r.line, what, r.event, r.cpu));
}
void Converter::bad(const Record& r, const char* expected) {
  repair("malformed tracepoint fields skipped", r);
  if (conv_.stats.notes.size() < 20) conv_.stats.notes.back() += fmt::format(": expected {}", expected);
}

// At perf-clock time t; vtime clocks can trail an event already emitted from a later
// tracepoint, so time is kept monotonic (and the moves counted).
bool Converter::emit_at(Event e, const Record& r, std::uint64_t t) {
  if (t < last_ts_) {
    ++conv_.stats.vtime.clamped;
    conv_.stats.vtime.max_clamp_ns = std::max(conv_.stats.vtime.max_clamp_ns, last_ts_ - t);
    t = last_ts_;
  }
  e.ts = t - conv_.stats.base_ns;
  e.line = 0;
  if (auto err = tr_->apply(e)) {
    last_drop_ = err->message;
    repair("event dropped (inconsistent with the recorded state)", r);
    if (conv_.stats.notes.size() < 20) conv_.stats.notes.back() += ": " + err->message;
    return false;
  }
  last_ts_ = t;
  if (sink_) {
    (*sink_)(e);
    ++emitted_;
  } else {
    conv_.trace.events.push_back(std::move(e));
  }
  return true;
}

void Converter::to_process_context(std::uint32_t c, const Record& r) {
  while (cpu(c).irq_depth > 0) {
    repair("irq_exit inferred", r);
    emit(ev(Kind::IrqExit, c), r);
  }
  if (cpu(c).in_softirq) {
    repair("softirq_exit inferred", r);
    emit(ev(Kind::SoftirqExit, c), r);
  }
}
bool Converter::set_mode(std::uint32_t c, Mode m, const Record& r, const char* why) {
  const auto& x = cpu(c);
  if (x.mode == m) return true;
  if (x.current == 0 || tr_->current(c).kthread || tr_->current(c).exiting) return false;
  to_process_context(c, r);
  repair(why, r);
  return emit(ev(m == Mode::User ? Kind::ExcExit : Kind::ExcEnter, c), r);
}
void Converter::switch_out(std::uint32_t c, std::uint64_t next, const Record& r) {
  to_process_context(c, r);
  Event e = ev(Kind::Switch, c);
  e.a = cpu(c).current;
  e.b = next;
  if (e.a != 0 && tr_->current(c).exiting) e.prev_state = PrevState::Dead;
  emit(e, r);
}
// Make `tid` runnable here: not running elsewhere, not sleeping.
bool Converter::make_runnable(std::uint64_t tid, std::uint32_t c, const Record& r) {
  if (tid == 0) return true;
  const TaskState* t = tr_->task(tid);
  if (!t || t->exited) return false;
  if (t->running && std::uint32_t(t->on_cpu) != c) {
    repair("switch out on another cpu inferred", r);
    switch_out(std::uint32_t(t->on_cpu), 0, r);
  }
  t = tr_->task(tid);
  if (t->sleeping) {
    Event w = ev(Kind::Wakeup, c);
    w.a = tid;
    ++conv_.stats.repairs["wakeup inferred"];
    emit(w, r);
  }
  return true;
}
// Every sample names the task that is current on its CPU.
bool Converter::ensure_current(std::uint32_t c, std::uint64_t tid, const Record& r) {
  if (cpu(c).current == tid) return true;
  if (tid != 0 && !make_runnable(tid, c, r)) return false;
  repair("switch inferred (sample's task not current)", r);
  switch_out(c, tid, r);
  if (cpu(c).current == tid) vtime_arrive(tid, r);
  return cpu(c).current == tid;
}

void Converter::final_exit(std::uint32_t c, const Record& r) {
  to_process_context(c, r);
  set_mode(c, Mode::Kernel, r, "kernel entry inferred (exit)");
  emit(ev(Kind::Exit, c), r);
  exiting_.erase(cpu(c).current);
}
// Is the next sample on r's CPU the current task's switch out as dead (X or Z)?
bool Converter::final_switch_follows(const Record& r) const {
  const std::size_t i = index(r);
  for (std::size_t j = i + 1; j < i + 64; ++j) {
    const Record* qp = rec(j);
    if (!qp) break;
    const Record& q = *qp;
    if (q.cpu != r.cpu) continue;
    if (std::string_view(q.event) != "sched:sched_switch") return false;
    auto ps = field(q.fields, "prev_state");
    return ps && !ps->empty() && ((*ps)[0] == 'X' || (*ps)[0] == 'Z');
  }
  return false;
}

// "NR 39 (...)" (sys_enter), "NR 39 = 0" (sys_exit), or NR=39.
std::optional<std::uint64_t> Converter::syscall_nr(const Record& r) {
  if (auto nr = field(r.fields, "NR")) return to_u64(*nr);
  auto t = trim(std::string_view(r.fields));
  if (t.rfind("NR ", 0) != 0) return std::nullopt;
  auto rest = t.substr(3);
  return to_u64(rest.substr(0, rest.find_first_of(" (=")));
}

// Markers and the read syscall after them (both modes).
void Converter::syscall_marker(std::uint64_t tid, std::uint64_t nr) {
  if (nr >= o_.marker_base && nr - o_.marker_base < (1ull << 32)) {
    marker_[tid] = nr - o_.marker_base;
    in_read_.erase(tid);
    ++conv_.stats.markers;
    ++conv_.stats.marker_ids[nr - o_.marker_base];
  } else if (auto m = marker_.find(tid); m != marker_.end()) {
    in_read_[tid] = m->second;  // the syscall after the marker is the read
    marker_.erase(m);
    read_done_.erase(tid);
  }
}
// The recorder's reads are found by counting each thread's syscalls: the recorder (strace -f)
// counts the same ones. Every CPU-time syscall of a followed thread is listed, so that the
// oracle can tell a read the recorder missed.
void Converter::syscall_read_enter(const Record& r, std::uint64_t nr) {
  if (o_.syscall_reads.empty() && o_.read_tids.empty()) return;
  const auto seq = ++syscall_seq_[{r.tid, nr}];
  std::uint64_t arg0 = 0;
  if (auto p = r.fields.find('('); p != std::string::npos) {
    const auto end = r.fields.find_first_of(",)", p);
    const auto a = std::string_view(r.fields).substr(p + 1, end == std::string::npos ? 0 : end - p - 1);
    std::from_chars(a.data(), a.data() + a.size(), arg0, 16);
  }
  const bool wanted = syscall_read_index_.count({r.tid, nr, seq}) ||
                      (o_.read_tids.count(r.tid) && is_cputime_syscall(nr, arg0, o_.syscalls));
  auto& open = syscall_open_[r.tid];
  open = {nr, -1};
  if (!wanted) return;
  open.second = long(conv_.stats.cputime_syscalls.size());
  early_read_.erase(r.tid);
  may_stand_still_.erase(r.tid);
  if (auto q = syscall_read_index_.find({r.tid, nr, seq}); q != syscall_read_index_.end()) {
    const auto& want = o_.syscall_reads[q->second];
    const bool own = !want.target || want.target == r.tid;
    // thread_group_cputime() updates the reader's runtime only for its own thread group: a read
    // of another process's /proc/PID/stat (getrusage03's of its child) is at sys_exit, after any
    // sleep in the syscall (6.1 on ppc64le: the read waited in D for the child's exec, whose
    // two ticks the kernel's value has; 6.1, 6.12 kernel/sched/cputime.c)
    const auto ti = want.target ? info_.find(want.target) : info_.end();
    const auto ri = info_.find(r.tid);
    const bool other_group = ti != info_.end() && ri != info_.end() && ti->second.tgid != ri->second.tgid;
    const bool syncs =
        want.place && ((want.kind == ReadKind::ProcStat && !other_group) || want.kind == ReadKind::RusageSelf ||
                       want.kind == ReadKind::ProcessCputime || (want.kind == ReadKind::ThreadCputime && own));
    if (syncs) early_read_[r.tid] = conv_.stats.cputime_syscalls.size();
    if (syncs && irq_time_pending_.count(r.cpu)) may_stand_still_.insert(r.tid);
  }
  conv_.stats.cputime_syscalls.push_back(
      {r.tid, nr, seq, arg0, r.line, 0, "its sys_exit is not in the trace", std::nullopt});
}
// A wait4()'s or waitid()'s first five arguments (perf prints them in hex) until its sys_exit,
// where they tell whether it reaped, which child, and whether it asked for the child's rusage
// (children_at_sys_exit()).
void Converter::wait_enter(const Record& r, std::uint64_t nr) {
  const auto p = r.fields.find('(');
  if (p == std::string::npos) return;
  std::array<std::uint64_t, 5> a{};
  std::size_t at = p + 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto end = r.fields.find_first_of(",)", at);
    if (end == std::string::npos) return;
    const auto v = trim(std::string_view(r.fields).substr(at, end - at));
    const auto [q, ec] = std::from_chars(v.data(), v.data() + v.size(), a[i], 16);
    if (ec != std::errc() || q != v.data() + v.size() || v.empty()) return;  // not understood: no arguments
    if (r.fields[end] == ')' && i + 1 < a.size()) return;
    at = end + 1;
  }
  wait_args_[r.tid] = {nr, a};
}
// The child process that a waitid() of tid with WEXITED alone (not P_PID: the call names no
// child) reaped when it returned 0: the only child of tid's process that could be reaped then,
// a group leader forked in the trace whose threads have all exited and which its parent's group
// has not reaped (wait_consider_task(): an EXIT_ZOMBIE leader without live threads, reaped once:
// 6.1, 6.12 kernel/exit.c). 0 (not known) when there are several, or none, when tid's process
// itself began before the trace (children forked before it are not in the trace) or reaped a
// child the trace does not name before (which one is gone is not known). Children
// adopted as a subreaper (PR_SET_CHILD_SUBREAPER) or forked on a CPU the trace lacks are not
// seen: such a trace must not be taken for one.
std::uint64_t Converter::only_reapable_child(std::uint64_t tid) const {
  const auto w = info_.find(tid);
  if (w == info_.end()) return 0;
  const auto g = w->second.tgid;
  const auto gi = info_.find(g);
  if (gi == info_.end() || !gi->second.forked || unnamed_reaps_.count(g)) return 0;
  std::uint64_t found = 0;
  for (const auto& [child, parent] : unreaped_children_) {
    if (parent != g || !group_dead(child)) continue;
    if (found) return 0;
    found = child;
  }
  return found;
}
// Every thread of process pid (the tracker's tasks) has reached do_exit()'s sched_process_exit.
bool Converter::group_dead(std::uint64_t pid) const {
  bool any = false;
  for (const auto& t : tr_->tasks()) {
    if (t.pid != pid) continue;
    if (!t.exited && !t.exiting && !exiting_.count(t.tid)) return false;
    any = true;
  }
  return any;
}
// Where the reaped children's times change (a wait that reaped) and where a read of them is: the
// kernel changes signal->cutime/cstime only in wait_task_zombie(), so the sys_exit is exact enough.
void Converter::children_at_sys_exit(const Record& r) {
  const auto nr = syscall_nr(r);
  if (!nr) return;
  const auto at = nevents();
  const auto& sc = o_.syscalls;
  // A second sys_exit of the same call with no sys_enter between (ppc64le 6.1.192 under strace:
  // stress-ng --wait's waitid(), once; not traced further) is no second wait.
  const bool repeated = last_exit_nr_.count(r.tid) && last_exit_nr_[r.tid] == *nr;
  last_exit_nr_[r.tid] = *nr;
  if (repeated) ++conv_.stats.repeated_sys_exits;
  if ((*nr == sc.wait4 || *nr == sc.waitid) && !repeated) {
    const auto t = std::string_view(r.fields);
    const auto eq = t.find(" = ");
    long long ret = -1;
    if (eq != std::string_view::npos) {
      const auto v = trim(t.substr(eq + 3));
      std::from_chars(v.data(), v.data() + v.size(), ret);
    }
    std::uint64_t child = *nr == sc.wait4 && ret > 0 ? std::uint64_t(ret) : 0;
    bool reaps = (*nr == sc.wait4 && ret > 0) || (*nr == sc.waitid && ret == 0);
    const auto a = wait_args_.find(r.tid);
    const bool args = a != wait_args_.end() && a->second.first == *nr;
    // wait4(pid, status, options, rusage), waitid(which, id, infop, options, rusage)
    const bool rusage = !args || a->second.second[*nr == sc.wait4 ? 3 : 4] != 0;
    if (*nr == sc.waitid && reaps) {
      // waitid() returns 0 and names its child only in *infop. Its arguments tell: without
      // WEXITED, or with WNOWAIT, wait_task_zombie() reaps nothing (a stop or continue report,
      // or the zombie left); P_PID with WEXITED alone (no WNOHANG, WSTOPPED, WCONTINUED) returns
      // 0 only once it reaped `id` (6.1, 6.12 kernel/exit.c); another `which` with WEXITED alone
      // reaped the only child it could (only_reapable_child()). Else a reap of a child the trace
      // does not name (child 0). A wait4() that returned a live child reported a stop or continue
      // (the model tells: Program::Reap).
      constexpr std::uint64_t kPPid = 1, kWnohang = 1, kWstopped = 2, kWexited = 4, kWcontinued = 8,
                              kWnowait = 0x1000000, kWnothread = 0x20000000;
      if (args) {
        const auto& v = a->second.second;
        const std::uint64_t which = v[0], id = v[1], options = v[3];
        const bool named = which == kPPid && id > 0 && id <= 0x7fffffff;
        if (!(options & kWexited) || (options & kWnowait)) {
          reaps = false;
          ++conv_.stats.waits_not_reaping;
          // its rusage, if asked for, is the child's (getrusage(RUSAGE_BOTH)): a report of `id`
          if (named && rusage) conv_.stats.reaps.push_back({at, r.tid, id, 0, r.line, true, false});
        } else if (named && !(options & (kWnohang | kWstopped | kWcontinued))) {
          child = id;
        } else if (which != kPPid && !(options & (kWnohang | kWstopped | kWcontinued | kWnothread))) {
          child = only_reapable_child(r.tid);
        }
      }
    }
    // The parent's group reaped this child: no later wait reaps it (a ptracer's wait of its
    // tracee, as strace's, is no reap of the parent's: wait_task_zombie()'s EXIT_TRACE).
    if (const auto w = info_.find(r.tid); reaps && w != info_.end()) {
      const auto u = child ? unreaped_children_.find(child) : unreaped_children_.end();
      if (!child)
        unnamed_reaps_.insert(w->second.tgid);
      else if (u != unreaped_children_.end() && u->second == w->second.tgid && group_dead(child))
        unreaped_children_.erase(u);
    }
    if (reaps) {
      const auto seq = syscall_seq_.find({r.tid, *nr});
      conv_.stats.reaps.push_back(
          {at, r.tid, child, seq == syscall_seq_.end() ? 0 : seq->second, r.line, rusage, true});
    }
  }
  wait_args_.erase(r.tid);
  auto it = syscall_open_.find(r.tid);
  if (it != syscall_open_.end() && it->second.second >= 0 && it->second.first == *nr)
    conv_.stats.cputime_syscalls[std::size_t(it->second.second)].exit_at = at;
}
void Converter::syscall_read_exit(const Record& r) {
  early_read_.erase(r.tid);
  may_stand_still_.erase(r.tid);
  auto it = syscall_open_.find(r.tid);
  if (it == syscall_open_.end() || it->second.second < 0) return;
  auto& seen = conv_.stats.cputime_syscalls[std::size_t(it->second.second)];
  syscall_open_.erase(it);
  if (auto u = upper_read_.find(r.tid); u != upper_read_.end()) {
    if (u->second == std::size_t(&seen - conv_.stats.cputime_syscalls.data()) && syscall_nr(r) == seen.nr && seen.id)
      place_syscall_read(seen, r, true);
    upper_read_.erase(u);
    return;
  }
  if (syscall_nr(r) != seen.nr || seen.id) return;
  place_syscall_read(seen, r);
}
// The reads that bring the reader's runtime up to date (task_sched_runtime(): group reads of its
// own process, its thread clock) emit a sched_stat_runtime of the reader inside the syscall:
// the read is placed right after it, so that a tick between it and sys_exit comes after the read.
// A runtime update that follows the tick's hrtimer is the tick's, not the read's.
// Group reads (thread_group_cputime()) read the threads' sum_exec_runtime only after that
// update's rq unlock: a tick taken at the unlock (its callchain inside task_sched_runtime())
// comes before the read, which is then placed at sys_exit (seen in stress-ng --clock: 22719 ns).
void Converter::syscall_read_runtime(const Record& r, std::uint64_t pid) {
  auto e = early_read_.find(pid);
  if (e == early_read_.end() || cpu(r.cpu).current != pid || after_tick_.count(r.cpu)) return;
  // an update in irq context is a tick's, never the read's (the irq-time traces' tick irq)
  if (cpu(r.cpu).irq_depth > 0 || cpu(r.cpu).in_softirq) return;
  const auto k = e->second;
  early_read_.erase(e);
  auto& seen = conv_.stats.cputime_syscalls[k];
  if (auto q = syscall_read_index_.find({seen.tid, seen.nr, seen.seq}); q != syscall_read_index_.end()) {
    const auto kind = o_.syscall_reads[q->second].kind;
    const bool group = kind == ReadKind::ProcStat || kind == ReadKind::RusageSelf || kind == ReadKind::ProcessCputime;
    if (group && tick_in_runtime_update_follows(r)) return;
  }
  place_syscall_read(seen, r);
}
// The next tick interrupt on r's CPU, before r's task leaves its syscall or the CPU, interrupted
// task_sched_runtime() (at its rq unlock, where interrupts come back on).
bool Converter::tick_in_runtime_update_follows(const Record& r) const {
  for (std::size_t i = index(r) + 1;; ++i) {
    const Record* np = rec(i);
    if (!np) break;
    const auto& n = *np;
    if (n.cpu != r.cpu) continue;
    if (std::string_view(n.event) == "irq_vectors:local_timer_entry")
      return std::any_of(n.chain.begin(), n.chain.end(), [](const std::string& f) {
        return f == "task_sched_runtime" || f.starts_with("task_sched_runtime+");
      });
    if (std::string_view(n.event) == "raw_syscalls:sys_exit" || std::string_view(n.event) == "sched:sched_switch" ||
        n.event.starts_with("PERF_RECORD_LOST"))
      return false;
  }
  return false;
}
// A read that brings the reader's runtime up to date (early_read_) with no sched_stat_runtime
// of its own before a tick inside its syscall, nor after the tick's own update: its
// update_curr() found delta_exec <= 0. With irq time that happens on either side of the tick:
// update_rq_clock_task() holds clock_task back until the clock has passed the irq time accrued
// (6.1/6.12 kernel/sched/core.c, fair.c update_curr_se()), after a long irq before the read or
// after the tick's own irq. The trace cannot tell which side the kernel read on (times03 on
// 6.12 irq time: a 32 ms hardirq held clock_task for 32 ms, the read one tick below sys_exit's
// value): it is read at both, before the tick and, as its upper twin, at sys_exit. Only where
// clock_task could stand still before the tick: an irq ended on the CPU after its last runtime
// update (outside irqs) before the read's sys_enter (times03: no update between the 32 ms irq
// and the read); else the read came after the tick (7 such reads in that run), at sys_exit.
void Converter::bound_read_across_tick(const Record& r) {
  const auto pid = cpu(r.cpu).current;
  const auto e = early_read_.find(pid);
  if (vcpu(r.cpu) || e == early_read_.end() || !in_syscall_.count(pid) || !may_stand_still_.count(pid)) return;
  // The tick's own update is inside its irq where the trace has irq events (irq-reads-reduce.py's
  // traces), else the first one after the tick.
  int depth = 0;
  bool irqs = false, first = true;
  for (std::size_t i = index(r) + 1;; ++i) {
    const Record* np = rec(i);
    if (!np) break;
    const auto& n = *np;
    if (n.cpu != r.cpu) continue;
    if (std::string_view(n.event) == "irq:irq_handler_entry" || std::string_view(n.event) == "irq:softirq_entry") {
      ++depth;
      irqs = true;
    } else if (std::string_view(n.event) == "irq:irq_handler_exit" || std::string_view(n.event) == "irq:softirq_exit") {
      depth -= depth > 0;
    } else if (std::string_view(n.event) == "sched:sched_stat_runtime" && num_field(n.fields, "pid") == pid) {
      if (depth == 0 && (irqs || !first)) return;  // the read's own update, after the tick: placed there
      first = false;
    } else if (std::string_view(n.event) == "raw_syscalls:sys_exit" ||
               std::string_view(n.event) == "sched:sched_switch" || n.event.starts_with("PERF_RECORD_LOST")) {
      break;
    }
  }
  const auto k = e->second;
  early_read_.erase(e);
  auto& seen = conv_.stats.cputime_syscalls[k];
  place_syscall_read(seen, r);
  if (!seen.id) return;
  upper_read_[pid] = k;
  auto q = syscall_read_index_.find({seen.tid, seen.nr, seen.seq});
  conv_.stats.read_clocks.push_back({seen.id, seen.tid, o_.syscall_reads[q->second].kind, "tick_in_read", r.ts, 0});
}
void Converter::place_syscall_read(Stats::SyscallSeen& seen, const Record& r, bool upper) {
  auto q = syscall_read_index_.find({seen.tid, seen.nr, seen.seq});
  if (q == syscall_read_index_.end()) return;
  const auto& want = o_.syscall_reads[q->second];
  if (!want.place) {
    seen.why = "not placed: the kernel computes no CPU times for it";
    return;
  }
  ReadSpec spec{want.kind, want.target, want.id};
  // The trace format's group reads are of the reader's own thread group.
  const bool group =
      want.kind == ReadKind::ProcStat || want.kind == ReadKind::RusageSelf || want.kind == ReadKind::ProcessCputime;
  if (group && want.target && want.target != seen.tid) {
    auto a = info_.find(want.target), b = info_.find(seen.tid);
    if (a == info_.end() || b == info_.end()) {
      seen.why = fmt::format("a read of another process ({}), which is not in the trace", want.target);
      return;
    }
    if (a->second.tgid != b->second.tgid) {
      conv_.stats.foreign_reads.push_back({nevents(), seen.tid, a->second.tgid, want.id});
      seen.id = want.id;
      return;
    }
    spec.tid = 0;
  }
  last_drop_.clear();
  if (upper) {
    if (emit_read(spec, want.id | kUpperReadBit, r, r.ts))
      for (auto& rc : conv_.stats.read_clocks)
        if (rc.marker == want.id && rc.how == "tick_in_read") rc.hi = r.ts;
    return;
  }
  if (emit_read(spec, want.id, r, r.ts))
    seen.id = want.id;
  else
    seen.why = last_drop_.empty() ? "not placed" : last_drop_;
}

std::vector<const ReadSpec*> Converter::specs(std::uint64_t marker) const {
  std::vector<const ReadSpec*> v;
  if (auto it = vtime_syscall_reads_.find(marker); it != vtime_syscall_reads_.end()) v.push_back(&it->second.first);
  for (const auto& s : o_.reads)
    if (s.marker == marker) v.push_back(&s);
  return v;
}
bool Converter::emit_read(const ReadSpec& spec, std::uint64_t id, const Record& r, std::uint64_t t) {
  Event e = ev(Kind::Read, r.cpu);
  e.read_kind = spec.kind;
  e.a = spec.tid == r.tid ? 0 : spec.tid;
  e.read_id = id;
  if (!emit_at(e, r, t)) return false;
  ++conv_.stats.reads;
  conv_.stats.lost_before_read.push_back(conv_.stats.lost_events);
  const auto g = steal_unknown_.find(tr_->current(r.cpu).pid);
  conv_.stats.steal_unknown_before_read.push_back(g == steal_unknown_.end() ? 0 : g->second);
  return true;
}

// ---- dispatch: one handler per event name ----

namespace {

// What record() checks before a handler runs.
enum class Gate : std::uint8_t {
  None,     // nothing: perf's own records, and sched_switch (its sample's task is prev)
  Current,  // the sample's task is made current on its CPU; a sample with tid -1 is skipped
  AnyTid,   // as Current, but tid -1 is fine: the task is named in the fields
};
struct Route {
  Gate gate;
  Converter::Handler fn;
};

}  // namespace

void Converter::record(const Record& r) {
  if (std::string_view(r.event) != "sched:sched_stat_runtime") after_tick_.erase(r.cpu);
  // Kept sorted by name; events not listed go to on_unknown behind Gate::Current.
  static const std::unordered_map<std::string_view, Route> table = {
      {"PERF_RECORD_LOST", {Gate::None, &Converter::on_lost}},
      {"PERF_RECORD_LOST_SAMPLES", {Gate::None, &Converter::on_lost}},
      {"irq:irq_handler_entry", {Gate::Current, &Converter::on_irq_entry}},
      {"irq:irq_handler_exit", {Gate::Current, &Converter::on_irq_exit}},
      {"irq:softirq_entry", {Gate::Current, &Converter::on_softirq_entry}},
      {"irq:softirq_exit", {Gate::Current, &Converter::on_softirq_exit}},
      {"irq:softirq_raise", {Gate::Current, &Converter::on_ignored}},
      {"irq_vectors:local_timer_entry", {Gate::Current, &Converter::on_local_timer_entry}},
      {"irq_vectors:local_timer_exit", {Gate::Current, &Converter::on_ignored}},
      {"kacct:tick_steal", {Gate::None, &Converter::on_tick_steal}},  // tools/record-perf/steal.bt
      // gen vtime probes (perf_vtime.cpp); unknown events when the trace has no task probes
      {"kprobes:bacct_add_tsk", {Gate::Current, &Converter::on_kprobe}},
      {"kprobes:cputime_adjust", {Gate::Current, &Converter::on_kprobe}},
      {"kprobes:vtime_task_switch", {Gate::Current, &Converter::on_kprobe}},
      {"kprobes:vtime_user_enter", {Gate::Current, &Converter::on_kprobe}},
      {"kprobes:vtime_user_exit", {Gate::Current, &Converter::on_kprobe}},
      {"powerpc:timer_interrupt_entry", {Gate::Current, &Converter::on_ignored}},
      {"powerpc:timer_interrupt_exit", {Gate::Current, &Converter::on_ignored}},
      {"raw_syscalls:sys_enter", {Gate::Current, &Converter::on_sys_enter}},
      {"raw_syscalls:sys_exit", {Gate::Current, &Converter::on_sys_exit}},
      {"sched:sched_migrate_task", {Gate::Current, &Converter::on_ignored}},
      {"sched:sched_process_exit", {Gate::Current, &Converter::on_process_exit}},
      {"sched:sched_process_fork", {Gate::Current, &Converter::on_process_fork}},
      {"sched:sched_stat_runtime", {Gate::AnyTid, &Converter::on_stat_runtime}},
      {"sched:sched_switch", {Gate::None, &Converter::on_switch}},
      {"sched:sched_wakeup", {Gate::AnyTid, &Converter::on_wakeup}},
      {"sched:sched_wakeup_new", {Gate::AnyTid, &Converter::on_wakeup}},
      {"sched:sched_waking", {Gate::Current, &Converter::on_ignored}},
      {"timer:hrtimer_cancel", {Gate::Current, &Converter::on_ignored}},
      {"timer:hrtimer_expire_entry", {Gate::Current, &Converter::on_hrtimer_expire_entry}},
      {"timer:hrtimer_expire_exit", {Gate::Current, &Converter::on_ignored}},
      {"timer:hrtimer_init", {Gate::Current, &Converter::on_ignored}},
      {"timer:hrtimer_start", {Gate::Current, &Converter::on_ignored}},
      {"timer:tick_stop", {Gate::Current, &Converter::on_ignored}},
  };
  ++conv_.stats.records;
  if (r.cpu >= conv_.trace.header.ncpus) return repair("sample on a cpu beyond ncpus skipped", r);
  const auto it = table.find(r.event);
  const Route route = it == table.end() ? Route{Gate::Current, &Converter::on_unknown} : it->second;
  if (route.gate != Gate::None) {
    if (!r.tid_known) {
      if (route.gate != Gate::AnyTid) return repair("sample with an unknown tid (-1) skipped", r);
    } else if (!ensure_current(r.cpu, r.tid, r)) {
      return repair("sample of an exited or unknown task skipped", r);
    }
  }
  (this->*route.fn)(r);
}

void Converter::used(const Record& r) { ++conv_.stats.used[r.event]; }
void Converter::on_ignored(const Record& r) { ++conv_.stats.ignored[r.event]; }
void Converter::on_unknown(const Record& r) { ++conv_.stats.unknown[r.event]; }

// perf's ring buffer overflowed: events are missing from here on this CPU.
void Converter::on_lost(const Record& r) {
  auto& st = conv_.stats;
  const auto t = trim(std::string_view(r.fields));
  const auto v = to_u64(t.substr(t.find_last_of(' ') + 1));
  st.lost_events += v.value_or(0);
  ++st.lost_records;
  if (st.notes.size() < 20)
    st.notes.push_back(fmt::format("perf line {}: perf lost {} events on cpu {}", r.line, v.value_or(0), r.cpu));
}

void Converter::on_switch(const Record& r) {
  const std::uint32_t c = r.cpu;
  auto prev = num_field(r.fields, "prev_pid"), next = num_field(r.fields, "next_pid");
  auto ps = field(r.fields, "prev_state");
  if (!prev || !next || !ps) return bad(r, "prev_pid, prev_state and next_pid");
  if (!ensure_current(c, *prev, r)) return;
  used(r);
  to_process_context(c, r);
  Event e = ev(Kind::Switch, c);
  e.a = *prev;
  e.b = *next;
  const char s0 = ps->empty() ? 'R' : (*ps)[0];
  e.prev_state = s0 == 'S' || s0 == 'T' || s0 == 't' || s0 == 'I' ? PrevState::Sleeping
                 : s0 == 'D'                                      ? PrevState::DiskSleep
                 : s0 == 'X' || s0 == 'Z'                         ? PrevState::Dead
                                                                  : PrevState::Runnable;
  if (*prev == 0) e.prev_state = PrevState::Runnable;
  if (e.prev_state == PrevState::Dead && !tr_->current(c).exiting) {
    if (!exiting_.count(*prev)) repair("exit inferred (prev_state X without sched_process_exit)", r);
    if (vcpu(c) && o_.exit_at == Options::ExitAt::FinalSwitch) vtime_restore_before_switch(r, *prev);
    final_exit(c, r);
  }
  if (e.prev_state != PrevState::Dead && *prev != 0 && tr_->current(c).exiting) e.prev_state = PrevState::Dead;
  if (vcpu(c) && e.prev_state != PrevState::Dead && *prev != 0) vtime_restore_before_switch(r, *prev);
  if (vcpu(c) && e.prev_state == PrevState::Runnable && *prev != 0) vtime_fork_before_switch(r, *prev);
  if (!make_runnable(*next, c, r)) return repair("switch to an exited or unknown task skipped", r);
  const std::uint64_t t = vcpu(c) ? vtime_switch(r, e) : r.ts;
  emit_at(e, r, t);
  arrived_.insert(*next);
}

void Converter::on_sys_enter(const Record& r) {
  const std::uint32_t c = r.cpu;
  const auto v = syscall_nr(r);
  if (!v) return bad(r, "NR <number>");
  syscall_read_enter(r, *v);
  wait_args_.erase(r.tid);
  last_exit_nr_.erase(r.tid);
  if (*v == o_.syscalls.waitid || *v == o_.syscalls.wait4) wait_enter(r, *v);
  if (r.tid == 0 || tr_->current(c).exiting) return;
  in_syscall_.insert(r.tid);
  used(r);
  if (vcpu(c)) {  // the vtime probes carry the mode changes
    syscall_marker(r.tid, *v);
    return vtime_syscall_read_enter(r);
  }
  to_process_context(c, r);
  if (!set_mode(c, Mode::User, r, "return to user inferred (sys_enter in kernel mode)")) return;
  Event e = ev(Kind::SyscallEnter, c);
  e.a = *v;
  if (!emit(e, r)) return;
  syscall_marker(r.tid, *v);
}

void Converter::on_sys_exit(const Record& r) {
  const std::uint32_t c = r.cpu;
  in_syscall_.erase(r.tid);
  if (r.tid == 0 || tr_->current(c).exiting) return;
  used(r);
  children_at_sys_exit(r);
  // powerpc traces no sys_enter for a number beyond NR_syscalls (6.1
  // do_syscall_trace_enter()), only its sys_exit: the marker is seen there.
  if (auto v = syscall_nr(r); v && *v >= o_.marker_base && !marker_.count(r.tid)) syscall_marker(r.tid, *v);
  if (vcpu(c)) {
    vtime_sys_exit(r);
    return syscall_read_exit(r);  // a recorder-found read not read as a vtime read
  }
  to_process_context(c, r);
  if (cpu(c).mode != Mode::Kernel) {
    if (auto it = syscall_open_.find(r.tid); it != syscall_open_.end() && it->second.second >= 0)
      conv_.stats.cputime_syscalls[std::size_t(it->second.second)].why =
          fmt::format("its sys_exit (perf line {}) came in user mode: a tick's callchain said user", r.line);
    return repair("sys_exit in user mode skipped (sys_enter lost)", r);
  }
  if (auto m = in_read_.find(r.tid); m != in_read_.end()) {
    for (const ReadSpec* spec : specs(m->second)) emit_read(*spec, spec->marker, r, r.ts);
    in_read_.erase(m);
  }
  syscall_read_exit(r);
  emit(ev(Kind::SyscallExit, c), r);
}

void Converter::on_irq_entry(const Record& r) {
  used(r);
  Event e = ev(Kind::IrqEnter, r.cpu);
  e.a = num_field(r.fields, "irq").value_or(0);
  emit(e, r);
}
void Converter::on_irq_exit(const Record& r) {
  used(r);
  if (cpu(r.cpu).irq_depth == 0) return repair("irq_exit without entry skipped", r);
  irq_time_pending_.insert(r.cpu);
  emit(ev(Kind::IrqExit, r.cpu), r);
}
void Converter::on_softirq_entry(const Record& r) {
  used(r);
  to_process_context(r.cpu, r);
  Event e = ev(Kind::SoftirqEnter, r.cpu);
  auto v = num_field(r.fields, "vec");
  if (!v) return bad(r, "vec=<n>");
  e.a = *v;
  emit(e, r);
}
void Converter::on_softirq_exit(const Record& r) {
  used(r);
  if (!cpu(r.cpu).in_softirq || cpu(r.cpu).irq_depth > 0) return repair("softirq_exit without entry skipped", r);
  irq_time_pending_.insert(r.cpu);
  emit(ev(Kind::SoftirqExit, r.cpu), r);
}

void Converter::on_local_timer_entry(const Record& r) {
  used(r);
  timer_mode_[r.cpu] = chain_says_user(r);
  read_before_tick(r);
}
// A read with no runtime update of its own (getrusage(RUSAGE_THREAD), a /proc stat read of a
// thread: task_cputime_adjusted(), 6.1/6.12 kernel/sys.c, fs/proc/array.c) copies the stored
// times; a tick whose interrupted frame (the one after the entry stub) is at an address where
// the read had sampled (Options::read_sites) came after the read, which is placed before the
// tick (getrusage04 on 6.12 irq time: interrupted at task_cputime_adjusted()'s return).
// Anywhere else, inside the sampler too, it stays at its sys_exit, after the tick.
void Converter::read_before_tick(const Record& r) {
  if (o_.read_sites.empty() || vcpu(r.cpu)) return;
  const auto pid = cpu(r.cpu).current;
  if (!pid || !in_syscall_.count(pid) || early_read_.count(pid) || upper_read_.count(pid)) return;
  const auto open = syscall_open_.find(pid);
  if (open == syscall_open_.end() || open->second.second < 0) return;
  if (!r.irq_ip || r.irq_frame >= r.chain.size()) return;
  const auto site = o_.read_sites.find(r.chain[r.irq_frame]);
  const auto ip = r.irq_ip;
  if (site == o_.read_sites.end() ||
      std::none_of(site->second.begin(), site->second.end(), [&](const auto& a) { return a[0] <= ip && ip < a[1]; }))
    return;
  const auto k = std::size_t(open->second.second);
  auto& seen = conv_.stats.cputime_syscalls[k];
  if (seen.id || !syscall_read_index_.count({seen.tid, seen.nr, seen.seq})) return;
  place_syscall_read(seen, r);
  if (!seen.id) return;
  auto q = syscall_read_index_.find({seen.tid, seen.nr, seen.seq});
  conv_.stats.read_clocks.push_back({seen.id, seen.tid, o_.syscall_reads[q->second].kind, "before_tick", r.ts, r.ts});
}
bool Converter::is_tick(const Record& r) const {
  if (std::string_view(r.event) != "timer:hrtimer_expire_entry") return false;
  const auto fn = field(r.fields, "function");
  return fn && std::find(o_.tick_functions.begin(), o_.tick_functions.end(), *fn) != o_.tick_functions.end();
}

// Pairs each kacct:tick_steal record with its tick: the hrtimer expiry on the same CPU with the
// same now= (both tracepoints print the expiry's `now`).
void Converter::steal_setup() {
  for (const auto& r : recs_) steal_note(r);
  if (!steal_wanted()) return;
  for (std::size_t i = 0; i < recs_.size(); ++i) steal_tick(recs_[i], i);
}
void Converter::steal_note(const Record& r) {
  if (std::string_view(r.event) == "kacct:tick_steal") {
    const auto now = num_field(r.fields, "now"), ns = num_field(r.fields, "steal");
    if (now && ns) steal_by_now_[{r.cpu, *now}] = *ns;
  }
}
void Converter::steal_tick(const Record& r, std::size_t i) {
  if (!is_tick(r)) return;
  const auto now = num_field(r.fields, "now");
  const auto it = now ? steal_by_now_.find({r.cpu, *now}) : steal_by_now_.end();
  TickStealIn t;
  t.tick = i;
  t.known = it != steal_by_now_.end();
  t.ns = t.left = t.known ? it->second : 0;
  steal_q_[r.cpu].push_back(t);
}

// Before each record on a CPU: as much of its next tick's steal as fits in the time since its
// previous event (what a `steal` event may claim), so that the tick takes out all of it.
void Converter::feed_steal(const Record& r) {
  const auto q = steal_q_.find(r.cpu);
  if (q == steal_q_.end() || r.cpu >= conv_.trace.header.ncpus) return;
  auto& pos = steal_next_[r.cpu];
  const std::size_t i = index(r);
  while (pos < q->second.size() && q->second[pos].tick < i) ++pos;  // a tick that emitted nothing
  if (pos == q->second.size()) return;
  auto& left = q->second[pos].left;
  if (left == 0) return;
  const std::uint64_t t = std::max(r.ts, last_ts_) - conv_.stats.base_ns;
  const std::uint64_t base = cpu(r.cpu).steal_base();
  const std::uint64_t ns = std::min(left, t > base ? t - base : 0);
  if (ns > 0) {
    Event e = ev(Kind::Steal, r.cpu);
    e.a = ns;
    if (emit(e, r)) left -= ns;
  }
}

void Converter::on_tick_steal(const Record& r) {
  if (!num_field(r.fields, "now") || !num_field(r.fields, "steal")) return bad(r, "now=<ns> steal=<ns>");
  ++conv_.stats.tick_steal.records;
  used(r);
  // user=1/0: the kernel's own verdict on the tick's mode (steal.bt: utime or stime grew).
  if (const auto u = num_field(r.fields, "user"); u && *u <= 1) tick_user_[r.cpu] = int(*u);
}

void Converter::on_hrtimer_expire_entry(const Record& r) {
  auto& st = conv_.stats;
  const std::uint32_t c = r.cpu;
  if (!is_tick(r)) {
    ++st.ignored[r.event + " (not the tick)"];
    return;
  }
  used(r);
  after_tick_.insert(c);
  const auto it = timer_mode_.find(c);
  int user = it == timer_mode_.end() ? -1 : it->second;
  // A chain that ends at the entry stub normally means user mode, but the kernel's unwinder can
  // stop there inside a syscall too (seen on 6.18 in a read() of /proc/PID/stat). With the
  // task's sys_enter seen and its sys_exit not yet, and no events lost, it is a kernel tick.
  if (user == 1 && cpu(c).current != 0 && in_syscall_.count(cpu(c).current) && !conv_.stats.lost_events) {
    user = 0;
    repair("user callchain inside a syscall taken as a kernel tick (truncated unwind)", r);
  }
  if (it != timer_mode_.end()) timer_mode_.erase(it);
  // The recorder saw which of utime/stime the tick grew: that is the mode, whatever the chain
  // said (a chain can end at the entry stub in kernel code no tracepoint brackets, e.g. a
  // ptrace or seccomp stop's way in or out of a syscall: times03 under strace).
  if (const auto k = tick_user_.find(c); k != tick_user_.end()) {
    if (user >= 0 && user != k->second) repair("tick mode from the kernel's utime/stime, not the callchain", r);
    user = k->second;
    tick_user_.erase(k);
  }
  if (user < 0) {
    ++st.ticks_mode_unknown;
  } else if (user == 1) {
    ++st.ticks_user;
    to_process_context(c, r);  // the timer interrupted user mode: nothing else was active
    if (!set_mode(c, Mode::User, r, "return to user inferred (user tick)")) repair("user tick on a kthread or idle", r);
  } else {
    ++st.ticks_kernel;
    if (cpu(c).mode == Mode::User && cpu(c).irq_depth == 0 && !cpu(c).in_softirq)
      set_mode(c, Mode::Kernel, r, "kernel entry inferred (kernel tick)");
  }
  bound_read_across_tick(r);
  const bool user_now = cpu(c).mode == Mode::User && cpu(c).irq_depth == 0 && !cpu(c).in_softirq;
  if (!emit(ev(Kind::Tick, c), r)) {
    // Steal fed for it stays pending in the model: the CPU's next tick would take it too.
    if (const auto q = steal_q_.find(c); q != steal_q_.end())
      for (const auto& t : q->second)
        if (t.tick == index(r) && t.ns > t.left) steal_overfed_.insert(c);
    return;
  }
  if (cpu(c).current != 0) ++st.task_ticks[cpu(c).current][user_now ? 0 : 1];
  tick_steal_done(r);
}

// The tick took out the steal fed before it: count it, and what did not fit or was not recorded.
void Converter::tick_steal_done(const Record& r) {
  const auto q = steal_q_.find(r.cpu);
  if (q == steal_q_.end()) return;
  auto& ts = conv_.stats.tick_steal;
  auto& pos = steal_next_[r.cpu];
  if (pos == q->second.size() || q->second[pos].tick != index(r)) return;
  const TickStealIn t = q->second[pos++];
  const std::uint64_t cur = cpu(r.cpu).current, left = t.left;
  const bool unknown = !t.known || steal_overfed_.erase(r.cpu);
  if (!unknown) {
    ++ts.ticks;
    ts.ns += t.ns - left;
    ts.max_ns = std::max(ts.max_ns, t.ns);
    if (t.ns > 0) ++ts.ticks_steal;
    if (left > 0) {
      ++ts.ticks_unplaced;
      ts.unplaced_ns += left;
    }
  } else {
    ++ts.ticks_without;
  }
  if ((unknown || left > 0) && cur != 0) {
    if (const TaskState* t = tr_->task(cur)) ++steal_unknown_[t->pid];
    if (conv_.stats.notes.size() < 20)
      conv_.stats.notes.push_back(
          unknown ? fmt::format("perf line {}: the steal of the tick on cpu {} is not known", r.line, r.cpu)
                  : fmt::format("perf line {}: {} ns of the tick's steal did not fit since "
                                "cpu {}'s previous tick",
                                r.line, left, r.cpu));
  }
}

void Converter::on_stat_runtime(const Record& r) {
  const std::uint32_t c = r.cpu;
  auto pid = num_field(r.fields, "pid"), rt = num_field(r.fields, "runtime");
  if (!pid || !rt) return bad(r, "pid and runtime");
  if (cpu(c).irq_depth == 0 && !cpu(c).in_softirq) irq_time_pending_.erase(c);
  if (*pid == 0) return;
  used(r);
  // Where __exit_signal() folded an exiting thread into its group. On a tick CPU the sample's
  // header says: release_task() detaches the task's pid there (__unhash_process()), after which
  // perf prints its tid as -1 (kernel/events/core.c perf_event_pid_type(): !pid_alive()). An
  // update of the thread with its own tid came before the release and is the group's (a zombie
  // reaped later, by a parent or a ptracer; an autoreaped thread's updates in do_exit()); the
  // first with -1 came after. Without one the thread joins at its final switch. Vtime CPUs keep
  // the older rule: the update just before the final switch (X or Z) comes after the release.
  if (o_.exit_at == Options::ExitAt::Inferred && *pid == cpu(c).current && exiting_.count(*pid) &&
      !tr_->current(c).exiting && (vcpu(c) ? final_switch_follows(r) : !r.tid_known))
    final_exit(c, r);
  Event e = ev(Kind::Runtime, c);
  e.a = *pid;
  e.b = *rt;
  if (vtime_hold_runtime(e, r)) return;
  if (emit(e, r)) syscall_read_runtime(r, *pid);
}

void Converter::on_process_fork(const Record& r) {
  if (early_forks_.erase(index(r))) return;  // emitted (and counted) at the switch before it
  emit_fork(r, r.cpu, r.ts);
}
// The fork record r's Fork event, by the current task of cpu c, at time t.
void Converter::emit_fork(const Record& r, std::uint32_t c, std::uint64_t t) {
  auto child = num_field(r.fields, "child_pid");
  if (!child) return bad(r, "child_pid");
  used(r);
  if (tr_->task(*child)) return repair("fork of an already known task skipped", r);
  to_process_context(c, r);
  if (!set_mode(c, Mode::Kernel, r, "kernel entry inferred (fork)")) {
    if (cpu(c).current == 0) return repair("fork by the idle task skipped", r);
  }
  const auto& parent = tr_->current(c);
  const auto& ci = info_[*child];
  Event e = ev(Kind::Fork, c);
  e.a = cpu(c).current;
  e.b = *child;
  e.fork_comm = sanitize_comm(ci.comm);
  if (!ci.user_evidence && parent.kthread) {
    e.fork_kthread = true;
  } else if (!parent.kthread && ci.tgid == parent.pid && parent.mm) {
    e.fork_pid = parent.pid;  // a thread
  } else {
    e.fork_pid = *child;
    e.fork_mm = *child;
    if (!ci.user_evidence && !parent.kthread) e.fork_mm = *child;
  }
  const auto parent_pid = parent.pid;
  if (emit_at(e, r, t) && e.fork_pid == *child && !e.fork_kthread) unreaped_children_[*child] = parent_pid;
}

// do_exit() emits this before exit_files()/exit_notify(): the task may still sleep and run.
// Its counters join the group in exit_notify() (release_task, __exit_signal), just before the
// final __schedule(): the kacct `exit` is emitted there (final_exit()).
void Converter::on_process_exit(const Record& r) {
  if (r.tid == 0) return;
  used(r);
  exiting_.insert(r.tid);
  if (o_.exit_at == Options::ExitAt::ProcessExit && cpu(r.cpu).current == r.tid && !tr_->current(r.cpu).exiting)
    final_exit(r.cpu, r);
}

void Converter::on_wakeup(const Record& r) {
  auto pid = num_field(r.fields, "pid");
  if (!pid) return bad(r, "pid");
  used(r);
  const TaskState* t = tr_->task(*pid);
  if (t && t->sleeping && !t->exited) {
    Event e = ev(Kind::Wakeup, r.cpu);
    e.a = *pid;
    emit(e, r);
  }
}

}  // namespace detail

Result<Conversion> convert(const std::vector<Record>& all, const Options& o) {
  // perf script can print a stretch of samples twice (seen on 6.18 under load: every line of a
  // few ms repeated). Two samples on one CPU with the same timestamp, task, event and fields are
  // one event: keep the first.
  std::vector<Record> recs;
  recs.reserve(all.size());
  std::unordered_map<std::uint32_t, std::vector<const Record*>> same_ts;  // cpu -> records at its last ts
  std::uint64_t dups = 0;
  for (const auto& r : all) {
    auto& v = same_ts[r.cpu];
    if (!v.empty() && v.front()->ts != r.ts) v.clear();
    const bool dup = std::any_of(v.begin(), v.end(), [&](const Record* q) {
      return q->tid == r.tid && q->event == r.event && q->fields == r.fields && q->chain == r.chain;
    });
    v.push_back(&r);
    if (dup) {
      ++dups;
      continue;
    }
    recs.push_back(r);
  }
  detail::Converter cv(recs, o);
  Conversion c = cv.run();
  if (cv.task_error()) return *cv.task_error();
  c.stats.records = all.size();
  c.stats.duplicates = dups;
  return c;
}

Result<Conversion> convert(std::string_view text, const Options& o) {
  auto recs = parse_script(text, o.progress);
  if (!recs) return recs.error();
  if (o.ncpus)
    for (const auto& r : recs.value())
      if (r.cpu >= o.ncpus)
        return Error{r.line, r.cpu_col, fmt::format("sample on cpu {}, beyond --ncpus {}", r.cpu, o.ncpus), "perf"};
  auto c = convert(recs.value(), o);
  if (!c) return c.error();
  c.value().stats.lines = std::uint64_t(std::count(text.begin(), text.end(), '\n'));
  return c;
}

Result<Conversion> convert_stream(const Source& src, const Options& o,
                                  const std::function<void(const Header&)>& on_header,
                                  const std::function<void(const Event&)>& on_event,
                                  const std::function<void(const Stats&)>& on_stats) {
  std::vector<std::uint64_t> dup_at;  // positions of the duplicates among all samples
  detail::Window win(src, dup_at);
  detail::Converter cv(win, o);
  std::uint64_t all = 0, dups = 0, lines = 0;
  bool probes = false;
  // Pass 1: every sample parsed and checked (so that an error is found before any output), the
  // tasks and CPUs for the header, and the tick steal records.
  try {
    std::optional<Error> beyond;  // the first sample beyond --ncpus: after any syntax error
    detail::ScriptReader rd(src);
    detail::Dedup dedup;
    std::size_t next_report = std::size_t{8} << 20;
    for (Record r; rd.next(r);) {
      if (o.progress && rd.bytes() >= next_report) {
        o.progress(rd.bytes(), src.size);
        next_report = rd.bytes() + (std::size_t{8} << 20);
      }
      ++all;
      if (o.ncpus && r.cpu >= o.ncpus && !beyond)
        beyond = Error{r.line, r.cpu_col, fmt::format("sample on cpu {}, beyond --ncpus {}", r.cpu, o.ncpus), "perf"};
      if (dedup.dup(r)) {
        ++dups;
        dup_at.push_back(all - 1);
        dedup.keep(r);
        continue;
      }
      if (!probes) {
        const auto p = vtime::probe_of(r.event);
        probes = (p == vtime::Probe::UserExit || p == vtime::Probe::UserEnter || p == vtime::Probe::Switch) &&
                 vtime::task_fields(r.fields);
      }
      cv.declare_note(r);
      cv.steal_note(r);
      dedup.keep(r);
    }
    lines = rd.newlines();
    if (beyond) return *beyond;
    if (cv.task_error()) return *cv.task_error();
  } catch (const detail::Fail& f) { return f.e; }
  if (probes) {  // the probes' annotations pair records across the whole trace
    src.rewind();
    std::string text;
    for (auto p = src.next(); !p.empty(); p = src.next()) text += p;
    auto c = convert(text, o);
    if (!c) return c.error();
    if (on_stats) on_stats(c.value().stats);
    on_header(c.value().trace.header);
    for (const auto& e : c.value().trace.events) on_event(e);
    c.value().trace.events.clear();
    return c;
  }
  try {
    if (cv.steal_wanted()) {  // each CPU's ticks, to pair with their steal
      src.rewind();
      detail::ScriptReader rd(src);
      std::size_t i = 0, raw = 0, d = 0;
      for (Record r; rd.next(r); ++raw) {
        if (d < dup_at.size() && dup_at[d] == raw) {
          ++d;
          continue;
        }
        cv.steal_tick(r, i++);
      }
    }
    src.rewind();
    Conversion c = cv.run_stream(on_header, on_event, on_stats);
    if (cv.task_error()) return *cv.task_error();
    c.stats.records = all;
    c.stats.duplicates = dups;
    c.stats.lines = lines;
    return c;
  } catch (const detail::Fail& f) { return f.e; }  // the input changed between the passes
}

}  // namespace kacct::trace::perf
