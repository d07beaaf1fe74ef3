// The lazy-TLB exhaustive explorer (explore.hpp).
#include "model/lazytlb/explore.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace kacct::model::lazytlb {

std::vector<Event> candidate_events(const World<Concrete>& w, const Cfg& cfg, bool hotplug, int max_offline) {
  std::vector<Event> out;
  int out_cpus = 0;  // CPUs not online
  for (const auto& c : w.cpus) out_cpus += c.hp != Hp::Online;
  const int nc = int(w.cpus.size()), nm = int(w.mms.size());
  int free_task = -1;
  for (int t = 0; t < w.ntasks; ++t)
    if (w.tasks[t].st == TaskState::Unborn) {
      free_task = t;
      break;
    }
  for (int c = 0; c < nc; ++c) {
    auto add = [&](Op op, int arg = 0) { out.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
    add(Op::Finish);
    add(Op::Idle);
    for (int t = 0; t < w.ntasks; ++t) add(Op::Switch, t);
    add(Op::Exit);
    add(Op::Exec);
    if (free_task >= 0) {
      add(Op::Fork, free_task);
      add(Op::ForkVm, free_task);
    }
    add(Op::Unuse);
    for (int m = 0; m < nm; ++m) {
      add(Op::Use, m);
      if (w.mms[m].ext_users == 0) add(Op::MmGet, m);
      add(Op::MmPut, m);
      if (w.mms[m].ext_grabs == 0) add(Op::MmGrab, m);
      add(Op::MmDrop, m);
      if (cfg.arch == Arch::PpcRadix) add(Op::Flush, m);
    }
    if (c > 0 && hotplug) {
      add(Op::Dead);
      add(Op::Online);
      if (out_cpus < max_offline) add(Op::Offline);
    }
  }
  return out;
}

namespace {
// A renaming: old index at each new position (o*) and its inverse (inv*), per kind of object.
struct Renaming {
  std::vector<int> oc, ot, om, invc, invt, invm;
};

void put16(std::string& k, std::int16_t v) {
  k.push_back(char(v & 0xff));
  k.push_back(char(v >> 8));
}

// The key of w with its objects renamed by r (identity: the plain state key).
void key_into(std::string& k, const World<Concrete>& w, const Renaming& r) {
  const int nt = w.ntasks;
  auto task_ref = [&](Ref t) -> Ref {
    if (t < 0) return t;
    return t < nt ? Ref(r.invt[t]) : Ref(nt + r.invc[t - nt]);
  };
  auto mm_ref = [&](Ref m) -> Ref { return m < 0 ? m : Ref(r.invm[m]); };
  auto put_task = [&](const Task& t) {
    k.push_back(char(int(t.st) | (t.kthread << 2) | (t.idle << 3) | (t.exiting << 4)));
    put16(k, mm_ref(t.mm));
    put16(k, mm_ref(t.active_mm));
  };
  k.clear();
  for (int c : r.oc) {
    const Cpu& cpu = w.cpus[c];
    put16(k, task_ref(cpu.curr));
    put16(k, mm_ref(cpu.prev_mm));
    k.push_back(char(int(cpu.irqs_off) | (int(cpu.hp) << 1)));
  }
  for (int t : r.ot) put_task(w.tasks[t]);
  for (int c : r.oc) put_task(w.tasks[w.idle_of(c)]);
  for (int m : r.om) {
    const Mm& mm = w.mms[m];
    k.push_back(char(mm.st));
    Mask mask;
    for (int c = 0; c < int(r.oc.size()); ++c)
      if (mm.mask.test(r.oc[c])) mask.set(c);
    for (auto x : mask.w) k.append(reinterpret_cast<const char*>(&x), sizeof x);
    k.push_back(char(mm.ext_users));
    k.push_back(char(mm.ext_grabs));
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_users), 4);
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_count), 4);
  }
}

Renaming identity(const World<Concrete>& w) {
  Renaming r;
  for (int i = 0; i < int(w.cpus.size()); ++i) r.oc.push_back(i), r.invc.push_back(i);
  for (int i = 0; i < w.ntasks; ++i) r.ot.push_back(i), r.invt.push_back(i);
  for (int i = 0; i < int(w.mms.size()); ++i) r.om.push_back(i), r.invm.push_back(i);
  return r;
}
}  // namespace

