// Per-step proofs for tick accounting: for every config family, HZ value and CPU context, each
// invariant of spec/invariants.hpp is preserved (state invariants) or holds of the step
// (step relations), for all 64-bit states that satisfy the state invariants and the bound.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "proofs/jobs.hpp"
#include "proofs/bounds.hpp"
#include "proofs/prover.hpp"
#include "arch/config.hpp"
#include "spec/invariants.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

constexpr std::uint64_t kBound = std::uint64_t{1} << 62;
constexpr const char* kBoundNote = "every counter and clock below 2^62 ns (146 years): no wrap-around";
constexpr const char* kSeqNote = "sequential model: one CPU's accounting step runs without interleaving (irqs off)";

// Every 64-bit field of a reflected state below kBound.
template <class T> void bound(S& d, const T& v, std::vector<z3::expr>& out) { bound_u64(d, v, kBound, out); }

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
  return {{"user", mk(1, 0, 0, 0, 0, 0, 0, 0)},          {"user-nice", mk(1, 0, 0, 0, 0, 0, 1, 0)},
          {"kernel", mk(0, 0, 0, 0, 0, 0, 0, 0)},        {"kernel-in-hardirq", mk(0, 1, 0, 0, 0, 0, 0, 0)},
          {"kernel-in-softirq", mk(0, 0, 1, 0, 0, 0, 0, 0)}, {"idle", mk(0, 0, 0, 1, 0, 0, 0, 0)},
          {"idle-iowait", mk(0, 0, 0, 1, 0, 0, 0, 1)},   {"idle-in-softirq", mk(0, 0, 1, 1, 0, 0, 0, 0)},
          {"idle-in-hardirq", mk(0, 1, 0, 1, 0, 0, 0, 0)}, {"ksoftirqd", mk(0, 0, 0, 0, 1, 0, 0, 0)},
          {"ksoftirqd-serving", mk(0, 0, 1, 0, 1, 0, 0, 0)}, {"guest", mk(0, 0, 0, 0, 0, 1, 0, 0)},
          {"guest-nice", mk(0, 0, 0, 0, 0, 1, 1, 0)},    {"guest-in-hardirq", mk(0, 1, 0, 0, 0, 1, 0, 0)}};
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

// Run one step over a domain; returns the truth of each invariant. Used with Symbolic (the
// query) and with Concrete (the replay of a counterexample), so the two cannot drift.
template <class D>
std::vector<boolean<D>> run_case(D& d, Step step, const std::vector<Inv>& invs, const TickCfg& cfg, const TickCtx& x,
                                 IrqClass cls, CpuAcct<D>& c, TaskAcct<D>& p, const u64<D>& arg,
                                 const std::function<void(CpuAcct<D>&)>& mut) {
  const CpuAcct<D> c0 = c;
  const TaskAcct<D> p0 = p;
  u64<D> credit = d.template lit<64>(cfg.tick_nsec);
  switch (step) {
    case Step::Tick: account_process_tick(d, cfg, c, p, x); break;
    case Step::IdleTicks:
      credit = d.mul(d.template lit<64>(cfg.tick_nsec), arg);
      account_idle_ticks(d, cfg, c, p, x, arg);
      break;
    case Step::IrqBoundary: irqtime_account_irq(d, cfg, c, arg, cls); break;
    case Step::RqClock: update_rq_clock(d, cfg, c, arg); break;
  }
  if (mut) mut(c);
  std::vector<boolean<D>> out;
  for (Inv inv : invs) switch (inv) {
      case Inv::TickConserves: out.push_back(spec::tick_conserves(d, c0, c, credit)); break;
      case Inv::TickAttributed: out.push_back(spec::tick_attributed(d, c0, c, x, cfg.irq_time)); break;
      case Inv::StealAccounted: out.push_back(spec::steal_accounted(d, c)); break;
      case Inv::IrqPending: out.push_back(spec::irqtime_pending_bounded(d, c)); break;
      case Inv::RqSplit: out.push_back(spec::rq_clock_split(d, c)); break;
      case Inv::IrqBoundary: out.push_back(spec::irq_boundary_conserves(d, c0, c)); break;
      case Inv::Monotonic: out.push_back(d.band(spec::monotonic(d, c0, c), spec::monotonic(d, p0, p))); break;
    }
  return out;
}

