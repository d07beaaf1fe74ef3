// The lazy-TLB seed scenario (seed.hpp).
#include "model/lazytlb/seed.hpp"

namespace kacct::lazytlb {

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
  for (int c = 1; c < n; ++c) { ev(Op::Switch, c, c); ev(Op::Finish, c); }
  s.loop_begin = sc.events.size();
  for (int r = 0; r < rounds; ++r)
    for (int c = 0; c < n; ++c) {
      ev(Op::Idle, c);
      ev(Op::Finish, c);
      ev(Op::Switch, c, c);
      ev(Op::Finish, c);
    }
  s.loop_end = sc.events.size();
  for (int c = n - 1; c >= 0; --c) { ev(Op::Exit, c); ev(Op::Idle, c); ev(Op::Finish, c); }
  return s;
}

}  // namespace kacct::lazytlb