std::string state_key(const World<Concrete>& w) {
  std::string k;
  key_into(k, w, identity(w));
  return k;
}

bool cpus_symmetric(const Cfg& cfg) { return !cfg.mut_shoot_skip_cpu; }  // "the highest CPU"

// Signatures use no object numbers, only what a renaming keeps (kinds, counts, the signatures
// of what an object points to), so renamed states sort alike; the least key is then taken
// over the renamings inside each run of equal signatures (free slots excluded: nothing points
// to them, any order of them gives the same key).
std::string canonical_key(const World<Concrete>& w, bool rename_cpus) {
  using Sig = std::vector<std::int64_t>;
  const int nc = int(w.cpus.size()), nt = w.ntasks, nm = int(w.mms.size());
  auto kind = [](Ref x) -> std::int64_t { return x == kNull ? 0 : x == kInitMm ? 1 : 2; };
  std::vector<Sig> msig(nm), tsig(nt), csig(nc);
  for (int m = 0; m < nm; ++m) {
    const Mm& mm = w.mms[m];
    std::int64_t users = 0, actives = 0, prevs = 0;
    for (const Task& t : w.tasks) users += t.mm == m, actives += t.active_mm == m;
    for (const Cpu& c : w.cpus) prevs += c.prev_mm == m;
    msig[m] = {std::int64_t(mm.st),
               mm.ext_users,
               mm.ext_grabs,
               std::int64_t(w.cnt[m].mm_users),
               std::int64_t(w.cnt[m].mm_count),
               mm.mask.count(),
               users,
               actives,
               prevs};
  }
  auto mm_sig = [&](Sig& s, Ref m) {
    s.push_back(kind(m));
    if (m >= 0) s.insert(s.end(), msig[m].begin(), msig[m].end());
  };
  auto task_sig = [&](const Task& t) {
    Sig s{std::int64_t(t.st), t.kthread, t.idle, t.exiting, t.mm == t.active_mm};
    mm_sig(s, t.mm);
    mm_sig(s, t.active_mm);
    return s;
  };
  for (int t = 0; t < nt; ++t) tsig[t] = task_sig(w.tasks[t]);
  for (int c = 0; c < nc; ++c) {
    const Cpu& cpu = w.cpus[c];
    Sig s{c == 0, std::int64_t(cpu.hp), cpu.irqs_off, cpu.curr >= nt};
    const Sig cur = cpu.curr < nt ? tsig[cpu.curr] : task_sig(w.tasks[cpu.curr]);
    s.insert(s.end(), cur.begin(), cur.end());
    const Sig idle = task_sig(w.tasks[w.idle_of(c)]);
    s.insert(s.end(), idle.begin(), idle.end());
    mm_sig(s, cpu.prev_mm);
    for (int m = 0; m < nm; ++m)
      if (w.mms[m].mask.test(c)) s.insert(s.end(), msig[m].begin(), msig[m].end());
    csig[c] = std::move(s);
  }
  if (!rename_cpus)  // every CPU its own class
    for (int c = 0; c < nc; ++c) csig[c].insert(csig[c].begin(), c);
  else
    csig[0].insert(csig[0].begin(), -1);  // CPU 0 (never offline) keeps its number

  // Sort each kind by signature; runs of equal signatures are permuted below.
  struct Run {
    std::vector<int>* order;
    int begin, end;
  };
  Renaming r;
  std::vector<Run> runs;
  auto arrange = [&](std::vector<int>& order, const std::vector<Sig>& sig, auto free_slot) {
    order.resize(sig.size());
    for (int i = 0; i < int(sig.size()); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sig[a] < sig[b]; });
    for (int i = 0; i < int(order.size());) {
      int j = i + 1;
      while (j < int(order.size()) && sig[order[j]] == sig[order[i]]) ++j;
      if (j - i > 1 && !free_slot(order[i])) runs.push_back({&order, i, j});
      i = j;
    }
  };
  arrange(r.oc, csig, [](int) { return false; });
  arrange(r.ot, tsig, [&](int t) { return w.tasks[t].st == TaskState::Unborn; });
  arrange(r.om, msig, [&](int m) { return w.mms[m].st == MmState::Unborn; });
  r.invc.resize(nc), r.invt.resize(nt), r.invm.resize(nm);

  std::string best, k;
  for (;;) {
    for (int i = 0; i < nc; ++i) r.invc[r.oc[i]] = i;
    for (int i = 0; i < nt; ++i) r.invt[r.ot[i]] = i;
    for (int i = 0; i < nm; ++i) r.invm[r.om[i]] = i;
    key_into(k, w, r);
    if (best.empty() || k < best) best = k;
    // Next renaming: an odometer over the runs (each run cycles through its permutations).
    std::size_t i = runs.size();
    while (i > 0) {
      --i;
      auto& o = *runs[i].order;
      if (std::next_permutation(o.begin() + runs[i].begin, o.begin() + runs[i].end)) break;
      if (i == 0) return best;
    }
    if (runs.empty()) return best;
  }
}

