// The lazy-TLB exhaustive explorer (explore.hpp).
#include "model/lazytlb/explore.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>

namespace kacct::model::lazytlb {

namespace {
// candidate_events into `out`. prune: leave out the events of a CPU that its state rules out
// before anything else is asked (why_not_enabled's first tests: a CPU that is not online takes
// only hotplug events, one inside a context switch only finish and hotplug events); the rest keep
// their order, so the enabled events come in the same order as without.
void candidates_into(std::vector<Event>& out, const World<Concrete>& w, const Cfg& cfg, bool hotplug, int max_offline,
                     bool prune) {
  out.clear();
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
    const bool online = w.cpus[c].hp == Hp::Online, busy = w.cpus[c].irqs_off;
    if (!prune || online) add(Op::Finish);
    if (!prune || (online && !busy)) {
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
    }
    if (c > 0 && hotplug) {
      add(Op::Dead);
      add(Op::Online);
      if (out_cpus < max_offline) add(Op::Offline);
    }
  }
}
}  // namespace

std::vector<Event> candidate_events(const World<Concrete>& w, const Cfg& cfg, bool hotplug, int max_offline) {
  std::vector<Event> out;
  candidates_into(out, w, cfg, hotplug, max_offline, false);
  return out;
}

void candidate_events_into(std::vector<Event>& out, const World<Concrete>& w, const Cfg& cfg, bool hotplug,
                           int max_offline) {
  candidates_into(out, w, cfg, hotplug, max_offline, false);
}

