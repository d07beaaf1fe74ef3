// Per-CPU and per-task accounting state shared by the tick model and the readers.
// Field names follow the kernel structures they stand for.
#pragma once
#include <array>

#include "model/cputime/cputime_adjust.hpp"
#include "model/domain/reflect.hpp"

namespace kacct::model {  // shared core, not model::tick: every backend uses these types

// enum cpu_usage_stat (include/linux/kernel_stat.h), same order.
enum Usage : unsigned { USER, NICE, SYSTEM, SOFTIRQ, IRQ, IDLE, IOWAIT, STEAL, GUEST, GUEST_NICE, NR_STATS };
inline constexpr std::array<const char*, NR_STATS> usage_names = {"user", "nice",   "system", "softirq", "irq",
                                                                  "idle", "iowait", "steal",  "guest",   "guest_nice"};

template <class D>
struct IrqTime {  // struct irqtime (4.11+)
  BOOST_HANA_DEFINE_STRUCT(IrqTime, (u64<D>, total), (u64<D>, tick_delta), (u64<D>, irq_start_time));
};
template <class D>
struct RqClock {  // the clock part of struct rq; steal_dropped is the model's (108ad0999085)
  BOOST_HANA_DEFINE_STRUCT(RqClock, (u64<D>, clock), (u64<D>, clock_task), (u64<D>, prev_irq_time),
                           (u64<D>, prev_steal_time_rq), (u64<D>, steal_dropped));
};
template <class D>
struct CpuAcct {
  BOOST_HANA_DEFINE_STRUCT(CpuAcct, (std::array<u64<D>, NR_STATS>, cpustat),  // kernel_cpustat
                           (u64<D>, prev_steal_time),                         // rq->prev_steal_time
                           (u64<D>, steal_clock),                             // paravirt_steal_clock(cpu)
                           (IrqTime<D>, irqtime), (RqClock<D>, rq));
};
template <class D>
struct TaskAcct {  // the accounting fields of task_struct
  BOOST_HANA_DEFINE_STRUCT(TaskAcct, (u64<D>, utime), (u64<D>, stime), (u64<D>, gtime),
                           (u64<D>, sum_exec_runtime),  // se.sum_exec_runtime: rtime
                           (u64<D>, exec_start),        // se.exec_start (rq clock_task)
                           (PrevCputime<D>, prev_cputime));
};

template <class D>
CpuAcct<D> zero_cpu(D& d) {
  CpuAcct<D> c;
  auto z = d.template lit<64>(0);
  c.cpustat.fill(z);
  c.prev_steal_time = c.steal_clock = z;
  c.irqtime = {z, z, z};
  c.rq = {z, z, z, z, z};
  return c;
}
template <class D>
TaskAcct<D> zero_task(D& d) {
  auto z = d.template lit<64>(0);
  return {z, z, z, z, z, {z, z}};
}

}  // namespace kacct::model
