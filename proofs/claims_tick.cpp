// The tick patch validator (108ad0999085): Z3 on one update_rq_clock() step from any rq state
// with steal on, after the patch; the release before for contrast, on a concrete scenario.
#include <fmt/format.h>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/tick/tick.hpp"
#include "proofs/jobs.hpp"
#include "proofs/prover.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

TickCfg steal_cfg(arch::KVersion ver) {
  const arch::Config k{ver, arch::Accounting::Tick, false, true, 1000};
  return sim::model_cfg(*arch::find_cpu("x86-64"), k).tick;
}

// 10 ms of steal pending, then two rq clock updates 4 ms apart with no new steal: how much
// clock_task time does the second one give the task?
std::uint64_t second_update_task_time(const TickCfg& cfg) {
  Concrete d;
  auto c = zero_cpu(d);
  c.steal_clock = 10'000'000;
  update_rq_clock(d, cfg, c, 4'000'000);
  const auto t0 = c.rq.clock_task;
  update_rq_clock(d, cfg, c, 8'000'000);
  return c.rq.clock_task - t0;
}

// tick.steal_not_caught_up: after one update_rq_clock() that moves the clock forward, no steal
// stays pending for later updates (prev_steal_time_rq == the steal clock), and the steal taken
// out is at most the elapsed time.
Result steal_not_caught_up(const arch::Patch& p, unsigned timeout_ms) {
  Result r;
  r.name = "tick.steal_not_caught_up";
  const auto cfg = steal_cfg(p.after);
  z3::context ctx;
  S d(ctx);
  CpuAcct<S> c;
  make_fresh(d, c, "cpu");
  const auto pre = c;
  auto now = d.fresh<64>("now");
  update_rq_clock(d, cfg, c, now);
  const auto delta = d.sub(now, pre.rq.clock);
  const auto moved = d.ult(delta, d.template lit<64>(std::uint64_t{1} << 63));
  const auto taken = d.sub(d.sub(c.rq.clock, pre.rq.clock), d.sub(c.rq.clock_task, pre.rq.clock_task));
  const auto ok = d.band(d.eq(c.rq.prev_steal_time_rq, c.steal_clock), d.ule(taken, delta));
  const auto res = solve(ctx, {}, moved.e() && !ok.e(), timeout_ms);
  r.seconds = res.seconds;
  r.verdict = res.verdict;
  const auto before = second_update_task_time(steal_cfg(p.before)), after = second_update_task_time(cfg);
  const std::string contrast = fmt::format(
      "scenario (10 ms steal pending, two updates 4 ms apart, no new steal): the second update gives the task {} ns "
      "on {} (excess steal caught up) and {} ns on {}",
      before, p.before.str(), after, p.after.str());
  if (res.verdict == Verdict::Violated) {
    Concrete k;
    auto kc = zero_cpu(k);
    read_back(*res.model, pre, kc);
    const auto know = eval_u64(*res.model, now.e());
    auto out = kc;
    update_rq_clock(k, cfg, out, know);
    if (out.rq.prev_steal_time_rq != out.steal_clock) {
      r.replay = kReplayStep;
      r.inputs = {{"steal_clock", kc.steal_clock},
                  {"prev_steal_time_rq", kc.rq.prev_steal_time_rq},
                  {"clock", kc.rq.clock},
                  {"now", know}};
      r.detail = "steal left pending after update_rq_clock (replayed concretely); " + contrast;
    } else {
      r.verdict = Verdict::Error;
      r.detail = "Z3 counterexample does not replay concretely (domain mismatch); " + contrast;
    }
    return r;
  }
  r.detail = fmt::format("Z3, one update_rq_clock() from any rq state on {}: {}; {}", p.after.str(),
                         res.verdict == Verdict::Holds ? "no steal stays pending, at most the elapsed time is taken"
                                                       : (res.reason.empty() ? name(res.verdict) : res.reason),
                         contrast);
  return r;
}

}  // namespace

std::vector<Result> tick_claims(const arch::Patch& p, unsigned timeout_ms) {
  std::vector<Result> out;
  for (auto claim : p.claims) {
    if (claim.empty()) continue;
    if (claim == "tick.steal_not_caught_up") {
      out.push_back(steal_not_caught_up(p, timeout_ms));
    } else {
      out.push_back(unknown_claim(claim));
    }
  }
  return out;
}

}  // namespace kacct::proofs
