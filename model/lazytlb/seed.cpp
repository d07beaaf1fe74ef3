// The lazy-TLB seed scenario, its costs per switch and the throughput model (seed.hpp).
#include "model/lazytlb/seed.hpp"

#include <algorithm>

namespace kacct::model::lazytlb {

Seed seed_scenario(int n, int rounds, Arch a, arch::KVersion ver) {
  Seed s;
  Script& sc = s.script;
  sc.sizes = {n, n + 1, 1};
  sc.arch = a;
  sc.version = ver;
  auto ev = [&](Op op, int c, int arg = 0) { sc.events.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
  ev(Op::Switch, 0, 0);
  ev(Op::Finish, 0);
  for (int t = 1; t < n; ++t) ev(Op::ForkVm, 0, t);
  for (int c = 1; c < n; ++c) {
    ev(Op::Switch, c, c);
    ev(Op::Finish, c);
  }
  s.loop_begin = sc.events.size();
  for (int r = 0; r < rounds; ++r)
    for (int c = 0; c < n; ++c) {
      ev(Op::Idle, c);
      ev(Op::Finish, c);
      ev(Op::Switch, c, c);
      ev(Op::Finish, c);
    }
  s.loop_end = sc.events.size();
  for (int c = n - 1; c >= 0; --c) {
    ev(Op::Exit, c);
    ev(Op::Idle, c);
    ev(Op::Finish, c);
  }
  return s;
}

std::optional<SeedCosts> seed_costs(int n, int rounds, Arch a, arch::KVersion ver, std::size_t* failed) {
  const auto seed = seed_scenario(n, rounds, a, ver);
  Script part = seed.script;
  auto run_to = [&](std::size_t k) {
    part.events.assign(seed.script.events.begin(), seed.script.events.begin() + std::ptrdiff_t(k));
    return run_script(part);
  };
  const auto rb = run_to(seed.loop_begin), rl = run_to(seed.loop_end), all = run_to(seed.script.events.size());
  for (const auto* r : {&rb, &rl, &all})
    if (r->failed_at) {
      if (failed) *failed = *r->failed_at;
      return std::nullopt;
    }
  const auto& b = rb.costs;
  const auto& l = rl.costs;
  const double sw = double(l.switches - b.switches);
  SeedCosts c;
  c.cfg = seed.script.cfg();
  c.version = ver;
  c.loop_switches = l.switches - b.switches;
  c.count_atomics_per_switch = double(l.count_atomics - b.count_atomics) / sw;
  c.ipis_per_switch = double(l.ipis - b.ipis) / sw;
  c.mask_updates_per_switch = double(l.mask_updates - b.mask_updates) / sw;
  c.exit_ipis = all.costs.ipis - l.ipis;
  c.mm_freed_at_end = all.world.mms[0].st == MmState::Freed;
  c.ipis_per_switch_including_exit = double(all.costs.ipis) / double(all.costs.switches);
  return c;
}

double Throughput::switches_per_s(double n, double a) const { return a > 0 ? std::min(n / c, 1.0 / (a * L)) : n / c; }
double Throughput::crossover_cpus(double a) const { return a > 0 ? c / (a * L) : 0.0; }
Throughput fit_throughput(double a_ref) {
  Throughput t;
  t.c = kSeedCpus / kSeedShootdownPerS;
  t.L = 1.0 / (a_ref * kSeedRefcountPerS);
  return t;
}

}  // namespace kacct::model::lazytlb
