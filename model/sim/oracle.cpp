#include "model/sim/oracle.hpp"

#include <fmt/format.h>

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

// The reads of the reaped children's times (syscall reads with `children`) that are not
// predicted (children_unknown): when a wait of its process before it reaped a child whose times
// the trace lacks (waitid: the child is not in the raw syscall; a child that is not a process of
// the trace), or when perf lost events (a lost exit or runtime update changes the child's sum).
// index: tid -> dense task index of the whole trace.
void unknown_children(const trace::perf::Stats& st, const trace::perf::Options& o, const Program& prog,
                      const std::map<std::uint64_t, std::uint32_t>& index, Prediction& out) {
  // group -> the first trace position after which its children's times are not known, and why
  std::map<std::uint32_t, std::pair<std::uint64_t, std::string>> unknown_from;
  auto lose = [&](std::uint32_t g, std::uint64_t at, std::string why) {
    auto [it, fresh] = unknown_from.try_emplace(g, at, std::move(why));
    if (!fresh && at < it->second.first) it->second = {at, why};
  };
  for (const auto& r : st.reaps) {
    auto reaper = index.find(r.reaper);
    if (reaper == index.end()) continue;
    const auto g = prog.tasks[reaper->second].group;
    auto child = r.child ? index.find(r.child) : index.end();
    if (child == index.end() || prog.tasks[child->second].pid != r.child)
      lose(g, r.at,
           r.child ? fmt::format("a wait reaped pid {}, which is not a process of the trace (perf line {})", r.child,
                                 r.line)
                   : fmt::format("a waitid() reaped a child the trace does not name (perf line {})", r.line));
  }
  if (st.lost_events)
    for (std::uint32_t g = 0; g < prog.ngroups; ++g) lose(g, 0, "perf lost events: a child's times may be incomplete");
  std::map<std::array<std::uint64_t, 3>, const trace::perf::SyscallRead*> wanted;
  for (const auto& q : o.syscall_reads)
    if (q.children) wanted[{q.tid, q.nr, q.seq}] = &q;
  for (const auto& s : st.cputime_syscalls) {
    auto w = wanted.find({s.tid, s.nr, s.seq});
    if (w == wanted.end()) continue;
    const auto id = w->second->id;
    auto task = index.find(s.tid);
    if (!s.exit_at || task == index.end()) {
      out.children_unknown[id] = "its sys_exit is not in the trace";
      continue;
    }
    const auto g = prog.tasks[task->second].group;
    if (auto u = unknown_from.find(g); u != unknown_from.end() && u->second.first <= *s.exit_at)
      out.children_unknown[id] = u->second.second;
  }
}
}  // namespace

struct PredictStream::State {
  State(const trace::perf::Options& o_, const arch::CpuFacts& cpu_, const arch::Config& cfg_, std::uint64_t pid_,
        std::function<void(ModelCfg&)> tweak_, std::size_t chunk_)
      : o(o_), cpu(cpu_), cfg(cfg_), pid(pid_), tweak(std::move(tweak_)), chunk(std::max<std::size_t>(chunk_, 1)) {}
  trace::perf::Options o;
  arch::CpuFacts cpu;
  arch::Config cfg;
  std::uint64_t pid;
  std::function<void(ModelCfg&)> tweak;
  std::size_t chunk;  // events per run step
  const trace::perf::Stats* st = nullptr;
  ModelCfg mcfg;
  const RunOptions ro{.check = false};
  std::optional<Compiler> comp;
  std::optional<LiveRun> run;
  std::optional<trace::Error> error;                       // the converted trace does not compile
  std::unordered_map<std::uint64_t, std::uint32_t> index;  // tid -> dense index (a reused tid: the later task)
  std::size_t indexed = 0;                                 // tasks of the program in `index`
  std::size_t reaps_next = 0, foreign_next = 0, syscalls_next = 0;
  std::map<std::array<std::uint64_t, 3>, std::uint64_t> wanted;  // children reads: (tid, nr, seq) -> id
  std::vector<std::size_t> open;                // their cputime_syscalls entries whose sys_exit has not come yet
  std::vector<Program::ChildrenRead> children;  // scratch
  std::set<std::uint64_t> threads;
  std::vector<ReadResult> reads;  // taken out of the run after each step

