// The initial lazy-TLB world of given sizes (lazytlb.hpp).
#include "model/lazytlb/lazytlb.hpp"

namespace kacct::model::lazytlb {

World<Concrete> initial(const Sizes& s) {
  World<Concrete> w;
  w.ntasks = s.tasks;
  w.cpus.resize(s.cpus);
  w.tasks.resize(s.tasks + s.cpus);
  w.mms.resize(s.mms);
  w.cnt.resize(s.mms, Counters<Concrete>{0, 0});
  for (int c = 0; c < s.cpus; ++c) {
    Task& idle = w.tasks[w.idle_of(c)];
    idle.st = TaskState::Running;
    idle.kthread = idle.idle = true;
    idle.active_mm = kInitMm;
    w.cpus[c].curr = w.idle_of(c);
  }
  w.mms[0].st = MmState::Live;
  w.cnt[0] = {1, 1};
  Task& t0 = w.tasks[0];
  t0.st = TaskState::Runnable;
  t0.mm = t0.active_mm = 0;
  if (s.tasks >= 2) {
    Task& k = w.tasks[s.tasks - 1];
    k.st = TaskState::Runnable;
    k.kthread = true;
  }
  return w;
}

}  // namespace kacct::model::lazytlb
