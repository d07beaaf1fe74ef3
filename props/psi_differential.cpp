// PSI irq pressure (model/psi): every event step (irq boundary, sched_tick, __schedule,
// clock_gettime, wakeup, cgroup move, cgroup.pressure write) on a random topology, in every
// modelled version (5.15 without PSI irq, 6.1 charge-in-clock, 6.10 charge-at-tick, 6.12 clock
// in the section, 6.14 run-time irqtime skip, 6.17 per-CPU seq; also 6.6) with irq time on and
// off, each in a random model variant (the faithful one or a mutant), concretely and
// symbolically on the same values (props/differential.hpp). The control structure (tree,
// curr, task groups and CPUs, lock owners) is concrete in both runs and must end equal; the
// concrete-only records (costs, charges, lock faults) are not compared: the symbolic run drops
// what a guarded branch records, since the branch may not be taken.
//
// race_tick_move is not here: it is written for the concrete domain only (Concrete&).
#include <sstream>

#include "model/psi/psi.hpp"
#include "props/differential.hpp"

namespace kacct::props {
namespace {
using namespace model;
using namespace model::psi;
using namespace diff;

constexpr int kCases = 20;
const arch::KVersion kVersions[] = {arch::v(5, 15), arch::v(6, 1),  arch::v(6, 6), arch::v(6, 10),
                                    arch::v(6, 12), arch::v(6, 14), arch::v(6, 17)};
const std::vector<Variant> kVariants = {Variant::Faithful,  Variant::NoLock,     Variant::DoubleCount,
                                        Variant::LostDelta, Variant::NoNegGuard, Variant::NoRecordTimes};

std::string ctl_text(const Ctl& c) {
  std::ostringstream o;
  o << "{parent=";
  for (int p : c.parent) o << p << ",";
  o << " enabled=";
  for (char e : c.enabled) o << int(e);
  o << " tasks=";
  for (const auto& t : c.tasks) o << "(" << t.group << "," << t.cpu << ")";
  o << " curr=";
  for (int x : c.curr) o << x << ",";
  o << " lock_owner=";
  for (int x : c.lock_owner) o << x << ",";
  o << " in_irq=";
  for (char x : c.in_irq) o << int(x);
  o << "}";
  return o.str();
}

// A random world: 1-3 CPUs, a tree of 1-5 groups, 1-5 tasks; values anywhere, and now and then
// a PSI base just below the irq total (a small pending delta) or ahead of it.
struct Topo {
  Ctl ctl;
  std::uint64_t now;
  std::vector<PsiCpu<Concrete>> cpu;
  std::vector<std::vector<GroupCpu<Concrete>>> gc;
  int ncpus, ngroups, ntasks;
};
Topo gen_topo() {
  Topo t;
  t.ncpus = *rc::gen::inRange(1, 4);
  t.ngroups = *rc::gen::inRange(1, 6);
  t.ntasks = *rc::gen::inRange(1, 6);
  std::vector<int> parent{-1};
  for (int g = 1; g < t.ngroups; ++g) parent.push_back(*rc::gen::inRange(0, g));
  Concrete d;
  auto w = make_world(d, t.ncpus, parent, t.ntasks);
  for (auto& e : w.c.enabled) e = *rc::gen::weightedElement<char>({{3, 1}, {1, 0}});
  w.c.enabled[0] = 1;
  for (int k = 1; k <= t.ntasks; ++k) w.c.tasks[k] = {*rc::gen::inRange(0, t.ngroups), *rc::gen::inRange(-1, t.ncpus)};
  for (auto& c : w.c.curr) c = *rc::gen::inRange(0, t.ntasks + 1);
  t.ctl = w.c;
  t.now = *gen_u64();
  t.cpu.resize(t.ncpus);
  for (auto& c : t.cpu) {
    fill(c);
    if (*rc::gen::arbitrary<bool>()) {
      c.psi_irq_time = c.acct.irqtime.total - *gen_u64() % 10'000'000;
      c.acct.rq.prev_irq_time = c.acct.irqtime.total - *gen_u64() % 10'000'000;
      c.acct.irqtime.irq_start_time = t.now - *gen_u64() % 10'000'000;
      c.acct.rq.clock = t.now - *gen_u64() % 10'000'000;
    }
  }
  t.gc.assign(t.ngroups, std::vector<GroupCpu<Concrete>>(t.ncpus));
  for (auto& g : t.gc) fill(g);
  return t;
}

std::string cfg_text(const PsiCfg& c) {
  return c.ver.str() + " irqtime=" + std::to_string(c.irqtime) + " variant=" + std::string(variant_name(c.variant));
}

// The step `fn(d, cfg, world)` in every version x irqtime, from one random world.
template <class SD, class Fn>
void in_every_version(const std::string& what, const Topo& t, Fn&& fn) {
  for (auto ver : kVersions)
    for (bool irqtime : {false, true}) {
      PsiCfg cfg;
      cfg.ver = ver;
      cfg.irqtime = irqtime;
      cfg.variant = *rc::gen::elementOf(kVariants);
      differential<SD>(
          what + " " + cfg_text(cfg),
          [&](auto& d, auto& now, auto& cpu, auto& gc, Ctl& ctl) {
            using D = std::remove_reference_t<decltype(d)>;
            World<D> w;
            w.v.now = now;
            w.v.cpu = cpu;
            w.v.gc = gc;
            w.c = ctl;
            fn(d, cfg, w);
            now = w.v.now;
            cpu = w.v.cpu;
            gc = w.v.gc;
            ctl = w.c;
          },
          val("now", t.now), val("cpu", t.cpu), val("group cpu", t.gc), fixed("ctl", t.ctl, ctl_text));
    }
}

template <class SD>
void irq() {
  const Topo t = gen_topo();
  const int cpu = *rc::gen::inRange(0, t.ncpus);
  const auto cls = *rc::gen::element(IrqClass::None, IrqClass::Hardirq, IrqClass::Softirq);
  in_every_version<SD>("irq_boundary cpu=" + std::to_string(cpu) + " class=" + std::to_string(int(cls)), t,
                       [&](auto& d, const PsiCfg& cfg, auto& w) { irq_boundary(d, cfg, w, cpu, cls); });
}
template <class SD>
void tick() {
  const Topo t = gen_topo();
  const int cpu = *rc::gen::inRange(0, t.ncpus);
  in_every_version<SD>("sched_tick cpu=" + std::to_string(cpu), t,
                       [&](auto& d, const PsiCfg& cfg, auto& w) { sched_tick(d, cfg, w, cpu); });
}
template <class SD>
void sched() {
  const Topo t = gen_topo();
  const int cpu = *rc::gen::inRange(0, t.ncpus);
  const int next = *rc::gen::inRange(0, t.ntasks + 1);
  in_every_version<SD>("schedule cpu=" + std::to_string(cpu) + " next=" + std::to_string(next), t,
                       [&](auto& d, const PsiCfg& cfg, auto& w) { schedule(d, cfg, w, cpu, next); });
}
template <class SD>
void clock_reads() {
  const Topo t = gen_topo();
  const int cpu = *rc::gen::inRange(0, t.ncpus);
  const int by = *rc::gen::inRange(0, t.ncpus);
  in_every_version<SD>("clock_gettime_thread cpu=" + std::to_string(cpu), t,
                       [&](auto& d, const PsiCfg& cfg, auto& w) { clock_gettime_thread(d, cfg, w, cpu); });
  in_every_version<SD>("wakeup cpu=" + std::to_string(cpu) + " by=" + std::to_string(by), t,
                       [&](auto& d, const PsiCfg& cfg, auto& w) { wakeup(d, cfg, w, cpu, by); });
}
template <class SD>
void cgroups() {
  const Topo t = gen_topo();
  const int task = *rc::gen::inRange(1, t.ntasks + 1);
  const int to = *rc::gen::inRange(0, t.ngroups);
  const int by = *rc::gen::inRange(0, t.ncpus);
  const int g = *rc::gen::inRange(0, t.ngroups);
  const bool on = *rc::gen::arbitrary<bool>();
  in_every_version<SD>(
      "cgroup_move task=" + std::to_string(task) + " to=" + std::to_string(to) + " by=" + std::to_string(by), t,
      [&](auto& d, const PsiCfg&, auto& w) { cgroup_move(d, w, task, to, by); });
  in_every_version<SD>("set_pressure group=" + std::to_string(g) + " on=" + std::to_string(on), t,
                       [&](auto& d, const PsiCfg&, auto& w) { set_pressure(d, w, g, on, by); });
}

TEST(PsiDifferential, IrqBoundary) { check(irq<Symbolic>, kCases); }
TEST(PsiDifferential, SchedTick) { check(tick<Symbolic>, kCases); }
TEST(PsiDifferential, Schedule) { check(sched<Symbolic>, kCases); }
TEST(PsiDifferential, ClockGettimeAndWakeup) { check(clock_reads<Symbolic>, kCases); }
TEST(PsiDifferential, CgroupMoveAndPressure) { check(cgroups<Symbolic>, kCases); }

// The check can fail: a symbolic domain whose subtraction saturates is caught (the irq delta
// and the rq clock delta subtract).
TEST(PsiDifferential, CatchesSaturatingSub) { expect_caught(tick<SaturatingSub>, 20, "the domains disagree"); }

}  // namespace
}  // namespace kacct::props
