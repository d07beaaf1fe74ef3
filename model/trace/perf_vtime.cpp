// Gen vtime from kprobes: the probes' annotations (perf_vtime.hpp) and the converter's overlay
// that turns them into transitions and read clocks (perf_convert.hpp).
#include "model/trace/perf_vtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "model/trace/perf_convert.hpp"
#include "model/trace/perf_fields.hpp"

namespace kacct::trace::perf::vtime {
using detail::field;
using detail::num_field;

Probe probe_of(std::string_view e) {
  if (e.rfind("kprobes:", 0) != 0) return Probe::None;
  e.remove_prefix(8);
  if (e == "vtime_user_exit") return Probe::UserExit;
  if (e == "vtime_user_enter") return Probe::UserEnter;
  if (e == "vtime_task_switch") return Probe::Switch;
  if (e == "cputime_adjust") return Probe::CputimeAdjust;
  if (e == "bacct_add_tsk") return Probe::BacctAddTsk;
  return Probe::None;
}

std::optional<TaskFields> task_fields(std::string_view t) {
  TaskFields f;
  const std::pair<const char*, std::uint64_t*> keys[] = {{"pid", &f.pid}, {"st", &f.st}, {"vs", &f.vs}, {"vu", &f.vu},
                                                         {"vst", &f.vst}, {"tu", &f.tu}, {"ts", &f.ts}, {"rt", &f.rt}};
  for (auto [k, p] : keys) {
    auto v = num_field(t, k);
    if (!v) return std::nullopt;
    *p = *v;
  }
  f.off = num_field(t, "off");
  return f;
}

std::optional<AdjustFields> adjust_fields(std::string_view t) {
  AdjustFields f;
  const std::pair<const char*, std::uint64_t*> keys[] = {
      {"cs", &f.cs}, {"cu", &f.cu}, {"cr", &f.cr}, {"pu", &f.pu}, {"ps", &f.ps}};
  for (auto [k, p] : keys) {
    auto v = num_field(t, k);
    if (!v) return std::nullopt;
    *p = *v;
  }
  return f;
}

std::optional<std::size_t> Annotations::index_after(std::uint64_t pid, std::size_t i) const {
  auto it = seq.find(pid);
  if (it == seq.end()) return std::nullopt;
  auto j = std::upper_bound(it->second.begin(), it->second.end(), i);
  if (j == it->second.end()) return std::nullopt;
  return *j;
}
const TaskFields* Annotations::after(std::uint64_t pid, std::size_t i) const {
  auto j = index_after(pid, i);
  return j ? &task.at(*j) : nullptr;
}
const TaskFields* Annotations::before(std::uint64_t pid, std::size_t i) const {
  auto it = seq.find(pid);
  if (it == seq.end()) return nullptr;
  auto j = std::lower_bound(it->second.begin(), it->second.end(), i);
  if (j == it->second.begin()) return nullptr;
  return &task.at(*std::prev(j));
}

namespace {
// A dead task's final switch: no later probe of it gives its flush clock (c1). The reap does:
// wait_task_zombie()'s thread_group_cputime_adjusted() fires the cputime_adjust() probe inside
// the reaper's wait4(), which returns the child's pid, with the child's stime after that flush.
// For a single-threaded child switched out in state SYS whose flush was accounted (stime grew:
// vtime_account_system() adds the residue only from TICK_NSEC on), c1 = starttime + the growth.
void reap_flush_clocks(const std::vector<Record>& recs, Annotations& a,
                       const std::unordered_map<std::size_t, std::size_t>& switch_of, std::uint64_t nr_wait4) {
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, long long>> next_exit;  // tid -> {nr, ret}
  std::unordered_map<std::size_t, std::pair<std::uint64_t, long long>> exit_of;      // probe -> its syscall's exit
  std::set<std::uint64_t> threaded;  // thread groups with a thread other than the leader
  for (std::size_t i = recs.size(); i-- > 0;) {
    const auto& r = recs[i];
    if (r.pid && *r.pid != r.tid && r.tid_known) threaded.insert(*r.pid);
    if (std::string_view(r.event) == "raw_syscalls:sys_exit") {
      const auto t = std::string_view(r.fields);
      const auto eq = t.find(" = ");
      long long ret = -1;
      std::uint64_t nr = ~std::uint64_t{0};
      if (eq != std::string_view::npos) {
        const auto v = detail::trim(t.substr(eq + 3));
        std::from_chars(v.data(), v.data() + v.size(), ret);
        if (auto p = t.find("NR "); p != std::string_view::npos) std::from_chars(t.data() + p + 3, t.data() + eq, nr);
      }
      next_exit[r.tid] = {nr, ret};
    } else if (probe_of(r.event) == Probe::CputimeAdjust) {
      if (auto n = next_exit.find(r.tid); n != next_exit.end()) exit_of[i] = n->second;
    }
  }
  for (const auto& [j, ex] : exit_of) {
    if (ex.first != nr_wait4 || ex.second <= 0) continue;
    const auto child = std::uint64_t(ex.second);
    const auto s = a.seq.find(child);
    const auto adj = adjust_fields(recs[j].fields);
    if (s == a.seq.end() || !adj || threaded.count(child)) continue;
    const std::size_t i = s->second.back();
    const auto sw = switch_of.find(i);
    const auto& f = a.task.at(i);
    if (i > j || sw == switch_of.end() || f.vs != kSys || adj->cu != f.tu || adj->cs <= f.ts + f.vst) continue;
    auto& x = a.switches.at(sw->second);
    const std::uint64_t c1 = f.st + (adj->cs - f.ts - f.vst) + a.offset;
    if (!x.c1 && x.c2.value_or(c1) >= c1) x.c1 = c1;
  }
}
}  // namespace

Annotations annotate(const std::vector<Record>& recs, std::uint64_t nr_wait4) {
  Annotations a;
  std::set<std::uint32_t> cpus;
  bool have_off = false;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto p = probe_of(recs[i].event);
    if (p != Probe::UserExit && p != Probe::UserEnter && p != Probe::Switch) continue;
    auto f = task_fields(recs[i].fields);
    if (!f) continue;  // the converter reports malformed probes
    if (f->off) {
      if (have_off && *f->off != a.offset) a.offset_varies = true;
      a.offset = *f->off;
      have_off = true;
    }
    cpus.insert(recs[i].cpu);
    a.task.emplace(i, *f);
    a.seq[f->pid].push_back(i);
  }
  a.cpus.assign(cpus.begin(), cpus.end());
  const std::uint64_t off = a.offset;
  auto perf_domain = [off](std::uint64_t sched_clock) { return sched_clock + off; };

