// kacct perf-convert / kacct perf-replay: a real kernel's `perf script` output as a kacct trace,
// and the values the kernel reported at the workload's marked reads, predicted (docs/perf.md).
#include <fmt/format.h>
#include <lzma.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "common.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/perf.hpp"

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;
namespace perf = trace::perf;

std::string decompress_xz(const std::string& in, const std::string& name) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
    throw Failure(name + ": cannot start the xz decoder");
  std::string out;
  char buf[1 << 16];
  s.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  s.avail_in = in.size();
  lzma_ret ret = LZMA_OK;
  while (ret == LZMA_OK) {
    s.next_out = reinterpret_cast<std::uint8_t*>(buf);
    s.avail_out = sizeof buf;
    ret = lzma_code(&s, LZMA_FINISH);
    out.append(buf, sizeof buf - s.avail_out);
  }
  lzma_end(&s);
  if (ret != LZMA_STREAM_END)
    throw Failure(fmt::format("{}: xz data is corrupt or truncated (lzma error {}) after {} bytes of output", name,
                              int(ret), out.size()));
  return out;
}

// A file or "-" (stdin), plain or xz-compressed (detected by the xz magic bytes).
std::string read_input(const std::string& path) {
  std::string data;
  if (path == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Failure(fmt::format("cannot open '{}'", path));
    data.assign(std::istreambuf_iterator<char>(f), {});
  }
  static constexpr char magic[] = {'\xfd', '7', 'z', 'X', 'Z', '\0'};
  if (data.size() >= 6 && std::equal(magic, magic + 6, data.begin())) return decompress_xz(data, path);
  return data;
}

perf::Conversion convert_or_exit(const std::string& path, const perf::Options& o) {
  const std::string text = read_input(path);
  auto c = perf::convert(text, o);
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
  j["markers"] = s.markers;
  j["reads"] = s.reads;
  j["notes"] = s.notes;
  return j;
}

struct ReadUnit {
  const char* unit;
  std::uint64_t div;
};
// What userspace sees: /proc stat in USER_HZ clock ticks (nsec_to_clock_t, USER_HZ=100),
// getrusage in microseconds (ns_to_kernel_old_timeval), the CPU clocks in ns.
ReadUnit read_unit(trace::ReadKind k) {
  switch (k) {
    case trace::ReadKind::ProcStat:
    case trace::ReadKind::TaskStat: return {"clock_ticks", 10'000'000};
    case trace::ReadKind::RusageSelf:
    case trace::ReadKind::RusageThread: return {"us", 1000};
    default: return {"ns", 1};
  }
}

