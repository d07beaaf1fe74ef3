// The lazy-TLB exhaustive explorer (explore.hpp).
#include "model/lazytlb/explore.hpp"

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
std::string key_of(const World<Concrete>& w) {
  std::string k;
  k.reserve(w.cpus.size() * 5 + w.tasks.size() * 6 + w.mms.size() * 20);
  auto put16 = [&](std::int16_t v) {
    k.push_back(char(v & 0xff));
    k.push_back(char(v >> 8));
  };
  for (const auto& c : w.cpus) {
    put16(c.curr);
    put16(c.prev_mm);
    k.push_back(char(int(c.irqs_off) | (int(c.hp) << 1)));
  }
  for (const auto& t : w.tasks) {
    k.push_back(char(int(t.st) | (t.kthread << 2) | (t.idle << 3) | (t.exiting << 4)));
    put16(t.mm);
    put16(t.active_mm);
  }
  for (std::size_t m = 0; m < w.mms.size(); ++m) {
    const auto& mm = w.mms[m];
    k.push_back(char(mm.st));
    for (auto x : mm.mask.w) k.append(reinterpret_cast<const char*>(&x), sizeof x);
    k.push_back(char(mm.ext_users));
    k.push_back(char(mm.ext_grabs));
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_users), 4);
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_count), 4);
  }
  return k;
}
}  // namespace

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
  }
  r.states = nodes.size();
  if (keep_states)
    for (auto& n : nodes) r.sample.push_back(std::move(n.w));
  return r;
}

}  // namespace kacct::model::lazytlb
