// Per-step proofs for tick accounting: for every config family, HZ value and CPU context, each
// invariant of spec/invariants.hpp is preserved (state invariants) or holds of the step
// (step relations), for all 64-bit states that satisfy the state invariants and the bound.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "proofs/jobs.hpp"
#include "proofs/step_job.hpp"
#include "arch/config.hpp"
#include "spec/invariants.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

constexpr const char* kSeqNote = "sequential model: one CPU's accounting step runs without interleaving (irqs off)";

struct NamedCtx {
  const char* name;
  TickCtx x;
};
std::vector<NamedCtx> contexts() {
  auto mk = [](bool user, unsigned nest, bool softirq, bool idle, bool ksirq, bool vcpu, bool nice, bool iow) {
    TickCtx x;
    x.user_tick = user;
    x.preempt_count = (1 + nest) * HARDIRQ_OFFSET + (softirq ? SOFTIRQ_OFFSET : 0);
    x.is_idle = idle;
    x.is_ksoftirqd = ksirq;
    x.pf_vcpu = vcpu;
    x.nice_pos = nice;
    x.nr_iowait = iow;
    return x;
  };
  return {{"user", mk(1, 0, 0, 0, 0, 0, 0, 0)},
          {"user-nice", mk(1, 0, 0, 0, 0, 0, 1, 0)},
          {"kernel", mk(0, 0, 0, 0, 0, 0, 0, 0)},
          {"kernel-in-hardirq", mk(0, 1, 0, 0, 0, 0, 0, 0)},
          {"kernel-in-softirq", mk(0, 0, 1, 0, 0, 0, 0, 0)},
          {"idle", mk(0, 0, 0, 1, 0, 0, 0, 0)},
          {"idle-iowait", mk(0, 0, 0, 1, 0, 0, 0, 1)},
          {"idle-in-softirq", mk(0, 0, 1, 1, 0, 0, 0, 0)},
          {"idle-in-hardirq", mk(0, 1, 0, 1, 0, 0, 0, 0)},
          {"ksoftirqd", mk(0, 0, 0, 0, 1, 0, 0, 0)},
          {"ksoftirqd-serving", mk(0, 0, 1, 0, 1, 0, 0, 0)},
          {"guest", mk(0, 0, 0, 0, 0, 1, 0, 0)},
          {"guest-nice", mk(0, 0, 0, 0, 0, 1, 1, 0)},
          {"guest-in-hardirq", mk(0, 1, 0, 0, 0, 1, 0, 0)}};
}

struct Family {
  bool irq_time, steal;
  std::string name() const { return fmt::format("{}{}", irq_time ? "irqtime" : "noirqtime", steal ? "+steal" : ""); }
};
constexpr Family families[] = {{false, false}, {false, true}, {true, false}, {true, true}};

enum class Step { Tick, IdleTicks, IrqBoundary, RqClock };
const char* step_name(Step s) {
  switch (s) {
    case Step::Tick: return "account_process_tick";
    case Step::IdleTicks: return "account_idle_ticks";
    case Step::IrqBoundary: return "irqtime_account_irq";
    case Step::RqClock: return "update_rq_clock";
  }
  return "?";
}

// The invariants checked of each step.
enum class Inv { TickConserves, TickAttributed, StealAccounted, IrqPending, RqSplit, IrqBoundary, Monotonic };
const char* inv_name(Inv i) {
  switch (i) {
    case Inv::TickConserves: return "tick_conserves";
    case Inv::TickAttributed: return "tick_attributed";
    case Inv::StealAccounted: return "steal_accounted";
    case Inv::IrqPending: return "irqtime_pending_bounded";
    case Inv::RqSplit: return "rq_clock_split";
    case Inv::IrqBoundary: return "irq_boundary_conserves";
    case Inv::Monotonic: return "monotonic";
  }
  return "?";
}

struct Case {
  std::string name;
  Step step;
  TickCtx x;
  IrqClass cls = IrqClass::None;
};

template <class D>
struct TickIn {
  BOOST_HANA_DEFINE_STRUCT(TickIn, (CpuAcct<D>, cpu), (TaskAcct<D>, task), (u64<D>, arg));
};

// One step of one case at one HZ value, for the harness (proofs/step_job.hpp).
struct TickCase {
  template <class D>
  using In = TickIn<D>;
  const Case& cs;
  const std::vector<Inv>& invs;
  TickCfg cfg;
  unsigned hz;
  const CpuMutation& mutate;
  unsigned timeout_ms;