struct Case {
  std::string name;
  Step step;
  TickCtx x;
  IrqClass cls = IrqClass::None;
};

std::string names(const std::vector<Inv>& invs) {
  std::string s;
  for (Inv i : invs) s += (s.empty() ? "" : ", ") + std::string(inv_name(i));
  return s;
}

// One job: every invariant of `invs` for one step over every case and HZ value; one Z3 query
// per (case, HZ) over their conjunction; a model names the invariants it breaks.
Result job(const std::string& name, const std::vector<Inv>& invs, const Family& fam, const std::vector<Case>& cases,
           unsigned timeout_ms, const CpuMutation& mutate, const std::vector<unsigned>& hzs) {
  Result r;
  r.name = name;
  r.verdict = Verdict::Holds;
  r.approximations = {kBoundNote, kSeqNote};
  unsigned queries = 0;
  for (unsigned hz : hzs) {
    TickCfg cfg{fam.irq_time, fam.steal, arch::tick_nsec(hz)};
    for (const auto& cs : cases) {
      z3::context ctx;
      S d(ctx);
      CpuAcct<S> c;
      TaskAcct<S> p;
      make_fresh(d, c, "cpu");
      make_fresh(d, p, "task");
      auto arg = d.fresh<64>("arg");
      const CpuAcct<S> c_in = c;
      const TaskAcct<S> p_in = p;
      std::vector<z3::expr> as;
      bound(d, c, as);
      bound(d, p, as);
      as.push_back(spec::steal_accounted(d, c).e());
      as.push_back(spec::rq_clock_split(d, c).e());
      as.push_back(spec::irqtime_pending_bounded(d, c).e());
      // The step's argument: a time after every clock reading (sched_clock is monotonic per
      // CPU), or a tick count small enough not to wrap.
      if (cs.step == Step::IdleTicks) {
        // ticks * TICK_NSEC below 2^62 (stated as a fact of the product, so that the solver
        // need not rediscover it through the multiplier): over 146 years of idle
        auto credit = z3::bvmul_no_overflow(ctx.bv_val(cfg.tick_nsec, 64), arg.e(), false);
        as.push_back(credit);
        as.push_back(z3::ule(ctx.bv_val(cfg.tick_nsec, 64) * arg.e(), ctx.bv_val(kBound, 64)));
      }
      else {
        as.push_back(z3::ule(c.irqtime.irq_start_time.e(), arg.e()));
        as.push_back(z3::ule(c.rq.clock.e(), arg.e()));
        as.push_back(z3::ule(arg.e(), ctx.bv_val(kBound, 64)));
      }
      std::function<void(CpuAcct<S>&)> mut;
      if (mutate) mut = [&](CpuAcct<S>& s) { mutate(d, s); };
      auto oks = run_case(d, cs.step, invs, cfg, cs.x, cs.cls, c, p, arg, mut);
      z3::expr all = ctx.bool_val(true);
      for (const auto& ok : oks) all = all && ok.e();
      for (const auto& o : d.obligations) all = all && !o.violated;  // a failing obligation fails the job
      ++queries;
      auto res = solve(ctx, as, !all, timeout_ms);
      if (std::getenv("KACCT_PROOF_TIMES"))  // diagnostics for whoever tunes the proofs
        fmt::print(stderr, "{} hz={} {}: {:.3f}s\n", name, hz, cs.name, res.seconds);
      r.seconds += res.seconds;
      if (res.verdict == Verdict::Holds) continue;
      if (res.verdict != Verdict::Violated) {
        r.verdict = worst(r.verdict, res.verdict);
        r.detail = fmt::format("{} at HZ={} context {}: {}", step_name(cs.step), hz, cs.name, res.reason);
        continue;
      }
      std::vector<std::string> broken;
      for (std::size_t i = 0; i < invs.size(); ++i)
        if (res.model->eval(oks[i].e(), true).is_false()) broken.push_back(inv_name(invs[i]));
      CpuAcct<Concrete> kc{};
      TaskAcct<Concrete> kp{};
      read_back(*res.model, c_in, kc);
      read_back(*res.model, p_in, kp);
      const std::uint64_t karg = eval_u64(*res.model, arg.e());
      r.verdict = Verdict::Violated;
      r.inputs = {{"hz", hz}, {"context", cs.name}, {"step", step_name(cs.step)}, {"arg", karg},
                  {"cpu", to_json(kc)}, {"task", to_json(kp)}};
      if (!mutate) {
        // Replay the same state and argument concretely: the same invariants must fail.
        Concrete k;
        auto koks = run_case(k, cs.step, invs, cfg, cs.x, cs.cls, kc, kp, karg, {});
        bool agrees = true;
        for (std::size_t i = 0; i < invs.size(); ++i)
          agrees = agrees && (koks[i] == !(std::find(broken.begin(), broken.end(), inv_name(invs[i])) != broken.end()));
        if (!agrees) {
          r.verdict = Verdict::Error;
          r.detail = "Z3 counterexample does not replay concretely (domain mismatch)";
          return r;
        }
      }
      r.detail = fmt::format("{} violates {} at HZ={} in context {}{}", step_name(cs.step), fmt::join(broken, ", "), hz,
                             cs.name, mutate ? " (mutated model)" : "; replayed concretely");
      return r;
    }
  }
  if (r.verdict == Verdict::Holds)
    r.detail = fmt::format("{}: {} queries ({} cases x {} HZ values), all unsat", names(invs), queries, cases.size(), hzs.size());
  return r;
}

}  // namespace

