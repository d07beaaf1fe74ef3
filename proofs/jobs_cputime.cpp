// cputime_adjust() claims per era, and the division lemmas they rest on.
#include <fmt/format.h>

#include <chrono>
#include <random>

#include "model/sim/machine.hpp"
#include "proofs/jobs.hpp"
#include "proofs/replay.hpp"
#include "proofs/step_job.hpp"
#include "spec/invariants.hpp"

namespace kacct::proofs {
using namespace kacct::model;
using S = Symbolic;

namespace {

constexpr std::uint64_t kTickNs = 1'000'000;  // HZ=1000: counterexample traces use whole ticks
constexpr unsigned kMaxTicks = 64;            // per call, so the trace stays small

template <class D>
boolean<D> claim_holds(D& d, const std::string& claim, const PrevCputime<D>& before, const TaskCputime<D>& in,
                       const PrevCputime<D>& out) {
  if (claim == "cputime_adjust.monotonic") return spec::tick::adjust_monotonic(d, before, out);
  if (claim == "cputime_adjust.sum_is_rtime") return spec::tick::adjust_sum_is_rtime(d, before, in, out);
  if (claim == "cputime_adjust.stime_le_rtime") return spec::tick::adjust_stime_le_rtime(d, before, in, out);
  throw std::invalid_argument("unknown cputime_adjust claim " + claim);
}

const char* div_name(ScaleDiv s) {
  switch (s) {
    case ScaleDiv::Loop32: return "scale_stime 32-bit loop";
    case ScaleDiv::Exact128: return "exact 128-bit mul_u64_u64_div_u64";
    case ScaleDiv::Generic2020: return "generic mul_u64_u64_div_u64 (3dc167ba5729 until b29a62d87cc0)";
    case ScaleDiv::Abstract: return "abstract";
  }
  return "?";
}

// A single-task trace whose getrusage(RUSAGE_SELF) reads present exactly these (stime, utime,
// rtime) inputs to cputime_adjust (whole ticks at HZ=1000; rtime = time since the task was
// switched in: a group read brings the reader's runtime up to date, a per-thread read would not).
std::string adjust_trace(const std::vector<AdjustInput>& calls) {
  std::string t = "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 100 pid=100 comm=cex nice=0 mm=1\nevents\n";
  t += "0 0 switch prev=0 next=100\n";
  std::uint64_t ts = 0, s = 0, u = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    for (; s < calls[i].stime; s += kTickNs) t += fmt::format("{} 0 tick\n", ++ts);
    t += fmt::format("{} 0 syscall_exit\n", ++ts);
    for (; u < calls[i].utime; u += kTickNs) t += fmt::format("{} 0 tick\n", ++ts);
    t += fmt::format("{} 0 syscall_enter nr=0\n", ++ts);
    ts = calls[i].rtime;
    t += fmt::format("{} 0 read kind=rusage_self id={}\n", ts, i + 1);
  }
  return t;
}

// Concrete replay of a call sequence; true if the claim fails on some call.
bool replay_fails(const std::string& claim, const AdjustCfg& cfg, const std::vector<AdjustInput>& calls,
                  std::size_t* at, const AdjustMutation& mutate = {}) {
  Concrete k;
  PrevCputime<Concrete> prev{0, 0};
  for (std::size_t i = 0; i < calls.size(); ++i) {
    TaskCputime<Concrete> in{calls[i].utime, calls[i].stime, calls[i].rtime};
    auto before = prev;
    auto out = cputime_adjust(k, cfg, in, prev);
    if (mutate) {
      mutate(k, out);
      prev = out;
    }
    if (!claim_holds(k, claim, before, in, out)) {
      if (at) *at = i;
      return true;
    }
  }
  return false;
}

// The trace replays through the whole machine (check mode) on exactly the CPU, config and
// override the printed command names, and trips the same invariant.
bool trace_confirms(const std::string& text, const AdjustReplay& how, const std::string& claim) {
  auto tr = trace::load(text);
  if (!tr) return false;
  auto prog = sim::compile(tr.value());
  if (!prog) return false;
  auto res = sim::run(prog.value(), replay_model_cfg(how), {.check = true, .stop_at_violation = true});
  return res.violation && res.violation->invariant == claim;
}

}  // namespace

