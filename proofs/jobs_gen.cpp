// Gen vtime proofs: for each variant era (4.4 snapshot, 4.7 jiffy with irq hooks, 4.9 jiffy with
// other time, 5.4 and 6.1 accumulated ns), each step (user exit/enter, guest enter/exit, the
// <= 4.7 irq exit hook, a context switch for every prev/next kind) and each invariant of
// spec/gen_vtime.hpp: for all 64-bit states satisfying the invariants before, they hold after.
// The claims of the gen vtime patch rows are in proofs/claims_gen.cpp.
#include "proofs/jobs_gen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "arch/config.hpp"
#include "proofs/registry.hpp"
#include "spec/gen_vtime.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

constexpr std::uint64_t kJiffyBound = std::uint64_t{1} << 40;

using Era = GenEra;
const Era eras[] = {
    {"4.4-snapshot", arch::v(4, 4), false, false}, {"4.7-jiffy", arch::v(4, 7), false, false},
    {"4.9-jiffy", arch::v(4, 9), false, false},    {"5.4-accum", arch::v(5, 4), false, false},
    {"6.1-accum", arch::v(6, 1), false, false},    {"6.1-accum+irqtime+steal", arch::v(6, 1), true, true}};

enum class Step { UserExit, UserEnter, GuestEnter, GuestExit, IrqExitHook, Switch };
const char* step_name(Step s) {
  constexpr const char* n[] = {"user_exit", "user_enter", "guest_enter", "guest_exit", "irq_exit_hook", "task_switch"};
  return n[int(s)];
}
enum class Inv { TaskConserves, Residues, CpuConserves, SeqEven, SeqBrackets, Monotonic, Steal };
const char* inv_name(Inv i) {
  constexpr const char* n[] = {"task_conserves", "residues_bounded", "cpu_conserves",    "seq_even",
                               "seq_brackets",   "monotonic",        "steal_irq_pending"};
  return n[int(i)];
}
constexpr Inv all_invs[] = {Inv::TaskConserves, Inv::Residues,  Inv::CpuConserves, Inv::SeqEven,
                            Inv::SeqBrackets,   Inv::Monotonic, Inv::Steal};

struct Case {
  std::string name;
  Step step;
  VtimeCtl prev, next;  // prev: the current task (the only one unless Switch)
  std::uint32_t irq_count = 0;
};

std::vector<Case> cases_of(const GenCfg& g) {
  std::vector<Case> out;
  auto ctl = [&](VState st, bool pf, bool idle, bool nice) {
    VtimeCtl c;
    c.state = st;
    c.pf_vcpu = pf;
    c.is_idle = idle;
    c.nice_pos = nice;
    c.cpu = 0;
    return c;
  };
  const VState guest = g.states55 ? VT_GUEST : VT_SYS;
  out.push_back({"user", Step::UserExit, ctl(VT_USER, false, false, false), {}});
  out.push_back({"sys", Step::UserEnter, ctl(VT_SYS, false, false, false), {}});
  out.push_back({"sys", Step::GuestEnter, ctl(VT_SYS, false, false, false), {}});
  out.push_back({"guest", Step::GuestExit, ctl(guest, true, false, false), {}});
  if (g.irq_hooks) {
    out.push_back({"hardirq", Step::IrqExitHook, ctl(VT_SYS, false, false, false), {}, HARDIRQ_OFFSET});
    out.push_back({"softirq", Step::IrqExitHook, ctl(VT_SYS, false, false, false), {}, SOFTIRQ_OFFSET});
  }
  const VState idle = g.states55 ? VT_IDLE : VT_SYS;
  auto inactive = [&](bool pf, bool is_idle) {
    auto c = ctl(VT_INACTIVE, pf, is_idle, false);
    c.cpu = -1;
    return c;
  };
  out.push_back({"sys->task", Step::Switch, ctl(VT_SYS, false, false, false), inactive(false, false)});
  out.push_back({"sys->idle", Step::Switch, ctl(VT_SYS, false, false, false), inactive(false, true)});
  out.push_back({"idle->task", Step::Switch, ctl(idle, false, true, false), inactive(false, false)});
  out.push_back({"guest->vcpu", Step::Switch, ctl(guest, true, false, false), inactive(true, false)});
  out.push_back({"sys->vcpu", Step::Switch, ctl(VT_SYS, false, false, false), inactive(true, false)});
  return out;
}

template <class D>
struct GenIn {
  BOOST_HANA_DEFINE_STRUCT(GenIn, (CpuAcct<D>, cpu), (TaskAcct<D>, task), (VtimeTask<D>, vtime), (VtimeTask<D>, next),
                           (VtimeCpu<D>, vcpu), (u64<D>, now), (u64<D>, jiffies), (u64<D>, now2), (u64<D>, jiffies2));
};

