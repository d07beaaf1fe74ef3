// A process's reaped children's times: signal->cutime/cstime (kernel/exit.c wait_task_zombie(),
// read in 6.1.192 and 6.12.117; the same arithmetic in both). One template over the value domain.
#pragma once
#include "model/cputime/cputime_adjust.hpp"

namespace kacct::model {

template <class D>
struct ChildTimes {  // signal->cutime, signal->cstime (ns)
  BOOST_HANA_DEFINE_STRUCT(ChildTimes, (u64<D>, utime), (u64<D>, stime));
};

template <class D>
ChildTimes<D> zero_children(D& d) {
  return {d.template lit<64>(0), d.template lit<64>(0)};
}

// wait_task_zombie() reaping thread-group leader `p` (EXIT_DEAD, not a ptrace reap): the reaper's
// signal gains thread_group_cputime_adjusted(p) (`adjusted`: cputime_adjust() over p's whole
// group, prev_cputime moved as at any reader) plus p's own reaped children (`reaped_children`,
// p->signal->cutime/cstime). u64 additions, wrapping as the kernel's do.
template <class D>
void reap_child(D& d, ChildTimes<D>& reaper, const PrevCputime<D>& adjusted, const ChildTimes<D>& reaped_children) {
  reaper.utime = d.add(reaper.utime, d.add(adjusted.utime, reaped_children.utime));
  reaper.stime = d.add(reaper.stime, d.add(adjusted.stime, reaped_children.stime));
}

}  // namespace kacct::model