std::vector<Result> tick_jobs(unsigned timeout_ms, const CpuMutation& mutate, std::vector<unsigned> hzs,
                              const std::string& only_step, const std::string& only_inv) {
  std::vector<Result> out;
  const auto ctxs = contexts();
  if (hzs.empty()) hzs.assign(arch::hz_values.begin(), arch::hz_values.end());
  // A mutant only has to be caught once: one family and one HZ keep the sensitivity tests short.
  if (mutate) hzs = {250};
  for (const auto& fam : families) {
    if (mutate && !(fam.steal && fam.irq_time)) continue;
    std::vector<Case> tick_cases, idle_cases, irq_cases, clock_cases;
    // A mutant only has to be caught once: the first two contexts (user, user-nice) suffice.
    for (std::size_t k = 0; k < ctxs.size() && !(mutate && k >= 2); ++k) tick_cases.push_back({ctxs[k].name, Step::Tick, ctxs[k].x});
    for (const auto& nc : ctxs)
      if (nc.x.is_idle && nc.x.preempt_count == HARDIRQ_OFFSET) {
        TickCtx x = nc.x;
        x.preempt_count = 0;
        idle_cases.push_back({nc.name, Step::IdleTicks, x});
      }
    for (auto [n, cls] : {std::pair{"task", IrqClass::None}, {"hardirq", IrqClass::Hardirq}, {"softirq", IrqClass::Softirq}})
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
        // Monotonicity of a product with a symbolic tick count (with steal or irq time) does not
        // finish at 64 bits (measured: unknown after 60 s); give it 5 s and report unknown.
        const bool product = cs.front().step == Step::IdleTicks && i == Inv::Monotonic && (fam.steal || fam.irq_time);
        out.push_back(job(fmt::format("tick.{}.{}[{}]", step, inv_name(i), fam.name()), {i}, fam, cs,
                          product ? std::min(timeout_ms, 5000u) : timeout_ms, mutate, h));
      }
    };
    add("account_process_tick", {Inv::TickConserves, Inv::TickAttributed, Inv::StealAccounted, Inv::IrqPending, Inv::Monotonic}, tick_cases);
    add("account_idle_ticks", {Inv::TickConserves, Inv::StealAccounted, Inv::IrqPending, Inv::Monotonic}, idle_cases);
    if (fam.irq_time) add("irqtime_account_irq", {Inv::IrqBoundary, Inv::IrqPending, Inv::Monotonic}, irq_cases);
    add("update_rq_clock", {Inv::RqSplit, Inv::Monotonic}, clock_cases);
  }
  return out;
}

}  // namespace kacct::proofs