  // The reaps, foreign reads and children reads the conversion recorded so far, into the
  // program (they are recorded in the order of their positions: the lists stay sorted).
  void place() {
    if (!st) return;  // no statistics given: nothing is placed beside the trace
    auto& p = comp->program();
    for (; indexed < p.tasks.size(); ++indexed)
      if (indexed >= p.header.ncpus) index[p.tasks[indexed].tid] = std::uint32_t(indexed);
    auto find = [&](std::uint64_t tid) -> std::optional<std::uint32_t> {
      auto it = index.find(tid);
      if (it == index.end()) return std::nullopt;
      return it->second;
    };
    // Only what lies within the events compiled so far: a whole conversion's statistics are
    // complete from the start, and a later entry's tasks may not be forked yet.
    const std::uint64_t limit = p.base + p.events.size();
    for (; reaps_next < st->reaps.size() && st->reaps[reaps_next].at <= limit; ++reaps_next) {
      const auto& r = st->reaps[reaps_next];
      const auto reaper = find(r.reaper);
      const auto child = r.child ? find(r.child) : std::nullopt;
      if (!reaper || !child || p.tasks[*child].pid != r.child) continue;  // unknown_children() says why
      p.reaps.push_back({std::uint32_t(r.at), *reaper, *child, r.seq, r.rusage, r.may_reap});
    }
    for (; foreign_next < st->foreign_reads.size() && st->foreign_reads[foreign_next].at <= limit; ++foreign_next) {
      const auto& f = st->foreign_reads[foreign_next];
      if (const auto target = find(f.target)) p.foreign_reads.push_back({std::uint32_t(f.at), *target, f.id});
    }
    for (; syscalls_next < st->cputime_syscalls.size(); ++syscalls_next) {
      const auto& q = st->cputime_syscalls[syscalls_next];
      if (wanted.count({q.tid, q.nr, q.seq})) open.push_back(syscalls_next);
    }
    // Children reads have no side effect: those unknown_children() rejects may run too.
    children.clear();
    std::erase_if(open, [&](std::size_t k) {
      const auto& q = st->cputime_syscalls[k];
      if (!q.exit_at || *q.exit_at > limit) return false;
      if (const auto task = find(q.tid))
        children.push_back({std::uint32_t(*q.exit_at), *task, wanted.at({q.tid, q.nr, q.seq})});
      return true;
    });
    std::stable_sort(children.begin(), children.end(), [](const auto& a, const auto& b) { return a.event < b.event; });
    p.children_reads.insert(p.children_reads.end(), children.begin(), children.end());
  }
  void step() {
    place();
    run->advance();
    auto& r = run->partial().reads;
    reads.insert(reads.end(), r.begin(), r.end());
    r.clear();
  }
};

PredictStream::PredictStream(const trace::perf::Options& o, const arch::CpuFacts& cpu, const arch::Config& cfg,
                             std::uint64_t pid, std::function<void(ModelCfg&)> tweak, std::size_t chunk)
    : s_(std::make_unique<State>(o, cpu, cfg, pid, std::move(tweak), chunk)) {
  for (const auto& q : o.syscall_reads)
    if (q.children) s_->wanted.try_emplace({q.tid, q.nr, q.seq}, q.id);
}
PredictStream::~PredictStream() = default;

void PredictStream::stats(const trace::perf::Stats& st) { s_->st = &st; }

void PredictStream::header(const trace::Header& h) {
  auto& s = *s_;
  if (auto e = trace::check_header(h)) {
    s.error = *e;
    return;
  }
  if (h.ncpus > 0xffff) {
    s.error = trace::Error{0, 0, "ncpus above 65535 is not supported by the simulator", "ncpus"};
    return;
  }
  s.mcfg = model_cfg(s.cpu, s.cfg);
  // A kernel runs vtime only on its nohz_full CPUs (vtime_accounting_enabled_this_cpu()); the
  // tick accounts the others. Probes show where vtime ran; without them, no nohz_full= (the
  // caller's tweak names the CPUs otherwise).
  s.mcfg.gen.nohz_full = 0;
  if (s.st)
    for (auto k : s.st->vtime.cpus)
      if (k < 64) s.mcfg.gen.nohz_full |= std::uint64_t{1} << k;
  if (s.tweak) s.tweak(s.mcfg);
  for (const auto& d : h.tasks)
    if (d.pid == s.pid) s.threads.insert(d.tid);
  s.comp.emplace(h);
  s.run.emplace(s.comp->program(), s.mcfg, s.ro);
}

