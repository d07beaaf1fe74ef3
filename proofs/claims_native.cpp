// The claims of the two native vtime Kconfig patches (abcff86df2d2, b4645ffc49cf): Z3 on each
// kernel-side hook with and without the scaled code, generated traces, and for the hazards a
// kacct trace (explicit tb= values) that the machine replays to the same finding.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "arch/registry.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"
#include "proofs/jobs.hpp"
#include "proofs/claims_fixes.hpp"
#include "proofs/registry.hpp"
#include "proofs/step_job.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using namespace kacct::model::native;
using S = Symbolic;

namespace {

// One kernel-side hook from the same state with and without the scaled code: can the unscaled
// fields differ? (A relation between two configurations, not a step's invariants: the scaled
// code's own obligations are the split jobs'.) A counterexample is replayed concretely.
template <unsigned W>
void unscaled_same(Result& r, Kctx where, unsigned timeout_ms) {
  z3::context ctx;
  S d(ctx);
  auto fields = [](auto& a) {
    return std::array{&a.utime,     &a.stime,      &a.gtime,     &a.hardirq_time,  &a.softirq_time,
                      &a.idle_time, &a.steal_time, &a.starttime, &a.starttime_user};
  };
  auto run = [&](bool scaled) {
    Acct<S, W> a;
    make_fresh(d, a, "acct");
    Cost k;
    account_kernel_side(d, native_base_cfg(W, scaled), a, where, d.fresh<W>("now"), d.fresh<W>("spurr"),
                        d.template lit<W>(0), k);
    z3::expr e = ctx.bool_val(true);
    int i = 0;
    for (auto* f : fields(a)) e = e && (f->e() == ctx.bv_const(("out_" + std::to_string(i++)).c_str(), W));
    return e;
  };
  z3::expr differ = run(true) && !run(false);
  const auto res = solve(ctx, {}, differ, timeout_ms);
  const std::string what = fmt::format("hook {} at {} bits", int(where), W);
  r.seconds += res.seconds;
  if (res.verdict == Verdict::Holds) return;
  Verdict v = res.verdict;
  std::string reason = res.reason;
  if (v == Verdict::Violated) {
    Acct<S, W> pre;
    make_fresh(d, pre, "acct");
    Acct<Concrete, W> ka{};
    read_back(*res.model, pre, ka);
    const auto now = typename Concrete::template U<W>(eval_u64(*res.model, d.fresh<W>("now").e()));
    const auto spurr = typename Concrete::template U<W>(eval_u64(*res.model, d.fresh<W>("spurr").e()));
    Concrete k;
    auto scaled = ka, unscaled = ka;
    Cost c1, c2;
    account_kernel_side(k, native_base_cfg(W, true), scaled, where, now, spurr, typename Concrete::template U<W>(0),
                        c1);
    account_kernel_side(k, native_base_cfg(W, false), unscaled, where, now, spurr, typename Concrete::template U<W>(0),
                        c2);
    bool differs = false;
    auto fs = fields(scaled), fu = fields(unscaled);
    for (std::size_t i = 0; i < fs.size(); ++i) differs = differs || *fs[i] != *fu[i];
    if (differs) {
      r.replay = kReplayStep;
      r.inputs = {{"hook", int(where)}, {"bits", W}, {"acct", to_json(ka)}, {"now", now}, {"spurr", spurr}};
      reason = "unscaled fields differ; replayed concretely";
    } else {
      v = Verdict::Error;
      reason = "Z3 counterexample does not replay concretely (domain mismatch)";
    }
  }
  r.verdict = worst(r.verdict, v);
  if (r.detail.empty() || v == Verdict::Violated) r.detail = what + ": " + (reason.empty() ? name(v) : reason);
}

// A trace whose scaled split sees (dS, s, u) = (k + u + s, s, u) with the TB as the SPURR
// source: k TB ticks in the kernel, u in user, s in the kernel, then a tick.
std::string split_trace(const char* cpu, std::uint64_t k, std::uint64_t u, std::uint64_t s, std::uint64_t tb_hz) {
  auto ns = [&](std::uint64_t tb) { return std::uint64_t((unsigned __int128)tb * 1'000'000'000u / tb_hz) + 1; };
  std::uint64_t t1 = k, t2 = k + u, t3 = k + u + s;
  return fmt::format(
      "kacct-trace 1\ncpu {}\nncpus 1\nclock ns\ntask 100 pid=100 comm=cex nice=0 mm=1\nevents\n"
      "0 0 switch prev=0 next=100 tb=0\n{} 0 syscall_exit tb={}\n{} 0 syscall_enter nr=0 tb={}\n{} 0 tick tb={}\n",
      cpu, ns(t1), t1, ns(t2), t2, ns(t3), t3);
}
bool replays_finding(const std::string& text, const char* cpu, arch::Config cfg, const std::string& inv) {
  auto t = trace::load(text);
  if (!t) return false;
  auto p = sim::compile(t.value());
  if (!p) return false;
  auto r = sim::run(p.value(), sim::model_cfg(*arch::find_cpu(cpu), cfg), {.check = true});
  if (!r.backend_result<model::native::NativeResult>()) return false;
  for (const auto& f : r.backend_result<model::native::NativeResult>()->findings)
    if (f.invariant == inv) return true;
  return false;
}

}  // namespace

// abcff86df2d2 (4.20: PPC32) and b4645ffc49cf (5.4: Book3E-64): on every CPU the new rule
// drops, judge each claim of the patch row; the boot-starttime patch on a trace.
std::vector<Result> native_vtime_claims(const arch::Patch& patch, unsigned timeout_ms) {
  if (patch.local) return native_vtime_fix_claims(patch, timeout_ms);  // a kacct-local fix (claims_fixes.cpp)
  std::vector<arch::CpuFacts> dropped;
  for (const auto& c : arch::cpus())
    if (arch::have_virt_cpu_accounting(c, patch.before) && arch::native_scaled_cputime(c, patch.before) &&
        !arch::native_scaled_cputime(c, patch.after))
      dropped.push_back(c);
  const arch::Config before{patch.before, arch::Accounting::Native, false, false, 250};
  const arch::Config after{patch.after, arch::Accounting::Native, false, false, 250};
  std::vector<Result> out;
  for (auto claim : patch.claims) {
    if (claim.empty()) continue;
    Result r;
    r.name = std::string(claim);
    r.verdict = Verdict::Holds;
    r.approximations = {kNativeSeqNote};
    std::vector<std::string> parts;
    if (claim == "native_vtime.unscaled_unchanged") {
      // (1) Z3: every hook from the same state gives the same unscaled fields with and without
      // the scaled code; (2) concrete: generated traces replay to identical unscaled outputs.
      for (unsigned w : {32u, 64u}) {
        bool any = false;
        for (const auto& c : dropped) any = any || c.word_bits == w;
        if (!any) continue;
        for (Kctx where : {Kctx::Kernel, Kctx::Guest, Kctx::Hardirq, Kctx::Softirq, Kctx::Idle}) {
          if (w == 32)
            unscaled_same<32>(r, where, timeout_ms);
          else
            unscaled_same<64>(r, where, timeout_ms);
        }
      }
      std::uint64_t traces = 0;
      for (const auto& c : dropped)
        for (std::uint64_t seed = 1; seed <= 25; ++seed) {
          trace::BuildSpec s;
          s.cpu_model = std::string(c.name);
          auto tr = trace::random_trace(seed, s, 500);
          auto p = sim::compile(tr).value();
          auto a = sim::run(p, sim::model_cfg(c, before), {});
          auto b = sim::run(p, sim::model_cfg(c, after), {});
          ++traces;
          if (to_json(a.cpus) != to_json(b.cpus) || to_json(a.tasks) != to_json(b.tasks)) {
            r.verdict = Verdict::Violated;
            r.counterexample = trace::write(tr);
            r.replay = kReplayTrace;
            parts.push_back(fmt::format("{}: outputs differ on seed {}", c.name, seed));
          }
        }
      parts.push_back(
          fmt::format("Z3: each kernel-side hook's unscaled fields equal with and without the scaled code; "
                      "{} generated traces replay to identical kcpustat and task times",
                      traces));
    } else if (claim == "native_vtime.scaled_equals_unscaled") {
      // The dropped CPUs have no SPURR/PURR: read_spurr() returns the TB. Is the removed code's
      // output equal to the unscaled one? Not per call: the SPURR delta also spans the kernel
      // time before the user stretch, which the split redistributes in the s:u ratio.
      for (const auto& c : dropped) {
        const std::uint64_t k = 1000, u = 3000, s = 2000;
        const auto text = split_trace(std::string(c.name).c_str(), k, u, s, c.tb_hz);
        const bool found =
            replays_finding(text, std::string(c.name).c_str(), before, "native_vtime.scaled_equals_unscaled");
        parts.push_back(fmt::format("{} ({}): {}", c.name, before.name(),
                                    found ? "differs (replayed): with k TB ticks of kernel time before a user stretch, "
                                            "stime_scaled = (k+u+s)*s/(s+u) != s"
                                          : "no difference found"));
        if (found) {
          r.verdict = Verdict::Violated;
          if (!r.counterexample) {
            r.counterexample = text;
            r.replay_config = before.name();  // the command that replays it (proofs/replay.cpp)
          }
          r.replay = kReplayTrace;
          r.inputs = {{"cpu", c.name}, {"k", k}, {"u", u}, {"s", s}};
        }
      }
      parts.push_back(
          "the sums agree: utimescaled + stimescaled == the TB ticks split (native_vtime.split_sum), so the removed "
          "code moved time between the scaled user and system figures and computed nothing new in total");
    } else if (claim == "native_vtime.split_no_overflow") {
      for (const auto& c : dropped) {
        const bool w32 = c.word_bits == 32;
        // First overflow: dS * s >= 2^W with dS = k + u + s; the smallest square: s = dS ~ 2^(W/2).
        const std::uint64_t s = w32 ? 65'536 : std::uint64_t{1} << 32, u = 1, k = 1;
        const double secs = double(s) / double(c.tb_hz);
        const auto text = split_trace(std::string(c.name).c_str(), k, u, s, c.tb_hz);
        const bool found = replays_finding(text, std::string(c.name).c_str(), before, "native_vtime.split_no_overflow");
        parts.push_back(
            fmt::format("{}: before the patch dS*s wraps at {} bits from s ~ dS = {} TB ticks ({:.4g} s of "
                        "kernel time without a vtime_delta at {} Hz){}; after: no split",
                        c.name, c.word_bits, s, secs, c.tb_hz, found ? ", replayed" : ", NOT replayed"));
        if (found) {
          r.verdict = Verdict::Violated;
          if (!r.counterexample) {
            r.counterexample = text;
            r.replay_config = before.name();  // the command that replays it (proofs/replay.cpp)
          }
          r.replay = kReplayTrace;
        } else {
          r.verdict = worst(r.verdict, Verdict::Error);
        }
      }
      parts.push_back("the patch removes the hazard on these CPUs (the split is no longer compiled)");
    } else if (claim == "native_vtime.boot_starttime") {
      // A CPU that idles 10 ms from a boot TB of 1 s: after the patch the idle time is the 10 ms,
      // before it also counts the TB ticks since TB reset (finding native_vtime.boot_starttime).
      for (const char* cpu : {"POWER9", "MPC8xx"}) {
        const auto facts = *arch::find_cpu(cpu);
        const std::uint64_t t0 = facts.tb_hz, dt = facts.tb_hz / 100;
        const std::string text =
            fmt::format("kacct-trace 1\ncpu {}\nncpus 1\nclock ns\nevents\n0 0 tick tb={}\n10000000 0 tick tb={}\n",
                        cpu, t0, t0 + dt);
        auto idle_of = [&](const arch::Config& k, bool& found) {
          auto t = trace::load(text);
          auto prog = sim::compile(t.value());
          auto rr = sim::run(prog.value(), sim::model_cfg(facts, k), {.check = true});
          found = false;
          for (const auto& f : rr.backend_result<model::native::NativeResult>()->findings)
            found = found || f.invariant == "native_vtime.boot_starttime";
          return rr.cpus[0].cpustat[model::IDLE];
        };
        bool found_before = false, found_after = false;
        const auto idle_before = idle_of(before, found_before), idle_after = idle_of(after, found_after);
        const bool ok = !found_after && idle_after <= 10'001'000u;
        parts.push_back(fmt::format("{}: 10 ms idle from a boot TB of {} reports {} ns idle on {}{}, {} ns on {}{}",
                                    cpu, t0, idle_after, after.name(), found_after ? " (boot finding)" : "",
                                    idle_before, before.name(), found_before ? " (boot finding)" : ""));
        if (ok && cpu == std::string_view("MPC8xx"))
          parts.push_back(
              "holds by construction after the patch (the machine's start() sets starttime, and startspurr when "
              "scaled, from each CPU's first TB read), shown on these traces");
        if (!ok) {
          r.verdict = Verdict::Violated;
          r.counterexample = text;
          r.replay = kReplayTrace;
          if (arch::find_config(after.name())) r.replay_config = after.name();
        }
      }
    }
    if (!r.detail.empty()) parts.insert(parts.begin(), r.detail);  // the Z3 part's finding
    r.detail = fmt::format("{}", fmt::join(parts, "; "));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kacct::proofs