namespace {
// A renaming: old index at each new position (o*) and its inverse (inv*), per kind of object.
struct Renaming {
  std::vector<int> oc, ot, om, invc, invt, invm;
};

// The key's length for w's sizes (fixed for a world: its sizes never change).
std::size_t key_len(const World<Concrete>& w) {
  const std::size_t nc = w.cpus.size(), mask_bytes = (nc + 7) / 8;
  return nc * 5 + w.tasks.size() * 5 + w.mms.size() * (1 + mask_bytes + 2 + 8);
}

// The key of w with its objects renamed by r (identity: the plain state key). Written through a
// pointer into a buffer of the fixed length (a key per transition: this is the explorer's loop).
// Id: r is the identity (the explorer without symmetry), so no index is looked up.
template <bool Id>
void key_into(std::string& k, const World<Concrete>& w, const Renaming& r) {
  const int nt = w.ntasks, nc = int(w.cpus.size()), nm = int(w.mms.size());
  k.resize(key_len(w));
  char* p = k.data();
  auto put8 = [&](unsigned v) { *p++ = char(v); };
  auto put16 = [&](Ref v) {
    put8(unsigned(v) & 0xff);
    put8((unsigned(v) >> 8) & 0xff);
  };
  auto task_ref = [&](Ref t) -> Ref {
    if (Id || t < 0) return t;
    return t < nt ? Ref(r.invt[t]) : Ref(nt + r.invc[t - nt]);
  };
  auto mm_ref = [&](Ref m) -> Ref { return Id || m < 0 ? m : Ref(r.invm[m]); };
  auto put_task = [&](const Task& t) {
    put8(unsigned(t.st) | (t.kthread << 2) | (t.idle << 3) | (t.exiting << 4));
    put16(mm_ref(t.mm));
    put16(mm_ref(t.active_mm));
  };
  auto cpu_at = [&](int i) { return Id ? i : r.oc[i]; };
  for (int i = 0; i < nc; ++i) {
    const Cpu& cpu = w.cpus[cpu_at(i)];
    put16(task_ref(cpu.curr));
    put16(mm_ref(cpu.prev_mm));
    put8(unsigned(cpu.irqs_off) | (unsigned(cpu.hp) << 1));
  }
  for (int i = 0; i < nt; ++i) put_task(w.tasks[Id ? i : r.ot[i]]);
  for (int i = 0; i < nc; ++i) put_task(w.tasks[w.idle_of(cpu_at(i))]);
  for (int i = 0; i < nm; ++i) {
    const int m = Id ? i : r.om[i];
    const Mm& mm = w.mms[m];
    put8(unsigned(mm.st));
    // mm_cpumask: one bit per CPU of the world, in the renamed order.
    for (int c0 = 0; c0 < nc; c0 += 8) {
      unsigned byte = 0;
      if (Id) {
        byte = unsigned(mm.mask.w[c0 >> 6] >> (c0 & 63)) & 0xff;
        if (nc - c0 < 8) byte &= (1u << (nc - c0)) - 1;
      } else {
        for (int c = c0; c < std::min(c0 + 8, nc); ++c)
          if (mm.mask.test(r.oc[c])) byte |= 1u << (c - c0);
      }
      put8(byte);
    }
    put8(mm.ext_users);
    put8(mm.ext_grabs);
    std::memcpy(p, &w.cnt[m].mm_users, 4);
    std::memcpy(p + 4, &w.cnt[m].mm_count, 4);
    p += 8;
  }
}

// The world a key encodes (key_into with the identity: every field of World is in the key), into
// w's buffers (sized like the key's world already).
void decode_into(World<Concrete>& w, std::string_view k) {
  std::size_t p = 0;
  auto get8 = [&] { return std::uint8_t(k[p++]); };
  auto get16 = [&] {
    const auto lo = get8();
    return Ref(std::int16_t(std::uint16_t(lo | (get8() << 8))));
  };
  auto get32 = [&] {
    std::uint32_t v;
    std::memcpy(&v, k.data() + p, 4);
    p += 4;
    return v;
  };
  auto get_task = [&](Task& t) {
    const auto b = get8();
    t.st = TaskState(b & 3);
    t.kthread = (b >> 2) & 1;
    t.idle = (b >> 3) & 1;
    t.exiting = (b >> 4) & 1;
    t.mm = get16();
    t.active_mm = get16();
  };
  const int nc = int(w.cpus.size());
  for (Cpu& c : w.cpus) {
    c.curr = get16();
    c.prev_mm = get16();
    const auto b = get8();
    c.irqs_off = b & 1;
    c.hp = Hp(b >> 1);
  }
  for (Task& t : w.tasks) get_task(t);  // ordinary tasks, then the idle task of each CPU
  for (std::size_t m = 0; m < w.mms.size(); ++m) {
    Mm& mm = w.mms[m];
    mm.st = MmState(get8());
    mm.mask = Mask{};
    for (int c0 = 0; c0 < nc; c0 += 8) {
      const auto byte = get8();
      for (int c = c0; c < std::min(c0 + 8, nc); ++c)
        if ((byte >> (c - c0)) & 1) mm.mask.set(c);
    }
    mm.ext_users = get8();
    mm.ext_grabs = get8();
    w.cnt[m].mm_users = get32();
    w.cnt[m].mm_count = get32();
  }
}

// The states seen so far: fixed-length keys (a world's sizes never change) in one arena, in the
// order they were added (a state's index is its node's), found through an open-addressing table
// of (index + 1, hash bits). No allocation per state: std::unordered_map<std::string> spent a third
// of the explorer's time in cache misses.
class StateSet {
 public:
  explicit StateSet(std::size_t key_len) : len_(key_len), slots_(std::size_t{1} << 12) {}
  std::size_t size() const { return n_; }
  std::string_view key(std::uint32_t i) const { return {arena_.data() + std::size_t(i) * len_, len_}; }
  static std::uint64_t hash(std::string_view k) { return std::hash<std::string_view>{}(k); }
  // Start loading the table where k's search begins (several lookups then overlap their misses).
  void prefetch(std::uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }
  // Start loading the key of the first entry whose hash bits match h (after prefetch(h)).
  void prefetch_key(std::uint64_t h) const {
    const std::size_t mask = slots_.size() - 1;
    const auto tag = std::uint32_t(h >> 32);
    for (std::size_t s = h & mask; slots_[s].idx1 != 0; s = (s + 1) & mask)
      if (slots_[s].tag == tag) {
        __builtin_prefetch(arena_.data() + std::size_t(slots_[s].idx1 - 1) * len_);
        return;
      }
  }
  // Whether k (of hash h) is in the set; if not, `slot` is where add() puts it.
  bool find(std::string_view k, std::uint64_t h, std::size_t& slot) const {
    const std::size_t mask = slots_.size() - 1;
    const auto tag = std::uint32_t(h >> 32);
    for (std::size_t s = h & mask;; s = (s + 1) & mask) {
      const Slot& x = slots_[s];
      if (x.idx1 == 0) {
        slot = s;
        return false;
      }
      if (x.tag == tag && key(x.idx1 - 1) == k) return true;
    }
  }
  void add(std::string_view k, std::size_t slot, std::uint64_t h) {
    arena_.insert(arena_.end(), k.begin(), k.end());
    hashes_.push_back(h);
    slots_[slot] = {std::uint32_t(++n_), std::uint32_t(h >> 32)};
    if (n_ * 10 > slots_.size() * 6) grow();  // load factor at most 0.6
  }
  // Without checking: every key is added once.
  void add(std::string_view k) {
    std::size_t slot;
    const std::uint64_t h = hash(k);
    if (!find(k, h, slot)) add(k, slot, h);
  }