  void assume(S& d, const In<S>& in, std::vector<z3::expr>& as) const {
    z3::context& ctx = d.ctx();
    const auto& c = in.cpu;
    bound62(d, c, as);
    bound62(d, in.task, as);
    as.push_back(spec::tick::steal_accounted(d, c).e());
    as.push_back(spec::tick::rq_clock_split(d, c).e());
    as.push_back(spec::tick::irqtime_pending_bounded(d, c).e());
    // The step's argument: a time after every clock reading (sched_clock is monotonic per
    // CPU), or a tick count small enough not to wrap.
    if (cs.step == Step::IdleTicks) {
      // ticks * TICK_NSEC below 2^62 (stated as a fact of the product, so that the solver
      // need not rediscover it through the multiplier): over 146 years of idle
      as.push_back(z3::bvmul_no_overflow(ctx.bv_val(cfg.tick_nsec, 64), in.arg.e(), false));
      as.push_back(z3::ule(ctx.bv_val(cfg.tick_nsec, 64) * in.arg.e(), ctx.bv_val(kBound62, 64)));
      // With irq time the count goes through irqtime_account_idle_ticks(int): 2^31 ticks or more
      // are truncated (a kernel hazard, test Deviations.IdleTicksTruncatedToInt): left out here.
      if (cfg.irq_time) as.push_back(z3::ult(in.arg.e(), ctx.bv_val(std::uint64_t{1} << 31, 64)));
    } else {
      as.push_back(z3::ule(c.irqtime.irq_start_time.e(), in.arg.e()));
      as.push_back(z3::ule(c.rq.clock.e(), in.arg.e()));
      as.push_back(z3::ule(in.arg.e(), ctx.bv_val(kBound62, 64)));
    }
  }
  // account_idle_ticks: the credit TICK_NSEC * ticks becomes any value below 2^62 (the
  // multiplier is what stalls the solver; no invariant needs more of the product than its
  // range). A holds of this weaker query is the query's holds (proofs/step_job.hpp). With irq
  // time the step multiplies the count's int truncation instead: it is replaced by the same
  // value only where the query's assumptions make the two counts equal (arg < 2^31), which is
  // proved first (else no weaker query).
  bool generalize(S& d, const In<S>& pre, std::vector<z3::expr>& as, z3::expr& goal) const {
    if (cs.step != Step::IdleTicks) return false;
    z3::context& ctx = d.ctx();
    const z3::expr tick = ctx.bv_val(cfg.tick_nsec, 64);
    const z3::expr no_overflow = z3::bvmul_no_overflow(tick, pre.arg.e(), false);
    std::vector<z3::expr> prods;
    std::set<unsigned> seen;
    std::function<void(const z3::expr&)> walk = [&](const z3::expr& e) {
      if (!e.is_app() || !seen.insert(e.id()).second) return;
      if (e.decl().decl_kind() == Z3_OP_BMUL && e.num_args() == 2 && z3::eq(e.arg(0), tick)) prods.push_back(e);
      for (unsigned i = 0; i < e.num_args(); ++i) walk(e.arg(i));
    };
    walk(goal);
    for (const auto& a : as) walk(a);
    z3::expr_vector from(ctx), to(ctx);
    const z3::expr v = ctx.bv_const("idle_cputime", 64);
    for (const auto& p : prods) {
      if (!z3::eq(p.arg(1), pre.arg.e()) &&
          solve(ctx, as, p.arg(1) != pre.arg.e(), timeout_ms).verdict != Verdict::Holds)
        return false;
      from.push_back(p);
      to.push_back(v);
    }
    std::vector<z3::expr> out;
    for (z3::expr a : as)
      if (!z3::eq(a, no_overflow)) out.push_back(a.substitute(from, to));
    as = std::move(out);
    goal = goal.substitute(from, to);
    return true;
  }
  // The step, then the truth of each invariant.
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    auto& c = in.cpu;
    auto& p = in.task;
    const CpuAcct<D> c0 = c;
    const TaskAcct<D> p0 = p;
    u64<D> credit = d.template lit<64>(cfg.tick_nsec);
    switch (cs.step) {
      case Step::Tick: account_process_tick(d, cfg, c, p, cs.x); break;
      case Step::IdleTicks:
        credit = d.mul(d.template lit<64>(cfg.tick_nsec), in.arg);
        account_idle_ticks(d, cfg, c, p, cs.x, in.arg);
        break;
      case Step::IrqBoundary: irqtime_account_irq(d, cfg, c, in.arg, cs.cls); break;
      case Step::RqClock: update_rq_clock(d, cfg, c, in.arg); break;
    }
    if (mutate) mutate(d, c);
    std::vector<boolean<D>> out;
    for (Inv inv : invs) switch (inv) {
        case Inv::TickConserves: out.push_back(spec::tick::tick_conserves(d, c0, c, credit)); break;
        case Inv::TickAttributed: out.push_back(spec::tick::tick_attributed(d, c0, c, cs.x, cfg.irq_time)); break;
        case Inv::StealAccounted: out.push_back(spec::tick::steal_accounted(d, c)); break;
        case Inv::IrqPending: out.push_back(spec::tick::irqtime_pending_bounded(d, c)); break;
        case Inv::RqSplit: out.push_back(spec::tick::rq_clock_split(d, c)); break;
        case Inv::IrqBoundary: out.push_back(spec::tick::irq_boundary_conserves(d, c0, c)); break;
        case Inv::Monotonic:
          out.push_back(d.band(spec::tick::monotonic(d, c0, c), spec::tick::monotonic(d, p0, p)));
          break;
      }
    return out;
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const {
    return {{"hz", hz},      {"context", cs.name},     {"step", step_name(cs.step)},
            {"arg", in.arg}, {"cpu", to_json(in.cpu)}, {"task", to_json(in.task)}};
  }
  nlohmann::ordered_json state(const In<Concrete>& in) const { return to_json(in); }
};