ExploreResult explore(const ExploreOptions& o, bool keep_states) {
  ExploreResult r;
  struct Node {
    World<Concrete> w;
    std::uint32_t parent;
    Event via;
    std::uint32_t depth;
  };
  std::vector<Node> nodes;
  std::unordered_map<std::string, std::uint32_t> seen;
  const Cfg cfg = o.header.cfg();
  const bool rename_cpus = cpus_symmetric(cfg);
  auto key_of = [&](const World<Concrete>& w) { return o.symmetry ? canonical_key(w, rename_cpus) : state_key(w); };
  nodes.push_back({initial(o.header.sizes), UINT32_MAX, {}, 0});
  seen.emplace(key_of(nodes[0].w), 0);
  StepLog log;
  auto trace_to = [&](std::uint32_t i, const Event& last) {
    Script s = o.header;
    s.events.clear();
    s.lines.clear();
    std::vector<Event> ev{last};
    for (std::uint32_t j = i; nodes[j].parent != UINT32_MAX; j = nodes[j].parent) ev.push_back(nodes[j].via);
    s.events.assign(ev.rbegin(), ev.rend());
    return s;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    r.depth = std::max<std::size_t>(r.depth, nodes[i].depth);
    if (o.progress && i > 0 && i % o.progress_every == 0) o.progress(nodes.size(), i, r.depth);
    if (spec::lazytlb::zombies(nodes[i].w) > 0) ++r.zombie_states;
    const auto cands = candidate_events(nodes[i].w, cfg, o.hotplug, o.max_offline);
    for (const auto& e : cands) {
      if (!not_enabled(nodes[i].w, cfg, e).empty()) continue;
      World<Concrete> w = nodes[i].w;
      Costs cost;
      std::vector<spec::lazytlb::Violation> bad;
      ++r.transitions;
      const bool ok = checked_step(cfg, w, e, cost, log, bad);
      r.frees += cost.frees;
      r.max_ipis_step = std::max(r.max_ipis_step, cost.ipis);
      if (!ok) {
        if (!r.violation) {
          r.violation = bad.front();
          r.counterexample = trace_to(std::uint32_t(i), e);
        }
        if (!o.stop_at_violation) continue;  // the violating state is not expanded
        r.states = nodes.size();
        return r;
      }
      auto [it, fresh] = seen.emplace(key_of(w), std::uint32_t(nodes.size()));
      if (!fresh) continue;
      if (nodes.size() >= o.max_states) {
        r.truncated = true;
        continue;
      }
      nodes.push_back({std::move(w), std::uint32_t(i), e, nodes[i].depth + 1});
    }
    // An expanded state is needed again only for its path (parent, via): free its world.
    if (!keep_states) nodes[i].w = World<Concrete>{};
  }
  r.states = nodes.size();
  if (keep_states)
    for (auto& n : nodes) r.sample.push_back(std::move(n.w));
  return r;
}

}  // namespace kacct::model::lazytlb