 private:
  struct Slot {
    std::uint32_t idx1 = 0, tag = 0;
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (std::uint32_t i = 0; i < n_; ++i) {
      const std::uint64_t h = hashes_[i];
      std::size_t s = h & mask;
      while (slots_[s].idx1 != 0) s = (s + 1) & mask;
      slots_[s] = {i + 1, std::uint32_t(h >> 32)};
    }
  }
  std::size_t len_, n_ = 0;
  std::vector<char> arena_;
  std::vector<std::uint64_t> hashes_;  // each key's, for grow()
  std::vector<Slot> slots_;
};

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
  key_into<true>(k, w, identity(w));
  return k;
}

bool cpus_symmetric(const Cfg& cfg) { return !cfg.mut_shoot_skip_cpu; }  // "the highest CPU"

namespace {
// A signature is a 64-bit digest of what a renaming keeps (kinds, counts, the signatures of what
// an object points to; sets combined by a sum, so their order does not count). Objects are sorted
// by it and the least key is then taken over the renamings inside each run of equal digests: two
// objects whose signatures differ but whose digests collide only make a run longer (more
// renamings tried), never a wrong key, since every renaming's key is exact.
using Sig = std::uint64_t;
Sig mix(Sig h, std::uint64_t v) {  // splitmix64's finaliser over h and v
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// canonical_key's buffers, reused across the calls of one exploration (a key per transition).
struct KeyScratch {
  std::vector<Sig> msig, tsig, csig;
  Renaming r;
  std::string k;
};

void canonical_key_into(std::string& best, const World<Concrete>& w, bool rename_cpus, KeyScratch& z) {
  const int nc = int(w.cpus.size()), nt = w.ntasks, nm = int(w.mms.size());
  auto& msig = z.msig;
  auto& tsig = z.tsig;
  auto& csig = z.csig;
  msig.resize(nm), tsig.resize(nt), csig.resize(nc);
  for (int m = 0; m < nm; ++m) {
    const Mm& mm = w.mms[m];
    std::uint64_t users = 0, actives = 0, prevs = 0;
    for (const Task& t : w.tasks) users += t.mm == m, actives += t.active_mm == m;
    for (const Cpu& c : w.cpus) prevs += c.prev_mm == m;
    Sig h = mix(std::uint64_t(mm.st), mm.ext_users);
    for (std::uint64_t v : {std::uint64_t(mm.ext_grabs), std::uint64_t(w.cnt[m].mm_users),
                            std::uint64_t(w.cnt[m].mm_count), std::uint64_t(mm.mask.count()), users, actives, prevs})
      h = mix(h, v);
    msig[m] = h;
  }
  auto mm_sig = [&](Ref m) -> Sig { return m == kNull ? 0 : m == kInitMm ? 1 : mix(2, msig[m]); };
  auto task_sig = [&](const Task& t) -> Sig {
    Sig h =
        mix(std::uint64_t(t.st), (t.kthread << 0) | (t.idle << 1) | (t.exiting << 2) | ((t.mm == t.active_mm) << 3));
    return mix(mix(h, mm_sig(t.mm)), mm_sig(t.active_mm));
  };
  for (int t = 0; t < nt; ++t) tsig[t] = task_sig(w.tasks[t]);
  for (int c = 0; c < nc; ++c) {
    const Cpu& cpu = w.cpus[c];
    Sig h = 5;  // CPU 0 (never offline), or every CPU without renaming, is pinned below
    h = mix(h,
            (std::uint64_t(cpu.hp) << 0) | (std::uint64_t(cpu.irqs_off) << 4) | (std::uint64_t(cpu.curr >= nt) << 5));
    h = mix(h, cpu.curr < nt ? tsig[cpu.curr] : task_sig(w.tasks[cpu.curr]));
    h = mix(h, task_sig(w.tasks[w.idle_of(c)]));
    h = mix(h, mm_sig(cpu.prev_mm));
    Sig in_masks = 0;  // the mms whose mm_cpumask has c: a set
    for (int m = 0; m < nm; ++m)
      if (w.mms[m].mask.test(c)) in_masks += mix(6, msig[m]);
    csig[c] = mix(h, in_masks);
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
  // Pinned objects (CPU 0; every CPU when CPUs are not renamed) come first, in index order, and
  // are never permuted, whatever their digests.
  auto arrange = [&](std::vector<int>& order, const std::vector<Sig>& sig, auto free_slot, auto pinned) {
    order.resize(sig.size());
    for (int i = 0; i < int(sig.size()); ++i) order[i] = i;
    // Ties by index: any order inside a run is permuted below.
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      if (pinned(a) || pinned(b)) return pinned(a) && (!pinned(b) || a < b);
      return sig[a] != sig[b] ? sig[a] < sig[b] : a < b;
    });
    for (int i = 0; i < int(order.size());) {
      int j = i + 1;
      if (!pinned(order[i]))
        while (j < int(order.size()) && sig[order[j]] == sig[order[i]]) ++j;
      bool all_free = true;  // free slots: nothing points to them, any order gives the same key
      for (int x = i; x < j; ++x) all_free = all_free && free_slot(order[x]);
      if (j - i > 1 && !all_free) runs.at(nruns++) = {&order, i, j};
      i = j;
    }
  };
  const auto none = [](int) { return false; };
  arrange(r.oc, csig, none, [&](int c) { return !rename_cpus || c == 0; });
  arrange(
      r.ot, tsig, [&](int t) { return w.tasks[t].st == TaskState::Unborn; }, none);
  arrange(
      r.om, msig, [&](int m) { return w.mms[m].st == MmState::Unborn; }, none);
  r.invc.resize(nc), r.invt.resize(nt), r.invm.resize(nm);

  best.clear();
  std::string& k = z.k;
  for (;;) {
    for (int i = 0; i < nc; ++i) r.invc[r.oc[i]] = i;
    for (int i = 0; i < nt; ++i) r.invt[r.ot[i]] = i;
    for (int i = 0; i < nm; ++i) r.invm[r.om[i]] = i;
    key_into<false>(k, w, r);
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
  // A state is its key in `seen` (same index): its world is decoded from the key when it is
  // expanded, so the frontier holds no worlds. With symmetry the key is canonical and the
  // decoded world is the class's representative (a renaming of the state reached).
  struct Node {
    std::uint32_t parent;
    std::uint32_t depth;
    Event via;  // from the parent's decoded world
  };
  std::vector<Node> nodes;
  const Cfg cfg = o.header.cfg();
  const bool rename_cpus = cpus_symmetric(cfg);
  const World<Concrete> start = initial(o.header.sizes);
  const Renaming id = identity(start);
  std::string key;
  KeyScratch scratch;
  auto key_of = [&](const World<Concrete>& w) -> const std::string& {
    if (o.symmetry)
      canonical_key_into(key, w, rename_cpus, scratch);
    else
      key_into<true>(key, w, id);
    return key;
  };
  const std::size_t klen = key_of(start).size();
  StateSet seen(klen);
  seen.add(key);
  struct Next {
    Event via;
    std::uint64_t hash;
    std::size_t at;  // its key in `keys`
    std::uint64_t frees, ipis;
  };
  std::vector<Next> batch;
  std::vector<Event> cands;
  std::string keys;
  nodes.push_back({UINT32_MAX, 0, {}});
  StepLog log;
  std::vector<spec::lazytlb::Violation> bad;
  World<Concrete> cur = start, w = start;
  bool dirty = false;  // w is not cur (between steps the explorer keeps w equal to cur)
  // The events from the initial state to node i, then `last`. Without symmetry each node's
  // world is the state reached, so the recorded events replay as they are; with it, each was
  // taken from a representative, so the path is found again from the real initial state: at each
  // step an enabled event whose state is in the next node's class (one exists: the recorded
  // event, renamed), and at the end an event that violates (the renamed `last` does).
  auto trace_to = [&](std::uint32_t i, const Event& last) {
    Script s = o.header;
    s.events.clear();
    s.lines.clear();
    std::vector<std::uint32_t> path;
    for (std::uint32_t j = i; nodes[j].parent != UINT32_MAX; j = nodes[j].parent) path.push_back(j);
    std::reverse(path.begin(), path.end());
    if (!o.symmetry) {
      for (auto j : path) s.events.push_back(nodes[j].via);
      s.events.push_back(last);
      return s;
    }
    World<Concrete> a = start, b;
    auto steps_ok = [&](World<Concrete>& x, const Event& e) {
      if (!why_not_enabled(x, cfg, e).empty()) return std::optional<bool>{};
      Costs cost;
      bad.clear();
      return std::optional<bool>{checked_step(cfg, x, e, cost, log, bad)};
    };
    for (auto j : path) {
      bool found = false;
      for (const auto& e : candidate_events(a, cfg, o.hotplug, o.max_offline)) {
        b = a;
        if (steps_ok(b, e) != std::optional<bool>{true} || key_of(b) != seen.key(j)) continue;
        s.events.push_back(e);
        a = std::move(b);
        found = true;
        break;
      }
      if (!found) break;  // not expected: the replay below then reports what it finds
    }
    // The violation as the real state's event shows it (its CPU, task and mm numbers), the
    // same invariant first.
    for (const bool same_invariant : {true, false})
      for (const auto& e : candidate_events(a, cfg, o.hotplug, o.max_offline)) {
        b = a;
        if (steps_ok(b, e) != std::optional<bool>{false}) continue;
        if (same_invariant && bad.front().invariant != r.violation->invariant) continue;
        r.violation = bad.front();
        s.events.push_back(e);
        return s;
      }
    s.events.push_back(last);
    return s;
  };
  // Without symmetry's help the state check could only be skipped for states that passed it: if
  // the initial state (added unchecked) fails an invariant, every transition is judged in full.
  const bool all_checked = !spec::lazytlb::check(start, cfg, StepLog{}).empty();
  auto count = [&](std::uint64_t frees, std::uint64_t ipis) {
    ++r.transitions;
    r.frees += frees;
    r.max_ipis_step = std::max(r.max_ipis_step, ipis);
  };
  // The first violation (by a transition out of node i): what checked_step reports for it (`bad`
  // has it already when judged = true).
  auto violated = [&](std::uint32_t i, const Event& e, bool judged) {
    if (r.violation) return;
    if (!judged) {
      w = cur;
      dirty = true;
      Costs cost;
      bad.clear();
      checked_step(cfg, w, e, cost, log, bad);
    }
    const auto v = bad.front();
    r.violation = v;
    r.counterexample = trace_to(i, e);
  };
  // The batch's lookups, in event order; a new state is judged (stepped again from cur: the
  // batch keeps keys, not worlds) before it is added. true: stop (a violation, stop_at_violation).
  auto flush = [&](std::uint32_t i) {
    for (const auto& b : batch) seen.prefetch_key(b.hash);
    bool stop = false;
    for (const auto& b : batch) {
      count(b.frees, b.ipis);
      const std::string_view k(keys.data() + b.at, klen);
      std::size_t slot;
      if (seen.find(k, b.hash, slot)) continue;
      if (!all_checked) {
        w = cur;
        dirty = true;
        Costs cost;
        bad.clear();
        if (!checked_step(cfg, w, b.via, cost, log, bad)) {
          violated(i, b.via, true);
          if (!o.stop_at_violation) continue;  // the violating state is not expanded
          stop = true;
          break;
        }
      }
      if (nodes.size() >= o.max_states) {
        r.truncated = true;
        continue;
      }
      seen.add(k, slot, b.hash);
      nodes.push_back({i, nodes[i].depth + 1, b.via});
    }
    batch.clear();
    keys.clear();
    return stop;
  };
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    if (o.stop_when_full && nodes.size() >= o.max_states) {
      r.truncated = true;  // the rest is kept unexpanded
      break;
    }
    r.depth = std::max<std::size_t>(r.depth, nodes[i].depth);
    if (o.progress && i > 0 && i % o.progress_every == 0) o.progress(nodes.size(), i, r.depth);
    if (i > 0) decode_into(cur, seen.key(i)), dirty = true;
    if (spec::lazytlb::zombies(cur) > 0) ++r.zombie_states;
    // Step every enabled event first, keeping the new states' keys; then look them all up, their
    // table loads started together (the lookups are cache misses: most of the time otherwise).
    // States are added in event order, as one lookup after each step would. Each transition's
    // obligations and log are checked as it is stepped; the invariants of the state it reaches
    // only when that state is new (flush): a state in `seen` passed them (a violating state is
    // never added), and with symmetry so did its class (the invariants hold of every renaming).
    // Transitions are counted in flush, so a stop counts exactly those up to the violating one.
    batch.clear();
    bool stop = false;
    candidates_into(cands, cur, cfg, o.hotplug, o.max_offline, true);
    for (const auto& e : cands) {
      if (!why_not_enabled(cur, cfg, e).empty()) continue;
      if (dirty) w = cur;
      Costs cost;
      bad.clear();
      const bool ok =
          all_checked ? checked_step(cfg, w, e, cost, log, bad) : transition_step(cfg, w, e, cost, log, bad);
      dirty = true;
      if (!ok) {
        if (flush(i)) {  // the states of the events before it are judged and added first
          stop = true;
          break;
        }
        count(cost.frees, cost.ipis);
        violated(i, e, all_checked);
        if (!o.stop_at_violation) continue;  // the violating state is not expanded
        stop = true;
        break;
      }
      const std::string& k = key_of(w);
      const auto h = StateSet::hash(k);
      seen.prefetch(h);
      batch.push_back({e, h, keys.size(), cost.frees, cost.ipis});
      keys.append(k);
      if (log.writes) {  // w back to cur: only the records the step wrote (a copy was 9% of the time)
        for (const auto c : log.cpus) w.cpus[c] = cur.cpus[c];
        for (const auto t : log.tasks) w.tasks[t] = cur.tasks[t];
        for (const auto m : log.mms) w.mms[m] = cur.mms[m], w.cnt[m] = cur.cnt[m];
        dirty = false;
      }
    }
    if (!stop) stop = flush(i);
    if (stop) {
      r.states = nodes.size();
      return r;
    }
  }
  r.states = nodes.size();
  if (keep_states) {
    r.sample.reserve(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      r.sample.push_back(start);
      if (i > 0) decode_into(r.sample.back(), seen.key(i));
    }
  }
  return r;
}

}  // namespace kacct::model::lazytlb