std::optional<AdjustInput> search_scale_overshoot(ScaleDiv how) {
  Concrete k;
  // The 2024 arm64 report (LKML, "sched/cputime: Fix mul_u64_u64_div_u64() precision").
  std::vector<AdjustInput> cands = {{175136586720000ull, 1416780000ull, 135989749728000ull}};
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    unsigned b = 36 + unsigned(i % 24);
    std::uint64_t s = (rng() >> (64 - b)) | (std::uint64_t{1} << (b - 1));
    std::uint64_t r = s - (rng() % (s / 4 + 1));
    std::uint64_t u = (rng() >> (64 - b + 6)) + 1;
    cands.push_back({s, u, r});
  }
  for (const auto& c : cands) {
    if (c.stime == 0 || c.utime == 0 || c.stime + c.utime < c.stime) continue;
    if (scale(k, how, c.stime, c.rtime, c.stime + c.utime) > c.rtime) return c;
  }
  return std::nullopt;
}

Result adjust_claim(const std::string& claim, const AdjustCfg& cfg, unsigned timeout_ms, const AdjustMutation& mutate) {
  Result r;
  r.name = claim;
  r.approximations.push_back("sequential model: prev_cputime updates serialised by prev->lock");
  // 1. One call from any prev state, division abstracted: exact-division facts for an exact
  //    routine, an arbitrary value (havoc) for an approximate one.
  const bool exact = cfg.div == ScaleDiv::Exact128;
  {
    z3::context ctx;
    S d(ctx);
    d.abstract_facts = exact;
    PrevCputime<S> prev;
    TaskCputime<S> in;
    make_fresh(d, prev, "prev");
    make_fresh(d, in, "in");
    auto before = prev;
    AdjustCfg sc = cfg;
    sc.div = ScaleDiv::Abstract;
    auto out = cputime_adjust(d, sc, in, prev);
    if (mutate) mutate(d, out);
    std::vector<z3::expr> as = d.assumptions;
    // stime + utime does not wrap (2^64 ns = 584 years of CPU time)
    as.push_back(z3::bvadd_no_overflow(in.stime.e(), in.utime.e(), false));
    as.push_back(z3::bvadd_no_overflow(before.stime.e(), before.utime.e(), false));
    auto ok = claim_holds(d, claim, before, in, out);
    auto res = solve(ctx, as, !ok.e(), timeout_ms);
    r.seconds += res.seconds;
    for (const auto& a : d.approximations) r.approximations.push_back(a);
    r.approximations.push_back("stime + utime and prev.stime + prev.utime do not wrap at 2^64");
    if (res.verdict == Verdict::Holds) {
      r.verdict = Verdict::Holds;
      r.detail = fmt::format("proved by Z3 for one call from every prev state at 64 bits ({}{})", div_name(cfg.div),
                             exact ? "; rests on the lemma division.exact_facts" : "; any division result");
      return r;
    }
    if (res.verdict != Verdict::Violated) {
      r.verdict = res.verdict;
      r.detail = res.reason;
      return r;
    }
  }
  // 2. An approximate routine: look for a division overshoot concretely first (cheap), and
  //    replay it through the era.
  if (!exact) {
    if (auto c = search_scale_overshoot(cfg.div)) {
      std::size_t at = 0;
      if (replay_fails(claim, cfg, {*c}, &at, mutate)) {
        r.verdict = Verdict::Violated;
        r.replay = kReplayStep;
        r.inputs = nlohmann::ordered_json::array({{{"stime", c->stime}, {"utime", c->utime}, {"rtime", c->rtime}}});
        Concrete k;
        PrevCputime<Concrete> p{0, 0};
        auto out = cputime_adjust(k, cfg, {c->utime, c->stime, c->rtime}, p);
        r.detail = fmt::format(
            "{} returns stime > rtime (found by concrete search, replayed through cputime_adjust): "
            "stime={} utime={} rtime={} -> utime {} stime {}; a trace would need {} ticks, so "
            "the inputs are given instead",
            div_name(cfg.div), c->stime, c->utime, c->rtime, out.utime, out.stime, c->stime / kTickNs);
        return r;
      }
    }
  }
  // 3. Bounded model checking from prev = 0: up to 3 calls with monotone inputs in whole ticks,
  //    so that the counterexample is a reachable state and a small trace.
  for (unsigned k = 1; k <= 3; ++k) {
    z3::context ctx;
    S d(ctx);
    d.abstract_facts = true;  // the real division is exact on the values searched here
    std::vector<z3::expr> as;
    auto z = d.lit<64>(0);
    PrevCputime<S> prev{z, z};
    std::vector<TaskCputime<S>> ins(k);
    std::vector<z3::expr> bad;
    for (unsigned i = 0; i < k; ++i) {
      auto& in = ins[i];
      auto st = d.fresh<64>(fmt::format("s{}", i)), ut = d.fresh<64>(fmt::format("u{}", i));
      as.push_back(z3::ule(st.e(), ctx.bv_val(std::uint64_t{kMaxTicks} * (i + 1), 64)));
      as.push_back(z3::ule(ut.e(), ctx.bv_val(std::uint64_t{kMaxTicks} * (i + 1), 64)));
      in.stime = d.mul(st, d.lit<64>(kTickNs));
      in.utime = d.mul(ut, d.lit<64>(kTickNs));
      in.sum_exec_runtime = d.fresh<64>(fmt::format("r{}", i));
      as.push_back(z3::ule(in.sum_exec_runtime.e(), ctx.bv_val(std::uint64_t{1} << 40, 64)));
      as.push_back(z3::uge(in.sum_exec_runtime.e(), ctx.bv_val(std::uint64_t{300} * (i + 1), 64)));
      if (i > 0) {
        as.push_back(z3::uge(in.stime.e(), ins[i - 1].stime.e()));
        as.push_back(z3::uge(in.utime.e(), ins[i - 1].utime.e()));
        as.push_back(
            z3::uge(in.sum_exec_runtime.e(), ins[i - 1].sum_exec_runtime.e() + ctx.bv_val(std::uint64_t{300}, 64)));
      }
      auto before = prev;
      AdjustCfg sc = cfg;
      sc.div = ScaleDiv::Abstract;
      auto out = cputime_adjust(d, sc, in, prev);
      if (mutate) mutate(d, out);
      prev = out;
      bad.push_back(!claim_holds(d, claim, before, in, out).e());
    }
    for (const auto& a : d.assumptions) as.push_back(a);
    z3::expr any = ctx.bool_val(false);
    for (const auto& b : bad) any = any || b;
    auto res = solve(ctx, as, any, timeout_ms);
    r.seconds += res.seconds;
    if (res.verdict != Verdict::Violated) continue;
    std::vector<AdjustInput> calls;
    for (unsigned i = 0; i < k; ++i)
      calls.push_back({eval_u64(*res.model, ins[i].stime.e()), eval_u64(*res.model, ins[i].utime.e()),
                       eval_u64(*res.model, ins[i].sum_exec_runtime.e())});
    std::size_t at = 0;
    if (!replay_fails(claim, cfg, calls, &at, mutate)) continue;  // depends on the abstraction
    r.verdict = Verdict::Violated;
    r.inputs = nlohmann::ordered_json::array();
    for (const auto& c : calls) r.inputs.push_back({{"stime", c.stime}, {"utime", c.utime}, {"rtime", c.rtime}});
    r.counterexample = adjust_trace(calls);
    const auto how = resolve_adjust(cfg);
    const bool confirmed = !mutate && trace_confirms(*r.counterexample, how, claim);
    r.replay = confirmed ? kReplayTrace : kReplayStep;
    if (confirmed) r.command = {how.args() + " FILE", claim, 1, how.note, "trace"};
    r.detail =
        fmt::format("{} call(s) from prev = 0 (found by Z3, bounded to {} calls); replayed concretely with the {}{}", k,
                    k, div_name(cfg.div), confirmed ? "; the trace trips the same check in `kacct check`" : "");
    r.approximations.push_back(
        fmt::format("bounded: at most {} calls, inputs in whole ticks (HZ=1000), rtime < 2^40", k));
    return r;
  }
  r.verdict = Verdict::Unknown;
  r.detail =
      "Z3 found a violation of the one-call abstraction, but no reachable counterexample within 3 calls "
      "replays concretely, and the concrete search found none";
  return r;
}