// One step of one case of one era, for the harness (proofs/step_job.hpp).
struct GenCase {
  template <class D>
  using In = GenIn<D>;
  const Case& cs;
  Step kind;
  const std::vector<Inv>& invs;
  GenCfg g;
  TickCfg tc;
  const GenMutation& mutate;

  void assume(S& d, const In<S>& in, std::vector<z3::expr>& as) const {
    z3::context& ctx = d.ctx();
    bound62(d, in.cpu, as);
    bound62(d, in.task, as);
    bound62(d, in.vtime, as);
    bound62(d, in.next, as);
    bound62(d, in.vcpu, as);
    for (auto* x : {&in.now, &in.now2}) as.push_back(z3::ule(x->e(), ctx.bv_val(kBound62, 64)));
    for (auto* x : {&in.jiffies, &in.jiffies2, &in.vtime.starttime})
      as.push_back(z3::ule(x->e(), ctx.bv_val(kJiffyBound, 64)));
    as.push_back(z3::ule(in.now.e(), in.now2.e()));
    as.push_back(z3::ule(in.jiffies.e(), in.jiffies2.e()));
    // invariants before the step
    as.push_back(spec::tick::steal_accounted(d, in.cpu).e());
    as.push_back(spec::tick::irqtime_pending_bounded(d, in.cpu).e());
    for (auto* v : {&in.vtime, &in.next}) {
      as.push_back(spec::gen::gen_task_conserves(d, *v).e());
      as.push_back(spec::gen::gen_residues_bounded(d, g, tc, *v).e());
      as.push_back(spec::gen::gen_seq_even(d, *v).e());
    }
    as.push_back(spec::gen::gen_cpu_conserves(d, g, in.vcpu, in.vtime).e());
  }
  template <class D>
  std::vector<boolean<D>> step(D& d, In<D>& in) const {
    auto& c = in.cpu;
    auto& pt = in.task;
    auto& pv = in.vtime;
    auto& nv = in.next;
    auto& vc = in.vcpu;
    const auto c0 = c;
    const auto pt0 = pt;
    const auto pv0 = pv, nv0 = nv;
    const auto vc0 = vc;
    GenNow<D> n{in.now, in.jiffies}, n2{in.now2, in.jiffies2};
    GenCost cost;
    VtimeCtl ps = cs.prev, ns = cs.next;
    GenStep<D> st{d, tc, g, c, vc, cost};
    GenCtx gx;
    gx.irq_count = cs.irq_count;
    gx.current_pf_vcpu = cs.next.pf_vcpu;
    switch (kind) {
      case Step::UserExit: st.user_exit(pv, pt, ps, gx, n); break;
      case Step::UserEnter: st.user_enter(pv, pt, ps, gx, n); break;
      case Step::GuestEnter: st.guest_enter(pv, pt, ps, gx, n); break;
      case Step::GuestExit: st.guest_exit(pv, pt, ps, gx, n); break;
      case Step::IrqExitHook: st.irq_exit_hook(pv, pt, ps, gx, n); break;
      case Step::Switch: st.task_switch(pv, pt, ps, nv, ns, gx, n, n2, 0); break;
    }
    VtimeTask<D>& curv = kind == Step::Switch ? nv : pv;
    if (mutate) mutate(d, curv, vc);
    auto both = [&](auto&& f) { return d.band(f(pv0, pv), f(nv0, nv)); };
    std::vector<boolean<D>> oks;
    for (Inv only : invs) switch (only) {
        case Inv::TaskConserves:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_task_conserves(d, v); }));
          break;
        case Inv::Residues:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_residues_bounded(d, g, tc, v); }));
          break;
        case Inv::CpuConserves: oks.push_back(spec::gen::gen_cpu_conserves(d, g, vc, curv)); break;
        case Inv::SeqEven:
          oks.push_back(both([&](const auto&, const auto& v) { return spec::gen::gen_seq_even(d, v); }));
          break;
        case Inv::SeqBrackets:
          oks.push_back(both([&](const auto& a, const auto& b) { return spec::gen::gen_seq_brackets(d, a, b); }));
          break;
        case Inv::Monotonic:
          oks.push_back(d.band(
              d.band(d.band(spec::tick::monotonic(d, c0, c), spec::tick::monotonic(d, pt0, pt)),
                     both([&](const auto& a, const auto& b) { return spec::gen::gen_vtime_monotonic(d, a, b); })),
              d.ule(vc0.consumed, vc.consumed)));
          break;
        case Inv::Steal:
          oks.push_back(d.band(spec::tick::steal_accounted(d, c), spec::tick::irqtime_pending_bounded(d, c)));
          break;
      }
    return oks;
  }
  nlohmann::ordered_json json(const In<Concrete>& in) const { return {{"case", cs.name}, {"state", to_json(in)}}; }
  nlohmann::ordered_json state(const In<Concrete>& in) const { return to_json(in); }
};