void PredictStream::event(const trace::Event& e) {
  auto& s = *s_;
  if (s.error || !s.comp) return;
  auto& p = s.comp->program();
  if (p.events.size() >= s.chunk) {  // a full chunk runs once the next event exists
    s.step();
    s.comp->next_chunk();
  }
  if (auto err = s.comp->add(e)) {
    s.error = *err;
    return;
  }
  if (e.kind == trace::Kind::Fork && e.fork_pid.value_or(e.b) == s.pid) s.threads.insert(e.b);
}

trace::Result<Prediction> PredictStream::finish(trace::perf::Conversion conv) {
  auto& s = *s_;
  if (!s.comp && !s.error) s.error = trace::Error{0, 0, "no header", "header"};
  if (s.error)
    return trace::Error{0, 0, "internal error: the converted trace does not compile: " + s.error->to_string(), "perf"};
  Prediction out;
  out.conversion = std::move(conv);
  const auto& c = out.conversion;
  s.st = &c.stats;  // the final statistics (the converter's were moved into conv)
  s.step();
  auto res = std::move(*s.run).finish();
  s.reads.insert(s.reads.end(), res.reads.begin(), res.reads.end());
  const auto& prog = s.comp->program();
  std::map<std::uint64_t, std::uint32_t> index;  // tid -> dense task index
  for (std::uint32_t k = prog.header.ncpus; k < prog.tasks.size(); ++k) {
    index[prog.tasks[k].tid] = k;
    out.tids.insert(prog.tasks[k].tid);
  }
  unknown_children(c.stats, s.o, prog, index, out);
  out.threads = std::move(s.threads);
  const auto& threads = out.threads;
  for (std::size_t i = 0; i < s.reads.size(); ++i) {
    const auto& r = s.reads[i];
    if (r.id >= trace::perf::kCheckpointBase) {
      const auto k = r.id - trace::perf::kCheckpointBase;
      if (k >= c.stats.checkpoints.size()) continue;
      const auto& want = c.stats.checkpoints[k];
      auto& cs = out.checkpoints;
      ++cs.total;
      if (r.utime == want.utime && r.stime == want.stime) {
        ++cs.exact;
      } else if (cs.diffs.size() < 10) {
        cs.diffs.push_back(fmt::format("perf line {}: tid {}: kernel utime {} stime {}, kacct {} {} (ns)", want.line,
                                       want.tid, want.utime, want.stime, r.utime, r.stime));
      }
      continue;
    }
    const bool recorded = (r.id & ~trace::perf::kUpperReadBit) >= trace::perf::kSyscallReadBase;
    if (!threads.count(r.tid) && !recorded) continue;
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
    p.steal_unknown_before = i < c.stats.steal_unknown_before_read.size() ? c.stats.steal_unknown_before_read[i] : 0;
    out.reads.push_back(p);
  }
  for (const auto& r : res.foreign_reads) {  // /proc/PID/stat of another process: clock ticks
    PredictedRead q;
    q.marker = r.id;
    q.kind = r.kind;
    q.tid = r.tid;
    q.ts_ns = c.stats.base_ns + r.ts;
    q.unit = "clock_ticks";
    q.utime_ns = r.utime;
    q.stime_ns = r.stime;
    q.utime = r.utime / 10'000'000;
    q.stime = r.stime / 10'000'000;
    q.value = q.rtime_ns = r.rtime;
    q.lost_events_before = c.stats.lost_events;  // not tracked per foreign read: any loss counts
    out.reads.push_back(q);
  }
  for (const auto& k : res.children_reads)
    if (!out.children_unknown.count(k.id)) out.children[k.id] = {k.utime, k.stime};
  out.reaps = res.reaps;
  for (const auto& r : res.reaps)
    if (r.id) out.wait4_reaps[{r.reaper_tid, r.id}] = r;
  for (auto tid : threads)
    if (auto it = c.stats.task_ticks.find(tid); it != c.stats.task_ticks.end()) {
      out.ticks_user += it->second[0];
      out.ticks_kernel += it->second[1];
      out.ticks_by_tid[tid] = it->second;
    }
  return out;
}

trace::Result<Prediction> predict(std::string_view text, const trace::perf::Options& o, const arch::CpuFacts& cpu,
                                  const arch::Config& cfg, std::uint64_t pid,
                                  const std::function<void(ModelCfg&)>& tweak) {
  auto conv = trace::perf::convert(text, o);
  if (!conv) return conv.error();
  return predict(std::move(conv).value(), o, cpu, cfg, pid, tweak);
}