std::string names(const std::vector<Inv>& invs) {
  std::string s;
  for (Inv i : invs) s += (s.empty() ? "" : ", ") + std::string(inv_name(i));
  return s;
}

// The strategy that decides a query goes first (SolveHint; measured at HZ=300 for every family):
// the plain one for the tick's chains of clamped differences, the normalising one where sums
// must be re-associated (the rq clock's split, guest time counted in two buckets, the idle
// ticks' conservation), the proved lemmas where a clamped difference is added to a counter
// (the rq clock_task with steal, the idle ticks with irq time: 1-6 s of CPU each with them,
// undecided in 30 s without; the tick's with irq time and steal outside guest context: 58 s of
// CPU for the job against 71 s, the guest contexts slower with them). Within a job, a choice
// that another strategy had to rescue yields to it.
int strategy(const Case& cs, Inv inv, const Family& fam) {
  if (cs.step == Step::RqClock) return inv == Inv::RqSplit ? 1 : (fam.steal ? 3 : 0);
  if (inv == Inv::Monotonic && cs.step == Step::IdleTicks && fam.irq_time) return 3;
  if (inv == Inv::Monotonic && cs.step == Step::Tick && fam.irq_time && fam.steal && !cs.x.pf_vcpu) return 3;
  if (inv == Inv::TickAttributed && cs.x.pf_vcpu && !cs.x.user_tick) return 1;
  if (inv == Inv::TickConserves && cs.step == Step::IdleTicks) return 1;
  return 2;
}

// One job: every invariant of `invs` for one step over every case and HZ value; one Z3 query
// per (case, HZ) over their conjunction.
Result job(const std::string& name, const std::vector<Inv>& invs, const Family& fam, const std::vector<Case>& cases,
           unsigned timeout_ms, const CpuMutation& mutate, const std::vector<unsigned>& hzs) {
  StepJob j(name, {kBound62Note, kSeqNote});
  SolveHint hint;
  hint.split = timeout_ms >= 20000;  // a full budget: an undecided goal is split into conjuncts
  hint.lemmas = true;
  hint.rlimit_per_ms = 1500;  // load-independent budgets (measured 1100-3700 units per ms of CPU)
  std::vector<std::string> inv_names;
  for (Inv i : invs) inv_names.push_back(inv_name(i));
  if (cases.front().step == Step::IdleTicks)
    j.note("TICK_NSEC * ticks replaced by any value below 2^62 (a wider query: where it holds, so does the step)");
  if (cases.front().step == Step::IdleTicks && fam.irq_time)
    j.note(
        "with irq time, fewer than 2^31 ticks per call (the count's int truncation, proved equal to it there, is "
        "what the step multiplies; larger counts are the kernel's truncation hazard, test "
        "Deviations.IdleTicksTruncatedToInt)");
  int learned[4] = {-1, -1, -1, -1};
  for (unsigned hz : hzs) {
    const TickCfg cfg{fam.irq_time, fam.steal, arch::tick_nsec(hz)};
    for (const auto& cs : cases) {
      const TickCase tc{cs, invs, cfg, hz, mutate, timeout_ms};
      // the job's choice, unless another strategy decided a query of the same choice before
      const int pref = strategy(cs, invs.front(), fam);
      hint.last = learned[pref] >= 0 ? learned[pref] : pref;
      // the rq clock's split as a whole times out (30 s) with every strategy; its parts do not.
      // So does the tick's monotonicity with irq time and steal for a nice guest (the whole
      // query ran every strategy to its budget before the split decided it; HZ=300)
      hint.split_first = (cs.step == Step::RqClock && invs.front() == Inv::RqSplit) ||
                         (cs.step == Step::Tick && invs.front() == Inv::Monotonic && fam.irq_time && fam.steal &&
                          cs.x.pf_vcpu && cs.x.nice_pos);
      const auto c =
          check_step(tc, inv_names, timeout_ms, fmt::format("{} hz={} {}", name, hz, cs.name), nullptr, &hint);
      if (c.verdict == Verdict::Holds || c.verdict == Verdict::Violated) learned[pref] = hint.last;
      if (!j.add(c, fmt::format("{} at HZ={} in context {}{}", step_name(cs.step), hz, cs.name,
                                mutate ? " (mutated model)" : "")))
        return j.done("");
    }
  }
  return j.done(fmt::format("{}: {} queries ({} cases x {} HZ values), all unsat{}", names(invs), j.queries,
                            cases.size(), hzs.size(), j.lemmas ? "; " + bv_lemmas().note + ", instances assumed" : ""));
}

}  // namespace

