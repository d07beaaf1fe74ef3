// The lazy-TLB exhaustive explorer (explore.hpp).
#include "model/lazytlb/explore.hpp"

#include <algorithm>
#include <array>
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

namespace {
using Sig = std::vector<std::int64_t>;
// canonical_key's buffers, reused across the calls of one exploration (a key per transition).
struct KeyScratch {
  std::vector<Sig> msig, tsig, csig;
  Sig t1, t2;
  Renaming r;
  std::string k;
};

// Signatures use no object numbers, only what a renaming keeps (kinds, counts, the signatures
// of what an object points to), so renamed states sort alike; the least key is then taken
// over the renamings inside each run of equal signatures (free slots excluded: nothing points
// to them, any order of them gives the same key).
void canonical_key_into(std::string& best, const World<Concrete>& w, bool rename_cpus, KeyScratch& z) {
  const int nc = int(w.cpus.size()), nt = w.ntasks, nm = int(w.mms.size());
  auto kind = [](Ref x) -> std::int64_t { return x == kNull ? 0 : x == kInitMm ? 1 : 2; };
  auto& msig = z.msig;
  auto& tsig = z.tsig;
  auto& csig = z.csig;
  msig.resize(nm), tsig.resize(nt), csig.resize(nc);
  for (int m = 0; m < nm; ++m) {
    const Mm& mm = w.mms[m];
    std::int64_t users = 0, actives = 0, prevs = 0;
    for (const Task& t : w.tasks) users += t.mm == m, actives += t.active_mm == m;
    for (const Cpu& c : w.cpus) prevs += c.prev_mm == m;
    msig[m].assign({std::int64_t(mm.st), mm.ext_users, mm.ext_grabs, std::int64_t(w.cnt[m].mm_users),
                    std::int64_t(w.cnt[m].mm_count), mm.mask.count(), users, actives, prevs});
  }
  auto mm_sig = [&](Sig& s, Ref m) {
    s.push_back(kind(m));
    if (m >= 0) s.insert(s.end(), msig[m].begin(), msig[m].end());
  };
  auto task_sig = [&](Sig& s, const Task& t) {
    s.assign({std::int64_t(t.st), t.kthread, t.idle, t.exiting, t.mm == t.active_mm});
    mm_sig(s, t.mm);
    mm_sig(s, t.active_mm);
  };
  for (int t = 0; t < nt; ++t) task_sig(tsig[t], w.tasks[t]);
  for (int c = 0; c < nc; ++c) {
    const Cpu& cpu = w.cpus[c];
    Sig& s = csig[c];
    s.clear();
    if (!rename_cpus)  // every CPU its own class
      s.push_back(c);
    else if (c == 0)  // CPU 0 (never offline) keeps its number
      s.push_back(-1);
    s.insert(s.end(), {c == 0, std::int64_t(cpu.hp), cpu.irqs_off, cpu.curr >= nt});
    if (cpu.curr < nt) {
      s.insert(s.end(), tsig[cpu.curr].begin(), tsig[cpu.curr].end());
    } else {
      task_sig(z.t1, w.tasks[cpu.curr]);
      s.insert(s.end(), z.t1.begin(), z.t1.end());
    }
    task_sig(z.t2, w.tasks[w.idle_of(c)]);
    s.insert(s.end(), z.t2.begin(), z.t2.end());
    mm_sig(s, cpu.prev_mm);
    for (int m = 0; m < nm; ++m)
      if (w.mms[m].mask.test(c)) s.insert(s.end(), msig[m].begin(), msig[m].end());
  }

  // Sort each kind by signature; runs of equal signatures are permuted below (at most one run
  // per object: a fixed array, no allocation).
  struct Run {
    std::vector<int>* order;
    int begin, end;
  };
  Renaming& r = z.r;
  std::array<Run, 3 * 64> runs;
  std::size_t nruns = 0;
  auto arrange = [&](std::vector<int>& order, const std::vector<Sig>& sig, auto free_slot) {
    order.resize(sig.size());
    for (int i = 0; i < int(sig.size()); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sig[a] < sig[b]; });
    for (int i = 0; i < int(order.size());) {
      int j = i + 1;
      while (j < int(order.size()) && sig[order[j]] == sig[order[i]]) ++j;
      if (j - i > 1 && !free_slot(order[i])) runs.at(nruns++) = {&order, i, j};
      i = j;
    }
  };
  arrange(r.oc, csig, [](int) { return false; });
  arrange(r.ot, tsig, [&](int t) { return w.tasks[t].st == TaskState::Unborn; });
  arrange(r.om, msig, [&](int m) { return w.mms[m].st == MmState::Unborn; });
  r.invc.resize(nc), r.invt.resize(nt), r.invm.resize(nm);

  best.clear();
  std::string& k = z.k;
  for (;;) {
    for (int i = 0; i < nc; ++i) r.invc[r.oc[i]] = i;
    for (int i = 0; i < nt; ++i) r.invt[r.ot[i]] = i;
    for (int i = 0; i < nm; ++i) r.invm[r.om[i]] = i;
    key_into(k, w, r);
    if (best.empty() || k < best) best = k;
    // Next renaming: an odometer over the runs (each run cycles through its permutations).
    std::size_t i = nruns;
    while (i > 0) {
      --i;
      auto& o = *runs[i].order;
      if (std::next_permutation(o.begin() + runs[i].begin, o.begin() + runs[i].end)) break;
      if (i == 0) return;
    }
    if (nruns == 0) return;
  }
}
}  // namespace

std::string canonical_key(const World<Concrete>& w, bool rename_cpus) {
  KeyScratch z;
  std::string k;
  canonical_key_into(k, w, rename_cpus, z);
  return k;
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
  nodes.push_back({initial(o.header.sizes), UINT32_MAX, {}, 0});
  // Per transition a copy of the state and its key: both reuse one buffer (the sizes never
  // change), a new state's key and world are the only allocations.
  const Renaming id = identity(nodes[0].w);
  std::string key;
  KeyScratch scratch;
  auto key_of = [&](const World<Concrete>& w) -> const std::string& {
    if (o.symmetry)
      canonical_key_into(key, w, rename_cpus, scratch);
    else
      key_into(key, w, id);
    return key;
  };
  seen.emplace(key_of(nodes[0].w), 0);
  StepLog log;
  std::vector<spec::lazytlb::Violation> bad;
  World<Concrete> w;
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
    if (o.stop_when_full && nodes.size() >= o.max_states) {
      r.truncated = true;  // the rest is kept unexpanded
      break;
    }
    r.depth = std::max<std::size_t>(r.depth, nodes[i].depth);
    if (o.progress && i > 0 && i % o.progress_every == 0) o.progress(nodes.size(), i, r.depth);
    if (spec::lazytlb::zombies(nodes[i].w) > 0) ++r.zombie_states;
    const auto cands = candidate_events(nodes[i].w, cfg, o.hotplug, o.max_offline);
    for (const auto& e : cands) {
      if (!why_not_enabled(nodes[i].w, cfg, e).empty()) continue;
      w = nodes[i].w;
      Costs cost;
      bad.clear();
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
      if (seen.count(key_of(w))) continue;
      if (nodes.size() >= o.max_states) {
        r.truncated = true;
        continue;
      }
      seen.emplace(key, std::uint32_t(nodes.size()));
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
