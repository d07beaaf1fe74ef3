#include "model/trace/perf_vtime.hpp"

#include <algorithm>
#include <set>

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
  const std::pair<const char*, std::uint64_t*> keys[] = {{"cs", &f.cs}, {"cu", &f.cu}, {"cr", &f.cr}, {"pu", &f.pu}, {"ps", &f.ps}};
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

Annotations annotate(const std::vector<Record>& recs) {
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
    if (r.event == "sched:sched_switch") {
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