// The obligations cputime_adjust() raises (division by zero, over-wide shifts, quotient fits)
// cannot fail for any input of one call, in any era, with the exact division.
std::vector<Result> cputime_obligation_jobs(unsigned timeout_ms) {
  std::vector<Result> out;
  for (AdjustEra era :
       {AdjustEra::PerFieldMax, AdjustEra::GotoUpdate, AdjustEra::ClampAlways, AdjustEra::ClampToRtime}) {
    z3::context ctx;
    S d(ctx);
    PrevCputime<S> prev;
    TaskCputime<S> in;
    make_fresh(d, prev, "prev");
    make_fresh(d, in, "in");
    const auto prev0 = prev;
    cputime_adjust(d, AdjustCfg{era, ScaleDiv::Abstract}, in, prev);  // quotient fits: division.exact_facts
    Result r;
    r.name = fmt::format("cputime_adjust.obligations[era {}]", int(era));  // AdjustEra order
    r.verdict = Verdict::Holds;
    r.approximations = {"stime + utime does not wrap at 2^64",
                        "quotient-fits obligation of the 128-bit division covered by division.exact_facts"};
    std::vector<z3::expr> as = {z3::bvadd_no_overflow(in.stime.e(), in.utime.e(), false)};
    for (const auto& o : d.obligations) {
      auto res = solve(ctx, as, o.violated, timeout_ms);
      r.seconds += res.seconds;
      Verdict v = res.verdict;
      if (v == Verdict::Violated) {
        // Replay with the exact division the abstraction stands for: the obligation must fail.
        PrevCputime<Concrete> kp{};
        TaskCputime<Concrete> kin{};
        read_back(*res.model, prev0, kp);
        read_back(*res.model, in, kin);
        r.inputs = {{"prev", to_json(kp)}, {"in", to_json(kin)}};
        Concrete k;
        cputime_adjust(k, AdjustCfg{era, ScaleDiv::Exact128}, kin, kp);
        const bool fails = std::find(k.failed.begin(), k.failed.end(), o.site) != k.failed.end();
        if (fails)
          r.replay = kReplayStep;
        else
          v = Verdict::Error;
      }
      if (v != Verdict::Holds) {
        r.verdict = worst(r.verdict, v);
        r.detail += fmt::format("{}: {} ", o.site, name(v));
      }
    }
    if (r.verdict == Verdict::Holds)
      r.detail = fmt::format("{} obligations, all discharged by Z3", d.obligations.size());
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Result> cputime_jobs(unsigned timeout_ms, const AdjustMutation& mutate) {
  std::vector<Result> out = mutate ? std::vector<Result>{} : cputime_obligation_jobs(timeout_ms);
  struct Era {
    const char* name;
    AdjustEra era;
  };
  // Eras are named by the patch that opens them (arch/patches.hpp has their releases).
  for (Era e : {Era{"before 9d7fb0427648", AdjustEra::PerFieldMax},
                {"9d7fb0427648", AdjustEra::GotoUpdate},
                {"173be9a14f7b", AdjustEra::ClampAlways},
                {"77baa5bafcbe", AdjustEra::ClampToRtime}})
    for (ScaleDiv div : {ScaleDiv::Loop32, ScaleDiv::Exact128, ScaleDiv::Generic2020}) {
      for (const char* claim :
           {"cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", "cputime_adjust.stime_le_rtime"}) {
        auto r = adjust_claim(claim, {e.era, div}, timeout_ms, mutate);
        r.name = fmt::format("{}[{}, {}]", claim, e.name, div_name(div));
        out.push_back(std::move(r));
      }
    }
  return out;
}

DivFacts exact_div_facts_int(const z3::expr& a, const z3::expr& b, const z3::expr& c, const z3::expr& q) {
  auto& ctx = a.ctx();
  const auto zero = ctx.int_val(0), two64 = ctx.int_val("18446744073709551616");
  return {{"a <= c -> q <= b", z3::implies(a <= c, q <= b)},
          {"b <= c -> q <= a", z3::implies(b <= c, q <= a)},
          {"a == 0 or b == 0 -> q == 0", z3::implies(a == zero || b == zero, q == zero)},
          {"a == c -> q == b", z3::implies(a == c, q == b)},
          {"b == c -> q == a", z3::implies(b == c, q == a)},
          {"a <= c or b <= c -> q < 2^64", z3::implies(a <= c || b <= c, q < two64)}};
}

// Over the integers, q stated by its defining inequalities q*c <= a*b < q*c + c: the floor
// quotient that the 128-bit unsigned division computes (SMT-LIB bvudiv). Bit-blasting that
// multiply and divide does not finish (unknown after 60 s at 12 bits); Z3's nonlinear integer
// arithmetic proves each fact in about a second. One query per fact: a failure names it.
Result exact_facts_64(unsigned timeout_ms, const DivFactsFn& facts_of) {
  Result r;
  r.name = "division.exact_facts[64-bit, z3]";
  r.verdict = Verdict::Holds;
  z3::context ctx;
  const auto a = ctx.int_const("a"), b = ctx.int_const("b"), c = ctx.int_const("c"), q = ctx.int_const("q");
  const auto two64 = ctx.int_val("18446744073709551616"), zero = ctx.int_val(0);
  const std::vector<z3::expr> as = {zero <= a, a < two64, zero <= b,      b < two64,        zero < c,
                                    c < two64, zero <= q, q * c <= a * b, a * b < q * c + c};
  const auto facts = facts_of(a, b, c, q);
  std::string undecided;
  for (const auto& [what, fact] : facts) {
    // Incremental (push before the fact): Z3's SMT core decides each fact at once, where the
    // non-incremental nonlinear tactic does not finish and Z3 4.8.12 hangs in its timer.
    z3::solver s(ctx);
    z3::params p(ctx);
    set_budget(p, timeout_ms);
    p.set("random_seed", 0u);
    s.set(p);
    for (const auto& x : as) s.add(x);
    s.push();
    s.add(!fact);
    const auto t0 = std::chrono::steady_clock::now();
    const auto res = s.check();
    r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (res == z3::unsat) continue;
    if (res == z3::sat) {  // replay: the fact at those a, b, c with q from exact 128-bit division
      const auto m = s.get_model();
      const auto get = [&](const z3::expr& x) { return std::stoull(m.eval(x, true).get_decimal_string(0)); };
      const std::uint64_t ka = get(a), kb = get(b), kc = get(c);
      const unsigned __int128 kq = (unsigned __int128)ka * kb / kc;
      const auto num = [&](unsigned __int128 v) { return ctx.int_val(fmt::format("{}", v).c_str()); };
      z3::expr_vector from(ctx), to(ctx);
      for (const auto& x : {a, b, c, q}) from.push_back(x);
      for (const auto& x : {num(ka), num(kb), num(kc), num(kq)}) to.push_back(x);
      z3::expr f = fact;
      const bool breaks = f.substitute(from, to).simplify().is_false();
      r.inputs = {{"a", ka}, {"b", kb}, {"c", kc}, {"q", fmt::format("{}", kq)}};
      r.verdict = breaks ? Verdict::Violated : Verdict::Error;
      if (breaks) r.replay = kReplayStep;
      r.detail = fmt::format("{}: {}", what,
                             breaks ? "broken by exact 128-bit division at these inputs"
                                    : "counterexample does not replay with exact 128-bit division");
      return r;
    }
    r.verdict = Verdict::Unknown;
    undecided += (undecided.empty() ? "" : "; ") + fmt::format("{}: {}", what, s.reason_unknown());
  }
  r.detail = r.verdict == Verdict::Holds
                 ? fmt::format(
                       "proved by Z3 (nonlinear integer arithmetic) for all 64-bit a, b and c != 0, "
                       "q = floor(a*b/c) as the 128-bit unsigned division computes it; {} facts, one "
                       "query each",
                       facts.size())
                 : undecided;
  return r;
}

// The facts the exact-division abstraction assumes, checked against exact floor division:
// exhaustively at 8 bits (a cross-check of the formulas) and at 64 bits over the integers.
std::vector<Result> division_jobs(unsigned timeout_ms) {
  std::vector<Result> out;
  for (unsigned w : {8u}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t n = std::uint64_t{1} << w;
    Result r;
    r.name = fmt::format("division.exact_facts[{}-bit, exhaustive]", w);
    r.verdict = Verdict::Holds;
    for (std::uint64_t c = 1; c < n && r.verdict == Verdict::Holds; ++c)
      for (std::uint64_t a = 0; a < n && r.verdict == Verdict::Holds; ++a)
        for (std::uint64_t b = 0; b < n; ++b) {
          const std::uint64_t q = a * b / c;
          const bool ok = (a > c || q <= b) && (b > c || q <= a) && ((a != 0 && b != 0) || q == 0) &&
                          (a != c || q == b) && (b != c || q == a) && (!(a <= c || b <= c) || q < n);
          if (!ok) {
            r.verdict = Verdict::Violated;
            r.replay = kReplayStep;  // found by exact division itself
            r.inputs = {{"a", a}, {"b", b}, {"c", c}, {"q", q}};
            break;
          }
        }
    r.detail = r.verdict == Verdict::Holds ? fmt::format("all {}^3 inputs (c != 0) enumerated", n) : "counterexample";
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.push_back(std::move(r));
  }
  out.push_back(exact_facts_64(timeout_ms, exact_div_facts_int));
  for (ScaleDiv how : {ScaleDiv::Loop32, ScaleDiv::Generic2020, ScaleDiv::Exact128}) {
    Result r;
    r.name = fmt::format("division.quotient_le_rtime[{}]", div_name(how));
    if (auto c = search_scale_overshoot(how)) {
      Concrete k;
      r.verdict = Verdict::Violated;
      r.replay = kReplayStep;  // found by running the routine itself
      r.inputs = {{"stime", c->stime},
                  {"utime", c->utime},
                  {"rtime", c->rtime},
                  {"quotient", scale(k, how, c->stime, c->rtime, c->stime + c->utime)}};
      r.detail = "stime*rtime/(stime+utime) computed above rtime (concrete search)";
    } else {
      r.verdict = how == ScaleDiv::Exact128 ? Verdict::Holds : Verdict::Unknown;
      r.detail = how == ScaleDiv::Exact128 ? "follows from division.exact_facts (a <= c -> q <= b); no overshoot in "
                                             "200001 concrete searches"
                                           : "no overshoot found by the concrete search";
      r.approximations.push_back("rests on division.exact_facts, proved at 64 bits over the integers");
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kacct::proofs