trace::Result<Prediction> predict(trace::perf::Conversion conv, const trace::perf::Options& o,
                                  const arch::CpuFacts& cpu, const arch::Config& cfg, std::uint64_t pid,
                                  const std::function<void(ModelCfg&)>& tweak) {
  PredictStream ps(o, cpu, cfg, pid, tweak);
  ps.stats(conv.stats);
  ps.header(conv.trace.header);
  for (const auto& e : conv.trace.events) ps.event(e);
  return ps.finish(std::move(conv));
}

std::string_view name(Agreement a) {
  switch (a) {
    case Agreement::Exact: return "exact";
    case Agreement::WithinBounds: return "within_bounds";
    case Agreement::Off: return "off";
    case Agreement::Unverifiable: return "unverifiable";
  }
  return "?";
}

std::vector<ReadComparison> compare(const Prediction& p, const std::vector<KernelRead>& kernel) {
  using trace::perf::kUpperReadBit;
  const auto& clocks = p.conversion.stats.read_clocks;
  std::vector<ReadComparison> out;
  for (const auto& k : kernel) {
    ReadComparison c;
    c.marker = k.marker;
    c.kind = k.kind;
    const PredictedRead *lo = nullptr, *hi = nullptr;
    for (const auto& r : p.reads) {
      if (r.marker == k.marker && r.kind == k.kind) lo = &r;
      if (r.marker == (k.marker | kUpperReadBit) && r.kind == k.kind) hi = &r;
    }
    const trace::perf::Stats::ReadClock* clock = nullptr;
    for (const auto& rc : clocks)
      if (rc.marker == k.marker && rc.kind == k.kind) clock = &rc;
    if (clock) c.how = clock->how;
    if (!lo || lo->lost_events_before > 0 || lo->steal_unknown_before > 0) {
      c.detail = !lo                          ? "no prediction (the marker or the read is not in the trace)"
                 : lo->lost_events_before > 0 ? "perf lost events before this read"
                                              : fmt::format("the steal of {} earlier ticks of the process is not known",
                                                            lo->steal_unknown_before);
      out.push_back(c);
      continue;
    }
    std::vector<std::string> bad;
    auto check = [&](const char* what, std::optional<std::uint64_t> kv, std::uint64_t m,
                     std::optional<std::uint64_t> m_hi) {
      if (!kv) return;
      const std::uint64_t a = std::min(m, m_hi.value_or(m)), b = std::max(m, m_hi.value_or(m));
      if (*kv == m && (!m_hi || *m_hi == m)) return;
      if (m_hi && *kv >= a && *kv <= b) {
        if (c.agreement == Agreement::Exact) c.agreement = Agreement::WithinBounds;
        return;
      }
      bad.push_back(m_hi ? fmt::format("{}: kernel {} not in kacct [{}, {}]", what, *kv, a, b)
                         : fmt::format("{}: kernel {} kacct {}", what, *kv, m));
    };
    c.agreement = Agreement::Exact;
    const bool clock_read = k.kind == trace::ReadKind::ProcessCputime || k.kind == trace::ReadKind::ThreadCputime;
    if (clock_read) {
      check("value", k.value, lo->value, std::nullopt);
    } else {
      check("utime", k.utime, lo->utime, hi ? std::optional(hi->utime) : std::nullopt);
      check("stime", k.stime, lo->stime, hi ? std::optional(hi->stime) : std::nullopt);
    }
    if (clock && clock->raw) {  // the kernel's own inputs to cputime_adjust()
      if (clock->cr != lo->rtime_ns)
        bad.push_back(fmt::format("rtime in: kernel {} kacct {}", clock->cr, lo->rtime_ns));
      if (clock->how == "inferred" && clock->cu != clock->model_utime_in)
        bad.push_back(fmt::format("utime in: kernel {} probes {}", clock->cu, clock->model_utime_in));
    }
    if (!bad.empty()) {
      c.agreement = Agreement::Off;
      for (const auto& b : bad) c.detail += (c.detail.empty() ? "" : "; ") + b;
    }
    out.push_back(c);
  }
  return out;
}

