#include "tracedat.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "tracedat_c.h"

#include <unistd.h>

namespace kacct::tracedat {

namespace {
constexpr char kMagic[] = "\x17\x08\x44tracing";

struct Context {
  std::map<std::uint64_t, std::uint64_t> tgid;
  std::vector<trace::perf::Record> out;
  std::vector<long> last_on_cpu;  // index in out of each CPU's last event, -1: none
  std::string error;
};

int on_event(const kacct_td_event* e, void* data) {
  auto& c = *static_cast<Context*>(data);
  const auto line = std::uint32_t(c.out.size() + 1);
  if (e->cpu < 0 || e->cpu >= 4096) {
    c.error = fmt::format("event {}: CPU {} (at most 4095)", line, e->cpu);
    return 1;
  }
  if (!e->system || !e->name) {
    c.error = fmt::format("event {}: an event id with no format in the file", line);
    return 1;
  }
  const auto cpu = std::size_t(e->cpu);
  if (cpu >= c.last_on_cpu.size()) c.last_on_cpu.resize(cpu + 1, -1);
  if (e->frames) {  // the stacktrace trigger writes the stack right after its event, on its CPU
    const long i = c.last_on_cpu[cpu];
    if (i >= 0 && c.out[std::size_t(i)].chain.empty())
      c.out[std::size_t(i)].chain.assign(e->frames, e->frames + e->nframes);
    return 0;
  }
  if (e->missed != 0) {  // as perf script --show-lost-events prints it (-1: a number not known)
    trace::perf::Record lost;
    lost.line = line;
    lost.cpu = std::uint32_t(cpu);
    lost.ts = e->ts;
    lost.event = "PERF_RECORD_LOST";
    lost.fields = fmt::format("lost {}", e->missed > 0 ? e->missed : 1);
    c.out.push_back(std::move(lost));
  }
  trace::perf::Record r;
  r.line = std::uint32_t(c.out.size() + 1);
  r.cpu = std::uint32_t(cpu);
  r.ts = e->ts;
  r.event = fmt::format("{}:{}", e->system, e->name);
  r.tid = e->pid > 0 ? std::uint64_t(e->pid) : 0;
  r.comm = e->pid == 0 ? "swapper" : e->comm && *e->comm ? e->comm : "<...>";
  if (e->pid == 0)
    r.pid = 0;
  else if (auto g = c.tgid.find(r.tid); g != c.tgid.end())
    r.pid = g->second;
  r.fields.assign(e->info ? e->info : "", e->info ? e->info_len : 0);
  c.last_on_cpu[cpu] = long(c.out.size());
  c.out.push_back(std::move(r));
  return 0;
}
}  // namespace

bool is_tracedat_data(std::string_view head) { return head.starts_with(std::string_view(kMagic, sizeof kMagic - 1)); }

namespace {
trace::Result<std::vector<trace::perf::Record>> read_from(const std::string& path, int fd) {
  auto err = [](std::string m) { return trace::Error{0, 0, std::move(m), "trace.dat"}; };
  Context c;
  const std::string base = path.ends_with(".xz") ? path.substr(0, path.size() - 3) : path;
  if (std::ifstream g(base + ".tgids"); g) {
    std::string l;
    std::uint32_t n = 0;
    while (std::getline(g, l)) {
      ++n;
      std::istringstream in(l);
      std::uint64_t tid = 0, tgid = 0;
      std::string rest;
      if (!(in >> tid >> tgid) || (in >> rest)) return err(fmt::format("{}.tgids:{}:1: expected 'tid tgid'", base, n));
      c.tgid[tid] = tgid;
    }
  }
  const int rc = kacct_td_read(fd < 0 ? path.c_str() : nullptr, fd, on_event, &c);
  if (rc == KACCT_TD_UNREADABLE)
    return err("libtracecmd cannot read it: not a trace.dat file, or truncated or damaged");
  if (!c.error.empty()) return err(c.error);
  if (rc < 0) return err("libtracecmd could not read the events");
  return std::move(c.out);
}
}  // namespace

trace::Result<std::vector<trace::perf::Record>> read(const std::string& path) { return read_from(path, -1); }

trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/kacct-tracedat-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return trace::Error{
        0, 0,
        fmt::format("cannot create a temporary file in {}: {}", tmpl.substr(0, tmpl.rfind('/')), std::strerror(errno)),
        "trace.dat"};
  ::unlink(tmpl.c_str());
  for (std::size_t done = 0; done < data.size();) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return trace::Error{0, 0, fmt::format("cannot write a temporary file: {}", std::strerror(e)), "trace.dat"};
    }
    done += std::size_t(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return read_from(path, fd);  // the walk closes fd
}

}  // namespace kacct::tracedat