  // Each sched_switch and the switch probe after it (finish_task_switch() on the same CPU), and
  // next's starttime there (its next probe's st).
  std::unordered_map<std::uint32_t, std::size_t> pending;  // cpu -> sched_switch index
  std::unordered_map<std::size_t, std::size_t> switch_of;  // switch probe -> sched_switch index
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    if (std::string_view(r.event) == "sched:sched_switch") {
      pending[r.cpu] = i;
      continue;
    }
    if (probe_of(r.event) != Probe::Switch || !a.task.count(i)) continue;
    auto s = pending.find(r.cpu);
    if (s == pending.end()) continue;
    const std::size_t si = s->second;
    pending.erase(s);
    const auto prev = num_field(recs[si].fields, "prev_pid"), next = num_field(recs[si].fields, "next_pid");
    if (!prev || !next || *prev != a.task.at(i).pid || (r.tid_known && r.tid != *next)) continue;
    Annotations::Switch x;
    x.probe = i;
    if (auto j = a.index_after(*next, i); j && recs[*j].cpu == r.cpu) x.c2 = perf_domain(a.task.at(*j).st);
    a.switches.emplace(si, x);
    switch_of.emplace(i, si);
  }

  reap_flush_clocks(recs, a, switch_of, nr_wait4);
  for (const auto& [pid, idx] : a.seq) {
    for (std::size_t k = 0; k + 1 < idx.size(); ++k) {
      const std::size_t i = idx[k], n = idx[k + 1];
      const auto& f = a.task.at(i);
      const auto& g = a.task.at(n);
      if (recs[n].cpu != recs[i].cpu) break;  // migrated in between: the other CPU is not traced
      const auto p = probe_of(recs[i].event);
      if (p == Probe::UserExit || p == Probe::UserEnter) {
        a.clock[i] = perf_domain(g.st);
        a.expect[i] = {g.utime_sys(), g.stime_sys()};
        continue;
      }
      if (pid == 0 || f.vs != kSys) continue;
      // Switch out in state SYS: the flush added exactly (c1 - starttime) to the system total,
      // unless the task ran on an untraced CPU before it came back (then its counters moved by
      // more, c1 would pass next's starttime): from there on its state is unknown.
      const std::uint64_t before = f.ts + f.vst, after = g.ts + g.vst;
      const auto sw = switch_of.find(i);
      const std::uint64_t c1 = perf_domain(f.st + (after - before));
      const bool past_next = sw != switch_of.end() && a.switches.at(sw->second).c2.value_or(c1) < c1;
      if (after < before || g.tu != f.tu || past_next) break;
      a.clock[i] = c1;
      a.expect[i] = {g.utime_sys(), g.stime_sys()};
      if (sw != switch_of.end()) a.switches.at(sw->second).c1 = c1;
    }
  }
  return a;
}

}  // namespace kacct::trace::perf::vtime