bool recorded_kind(std::string_view read, RecordedRead& out) {
  using trace::ReadKind;
  namespace perf = trace::perf;
  struct Row {
    std::string_view name;
    std::uint64_t nr;
    ReadKind kind;
    const char* why;    // non-null: not modeled
    bool place = true;  // false: the kernel computes no CPU times for it (nothing for the model to do)
  };
  // Reads of /proc files are read() syscalls (pread64 is not counted by the recorder).
  static constexpr Row rows[] = {
      {"rusage_self", perf::kNrGetrusage, ReadKind::RusageSelf, nullptr},
      {"rusage_thread", perf::kNrGetrusage, ReadKind::RusageThread, nullptr},
      // signal->cutime/cstime as they are (no cputime_adjust(): nothing to place in the trace)
      {"rusage_children", perf::kNrGetrusage, ReadKind::RusageSelf, nullptr, false},
      {"times", perf::kNrTimes, ReadKind::ProcStat, nullptr},
      // wait4()'s getrusage(child, RUSAGE_BOTH) after its reap: what the reap added
      {"wait4_rusage", perf::kNrWait4, ReadKind::RusageSelf, nullptr, false},
      {"process_cputime", perf::kNrClockGettime, ReadKind::ProcessCputime, nullptr},
      {"thread_cputime", perf::kNrClockGettime, ReadKind::ThreadCputime, nullptr},
      {"cpuclock_prof", perf::kNrClockGettime, ReadKind::ProcessCputime,
       "CPUCLOCK_PROF (utime+stime, unadjusted): not a read the model predicts"},
      {"cpuclock_virt", perf::kNrClockGettime, ReadKind::ProcessCputime,
       "CPUCLOCK_VIRT (utime, unadjusted): not a read the model predicts"},
      {"proc_stat", perf::kNrRead, ReadKind::ProcStat, nullptr},
      {"task_stat", perf::kNrRead, ReadKind::TaskStat, nullptr},
      {"schedstat", perf::kNrRead, ReadKind::Taskstats, nullptr},
      {"sys_stat", perf::kNrRead, ReadKind::ProcStat,
       "/proc/stat: every CPU's kcpustat, the whole machine's (the trace keeps one process tree)", false},
      {"failed", perf::kNrRead, ReadKind::ProcStat, "the syscall failed: the kernel returned no times", false},
  };
  for (const auto& row : rows)
    if (row.name == read) {
      out.read = std::string(read);
      out.spec.nr = row.nr;
      out.spec.kind = row.kind;
      out.modeled = !row.why;
      out.why = row.why ? row.why : "";
      out.rtime_only = read == "schedstat";
      out.children_only = read == "rusage_children";
      out.reap_rusage = read == "wait4_rusage";
      out.spec.children = read == "rusage_children" || read == "times";
      out.spec.place = row.place;
      return true;
    }
  return false;
}

void recorded_failure(std::string_view call, std::string_view err, RecordedRead& out) {
  using trace::ReadKind;
  // EFAULT: getrusage() and times() computed the times (their prev_cputime moved) before the
  // copy to the user failed. Other failures (EINVAL: an unknown `who` or clock) compute nothing,
  // and a failed clock_gettime() only samples runtime, which the trace has anyway.
  if (err != "EFAULT") return;
  struct Row {
    std::string_view call;
    ReadKind kind;
  };
  static constexpr Row rows[] = {{"getrusage(RUSAGE_SELF)", ReadKind::RusageSelf},
                                 {"getrusage(RUSAGE_THREAD)", ReadKind::RusageThread},
                                 {"times()", ReadKind::ProcStat}};
  for (const auto& row : rows)
    if (row.call == call) {
      out.spec.kind = row.kind;
      out.spec.place = true;
    }
}

