// Gen vtime (model/gen): every GenStep entry point (user exit/enter, guest enter/exit, idle and
// kernel flushes, both halves of a task switch and the whole switch, the <= 4.7 irq hooks) in
// every era the model has (the releases of arch::gen_versions, each at every HZ offered, with
// irq time and steal on or off), concretely and symbolically on the same values
// (props/differential.hpp). The vtime control state (state, PF_VCPU, idle, nice, cpu, section
// depth) is concrete in both runs and must end equal too. GenCost is not compared: the symbolic
// run counts the work of both sides of a branch.
#include "arch/config.hpp"
#include "model/gen/gen.hpp"
#include "props/differential.hpp"

namespace kacct::props {
namespace {
using namespace model;
using namespace diff;

constexpr int kCases = 15;

struct Era {
  arch::KVersion ver;
  unsigned hz;
  GenCfg g;
  TickCfg tc;
};
// Every modelled release at every HZ, with a random irq time / steal setting each time (both
// settings of each appear across the cases).
std::vector<Era> eras() {
  std::vector<Era> out;
  for (auto ver : arch::gen_versions)
    for (unsigned hz : {250u, 1000u}) {
      TickCfg tc{*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(), arch::tick_nsec(hz)};
      out.push_back({ver, hz, gen_cfg(ver, hz), tc});
    }
  return out;
}
std::string era_text(const Era& e) {
  return e.ver.str() + " HZ=" + std::to_string(e.hz) + " variant=" + variant_name(e.g.variant) +
         " irq_hooks=" + std::to_string(e.g.irq_hooks) + " other_time=" + std::to_string(e.g.other_time) +
         " states55=" + std::to_string(e.g.states55) + " irq_time=" + std::to_string(e.tc.irq_time) +
         " steal=" + std::to_string(e.tc.steal);
}
std::string ctl_text(const VtimeCtl& s) {
  return std::string("{state=") + vstate_name(s.state) + " pf_vcpu=" + std::to_string(s.pf_vcpu) +
         " is_idle=" + std::to_string(s.is_idle) + " nice_pos=" + std::to_string(s.nice_pos) +
         " cpu=" + std::to_string(s.cpu) + " in_section=" + std::to_string(s.in_section) + "}";
}
VtimeCtl gen_ctl() {
  VtimeCtl s;
  s.state = *rc::gen::element(VT_INACTIVE, VT_IDLE, VT_SYS, VT_USER, VT_GUEST);
  s.pf_vcpu = *rc::gen::arbitrary<bool>();
  s.is_idle = *rc::gen::arbitrary<bool>();
  s.nice_pos = *rc::gen::arbitrary<bool>();
  s.cpu = *rc::gen::element(-1, 0, 1);
  return s;
}
GenCtx gen_ctx() {
  GenCtx x;
  x.irq_count = *rc::gen::element(0u, HARDIRQ_OFFSET, SOFTIRQ_OFFSET, HARDIRQ_OFFSET + SOFTIRQ_OFFSET);
  x.nr_iowait = *rc::gen::arbitrary<bool>();
  return x;
}
std::string ctx_text(const GenCtx& x) {
  return "irq_count=" + std::to_string(x.irq_count) + " nr_iowait=" + std::to_string(x.nr_iowait);
}
// A vtime snapshot near the clock (the step usually finds time elapsed), or anywhere.
VtimeTask<Concrete> gen_vtime(std::uint64_t now, std::uint64_t jiffies, bool jiffy) {
  auto v = arbitrary<VtimeTask<Concrete>>();
  if (*rc::gen::arbitrary<bool>())
    v.starttime = (jiffy ? jiffies - *rc::gen::inRange(0, 3) : now - *gen_u64() % 20'000'000);
  if (*rc::gen::arbitrary<bool>())  // residues below TICK_NSEC, as the model keeps them
    for (auto* r : {&v.utime, &v.stime, &v.gtime}) *r %= 5'000'000;
  return v;
}

enum class Step {
  UserExit,
  UserEnter,
  GuestEnter,
  GuestExit,
  Idle,
  Kernel,
  SwitchPrev,
  SwitchNext,
  Switch,
  IrqEnter,
  IrqExit
};
constexpr const char* kStepNames[] = {"user_exit",    "user_enter",     "guest_enter",  "guest_exit",
                                      "account_idle", "account_kernel", "switch_prev",  "switch_next",
                                      "task_switch",  "irq_enter_hook", "irq_exit_hook"};

// One step in every era, from one random state (the same values for every era).
template <class SD>
void step_in_every_era(Step step) {
  const std::uint64_t now = *gen_u64(), jiffies = *gen_u64();
  const std::uint64_t now2 = *rc::gen::arbitrary<bool>() ? now + *gen_u64() % 1'000'000 : *gen_u64();
  const std::uint64_t jiffies2 = *rc::gen::arbitrary<bool>() ? jiffies + *rc::gen::inRange(0, 3) : *gen_u64();
  const bool jiffy_snap = *rc::gen::arbitrary<bool>();
  const auto c = arbitrary<CpuAcct<Concrete>>();
  const auto t = arbitrary<TaskAcct<Concrete>>();
  const auto pv = gen_vtime(now, jiffies, jiffy_snap);
  const auto nv = gen_vtime(now2, jiffies2, jiffy_snap);
  const auto vc = arbitrary<VtimeCpu<Concrete>>();
  const VtimeCtl ps = gen_ctl(), ns = gen_ctl();
  const GenCtx x = gen_ctx();
  const bool in_interrupt = *rc::gen::arbitrary<bool>();
  const std::int32_t cpu = *rc::gen::inRange(0, 4);
  for (const auto& era : eras()) {
    const GenCfg& g = era.g;
    const TickCfg& tc = era.tc;
    auto body = [&](auto& d, auto& cc, auto& tt, auto& pvv, auto& nvv, auto& vcc, auto& n1, auto& j1, auto& n2,
                    auto& j2, VtimeCtl& pss, VtimeCtl& nss) {
      using D = std::remove_reference_t<decltype(d)>;
      GenCost cost;
      GenStep<D> st{d, tc, g, cc, vcc, cost};
      const GenNow<D> n{n1, j1}, nn{n2, j2};
      switch (step) {
        case Step::UserExit: st.user_exit(pvv, tt, pss, x, n); break;
        case Step::UserEnter: st.user_enter(pvv, tt, pss, x, n); break;
        case Step::GuestEnter: st.guest_enter(pvv, tt, pss, x, n); break;
        case Step::GuestExit: st.guest_exit(pvv, tt, pss, x, n); break;
        case Step::Idle: st.account_idle(pvv, pss, x, n); break;
        case Step::Kernel: st.account_kernel(pvv, tt, pss, x, n); break;
        case Step::SwitchPrev: st.switch_prev(pvv, tt, pss, x, n); break;
        case Step::SwitchNext: st.switch_next(nvv, nss, nn, cpu); break;
        case Step::Switch: st.task_switch(pvv, tt, pss, nvv, nss, x, n, nn, cpu); break;
        case Step::IrqEnter: st.irq_enter_hook(pvv, tt, pss, x, n, in_interrupt); break;
        case Step::IrqExit: st.irq_exit_hook(pvv, tt, pss, x, n); break;
      }
    };
    differential<SD>(std::string(kStepNames[int(step)]) + " " + era_text(era) + " " + ctx_text(x) +
                         " in_interrupt=" + std::to_string(in_interrupt) + " cpu=" + std::to_string(cpu),
                     body, val("cpu", c), val("task", t), val("vtime", pv), val("next vtime", nv), val("vtime cpu", vc),
                     val("now", now), val("jiffies", jiffies), val("now2", now2), val("jiffies2", jiffies2),
                     fixed("ctl", ps, ctl_text), fixed("next ctl", ns, ctl_text));
  }
}

TEST(GenDifferential, UserExit) {
  check([] { step_in_every_era<Symbolic>(Step::UserExit); }, kCases);
}
TEST(GenDifferential, UserEnter) {
  check([] { step_in_every_era<Symbolic>(Step::UserEnter); }, kCases);
}
TEST(GenDifferential, GuestEnter) {
  check([] { step_in_every_era<Symbolic>(Step::GuestEnter); }, kCases);
}
TEST(GenDifferential, GuestExit) {
  check([] { step_in_every_era<Symbolic>(Step::GuestExit); }, kCases);
}
TEST(GenDifferential, AccountIdle) {
  check([] { step_in_every_era<Symbolic>(Step::Idle); }, kCases);
}
TEST(GenDifferential, AccountKernel) {
  check([] { step_in_every_era<Symbolic>(Step::Kernel); }, kCases);
}
TEST(GenDifferential, SwitchPrev) {
  check([] { step_in_every_era<Symbolic>(Step::SwitchPrev); }, kCases);
}
TEST(GenDifferential, SwitchNext) {
  check([] { step_in_every_era<Symbolic>(Step::SwitchNext); }, kCases);
}
TEST(GenDifferential, TaskSwitch) {
  check([] { step_in_every_era<Symbolic>(Step::Switch); }, kCases);
}
TEST(GenDifferential, IrqEnterHook) {
  check([] { step_in_every_era<Symbolic>(Step::IrqEnter); }, kCases);
}
TEST(GenDifferential, IrqExitHook) {
  check([] { step_in_every_era<Symbolic>(Step::IrqExit); }, kCases);
}

// The check can fail: a symbolic domain whose subtraction saturates is caught (the switch's
// lost-time ghost subtracts across the gap).
TEST(GenDifferential, CatchesSaturatingSub) {
  expect_caught([] { step_in_every_era<SaturatingSub>(Step::Switch); }, 15, "the domains disagree");
}

}  // namespace
}  // namespace kacct::props
