#include "model/sim/oracle.hpp"

#include <set>

#include "model/sim/machine.hpp"

namespace kacct::sim {

namespace {
struct Unit {
  const char* name;
  std::uint64_t div;
};
// What userspace sees: /proc stat in USER_HZ clock ticks (nsec_to_clock_t, USER_HZ=100),
// getrusage in microseconds (ns_to_kernel_old_timeval), the taskstats reply in microseconds
// (bacct_add_tsk: ac_utime/ac_stime = ns / NSEC_PER_USEC, truncated), the CPU clocks in ns.
Unit unit_of(trace::ReadKind k) {
  switch (k) {
    case trace::ReadKind::ProcStat:
    case trace::ReadKind::TaskStat: return {"clock_ticks", 10'000'000};
    case trace::ReadKind::RusageSelf:
    case trace::ReadKind::RusageThread:
    case trace::ReadKind::Taskstats: return {"us", 1000};
    default: return {"ns", 1};
  }
}
}  // namespace

trace::Result<Prediction> predict(std::string_view text, const trace::perf::Options& o, const arch::CpuFacts& cpu,
                                  const arch::Config& cfg, std::uint64_t pid) {
  auto conv = trace::perf::convert(text, o);
  if (!conv) return conv.error();
  Prediction out;
  out.conversion = std::move(conv).value();
  const auto& c = out.conversion;
  auto prog = compile(c.trace);
  if (!prog) return trace::Error{0, 0, "internal error: the converted trace does not compile: " + prog.error().to_string(), "perf"};
  const auto res = run(prog.value(), model_cfg(cpu, cfg), {.check = false});
  std::set<std::uint64_t> threads;
  for (const auto& d : c.trace.header.tasks)
    if (d.pid == pid) threads.insert(d.tid);
  for (const auto& e : c.trace.events)
    if (e.kind == trace::Kind::Fork && e.fork_pid.value_or(e.b) == pid) threads.insert(e.b);
  for (std::size_t i = 0; i < res.reads.size(); ++i) {
    const auto& r = res.reads[i];
    if (!threads.count(r.tid)) continue;
    const auto u = unit_of(r.kind);
    PredictedRead p;
    p.marker = r.id;
    p.kind = r.kind;
    p.tid = r.tid;
    p.ts_ns = c.stats.base_ns + r.ts;
    p.unit = u.name;
    p.utime_ns = r.utime;
    p.stime_ns = r.stime;
    p.utime = r.utime / u.div;
    p.stime = r.stime / u.div;
    p.value = r.rtime;
    p.rtime_ns = r.rtime;
    p.lost_events_before = i < c.stats.lost_before_read.size() ? c.stats.lost_before_read[i] : 0;
    out.reads.push_back(p);
  }
  for (auto tid : threads)
    if (auto it = c.stats.task_ticks.find(tid); it != c.stats.task_ticks.end()) {
      out.ticks_user += it->second[0];
      out.ticks_kernel += it->second[1];
      out.ticks_by_tid[tid] = it->second;
    }
  return out;
}

}  // namespace kacct::sim