std::vector<Result> tick_jobs(unsigned timeout_ms, const CpuMutation& mutate, std::vector<unsigned> hzs,
                              const std::string& only_step, const std::string& only_inv,
                              const std::function<bool(const std::string&)>& want) {
  std::vector<Result> out;
  const auto ctxs = contexts();
  if (hzs.empty()) hzs.assign(arch::hz_values.begin(), arch::hz_values.end());
  // A mutant only has to be caught once: one family and one HZ keep the sensitivity tests short.
  if (mutate) hzs = {250};
  for (const auto& fam : families) {
    if (mutate && !(fam.steal && fam.irq_time)) continue;
    std::vector<Case> tick_cases, idle_cases, irq_cases, clock_cases;
    // A mutant only has to be caught once: the first two contexts (user, user-nice) suffice.
    for (std::size_t k = 0; k < ctxs.size() && !(mutate && k >= 2); ++k)
      tick_cases.push_back({ctxs[k].name, Step::Tick, ctxs[k].x});
    for (const auto& nc : ctxs)
      if (nc.x.is_idle && nc.x.preempt_count == HARDIRQ_OFFSET) {
        TickCtx x = nc.x;
        x.preempt_count = 0;
        idle_cases.push_back({nc.name, Step::IdleTicks, x});
      }
    for (auto [n, cls] :
         {std::pair{"task", IrqClass::None}, {"hardirq", IrqClass::Hardirq}, {"softirq", IrqClass::Softirq}})
      irq_cases.push_back({n, Step::IrqBoundary, {}, cls});
    clock_cases.push_back({"any", Step::RqClock, {}});
    auto add = [&](const char* step, std::vector<Inv> invs, const std::vector<Case>& cs) {
      if (!only_step.empty() && only_step != step) return;
      // Irq boundaries and the rq clock do not read TICK_NSEC: one HZ value covers them all.
      const bool uses_hz = cs.front().step == Step::Tick || cs.front().step == Step::IdleTicks;
      const std::vector<unsigned> h = uses_hz ? hzs : std::vector<unsigned>{hzs.front()};
      // One invariant per query: the conjunction is much slower to bit-blast than its parts.
      for (Inv i : invs) {
        if (!only_inv.empty() && only_inv != inv_name(i)) continue;
        auto name = fmt::format("tick.{}.{}[{}]", step, inv_name(i), fam.name());
        if (want && !want(name)) continue;
        out.push_back(job(name, {i}, fam, cs, timeout_ms, mutate, h));
      }
    };
    add("account_process_tick",
        {Inv::TickConserves, Inv::TickAttributed, Inv::StealAccounted, Inv::IrqPending, Inv::Monotonic}, tick_cases);
    add("account_idle_ticks", {Inv::TickConserves, Inv::StealAccounted, Inv::IrqPending, Inv::Monotonic}, idle_cases);
    if (fam.irq_time) add("irqtime_account_irq", {Inv::IrqBoundary, Inv::IrqPending, Inv::Monotonic}, irq_cases);
    add("update_rq_clock", {Inv::RqSplit, Inv::Monotonic}, clock_cases);
  }
  return out;
}

}  // namespace kacct::proofs