// One job: the conjunction of `invs` for one step of one era, one Z3 query per case.
Result era_job(const Era& era, Step step, const std::vector<Inv>& invs, unsigned timeout_ms,
               const GenMutation& mutate) {
  std::string inv_names;
  std::vector<std::string> names;
  for (Inv i : invs) {
    inv_names += (inv_names.empty() ? "" : "+") + std::string(inv_name(i));
    names.push_back(inv_name(i));
  }
  const std::string name = invs.size() == 1 ? fmt::format("gen_vtime.{}.{}[{}]", step_name(step), inv_names, era.name)
                                            : fmt::format("gen_vtime.{}[{}]", step_name(step), era.name);
  StepJob j(name, {kBound62Note, "jiffies below 2^40: no wrap-around",
                   "sequential model: one CPU's vtime step runs with irqs off, readers see it whole",
                   "the vtime state, PF_VCPU, idle and nice are enumerated per case (concrete)"});
  const GenCfg g = gen_cfg(era.ver, 250);
  const TickCfg tc{era.irq_time, era.steal, arch::tick_nsec(250)};
  for (const auto& cs : cases_of(g)) {
    if (cs.step != step) continue;
    const GenCase gc{cs, step, invs, g, tc, mutate};
    if (!j.add(check_step(gc, names, timeout_ms, fmt::format("{} {}", name, cs.name)),
               fmt::format("{} in case {}{}", step_name(step), cs.name, mutate ? " (mutated model)" : "")))
      break;
  }
  return j.done(fmt::format("{}: {} queries at 64 bits, all unsat", inv_names, j.queries));
}

}  // namespace

std::vector<Result> gen_jobs(unsigned timeout_ms, const GenMutation& mutate, const std::string& only_inv,
                             const std::vector<std::string>& only_eras) {
  std::vector<Result> out;
  for (const auto& era : eras) {
    if (!only_eras.empty() && std::find(only_eras.begin(), only_eras.end(), era.name) == only_eras.end()) continue;
    if (mutate && std::string(era.name) != "6.1-accum") continue;
    const GenCfg g = gen_cfg(era.ver, 250);
    for (Step step :
         {Step::UserExit, Step::UserEnter, Step::GuestEnter, Step::GuestExit, Step::IrqExitHook, Step::Switch}) {
      if (step == Step::IrqExitHook && !g.irq_hooks) continue;
      if (mutate && step != Step::UserExit) continue;
      std::vector<Inv> invs;
      for (Inv inv : all_invs) {
        if (!only_inv.empty() && only_inv != inv_name(inv)) continue;
        if (inv == Inv::Steal && !(era.irq_time || era.steal)) continue;
        invs.push_back(inv);
      }
      // One invariant per query: the conjunction times out on the jiffy eras (measured: 20 s
      // per case, unknown) where each invariant alone takes ~0.2 s.
      for (Inv inv : invs) out.push_back(era_job(era, step, {inv}, timeout_ms, mutate));
    }
  }
  return out;
}

std::vector<std::pair<std::string, GenMutation>> gen_mutations() {
  return {
      {"task_conserves", [](auto& d, auto& v, auto&) { v.flushed = d.add(v.flushed, d.template lit<64>(1)); }},
      {"residues_bounded", [](auto& d, auto& v, auto&) { v.utime = d.add(v.utime, d.template lit<64>(4'000'000)); }},
      {"cpu_conserves", [](auto& d, auto&, auto& c) { c.lost = d.add(c.lost, d.template lit<64>(1)); }},
      {"seq_even",
       [](auto& d, auto& v, auto&) {
         v.seq = d.template trunc<32>(d.add(d.template zext<64>(v.seq), d.template lit<64>(1)));
       }},
      {"seq_brackets",
       [](auto& d, auto& v, auto&) {
         v.seq = d.template trunc<32>(d.sub(d.template zext<64>(v.seq), d.template lit<64>(2)));
       }},
      {"monotonic", [](auto& d, auto& v, auto&) { v.consumed = d.sub(v.consumed, d.template lit<64>(1)); }},
  };
}

std::vector<Result> gen_all_jobs(unsigned timeout_ms) { return gen_jobs(timeout_ms); }

std::span<const GenEra> gen_eras() { return eras; }

}  // namespace kacct::proofs