void add_common(CLI::App* c, std::string& cpu, std::uint32_t& ncpus) {
  c->add_option("--cpu", cpu, "CPU model from the arch table (default x86-64)");
  c->add_option("--ncpus", ncpus, "number of CPUs (default: highest CPU seen + 1)");
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
    c->add_option("INPUT", *path, "perf script text, plain or .xz, or - for stdin")->required();
    c->add_option("-o,--output", *out, "write the trace here (default stdout)");
    c->add_flag("--stats", *stats, "print the conversion statistics (JSON) to stderr");
    add_common(c, *cpu, *ncpus);
    c->callback([=] {
      resolve_cpu(*cpu);
      perf::Options o;
      o.cpu_model = *cpu;
      o.ncpus = *ncpus;
      const auto conv = convert_or_exit(*path, o);
      const std::string text = trace::write(conv.trace);
      if (out->empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
      } else {
        std::ofstream f(*out, std::ios::binary);
        if (!(f << text)) throw Failure(fmt::format("cannot write '{}'", *out));
      }
      if (*stats) fmt::print(stderr, "{}\n", stats_json(conv.stats).dump(2));
    });
  }
  {
    auto* c = app.add_subcommand("perf-replay", "predict what the kernel reported at a workload's marked reads");
    auto path = std::make_shared<std::string>();
    auto cpu = std::make_shared<std::string>("x86-64");
    auto config = std::make_shared<std::string>("6.12-tick-steal-hz250");
    auto ncpus = std::make_shared<std::uint32_t>(0);
    auto pid = std::make_shared<std::uint64_t>(0);
    auto reads = std::make_shared<std::vector<std::string>>();
    auto as_json = std::make_shared<bool>(false);
    auto save = std::make_shared<std::string>();
    c->add_option("TRACE", *path, "perf script text, plain or .xz, or - for stdin")->required();
    c->add_option("--pid", *pid, "the workload's process id")->required();
    c->add_option("--read", *reads, "KIND[:TID]@K: the read that follows marker syscall 100000+K");
    c->add_option("--config", *config, "kernel configuration (default 6.12-tick-steal-hz250)");
    c->add_option("--save-trace", *save, "also write the converted kacct trace here");
    c->add_flag("--json", *as_json, "JSON output");
    add_common(c, *cpu, *ncpus);
    c->callback([=] {
      const auto facts = resolve_cpu(*cpu);
      const auto cfg = resolve_config(*config);
      require_legal(facts, cfg);
      perf::Options o;
      o.cpu_model = *cpu;
      o.ncpus = *ncpus;
      for (const auto& r : *reads) {
        std::string err;
        auto spec = perf::parse_read_spec(r, &err);
        if (!spec) throw Failure(fmt::format("--read '{}': {}", r, err));
        o.reads.push_back(*spec);
      }
      const auto conv = convert_or_exit(*path, o);
      if (!save->empty()) {
        std::ofstream f(*save, std::ios::binary);
        if (!(f << trace::write(conv.trace))) throw Failure(fmt::format("cannot write '{}'", *save));
      }
      auto prog = sim::compile(conv.trace);
      if (!prog) throw Failure("internal error: converted trace does not compile: " + prog.error().to_string());
      const auto& p = prog.value();
      const auto res = sim::run(p, sim::model_cfg(facts, cfg), {.check = false});
      std::set<std::uint64_t> threads;
      for (const auto& d : conv.trace.header.tasks)
        if (d.pid == *pid) threads.insert(d.tid);
      for (const auto& e : conv.trace.events)
        if (e.kind == trace::Kind::Fork && e.fork_pid.value_or(e.b) == *pid) threads.insert(e.b);
      json j;
      j["pid"] = *pid;
      j["cpu"] = facts.name;
      j["config"] = cfg.name();
      j["reads"] = json::array();
      for (const auto& r : res.reads) {
        if (!threads.count(r.tid)) continue;
        const auto u = read_unit(r.kind);
        json x;
        x["marker"] = r.id;
        x["kind"] = trace::name(r.kind);
        x["tid"] = r.tid;
        x["ts_ns"] = conv.stats.base_ns + r.ts;
        x["unit"] = u.unit;
        const bool clock = r.kind == trace::ReadKind::ThreadCputime || r.kind == trace::ReadKind::ProcessCputime;
        if (clock) {
          x["value"] = r.rtime;
        } else {
          x["utime"] = r.utime / u.div;
          x["stime"] = r.stime / u.div;
          x["utime_ns"] = r.utime;
          x["stime_ns"] = r.stime;
        }
        x["rtime_ns"] = r.rtime;
        j["reads"].push_back(x);
      }
      std::uint64_t tu = 0, tk = 0;
      json by_tid = json::object();
      for (auto tid : threads)
        if (auto it = conv.stats.task_ticks.find(tid); it != conv.stats.task_ticks.end()) {
          tu += it->second[0];
          tk += it->second[1];
          by_tid[std::to_string(tid)] = {{"user", it->second[0]}, {"kernel", it->second[1]}};
        }
      j["ticks"] = {{"user", tu}, {"kernel", tk}, {"by_tid", by_tid}};
      j["conversion"] = stats_json(conv.stats);
      if (*as_json) {
        print_json(j);
        return;
      }
      fmt::print("pid {} on {} ({}): {} user ticks, {} kernel ticks\n", *pid, facts.name, cfg.name(), tu, tk);
      Table t({"marker", "kind", "tid", "ts_ns", "utime", "stime", "unit", "rtime_ns"},
              {true, false, true, true, true, true, false, true});
      for (const auto& x : j["reads"])
        t.row({x["marker"].dump(), x["kind"].get<std::string>(), x["tid"].dump(), x["ts_ns"].dump(),
               x.contains("utime") ? x["utime"].dump() : x["value"].dump(), x.contains("stime") ? x["stime"].dump() : "-",
               x["unit"].get<std::string>(), x["rtime_ns"].dump()});
      fmt::print("{}", t.str());
      if (!conv.stats.repairs.empty()) {
        fmt::print("repairs (events perf did not record, inferred):\n");
        for (const auto& [k, v] : conv.stats.repairs) fmt::print("  {:>8}  {}\n", v, k);
      }
    });
  }
}

}  // namespace kacct::cli