// ---- the converter's overlay: gen vtime transitions and read clocks from the probes ----

namespace kacct::trace::perf::detail {
namespace {

bool adjusted(ReadKind k) {
  return k == ReadKind::ProcStat || k == ReadKind::TaskStat || k == ReadKind::RusageSelf || k == ReadKind::RusageThread;
}
bool group_read(ReadKind k) { return k == ReadKind::ProcStat || k == ReadKind::RusageSelf; }

}  // namespace

void Converter::vtime_setup() {
  ann_ = vtime::annotate(recs_, o_.syscalls.wait4);
  probes_ = !ann_.task.empty();
  auto& v = conv_.stats.vtime;
  v.active = probes_;
  v.cpus = ann_.cpus;
  v.offset = ann_.offset;
  if (ann_.offset_varies) conv_.stats.notes.push_back("vtime probes: __sched_clock_offset changed during the trace");
}

// A task's state before any transition the trace shows (a probe reads the state its previous
// transition left; until the first probe the task made none here).
void Converter::vtime_declare(TaskDecl& d, Info& i) const {
  auto s = ann_.seq.find(d.tid);
  if (s == ann_.seq.end()) return;
  const auto& f = ann_.task.at(s->second.front());
  d.utime = f.tu;
  d.stime = f.ts;
  d.vtime_utime = f.vu;
  d.vtime_stime = f.vst;
  i.state_known = true;
}

void Converter::on_kprobe(const Record& r) {
  if (!probes_) return on_unknown(r);
  used(r);
  if (vcpu(r.cpu)) vtime_probe(r, vtime::probe_of(r.event));
}

// The clock of a sched_switch on a probed CPU: prev's flush (and next's start as the gap).
std::uint64_t Converter::vtime_switch(const Record& r, Event& e) {
  const std::uint64_t prev = e.a;
  std::uint64_t t = r.ts;
  flush_deferred(prev, r, r.ts);
  ++conv_.stats.vtime.switches;
  if (auto it = ann_.switches.find(index(r)); it != ann_.switches.end()) {
    const auto& sw = it->second;
    if (sw.c1 && sw.c2 && *sw.c2 >= *sw.c1) {
      ++conv_.stats.vtime.switches_exact;
      t = *sw.c1;
      e.switch_gap = *sw.c2 - *sw.c1;
    } else if (sw.c2) {
      t = *sw.c2;  // prev's flush clock unknown (the idle task's, or prev never probed again)
    } else if (sw.c1) {
      t = *sw.c1;
    }
    if (prev != 0 && e.prev_state != PrevState::Dead) checkpoint(r, sw.probe, t);
  }
  return t;
}

// Counts a runtime event against the next probe's sum_exec_runtime; inside a marked read the
// reader's vtime clock may come before this update_curr() (task_cputime_adjusted() reads vtime
// first): then it is held and emitted with the read.
bool Converter::vtime_hold_runtime(const Event& e, const Record& r) {
  const std::uint64_t pid = e.a;
  if (probes_) rt_since_[pid] += e.b;
  if (!(vcpu(r.cpu) && pid == cpu(r.cpu).current && in_read_.count(pid))) return false;
  if (vtime_clock_read(e, r)) return true;
  deferred_[pid].push_back({e, r.ts});
  return true;
}

// A CPU clock read (clock_gettime() of its own thread or process) returns the reader's runtime
// right after its own update in task_sched_runtime(), the first one inside the syscall: an
// interrupt's update after it (seen in QEMU: 6.5 ms) is not in the value. Recorder-found reads
// only: marked clock reads stay at sys_exit (the same values in every gen fixture, other clocks).
bool Converter::vtime_clock_read(const Event& e, const Record& r) {
  const std::uint64_t tid = e.a;
  const auto m = in_read_.find(tid);
  if (read_done_.count(tid) || !in_syscall_.count(tid) || !vtime_syscall_reads_.count(m->second)) return false;
  const auto sp = specs(m->second);
  const bool clock = !sp.empty() && std::all_of(sp.begin(), sp.end(), [&](const ReadSpec* s) {
    return s->kind == ReadKind::ProcessCputime ||
           (s->kind == ReadKind::ThreadCputime && (s->tid == 0 || s->tid == tid));
  });
  if (!clock) return false;
  flush_deferred(tid, r, r.ts);
  if (!emit(e, r)) return false;
  for (const ReadSpec* spec : sp) {
    Stats::ReadClock rc;
    rc.marker = m->second;
    rc.tid = tid;
    rc.kind = spec->kind;
    rc.how = "runtime_update";
    rc.lo = rc.hi = r.ts;
    if (emit_read(*spec, m->second, r, r.ts)) {
      conv_.stats.read_clocks.push_back(rc);
      syscall_read_emitted(m->second);
    }
  }
  read_done_.insert(tid);
  return true;
}

// Emits the held runtime events (all, or only those perf saw up to `upto`) at no later than t.
void Converter::flush_deferred(std::uint64_t tid, const Record& r, std::uint64_t t, std::uint64_t upto) {
  auto it = deferred_.find(tid);
  if (it == deferred_.end()) return;
  auto& held = it->second;
  std::size_t k = 0;
  for (; k < held.size() && held[k].second <= upto; ++k) emit_at(held[k].first, r, std::min(held[k].second, t));
  held.erase(held.begin(), held.begin() + std::ptrdiff_t(k));
  if (held.empty()) deferred_.erase(it);
}

// A task found running when the trace starts: its vtime delta since its last transition
// (before the trace) joins the residue of its state at the model's switch-in, and a task in
// user mode returns there at once (the same sums reach the kernel's next flush).
void Converter::vtime_arrive(std::uint64_t tid, const Record& r) {
  const std::uint32_t c = r.cpu;
  auto in = info_.find(tid);
  auto s = ann_.seq.find(tid);
  if (!vcpu(c) || in == info_.end() || !in->second.state_known || s == ann_.seq.end() || !arrived_.insert(tid).second)
    return;
  const auto& f = ann_.task.at(s->second.front());
  const std::uint64_t st = f.st + ann_.offset;
  if (st > r.ts) return;  // switched in during the trace
  for (auto& d : conv_.trace.header.tasks) {
    if (d.tid != tid) continue;
    if (f.vs == vtime::kUser) {
      d.vtime_utime = d.vtime_utime.value_or(0) + (r.ts - st);
      set_mode(c, Mode::User, r, "task running in user mode at the start (vtime state)");
    } else if (f.vs == vtime::kSys) {
      d.vtime_stime = d.vtime_stime.value_or(0) + (r.ts - st);
    }
  }
}

// The expected task_cputime() right at the transition that probe i starts, as a read.
void Converter::checkpoint(const Record& r, std::size_t i, std::uint64_t t) {
  auto x = ann_.expect.find(i);
  const std::uint32_t c = r.cpu;
  if (x == ann_.expect.end() || cpu(c).current == 0 || cpu(c).mode != Mode::Kernel || tr_->current(c).exiting) return;
  // Only tasks whose starting state the model has: born in the trace, or declared with the
  // state of their first probe.
  if (auto in = info_.find(cpu(c).current); in == info_.end() || !(in->second.forked || in->second.state_known)) return;
  Event e = ev(Kind::Read, c);
  e.read_kind = ReadKind::Taskstats;
  e.read_id = kCheckpointBase + conv_.stats.checkpoints.size();
  if (emit_at(e, r, t))
    conv_.stats.checkpoints.push_back({e.read_id, cpu(c).current, x->second[0], x->second[1], r.line});
}

// Each task probe also reads se.sum_exec_runtime: the runtime events seen since its last probe
// must add up to the change. perf can drop a sched_stat_runtime without a LOST record (seen on
// ppc64el, an update_curr() with no event); the missing ns are restored here and counted.
void Converter::runtime_check(const Record& r, std::size_t i) {
  auto f = ann_.task.find(i);
  if (f == ann_.task.end() || f->second.pid == 0) return;
  const auto pid = f->second.pid, rt = f->second.rt;
  auto seen = rt_seen_.find(pid);
  if (seen != rt_seen_.end()) {
    const std::uint64_t expect = seen->second + rt_since_[pid];
    auto& v = conv_.stats.vtime;
    if (rt > expect && tr_->task(pid) && !tr_->task(pid)->exited) {
      Event e = ev(Kind::Runtime, r.cpu);
      e.a = pid;
      e.b = rt - expect;
      if (emit(e, r)) {
        ++v.runtime_restored;
        v.runtime_restored_ns += rt - expect;
        repair("sched_stat_runtime missing: restored from the probe's sum_exec_runtime", r);
      }
    } else if (rt < expect) {
      ++v.runtime_excess;
      if (conv_.stats.notes.size() < 20)
        conv_.stats.notes.push_back(fmt::format(
            "perf line {}: task {}: runtime events exceed sum_exec_runtime by {} ns", r.line, pid, expect - rt));
    }
  }
  rt_seen_[pid] = rt;
  rt_since_[pid] = 0;
}

void Converter::vtime_probe(const Record& r, vtime::Probe p) {
  using vtime::Probe;
  const std::uint32_t c = r.cpu;
  const std::size_t i = index(r);
  runtime_check(r, i);
  const std::uint64_t tid = cpu(c).current;
  if (p == Probe::CputimeAdjust || p == Probe::BacctAddTsk) return read_probe(r, p);
  if (!ann_.task.count(i)) return bad(r, "pid, st, vs, vu, vst, tu, ts and rt numbers");
  if (p == Probe::Switch) return;  // its clocks went to the sched_switch before it
  if (tid == 0 || tr_->current(c).kthread || tr_->current(c).exiting)
    return repair("vtime transition of idle, a kthread or an exiting task skipped", r);
  auto& v = conv_.stats.vtime;
  ++v.transitions;
  std::uint64_t t = r.ts;  // the probe fires just before the kernel reads its clock
  if (auto k = ann_.clock.find(i); k != ann_.clock.end()) {
    t = k->second;
    ++v.transitions_exact;
  }
  to_process_context(c, r);
  if (p == Probe::UserExit) {
    if (cpu(c).mode != Mode::User &&
        !set_mode(c, Mode::User, r, "return to user inferred (vtime_user_exit in kernel mode)"))
      return;
    if (!emit_at(ev(Kind::ExcEnter, c), r, t)) return;
    checkpoint(r, i, t);
    return;
  }
  if (cpu(c).mode != Mode::Kernel &&
      !set_mode(c, Mode::Kernel, r, "kernel entry inferred (vtime_user_enter in user mode)"))
    return;
  flush_deferred(tid, r, t);
  if (auto h = upper_.find(tid); h != upper_.end()) {  // a bounds read: its upper end is this exit
    if (emit_read(*h->second.first, h->second.first->marker | kUpperReadBit, r, t))
      conv_.stats.read_clocks[h->second.second].hi = t;
    upper_.erase(h);
  }
  in_read_.erase(tid);
  checkpoint(r, i, t);
  emit_at(ev(Kind::ExcExit, c), r, t);
}

// cputime_adjust / bacct_add_tsk inside a marked read: when the kernel read its clock.
void Converter::read_probe(const Record& r, vtime::Probe p) {
  const std::uint32_t c = r.cpu;
  const std::uint64_t tid = cpu(c).current;
  // A read of another process's times (/proc/PID/stat): the kernel's cputime_adjust() of that
  // process is when it read them, before any preemption of the reader inside the syscall.
  if (auto f = foreign_pending_.find(tid); f != foreign_pending_.end() && p == vtime::Probe::CputimeAdjust) {
    auto& seen = conv_.stats.cputime_syscalls[f->second];
    foreign_pending_.erase(f);
    const auto a = vtime::adjust_fields(r.fields);
    if (!a) return bad(r, "cs, cu, cr, pu and ps");
    place_syscall_read(seen, r);
    if (!seen.id) return;
    Stats::ReadClock rc;
    rc.marker = seen.id;
    rc.tid = tid;
    rc.kind = ReadKind::ProcStat;
    rc.how = "probe";
    rc.lo = rc.hi = r.ts;
    rc.raw = true;
    rc.cs = a->cs, rc.cu = a->cu, rc.cr = a->cr, rc.pu = a->pu, rc.ps = a->ps;
    conv_.stats.read_clocks.push_back(rc);
    return;
  }
  auto m = in_read_.find(tid);
  if (m == in_read_.end() || read_done_.count(tid)) return;
  const std::uint64_t marker = m->second;
  auto& st = conv_.stats;
  for (const ReadSpec* spec : specs(marker)) {
    Stats::ReadClock rc;
    rc.marker = marker;
    rc.tid = spec->tid ? spec->tid : tid;
    rc.kind = spec->kind;
    if (p == vtime::Probe::BacctAddTsk && spec->kind == ReadKind::Taskstats) {
      // No probe sees taskstats' clock: bounded by this probe (the read comes after it) and the
      // syscall's exit (the upper twin read).
      rc.how = "bounds";
      rc.lo = rc.hi = r.ts;
      flush_deferred(tid, r, r.ts);
      if (emit_read(*spec, marker, r, r.ts)) {
        upper_[tid] = {spec, st.read_clocks.size()};
        st.read_clocks.push_back(rc);
        syscall_read_emitted(marker);
      }
      read_done_.insert(tid);
      continue;
    }
    if (p != vtime::Probe::CputimeAdjust || !adjusted(spec->kind)) continue;
    auto a = vtime::adjust_fields(r.fields);
    if (!a) return bad(r, "cs, cu, cr, pu and ps");
    rc.raw = true;
    rc.cs = a->cs, rc.cu = a->cu, rc.cr = a->cr, rc.pu = a->pu, rc.ps = a->ps;
    // task_cputime() of the reader in state SYS: its totals at its last transition (the
    // syscall's entry, or its switch in after a stop inside the syscall, e.g. a ptrace stop:
    // its next probe shows them) plus the clock's advance since; other threads (not running)
    // add their flushed counters.
    std::optional<std::uint64_t> clock;
    std::uint64_t rt_all = 0;  // the group's runtime with every update perf saw so far
    bool rt_known = false;
    const auto j = ann_.index_after(tid, index(r));
    const vtime::TaskFields* g = j && recs_[*j].cpu == c ? &ann_.task.at(*j) : nullptr;
    if (g && g->vs == vtime::kSys && rc.tid == tid) {
      std::uint64_t so = 0, uo = 0;
      bool ok = true;
      if (group_read(spec->kind)) {
        const auto pid = tr_->current(c).pid;
        rt_known = true;
        for (const auto& [otid, info] : info_) {
          const TaskState* t = tr_->task(otid);
          if (!t || t->pid != pid) continue;
          const auto seen = rt_seen_.find(otid);
          if (seen == rt_seen_.end() || t->exited)
            rt_known = false;
          else
            rt_all += seen->second + rt_since_[otid];
          if (otid == tid) continue;
          if (t->exited) ok = false;  // its sums moved to the signal struct: not followed here
          if (const auto* f = ann_.after(otid, index(r))) {
            so += f->ts;
            uo += f->tu;
          } else {
            ok = false;
          }
        }
      }
      rc.model_utime_in = g->utime_sys() + uo;
      const std::uint64_t base = g->stime_sys() + so, start = g->st + ann_.offset;
      if (ok && a->cs >= base && start + (a->cs - base) <= r.ts) clock = start + (a->cs - base);
    }
    // thread_group_cputime() updates current's runtime first, then sums: an update_curr() perf
    // saw after that clock (an interrupt) is not in the sum, unless it came between a thread's
    // task_cputime() and read_sum_exec_runtime(): then the probe's rtime has it (seen under
    // strace in QEMU: a 6.85 ms update there). task_cputime_adjusted() reads vtime first and
    // then task_sched_runtime(): every update up to this probe is in.
    std::uint64_t upto = group_read(spec->kind) ? clock.value_or(r.ts) : r.ts;
    if (auto h = deferred_.find(tid);
        clock && rt_known && rt_all == a->cr && h != deferred_.end() &&
        std::any_of(h->second.begin(), h->second.end(), [&](const auto& x) { return x.second > *clock; }))
      upto = r.ts;
    flush_deferred(tid, r, clock.value_or(r.ts), upto);
    rc.how = clock ? "inferred" : "probe";
    rc.lo = rc.hi = clock.value_or(r.ts);
    if (emit_read(*spec, marker, r, rc.lo)) {
      st.read_clocks.push_back(rc);
      syscall_read_emitted(marker);
    }
    read_done_.insert(tid);
  }
}

void Converter::vtime_sys_exit(const Record& r) {
  const std::uint64_t tid = r.tid;
  foreign_pending_.erase(tid);  // no probe in it: placed at sys_exit (syscall_read_exit())
  auto m = in_read_.find(tid);
  if (m == in_read_.end() || read_done_.count(tid)) return;
  flush_deferred(tid, r, r.ts);
  for (const ReadSpec* spec : specs(m->second)) {
    Stats::ReadClock rc;
    rc.marker = m->second;
    rc.tid = spec->tid ? spec->tid : tid;
    rc.kind = spec->kind;
    rc.how = "syscall_exit";
    rc.lo = rc.hi = r.ts;
    if (emit_read(*spec, m->second, r, r.ts)) {
      conv_.stats.read_clocks.push_back(rc);
      syscall_read_emitted(m->second);
    }
  }
  read_done_.insert(tid);
}

// A read the recorder found (Options::syscall_reads) at its sys_enter on a probed CPU: read like
// a marked read, at the clock its cputime_adjust() probe gives, else at its sys_exit, with the
// reader's runtime updates inside it held as for a marked read. Reads the kernel computes nothing
// for, and group reads of another process, stay with the sys_exit path (place_syscall_read()).
void Converter::vtime_syscall_read_enter(const Record& r) {
  const auto open = syscall_open_.find(r.tid);
  if (open == syscall_open_.end() || open->second.second < 0) return;
  const auto k = std::size_t(open->second.second);
  const auto& seen = conv_.stats.cputime_syscalls[k];
  const auto q = syscall_read_index_.find({seen.tid, seen.nr, seen.seq});
  if (q == syscall_read_index_.end()) return;
  const auto& want = o_.syscall_reads[q->second];
  if (!want.place) return;
  ReadSpec spec{want.kind, want.target, want.id};
  const bool group = group_read(want.kind) || want.kind == ReadKind::ProcessCputime;
  if (group && want.target && want.target != seen.tid) {
    auto a = info_.find(want.target), b = info_.find(seen.tid);
    if (a == info_.end() || b == info_.end()) return;
    if (a->second.tgid != b->second.tgid) {  // placed at its cputime_adjust() probe (read_probe())
      early_read_.erase(r.tid);
      foreign_pending_[r.tid] = k;
      return;
    }
    spec.tid = 0;  // the trace format's group reads are of the reader's own thread group
  }
  early_read_.erase(r.tid);
  vtime_syscall_reads_[want.id] = {spec, k};
  in_read_[r.tid] = want.id;
  read_done_.erase(r.tid);
}
void Converter::syscall_read_emitted(std::uint64_t id) {
  if (auto it = vtime_syscall_reads_.find(id); it != vtime_syscall_reads_.end())
    conv_.stats.cputime_syscalls[it->second.second].id = id;
}

// A runtime update perf did not record before prev's switch (e.g. under host preemption of the
// vCPU): prev's switch probe, which follows the switch, shows it in sum_exec_runtime, but by then
// prev is no longer current and a runtime event for it would be dropped. It is restored here,
// before the switch.
void Converter::vtime_restore_before_switch(const Record& sw, std::uint64_t prev) {
  const auto p1 = ann_.index_after(prev, index(sw));
  if (!p1 || vtime::probe_of(recs_[*p1].event) != vtime::Probe::Switch || recs_[*p1].cpu != sw.cpu) return;
  const auto seen = rt_seen_.find(prev);
  if (seen == rt_seen_.end() || !tr_->task(prev) || tr_->task(prev)->exited) return;
  const std::uint64_t rt = ann_.task.at(*p1).rt, expect = seen->second + rt_since_[prev];
  if (rt <= expect) return;
  Event e = ev(Kind::Runtime, sw.cpu);
  e.a = prev;
  e.b = rt - expect;
  // No earlier than the end of the gap of the switch that brought prev in (next's clock read).
  if (!emit_at(e, sw, std::max(last_ts_, cpu(sw.cpu).gap_end + conv_.stats.base_ns))) return;
  rt_since_[prev] += e.b;
  ++conv_.stats.vtime.runtime_restored;
  conv_.stats.vtime.runtime_restored_ns += e.b;
  repair("sched_stat_runtime missing: restored from the probe's sum_exec_runtime", sw);
}

// copy_process() copies the parent's vtime residues in dup_task_struct(), well before
// sched_process_fork. A parent preempted inside clone() in between has them flushed by the switch
// (vtime_task_switch), so the child holds the residues from before that switch. Its first probe
// shows them: when they are the parent's at this switch and not after it, the fork is emitted
// here, before the switch (the later sched_process_fork record is then skipped).
void Converter::vtime_fork_before_switch(const Record& sw, std::uint64_t prev) {
  const std::size_t i = index(sw);
  const auto p1 = ann_.index_after(prev, i);  // prev's switch probe: its residues before the flush
  if (!p1 || vtime::probe_of(recs_[*p1].event) != vtime::Probe::Switch || cpu(sw.cpu).mode != Mode::Kernel) return;
  const auto p2 = ann_.index_after(prev, *p1);  // prev's next transition: the residues after it
  const std::size_t end = p2 ? *p2 : std::min(recs_.size(), i + 100000);
  for (std::size_t j = i + 1; j < end; ++j) {
    const Record& f = recs_[j];
    if (std::string_view(f.event) != "sched:sched_process_fork" || num_field(f.fields, "pid") != prev) continue;
    const auto child = num_field(f.fields, "child_pid");
    if (!child || early_forks_.count(j)) return;
    const auto seq = ann_.seq.find(*child);
    if (seq == ann_.seq.end() || seq->second.empty() || seq->second.front() < j) return;
    const auto& c = ann_.task.at(seq->second.front());
    const auto& before = ann_.task.at(*p1);
    const bool from_before = c.vu == before.vu && c.vst == before.vst;
    const bool same_after = p2 && ann_.task.at(*p2).vu == before.vu && ann_.task.at(*p2).vst == before.vst;
    if (!from_before || same_after) return;
    if (conv_.stats.notes.size() < 20)
      conv_.stats.notes.push_back(
          fmt::format("perf line {}: fork of {} placed at the parent's switch (line {}) before it: "
                      "the child's residues are from before that switch",
                      f.line, *child, sw.line));
    early_forks_.insert(j);
    emit_fork(f, sw.cpu, last_ts_);  // no later than the switch's own clock
    return;
  }
}

}  // namespace kacct::trace::perf::detail