std::vector<ReadComparison> compare(const Prediction& p, const std::vector<RecordedRead>& recorded) {
  std::vector<ReadComparison> out;
  for (const auto& k : recorded) {
    ReadComparison c;
    c.marker = k.spec.id;
    c.kind = k.spec.kind;
    c.label = fmt::format("tid {}: {} #{}", k.spec.tid, k.call, k.spec.seq);
    const PredictedRead *m = nullptr, *hi = nullptr;  // hi: a bounded read's upper twin
    for (const auto& r : p.reads) {
      if (r.marker == k.spec.id) m = &r;
      if (r.marker == (k.spec.id | trace::perf::kUpperReadBit)) hi = &r;
    }
    // The reaped children's times: at the read's sys_exit (nsec_to_clock_t for times(),
    // ns_to_kernel_old_timeval for getrusage()).
    const auto ch = p.children.find(k.spec.id);
    const auto ch_unknown = p.children_unknown.find(k.spec.id);
    const bool wants_children = k.children_only || k.cutime || k.cstime;
    if (k.modeled && wants_children && ch == p.children.end()) {
      c.detail = ch_unknown != p.children_unknown.end() ? "children's times: " + ch_unknown->second
                                                        : "no prediction of the children's times";
      out.push_back(c);
      continue;
    }
    if (k.modeled && k.reap_rusage) {
      // The child's cutime plus thread_group_cputime_adjusted() again: cputime_adjust() with the
      // inputs of the reap returns the prev_cputime it just stored, so the reap's own values.
      const auto w = p.wait4_reaps.find({k.spec.tid, k.spec.seq});
      if (w == p.wait4_reaps.end() || (k.spec.target && w->second.child_tid != k.spec.target)) {
        c.detail = "no reap of this child at this wait4() in the model";
        out.push_back(c);
        continue;
      }
      c.agreement = Agreement::Exact;
      const auto u = (w->second.utime + w->second.children_utime) / 1000;
      const auto s = (w->second.stime + w->second.children_stime) / 1000;
      if ((k.utime && *k.utime != u) || (k.stime && *k.stime != s)) {
        c.agreement = Agreement::Off;
        c.detail = fmt::format("utime: kernel {} kacct {}; stime: kernel {} kacct {}", k.utime.value_or(0), u,
                               k.stime.value_or(0), s);
      }
      out.push_back(c);
      continue;
    }
    if (k.modeled && k.children_only) {
      c.agreement = Agreement::Exact;
      std::vector<std::string> bad;
      if (k.utime && *k.utime != ch->second[0] / 1000)
        bad.push_back(fmt::format("cutime: kernel {} kacct {}", *k.utime, ch->second[0] / 1000));
      if (k.stime && *k.stime != ch->second[1] / 1000)
        bad.push_back(fmt::format("cstime: kernel {} kacct {}", *k.stime, ch->second[1] / 1000));
      if (!bad.empty()) {
        c.agreement = Agreement::Off;
        for (const auto& b : bad) c.detail += (c.detail.empty() ? "" : "; ") + b;
      }
      out.push_back(c);
      continue;
    }
    if (!k.modeled || !m || m->lost_events_before > 0) {
      c.detail = !k.modeled ? k.why
                 : m        ? "perf lost events before this read"
                            : "no prediction (the syscall is not in the trace)";
      out.push_back(c);
      continue;
    }
    c.agreement = Agreement::Exact;
    std::vector<std::string> bad, within;
    // With an upper twin: exact where both agree with the kernel, within bounds where the
    // kernel's value lies between them.
    auto check = [&](const char* what, std::optional<std::uint64_t> kv, auto get) {
      if (!kv) return;
      const std::uint64_t mv = get(*m), hv = hi ? get(*hi) : mv;
      if (*kv == mv && *kv == hv) return;
      if (*kv >= std::min(mv, hv) && *kv <= std::max(mv, hv)) {
        if (c.agreement == Agreement::Exact) c.agreement = Agreement::WithinBounds;
        within.push_back(fmt::format("{}: kernel {} in kacct [{}, {}]", what, *kv, std::min(mv, hv), std::max(mv, hv)));
        return;
      }
      bad.push_back(
          hi ? fmt::format("{}: kernel {} not in kacct [{}, {}]", what, *kv, std::min(mv, hv), std::max(mv, hv))
             : fmt::format("{}: kernel {} kacct {}", what, *kv, mv));
    };
    const bool clock_read =
        k.spec.kind == trace::ReadKind::ProcessCputime || k.spec.kind == trace::ReadKind::ThreadCputime;
    if (k.rtime_only) {
      check("rtime ns", k.value, [](const PredictedRead& x) { return x.rtime_ns; });
    } else if (clock_read) {
      check("value", k.value, [](const PredictedRead& x) { return x.value; });
    } else {
      check("utime", k.utime, [](const PredictedRead& x) { return x.utime; });
      check("stime", k.stime, [](const PredictedRead& x) { return x.stime; });
    }
    if (!within.empty())
      c.detail = fmt::format("{} (the trace does not say on which side of a tick in the syscall the kernel read)",
                             fmt::join(within, "; "));
    if (ch != p.children.end()) {
      const auto& v = ch->second;
      check("cutime", k.cutime, [&](const PredictedRead&) { return v[0] / 10'000'000; });
      check("cstime", k.cstime, [&](const PredictedRead&) { return v[1] / 10'000'000; });
    }
    if (!bad.empty()) {
      c.agreement = Agreement::Off;
      for (const auto& b : bad) c.detail += (c.detail.empty() ? "" : "; ") + b;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace kacct::sim
