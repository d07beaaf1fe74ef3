// Tick accounting (model/tick): account_process_tick, account_idle_ticks, irqtime_account_irq,
// update_rq_clock and update_curr run concretely and symbolically on the same values must
// agree field by field, obligations included (props/differential.hpp). Every case runs every
// TickCfg variant (irq time x steal) at a HZ's TICK_NSEC or an arbitrary one.
#include "model/tick/tick.hpp"
#include "props/differential.hpp"

namespace kacct::props {
namespace {
using namespace model;
using namespace diff;

constexpr int kCases = 30;

std::uint64_t gen_tick_nsec() {
  return *rc::gen::weightedOneOf<std::uint64_t>(
      {{4, rc::gen::element(arch::tick_nsec(100), arch::tick_nsec(250), arch::tick_nsec(300), arch::tick_nsec(1000))},
       {1, gen_u64()}});
}
// Every (irq_time, steal) variant, each with its own TICK_NSEC.
std::vector<TickCfg> gen_tick_cfgs() {
  std::vector<TickCfg> out;
  for (bool irq : {false, true})
    for (bool steal : {false, true}) out.push_back({irq, steal, gen_tick_nsec()});
  return out;
}
std::string cfg_text(const TickCfg& c) {
  return "irq_time=" + std::to_string(c.irq_time) + " steal=" + std::to_string(c.steal) +
         " tick_nsec=" + std::to_string(c.tick_nsec);
}
TickCtx gen_tick_ctx() {
  TickCtx x;
  x.user_tick = *rc::gen::arbitrary<bool>();
  x.preempt_count = *rc::gen::element(HARDIRQ_OFFSET, 2 * HARDIRQ_OFFSET, HARDIRQ_OFFSET + SOFTIRQ_OFFSET,
                                      3 * HARDIRQ_OFFSET + SOFTIRQ_OFFSET, 0u, SOFTIRQ_OFFSET);
  x.is_idle = *rc::gen::arbitrary<bool>();
  x.is_ksoftirqd = *rc::gen::arbitrary<bool>();
  x.pf_vcpu = *rc::gen::arbitrary<bool>();
  x.nice_pos = *rc::gen::arbitrary<bool>();
  x.nr_iowait = *rc::gen::arbitrary<bool>();
  return x;
}
std::string ctx_text(const TickCtx& x) {
  return "user_tick=" + std::to_string(x.user_tick) + " preempt_count=" + std::to_string(x.preempt_count) +
         " is_idle=" + std::to_string(x.is_idle) + " ksoftirqd=" + std::to_string(x.is_ksoftirqd) +
         " pf_vcpu=" + std::to_string(x.pf_vcpu) + " nice_pos=" + std::to_string(x.nice_pos) +
         " nr_iowait=" + std::to_string(x.nr_iowait);
}
// A clock near a state's own (the realistic case), or anywhere.
std::uint64_t near(std::uint64_t base) {
  return *rc::gen::arbitrary<bool>() ? base + *gen_u64() % 10'000'000 : *gen_u64();
}

template <class SD>
void process_tick() {
  const TickCtx x = gen_tick_ctx();
  const auto c = arbitrary<CpuAcct<Concrete>>();
  const auto p = arbitrary<TaskAcct<Concrete>>();
  for (const auto& cfg : gen_tick_cfgs())
    differential<SD>(
        "account_process_tick " + cfg_text(cfg) + " " + ctx_text(x),
        [&](auto& d, auto& cpu, auto& task) { account_process_tick(d, cfg, cpu, task, x); }, val("cpu", c),
        val("task", p));
}

template <class SD>
void idle_ticks() {
  TickCtx x = gen_tick_ctx();
  x.preempt_count = 0;
  x.is_idle = true;
  const std::uint64_t ticks =
      *rc::gen::weightedOneOf<std::uint64_t>({{4, rc::gen::inRange<std::uint64_t>(1, 10'000)}, {1, gen_u64()}});
  const auto c = arbitrary<CpuAcct<Concrete>>();
  const auto p = arbitrary<TaskAcct<Concrete>>();
  for (const auto& cfg : gen_tick_cfgs())
    differential<SD>(
        "account_idle_ticks " + cfg_text(cfg) + " " + ctx_text(x),
        [&](auto& d, auto& cpu, auto& task, auto& n) { account_idle_ticks(d, cfg, cpu, task, x, n); }, val("cpu", c),
        val("idle task", p), val("ticks", ticks));
}

template <class SD>
void irq_boundary() {
  const auto cls = *rc::gen::element(IrqClass::None, IrqClass::Hardirq, IrqClass::Softirq);
  const auto c = arbitrary<CpuAcct<Concrete>>();
  const std::uint64_t now = near(c.irqtime.irq_start_time);
  for (const auto& cfg : gen_tick_cfgs())
    differential<SD>(
        "irqtime_account_irq " + cfg_text(cfg) + " class=" + std::to_string(int(cls)),
        [&](auto& d, auto& cpu, auto& t) { irqtime_account_irq(d, cfg, cpu, t, cls); }, val("cpu", c), val("now", now));
}

template <class SD>
void rq_clock_then_curr() {
  const auto c = arbitrary<CpuAcct<Concrete>>();
  auto p = arbitrary<TaskAcct<Concrete>>();
  if (*rc::gen::arbitrary<bool>()) p.exec_start = c.rq.clock_task - *gen_u64() % 10'000'000;
  const std::uint64_t now = near(c.rq.clock);
  for (const auto& cfg : gen_tick_cfgs()) {
    differential<SD>(
        "update_rq_clock " + cfg_text(cfg), [&](auto& d, auto& cpu, auto& t) { update_rq_clock(d, cfg, cpu, t); },
        val("cpu", c), val("now", now));
    differential<SD>(
        "update_rq_clock + update_curr " + cfg_text(cfg),
        [&](auto& d, auto& cpu, auto& task, auto& t) {
          update_rq_clock(d, cfg, cpu, t);
          update_curr(d, cpu, task);
        },
        val("cpu", c), val("task", p), val("now", now));
  }
}

template <class SD>
void curr() {
  const auto c = arbitrary<CpuAcct<Concrete>>();
  auto p = arbitrary<TaskAcct<Concrete>>();
  if (*rc::gen::arbitrary<bool>()) p.exec_start = c.rq.clock_task - *gen_u64() % 10'000'000;
  differential<SD>(
      "update_curr", [&](auto& d, auto& cpu, auto& task) { update_curr(d, cpu, task); }, val("cpu", c), val("task", p));
}

TEST(TickDifferential, AccountProcessTick) { check(process_tick<Symbolic>, kCases); }
TEST(TickDifferential, AccountIdleTicks) { check(idle_ticks<Symbolic>, kCases); }
TEST(TickDifferential, IrqtimeAccountIrq) { check(irq_boundary<Symbolic>, kCases); }
TEST(TickDifferential, UpdateRqClockAndCurr) { check(rq_clock_then_curr<Symbolic>, kCases); }
TEST(TickDifferential, UpdateCurr) { check(curr<Symbolic>, kCases); }

// The check can fail: a symbolic domain whose subtraction saturates is caught.
TEST(TickDifferential, CatchesSaturatingSub) {
  expect_caught(rq_clock_then_curr<SaturatingSub>, 30, "the domains disagree");
}

}  // namespace
}  // namespace kacct::props
