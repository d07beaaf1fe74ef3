#include "tracedat.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tracedat_c.h"

namespace kacct::tracedat {

namespace {
constexpr char kMagic[] = "\x17\x08\x44tracing";
trace::Error error(std::string m) { return trace::Error{0, 0, std::move(m), "trace.dat"}; }

trace::Result<std::map<std::uint64_t, std::uint64_t>> tgids_of(const std::string& path) {
  std::map<std::uint64_t, std::uint64_t> m;
  const std::string base = path.ends_with(".xz") ? path.substr(0, path.size() - 3) : path;
  std::ifstream g(base + ".tgids");
  std::string l;
  for (std::uint32_t n = 1; g && std::getline(g, l); ++n) {
    std::istringstream in(l);
    std::uint64_t tid = 0, tgid = 0;
    std::string rest;
    if (!(in >> tid >> tgid) || (in >> rest)) return error(fmt::format("{}.tgids:{}:1: expected 'tid tgid'", base, n));
    m[tid] = tgid;
  }
  return m;
}
constexpr const char* kUnreadable = "libtracecmd cannot read it: not a trace.dat file, or truncated or damaged";
}  // namespace

bool is_tracedat_data(std::string_view head) { return head.starts_with(std::string_view(kMagic, sizeof kMagic - 1)); }

Input::Input(::kacct_td* td, std::map<std::uint64_t, std::uint64_t> tgids) : td_(td), tgid_(std::move(tgids)) {}
Input::~Input() { kacct_td_close(td_); }

trace::Result<std::unique_ptr<Input>> Input::open(const std::string& path) {
  auto t = tgids_of(path);
  if (!t) return t.error();
  ::kacct_td* td = kacct_td_open(path.c_str(), -1);
  if (!td) return error(kUnreadable);
  return std::unique_ptr<Input>(new Input(td, std::move(t.value())));
}

trace::Result<std::unique_ptr<Input>> Input::open_data(std::string_view data, const std::string& name) {
  auto t = tgids_of(name);
  if (!t) return t.error();
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/kacct-tracedat-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return error(
        fmt::format("cannot create a temporary file in {}: {}", tmpl.substr(0, tmpl.rfind('/')), std::strerror(errno)));
  ::unlink(tmpl.c_str());
  for (std::size_t done = 0; done < data.size();) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return error(fmt::format("cannot write a temporary file: {}", std::strerror(e)));
    }
    done += std::size_t(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  ::kacct_td* td = kacct_td_open(nullptr, fd);  // closes fd (libtracecmd opens its own)
  if (!td) return error(kUnreadable);
  return std::unique_ptr<Input>(new Input(td, std::move(t.value())));
}

void Input::library_print(bool on) { kacct_td_library_print(td_, on ? 1 : 0); }

std::uint64_t Input::fast_printed() const { return kacct_td_fast_printed(td_); }

void Input::rewind() {
  kacct_td_rewind(td_);
  n_ = 0;
  pending_lost_ = false;
}

bool Input::next(trace::perf::Record& r) {
  if (pending_lost_) {  // the event after a PERF_RECORD_LOST record
    pending_lost_ = false;
    r = std::move(held_);
    addrs_.swap(held_addrs_);
    r.line = ++n_;
    return true;
  }
  ::kacct_td_event e{};
  for (;;) {
    const int rc = kacct_td_next(td_, &e);
    if (rc < 0) throw std::bad_alloc();
    if (rc == 0) return false;
    if (e.info || !e.name) break;  // a stack with no event before it on its CPU: not a record
  }
  // A fresh record, its strings' storage reused.
  std::string comm = std::move(r.comm), event = std::move(r.event), fields = std::move(r.fields);
  std::vector<std::string> chain = std::move(r.chain);
  r = trace::perf::Record{};
  r.cpu = std::uint32_t(e.cpu);
  r.ts = e.ts;
  if (e.name) {
    event.assign(e.system ? e.system : "");
    event.push_back(':');
    event.append(e.name);
  } else {
    event.assign("unknown:id");
  }
  r.event = std::move(event);
  r.tid = e.pid > 0 ? std::uint64_t(e.pid) : 0;
  comm.assign(e.pid == 0 ? "swapper" : e.comm && *e.comm ? e.comm : "<...>");
  r.comm = std::move(comm);
  if (e.pid == 0)
    r.pid = 0;
  else if (auto g = tgid_.find(r.tid); g != tgid_.end())
    r.pid = g->second;
  fields.clear();
  if (e.info) fields.assign(e.info, e.info_len);
  r.fields = std::move(fields);
  chain.resize(std::size_t(e.nframes));
  for (int i = 0; i < e.nframes; ++i) chain[std::size_t(i)].assign(e.frames[i]);
  r.chain = std::move(chain);
  addrs_.assign(e.addrs, e.addrs + e.nframes);
  if (e.missed != 0) {  // as perf script --show-lost-events shows it (-1: a number not known)
    held_ = std::move(r);
    held_addrs_.swap(addrs_);
    addrs_.clear();
    pending_lost_ = true;
    r = trace::perf::Record{};
    r.cpu = held_.cpu;
    r.ts = held_.ts;
    r.tid = held_.tid;
    r.pid = held_.pid;
    r.comm = held_.comm;
    r.event = "PERF_RECORD_LOST";
    r.fields = fmt::format("lost {}", e.missed > 0 ? e.missed : 1);
  }
  r.line = ++n_;
  return true;
}

// One record as perf script prints it with -F comm,pid,tid,cpu,time,event,trace,ip,sym (the
// event's ip/sym are not in trace.dat and not needed), its callchain as frame lines.
void Input::render(const trace::perf::Record& r, const std::vector<std::uint64_t>& addrs, std::string& out) {
  // By hand, not fmt::format_to: formatting was a sixth of a trace.dat conversion's instructions.
  auto dec = [&out](std::uint64_t v, int min_digits) {
    char d[20];
    int n = 0;
    do d[n++] = char('0' + v % 10), v /= 10;
    while (v);
    for (; n < min_digits; ++n) d[n] = '0';
    while (n) out.push_back(d[--n]);
  };
  out.append(r.comm);
  out.push_back(' ');
  if (r.pid) dec(*r.pid, 1), out.push_back('/');
  dec(r.tid, 1);
  out.append(" [");
  dec(r.cpu, 3);
  out.append("] ");
  dec(r.ts / 1'000'000'000, 1);
  out.push_back('.');
  dec(r.ts % 1'000'000'000, 9);
  out.append(": ");
  out.append(r.event);
  out.append(r.event == "PERF_RECORD_LOST" ? " " : ": ");
  const std::size_t at = out.size();
  out.append(r.fields);
  std::replace(out.begin() + std::ptrdiff_t(at), out.end(), '\n', ' ');
  out.push_back('\n');
  for (std::size_t i = 0; i < r.chain.size(); ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::uint64_t a = i < addrs.size() ? addrs[i] : 0;
    out.push_back('\t');
    for (int sh = 60; sh >= 0; sh -= 4) out.push_back(kHex[(a >> sh) & 15]);
    out.push_back(' ');
    out.append(r.chain[i]);
    out.push_back('\n');
  }
}

trace::perf::Source Input::text() {
  trace::perf::Source s;
  s.next = [this]() -> std::string_view {
    text_.clear();
    while (text_.size() < (std::size_t{1} << 20) && next(scratch_)) render(scratch_, addrs_, text_);
    return text_;
  };
  s.rewind = [this] { rewind(); };
  return s;
}

namespace {
trace::Result<std::vector<trace::perf::Record>> all(trace::Result<std::unique_ptr<Input>> in, bool library_print) {
  if (!in) return in.error();
  in.value()->library_print(library_print);
  std::vector<trace::perf::Record> out;
  for (trace::perf::Record r; in.value()->next(r);) out.push_back(std::move(r));
  return out;
}
}  // namespace

trace::Result<std::vector<trace::perf::Record>> read(const std::string& path, bool library_print) {
  return all(Input::open(path), library_print);
}
trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& name,
                                                          bool library_print) {
  return all(Input::open_data(data, name), library_print);
}

}  // namespace kacct::tracedat
