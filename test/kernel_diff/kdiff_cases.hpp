// The comparisons of the kernel's own accounting functions (cut out of Debian's linux-source-6.1
// and linux-source-6.12 at build time, kdiff_glue.c) with the model's public functions, one input
// at a time: shared by kernel_diff_test.cpp (pinned, edge and random inputs from a seed) and the
// libFuzzer target fuzz/kerneldiff/ (inputs drawn from the fuzzer's bytes), so that both judge
// with the same code. A disagreement counts as documented (Report::explained) when it falls in a
// class that docs/kernel-diff.md documents as an input the kernel's callers never pass, else as
// unexplained (Report::shown has it with its input and a replay command).
// Included by one source file per program (the test, the fuzz target).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arch/version.hpp"
#include "model/cputime/cputime_adjust.hpp"
#include "model/gen/gen.hpp"
#include "model/psi/psi.hpp"
#include "model/tick/tick.hpp"
#include "test/kernel_diff/kdiff.h"

namespace kacct::kdiff {
using namespace kacct;
using model::AdjustCfg;
using u64 = std::uint64_t;

// ---- which model configuration stands for a Debian tree: the one place to change.
struct ModelConfig {
  arch::KVersion ver;
  std::uint64_t tick_nsec;  // Debian's amd64 configs: CONFIG_HZ=250 (the glue is built with HZ=250)
};
// The installed trees are Debian's builds (arch::distro_builds) of the point release that the
// tree's Makefile names; the model runs that build.
inline ModelConfig model_config_for_tree(std::string_view tree) {
  const auto base = arch::parse_version(tree);
  for (std::size_t i = 0; base && i < arch::distro_builds.size(); ++i)
    if (arch::distro_builds[i].base == *base) return {arch::distro_build(i), 4'000'000};
  throw std::invalid_argument("model_config_for_tree: no model config for " + std::string(tree));
}

struct Tree {
  const char* name;
  const kd_api* x86;  // mul_u64_u64_div_u64() from arch/x86/include/asm/div64.h (mulq; divq)
  const kd_api* gen;  // the generic C one of lib/math/div64.c (arm64, riscv, ...)
};
inline const Tree trees[] = {{"6.1.192", &k61x86_api, &k61gen_api}, {"6.12.118", &k612x86_api, &k612gen_api}};
// trees[i]'s model configuration, looked up once.
inline const ModelConfig& tree_config(const Tree& t) {
  static const ModelConfig c[] = {model_config_for_tree(trees[0].name), model_config_for_tree(trees[1].name)};
  return c[&t - trees];
}

// ---- inputs
// splitmix64 (the sample's seed alone replays it), or, given bytes (a fuzzer's input), their
// next 8 as a little-endian u64 (0 once they run out): the same generators turn the fuzzer's
// bytes into inputs, so that its mutations stay local to one value.
struct Rng {
  u64 s;
  const std::uint8_t* bytes = nullptr;
  std::size_t left = 0;
  u64 next() {
    if (bytes) {
      u64 v = 0;
      const std::size_t n = left < 8 ? left : 8;
      std::memcpy(&v, bytes, n);
      bytes += n, left -= n;
      return v;
    }
    u64 z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  u64 below(u64 n) { return next() % n; }
  bool coin() { return next() & 1; }
};
inline u64 mix(u64 x) { return Rng{x}.next(); }

// A value from the classes that break integer code, or a plain random one of random magnitude.
inline u64 edge(Rng& r) {
  switch (r.below(12)) {
    case 0: return 0;
    case 1: return 1 + r.below(3);
    case 2: return (u64{1} << 32) - 2 + r.below(4);  // near 2^32
    case 3: return (u64{1} << 63) - 2 + r.below(4);  // near 2^63
    case 4: return ~u64{0} - r.below(3);             // near 2^64
    case 5: return (u64{1} << r.below(64)) + r.below(3) - 1;
    case 6: return r.next() & 0xffffffffull;
    case 7: return r.next();
    default: return r.next() >> r.below(64);  // log-uniform magnitude
  }
}

// ---- disagreements
struct Report {
  explicit Report(std::string t) : test(std::move(t)) {}
  std::string test;
  unsigned runs = 0, agree = 0, unexplained = 0;
  std::map<std::string, unsigned> explained;  // reason -> count
  std::map<std::string, unsigned> causes;     // unexplained: likely cause -> count
  std::vector<std::string> shown;
  std::function<std::string(u64 seed)> replay;  // the command that replays the input of `seed`

  // input: a short description; k/m: both results; why: documented reason or "" (a failure)
  void disagree(u64 seed, const std::function<std::string()>& input, const std::string& k, const std::string& m,
                const std::string& why, const std::string& cause = "") {
    if (!why.empty()) {
      ++explained[why];
      return;
    }
    ++unexplained;
    const std::string c = cause.empty() ? "unknown" : cause;
    // the first few of each cause, so that a rare cause is not hidden behind a frequent one
    if (causes[c]++ < 3)
      shown.push_back(fmt::format("  input: {}\n  kernel: {}\n  model:  {}\n  likely cause: {}\n  replay: {}", input(),
                                  k, m, c, replay ? replay(seed) : std::string("(no replay command)")));
  }
};

inline std::string hex3(u64 a, u64 b, u64 c) { return fmt::format("a={} b={} c={}", a, b, c); }

// ---- Documented inputs the kernel's callers never pass (docs/kernel-diff.md, "Inputs the
// kernel's callers never pass"): a disagreement on one of these is counted, not failed. Each
// class is recognised on the input and, where it can be, confirmed (the model's own failed
// obligation, or a re-run of the model).
inline bool failed(const Concrete& d, std::string_view site) {
  for (auto s : d.failed)
    if (s == site) return true;
  return false;
}
// Did the model's step fault? With AdjustCfg::overflow_max (the generic C from b29a62d87cc0) a
// quotient that does not fit is defined, U64_MAX, and the model still records quotient_fits.
inline bool model_trapped(const Concrete& d, const AdjustCfg& cfg) {
  for (auto s : d.failed)
    if (!(cfg.overflow_max && s == "mul_u64_u64_div_u64.quotient_fits")) return true;
  return false;
}
// Likely causes of unexplained disagreements, printed to help whoever fixes the model.
const char* const cause_u64_max =
    "generic mul_u64_u64_div_u64 since b29a62d87cc0 returns U64_MAX when the quotient does not fit; the model "
    "records an obligation";
const char* const cause_clamp = "the model's era lacks the stime <= rtime clamp of 77baa5bafcbe (a stable backport)";

inline std::string mul_reason(u64 a, u64 b, u64 c, const Concrete& d) {
  // The site is the era's: the generic C's own division, or scale()'s 128-bit one (6.12's
  // generic C with the U64_MAX overflow result, which on c == 0 may also return without a
  // trap: fuzz_kerneldiff found a=2^64-3 b=2^63-1 c=0 -> 63 on Debian's 6.12.118).
  if (c == 0 && (failed(d, "mul_u64_u64_div_u64.div_nonzero") || failed(d, "cputime_adjust.div_nonzero")))
    return "division by zero (undefined; cputime_adjust divides by stime + utime, both nonzero)";
  if (failed(d, "mul_u64_u64_div_u64.shift") && a >= (u64{1} << 63) && b >= (u64{1} << 63))
    return "generic shift by 64 (undefined; needs stime and rtime >= 2^63 ns)";
  return "";
}
inline std::string adjust_reason(const u64 curr[3], const Concrete& d) {
  if (curr[0] + curr[1] == 0 &&
      (failed(d, "cputime_adjust.div_nonzero") || failed(d, "mul_u64_u64_div_u64.div_nonzero")))
    return "stime + utime wraps to 0 (division by zero; 2^64 ns of task time)";
  if (failed(d, "mul_u64_u64_div_u64.shift") && curr[1] >= (u64{1} << 63) && curr[2] >= (u64{1} << 63))
    return "generic shift by 64 (undefined; needs stime and rtime >= 2^63 ns)";
  return "";
}

// ---- mul_u64_u64_div_u64(a, b, c) against model::scale() of the era's division
inline void diff_mul_u64_u64_div_u64(const Tree& t, bool x86, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  const kd_api* k = x86 ? t.x86 : t.gen;
  const AdjustCfg cfg = model::adjust_cfg(mc.ver, x86);
  u64 a = edge(r), b = edge(r), c = edge(r);
  switch (r.below(6)) {  // equal operands
    case 0: b = a; break;
    case 1: c = b; break;
    case 2: c = a; break;
    default: break;
  }
  // the cputime_adjust shape: c = a + something
  if (r.below(4) == 0) c = a + edge(r);
  int trapped = 0;
  u64 kv = k->mul_u64_u64_div_u64(a, b, c, &trapped);
  Concrete d;
  u64 mv = model::scale(d, cfg.div, a, b, c, cfg.overflow_max);
  ++rep.runs;
  const bool mtrap = model_trapped(d, cfg);
  if (bool(trapped) == mtrap && (mtrap || kv == mv)) {
    ++rep.agree;
    return;
  }
  std::string ks = trapped ? "trap (#DE / division by zero)" : fmt::format("{}", kv);
  std::string ms = mtrap ? fmt::format("{} with failed obligation {}", mv, d.failed.front()) : fmt::format("{}", mv);
  rep.disagree(
      seed, [&] { return hex3(a, b, c); }, ks, ms, mul_reason(a, b, c, d),
      !trapped && kv == ~u64{0} && failed(d, "mul_u64_u64_div_u64.quotient_fits") ? cause_u64_max : "");
}

// Pinned: the 2024 arm64 report (generic division, stime > rtime after the division).
struct AdjustPin {
  u64 utime, stime, rtime, prev_u, prev_s;
};
inline constexpr AdjustPin cputime_adjust_pins[] = {{1416780000, 175136586720000, 135989749728000, 0, 0}};

// ---- cputime_adjust(): short sequences on one prev_cputime, as repeated reads of one task do
inline void diff_cputime_adjust(const Tree& t, bool x86, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  const kd_api* k = x86 ? t.x86 : t.gen;
  const AdjustCfg cfg = model::adjust_cfg(mc.ver, x86);
  const auto& pins = cputime_adjust_pins;
  u64 kprev[2], curr[3];
  unsigned calls;
  if (seed < std::size(pins)) {
    const auto& p = pins[seed];
    curr[0] = p.utime, curr[1] = p.stime, curr[2] = p.rtime, kprev[0] = p.prev_u, kprev[1] = p.prev_s;
    calls = 1;
  } else {
    const bool zero_prev = r.coin();
    kprev[0] = zero_prev ? 0 : edge(r);
    kprev[1] = zero_prev ? 0 : edge(r);
    curr[0] = edge(r), curr[1] = edge(r), curr[2] = edge(r);
    if (r.below(4) == 0) curr[1] = curr[0];
    calls = 1 + unsigned(r.below(3));
  }
  model::PrevCputime<Concrete> mprev{kprev[0], kprev[1]};
  for (unsigned call = 0; call < calls; ++call) {
    if (call > 0) {  // the task ran on: every counter grows (or wraps, rarely)
      const unsigned sh = unsigned(r.below(64));
      curr[0] += r.coin() ? r.next() >> sh : 0;
      curr[1] += r.coin() ? r.next() >> sh : 0;
      curr[2] += r.next() >> sh;
    }
    const u64 in_prev[2] = {kprev[0], kprev[1]};
    auto input = [&] {
      return fmt::format("call {} of {}: utime={} stime={} rtime={} prev=({}, {})", call + 1, calls, curr[0], curr[1],
                         curr[2], in_prev[0], in_prev[1]);
    };
    u64 kout[2] = {0, 0};
    int trapped = 0;
    k->cputime_adjust(curr, kprev, kout, &trapped);
    Concrete d;
    model::TaskCputime<Concrete> mc_{curr[0], curr[1], curr[2]};
    auto mout = model::cputime_adjust(d, cfg, mc_, mprev);
    ++rep.runs;
    const bool mtrap = model_trapped(d, cfg);
    const bool same = bool(trapped) == mtrap && (mtrap || (kout[0] == mout.utime && kout[1] == mout.stime &&
                                                           kprev[0] == mprev.utime && kprev[1] == mprev.stime));
    if (same) {
      ++rep.agree;
      if (trapped) return;
      continue;
    }
    std::string ks = trapped ? "trap" : fmt::format("(utime {}, stime {})", kout[0], kout[1]);
    std::string ms = mtrap ? fmt::format("failed obligation {}", d.failed.front())
                           : fmt::format("(utime {}, stime {})", mout.utime, mout.stime);
    std::string cause;
    if (!trapped) {  // would the stime <= rtime clamp, or U64_MAX on overflow, explain it?
      Concrete d2;
      model::PrevCputime<Concrete> p2{in_prev[0], in_prev[1]};
      AdjustCfg c2 = cfg;
      c2.era = model::AdjustEra::ClampToRtime;
      auto o2 = model::cputime_adjust(d2, c2, mc_, p2);
      if (cfg.era != c2.era && d2.ok() && o2.utime == kout[0] && o2.stime == kout[1])
        cause = cause_clamp;
      else if (failed(d, "cputime_adjust.div_nonzero") == false && failed(d, "mul_u64_u64_div_u64.quotient_fits"))
        cause = cause_u64_max;
    }
    rep.disagree(seed, input, ks, ms, adjust_reason(curr, d), cause);
    return;  // the states differ from here on
  }
}

// ---- the tick: state and context
struct TickInput {
  kd_cpu c{};
  kd_task p{};
  kd_ctx x{};
};
inline TickInput random_tick_input(Rng& r) {
  TickInput in;
  for (auto& v : in.c.cpustat) v = r.below(3) ? r.next() >> r.below(64) : edge(r);
  // pending steal (steal_clock - prev_steal_time): mostly below a tick, sometimes huge or "negative"
  in.c.prev_steal_time = edge(r);
  switch (r.below(4)) {
    case 0: in.c.steal_clock = in.c.prev_steal_time; break;
    case 1: in.c.steal_clock = in.c.prev_steal_time + r.below(8'000'000); break;
    default: in.c.steal_clock = edge(r); break;
  }
  in.c.irq_total = edge(r);
  in.c.irq_tick_delta = r.coin() ? r.below(8'000'000) : edge(r);
  in.c.irq_start_time = edge(r);
  in.p = {edge(r), edge(r), edge(r)};
  auto& x = in.x;
  x.user_tick = r.coin();
  x.is_idle = r.below(3) == 0;
  x.is_ksoftirqd = r.below(4) == 0;
  x.pf_vcpu = r.below(4) == 0;
  x.nice_pos = r.coin();
  x.nr_iowait = r.coin();
  x.irq_time = r.coin();
  x.steal = r.coin();
  if (r.below(5)) {  // as the timer interrupt sees it: its own hardirq, maybe nested, softirq, bh off
    x.preempt_count = unsigned((1 + r.below(2)) * model::HARDIRQ_OFFSET + (r.coin() ? model::SOFTIRQ_OFFSET : 0) +
                               (r.below(4) == 0 ? 2 * model::SOFTIRQ_OFFSET : 0) + r.below(3));
  } else if (r.coin()) {
    x.preempt_count = unsigned(r.next());
  } else {  // a tick taken inside an NMI, or an NMI count otherwise plausible
    x.preempt_count = unsigned(model::HARDIRQ_OFFSET + (r.coin() ? model::SOFTIRQ_OFFSET : 0) + (1u << 20));
  }
  return in;
}
inline model::TickCtx model_ctx(const kd_ctx& x) {
  model::TickCtx t;
  t.user_tick = x.user_tick;
  t.preempt_count = x.preempt_count;
  t.is_idle = x.is_idle;
  t.is_ksoftirqd = x.is_ksoftirqd;
  t.pf_vcpu = x.pf_vcpu;
  t.nice_pos = x.nice_pos;
  t.nr_iowait = x.nr_iowait;
  return t;
}
struct ModelTick {
  model::CpuAcct<Concrete> c;
  model::TaskAcct<Concrete> p;
  model::TickCfg cfg;
};
inline ModelTick model_state(const TickInput& in, const ModelConfig& mc) {
  Concrete d;
  ModelTick m{model::zero_cpu(d), model::zero_task(d), {}};
  for (unsigned i = 0; i < model::NR_STATS; ++i) m.c.cpustat[i] = in.c.cpustat[i];
  m.c.prev_steal_time = in.c.prev_steal_time;
  m.c.steal_clock = in.c.steal_clock;
  m.c.irqtime = {in.c.irq_total, in.c.irq_tick_delta, in.c.irq_start_time};
  m.p.utime = in.p.utime, m.p.stime = in.p.stime, m.p.gtime = in.p.gtime;
  m.cfg.irq_time = in.x.irq_time;
  m.cfg.steal = in.x.steal;
  m.cfg.tick_nsec = mc.tick_nsec;
  return m;
}
inline std::string describe(const kd_cpu& c, const kd_task& p) {
  std::string s = "cpustat=[";
  for (unsigned i = 0; i < model::NR_STATS; ++i) s += fmt::format("{}{}", i ? " " : "", c.cpustat[i]);
  return s + fmt::format(
                 "] prev_steal_time={} steal_clock={} irqtime=(total {}, tick_delta {}, irq_start_time {}) "
                 "task=(utime {}, stime {}, gtime {})",
                 c.prev_steal_time, c.steal_clock, c.irq_total, c.irq_tick_delta, c.irq_start_time, p.utime, p.stime,
                 p.gtime);
}
inline std::string describe(const kd_ctx& x) {
  return fmt::format(
      "preempt_count={:#x} user_tick={} idle={} ksoftirqd={} pf_vcpu={} nice>0={} nr_iowait>0={} "
      "irq_time={} steal={}",
      x.preempt_count, x.user_tick, x.is_idle, x.is_ksoftirqd, x.pf_vcpu, x.nice_pos, x.nr_iowait, x.irq_time, x.steal);
}
inline kd_cpu from_model(const model::CpuAcct<Concrete>& c) {
  kd_cpu k{};
  for (unsigned i = 0; i < model::NR_STATS; ++i) k.cpustat[i] = c.cpustat[i];
  k.prev_steal_time = c.prev_steal_time;
  k.steal_clock = c.steal_clock;
  k.irq_total = c.irqtime.total, k.irq_tick_delta = c.irqtime.tick_delta, k.irq_start_time = c.irqtime.irq_start_time;
  return k;
}
inline bool same(const kd_cpu& a, const kd_cpu& b) {
  for (unsigned i = 0; i < model::NR_STATS; ++i)
    if (a.cpustat[i] != b.cpustat[i]) return false;
  return a.prev_steal_time == b.prev_steal_time && a.steal_clock == b.steal_clock && a.irq_total == b.irq_total &&
         a.irq_tick_delta == b.irq_tick_delta && a.irq_start_time == b.irq_start_time;
}
inline bool same(const kd_task& a, const model::TaskAcct<Concrete>& b) {
  return a.utime == b.utime && a.stime == b.stime && a.gtime == b.gtime;
}

// See the documented classes above.
inline std::string tick_reason(const kd_ctx& x) {
  if (x.preempt_count & 0xf00000u) return "NMI bits in preempt_count: the tick never runs in NMI";
  return "";
}

inline void diff_account_process_tick(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  TickInput in = random_tick_input(r);
  const TickInput before = in;
  auto input = [&] { return describe(before.c, before.p) + " " + describe(before.x); };
  ModelTick m = model_state(in, mc);
  t.x86->account_process_tick(&in.c, &in.p, &in.x);
  Concrete d;
  model::account_process_tick(d, m.cfg, m.c, m.p, model_ctx(in.x));
  ++rep.runs;
  kd_cpu mk = from_model(m.c);
  if (d.ok() && same(in.c, mk) && same(in.p, m.p)) {
    ++rep.agree;
    return;
  }
  rep.disagree(seed, input, describe(in.c, in.p), describe(mk, {m.p.utime, m.p.stime, m.p.gtime}), tick_reason(in.x));
}

inline void diff_account_idle_ticks(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  TickInput in = random_tick_input(r);
  in.x.user_tick = 0;  // tick_nohz_account_idle_time() runs in the idle task, outside irq
  in.x.preempt_count = unsigned(r.below(3));
  const u64 ticks = r.below(3) ? 1 + r.below(r.coin() ? 100 : 100'000) : edge(r);
  const TickInput before = in;
  auto input = [&] {
    return fmt::format("ticks={} ", ticks) + describe(before.c, before.p) + " " + describe(before.x);
  };
  ModelTick m = model_state(in, mc);
  t.x86->account_idle_ticks(&in.c, &in.p, &in.x, ticks);
  Concrete d;
  model::account_idle_ticks(d, m.cfg, m.c, m.p, model_ctx(in.x), ticks);
  ++rep.runs;
  kd_cpu mk = from_model(m.c);
  if (d.ok() && same(in.c, mk) && same(in.p, m.p)) {
    ++rep.agree;
    return;
  }
  // Reachable (one idle period of more than 2^31 jiffies): a model deviation, not excused.
  const std::string cause = in.x.irq_time && ticks > 0x7fffffffu
                                ? "irqtime_account_idle_ticks(int) truncates the tick count to int; the model "
                                  "multiplies the full count"
                                : "";
  rep.disagree(seed, input, describe(in.c, in.p), describe(mk, {m.p.utime, m.p.stime, m.p.gtime}), "", cause);
}

// ---- the helpers one by one, with arguments their callers in this file never vary (maxtime,
// hardirq_offset, the index, the tick count).
inline void diff_tick_helpers(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  const char* fn_names[] = {"account_user_time",   "account_guest_time",          "account_system_index_time",
                            "account_system_time", "account_idle_time",           "steal_account_process_time",
                            "account_other_time",  "irqtime_account_process_tick"};
  TickInput in = random_tick_input(r);
  // irq time off at run time leaves nothing pending (see GenVtime for the one exception)
  if (!in.x.irq_time) in.c.irq_tick_delta = 0;
  const int f = int(r.below(8));
  const u64 arg = r.below(3) ? r.next() >> r.below(64) : edge(r);
  int iarg = 0;
  if (f == KD_ACCOUNT_SYSTEM_INDEX_TIME) iarg = int(r.below(model::NR_STATS));
  if (f == KD_ACCOUNT_SYSTEM_TIME)  // the callers' offsets: HARDIRQ_OFFSET (tick), irq_count() (vtime)
    iarg =
        r.coin() ? int(model::HARDIRQ_OFFSET) : int(in.x.preempt_count & (model::HARDIRQ_MASK | model::SOFTIRQ_MASK));
  if (f == KD_IRQTIME_ACCOUNT_PROCESS_TICK) iarg = r.coin() ? 1 : int(r.below(u64{1} << r.below(32)));
  const TickInput before = in;
  auto input = [&] {
    return fmt::format("{}(arg {}, iarg {}) ", fn_names[f], arg, iarg) + describe(before.c, before.p) + " " +
           describe(before.x);
  };
  const u64 kr = t.x86->tick_fn(kd_tick_fn(f), &in.c, &in.p, &in.x, arg, iarg);
  ModelTick m = model_state(before, mc);
  Concrete d;
  const auto x = model_ctx(before.x);
  u64 mr = 0;
  switch (f) {
    case KD_ACCOUNT_USER_TIME: model::account_user_time(d, m.c, m.p, x, arg); break;
    case KD_ACCOUNT_GUEST_TIME: model::account_guest_time(d, m.c, m.p, x, arg); break;
    case KD_ACCOUNT_SYSTEM_INDEX_TIME: model::account_system_index_time(d, m.c, m.p, arg, model::Usage(iarg)); break;
    case KD_ACCOUNT_SYSTEM_TIME: model::account_system_time(d, m.c, m.p, x, std::uint32_t(iarg), arg); break;
    case KD_ACCOUNT_IDLE_TIME: model::account_idle_time(d, m.c, x, arg); break;
    case KD_STEAL_ACCOUNT_PROCESS_TIME: mr = model::steal_account_process_time(d, m.cfg, m.c, arg); break;
    case KD_ACCOUNT_OTHER_TIME: mr = model::account_other_time(d, m.cfg, m.c, arg); break;
    default: model::irqtime_account_process_tick(d, m.cfg, m.c, m.p, x, u64(iarg)); break;
  }
  ++rep.runs;
  kd_cpu mk = from_model(m.c);
  if (d.ok() && kr == mr && same(in.c, mk) && same(in.p, m.p)) {
    ++rep.agree;
    return;
  }
  rep.disagree(seed, input, fmt::format("returned {} ", kr) + describe(in.c, in.p),
               fmt::format("returned {} ", mr) + describe(mk, {m.p.utime, m.p.stime, m.p.gtime}),
               tick_reason(before.x));
}

// ---- irqtime_account_irq() at the four irq boundaries, against the class the simulator's tick
// backend passes for the same context (model/tick/backend.hpp: leaving_class, IrqExit -> Hardirq).
inline void diff_irqtime_account_irq(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  enum Kind { IrqEnter, IrqExit, SoftirqEnter, SoftirqExit };
  const char* kind_names[] = {"irq_enter", "irq_exit", "softirq_enter", "softirq_exit"};
  TickInput in = random_tick_input(r);
  const Kind kind = Kind(r.below(4));
  // the context being left: hardirq depth, serving a softirq, in ksoftirqd
  unsigned depth = unsigned(r.below(3));
  bool softirq = r.coin();
  const bool ksoftirqd = r.below(4) == 0;
  if (kind == IrqExit && depth == 0) depth = 1;
  if (kind == SoftirqEnter) depth = 0, softirq = false;  // __do_softirq runs with hardirqs done
  if (kind == SoftirqExit) depth = 0, softirq = true;
  const unsigned pc_before = depth * unsigned(model::HARDIRQ_OFFSET) + (softirq ? unsigned(model::SOFTIRQ_OFFSET) : 0u);
  // The kernel's count and offset at the call: irq_enter after its increment (offset
  // HARDIRQ_OFFSET), softirq entry after __local_bh_disable_ip(SOFTIRQ_OFFSET) (offset
  // SOFTIRQ_OFFSET), the exits before their decrement (offset 0).
  unsigned pc = pc_before, offset = 0;
  if (kind == IrqEnter) pc += unsigned(model::HARDIRQ_OFFSET), offset = unsigned(model::HARDIRQ_OFFSET);
  if (kind == SoftirqEnter) pc += unsigned(model::SOFTIRQ_OFFSET), offset = unsigned(model::SOFTIRQ_OFFSET);
  pc += unsigned(r.below(3));  // preempt-disable depth
  in.x.preempt_count = pc;
  in.x.is_ksoftirqd = ksoftirqd;
  const u64 now = r.coin() ? in.c.irq_start_time + (r.next() >> r.below(64)) : edge(r);
  model::IrqClass cls = model::IrqClass::None;
  if (kind == IrqExit || depth > 0)
    cls = model::IrqClass::Hardirq;
  else if (softirq && !ksoftirqd)
    cls = model::IrqClass::Softirq;
  const TickInput before = in;
  auto input = [&] {
    return fmt::format("{} now={} depth={} softirq={} ksoftirqd={} ", kind_names[kind], now, depth, softirq,
                       ksoftirqd) +
           describe(before.c, before.p) + " " + describe(before.x);
  };
  ModelTick m = model_state(in, mc);
  t.x86->irqtime_account_irq(&in.c, &in.x, now, offset);
  Concrete d;
  model::irqtime_account_irq(d, m.cfg, m.c, now, cls);
  ++rep.runs;
  kd_cpu mk = from_model(m.c);
  if (d.ok() && same(in.c, mk)) {
    ++rep.agree;
    return;
  }
  rep.disagree(seed, input, describe(in.c, in.p), describe(mk, in.p), "");
}

// ---- gen vtime (CONFIG_VIRT_CPU_ACCOUNTING_GEN): the context-tracking hooks, the switch and the
// task_cputime() reader on one task's struct vtime, against model::GenStep / model::task_cputime.
struct VtimeInput {
  kd_task p{};
  kd_vtime v{};
};
inline VtimeInput random_vtime(Rng& r) {
  VtimeInput in;
  in.p = {edge(r), edge(r), edge(r)};
  auto& v = in.v;
  v.starttime = r.below(4) ? r.next() >> r.below(64) : edge(r);
  auto residue = [&] { return r.below(4) ? r.below(4'100'000) : edge(r); };  // mostly below TICK_NSEC
  v.utime = residue(), v.stime = residue(), v.gtime = residue();
  v.seq = unsigned(r.below(3) ? 2 * r.below(1000) : r.next());
  v.state = int(r.below(5));
  v.cpu = r.coin() ? 0 : -1;
  v.pf_vcpu = v.state == model::VT_GUEST ? r.below(8) != 0 : r.below(8) == 0;
  v.is_idle = v.state == model::VT_IDLE ? r.below(8) != 0 : r.below(8) == 0;
  v.nice_pos = r.coin();
  return in;
}
inline model::VtimeTask<Concrete> model_vtime(const kd_vtime& v) {
  return {std::uint32_t(v.seq), v.starttime, v.utime, v.stime, v.gtime, 0, 0, 0};
}
inline model::VtimeCtl model_ctl(const kd_vtime& v) {
  model::VtimeCtl s;
  s.state = model::VState(v.state);
  s.pf_vcpu = v.pf_vcpu;
  s.is_idle = v.is_idle;
  s.nice_pos = v.nice_pos;
  s.cpu = v.cpu;
  return s;
}
inline std::string describe(const kd_vtime& v) {
  return fmt::format(
      "vtime=(seq {}, starttime {}, utime {}, stime {}, gtime {}, state {}, cpu {}) pf_vcpu={} idle={} "
      "nice>0={}",
      v.seq, v.starttime, v.utime, v.stime, v.gtime, model::vstate_name(model::VState(v.state)), v.cpu, v.pf_vcpu,
      v.is_idle, v.nice_pos);
}
inline bool same_vtime(const kd_vtime& a, const kd_vtime& b) {
  return a.seq == b.seq && a.starttime == b.starttime && a.utime == b.utime && a.stime == b.stime &&
         a.gtime == b.gtime && a.state == b.state && a.cpu == b.cpu && bool(a.pf_vcpu) == bool(b.pf_vcpu);
}
inline kd_vtime from_model(const model::VtimeTask<Concrete>& v, const model::VtimeCtl& s, const kd_vtime& flags) {
  kd_vtime k = flags;
  k.seq = v.seq, k.starttime = v.starttime, k.utime = v.utime, k.stime = v.stime, k.gtime = v.gtime;
  k.state = int(s.state), k.cpu = s.cpu, k.pf_vcpu = s.pf_vcpu;
  return k;
}

inline void diff_gen_vtime(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  const char* op_names[] = {"vtime_user_enter", "vtime_user_exit",      "vtime_guest_enter",
                            "vtime_guest_exit", "vtime_account_kernel", "vtime_task_switch_generic",
                            "task_cputime"};
  const model::GenCfg g = model::gen_cfg(mc.ver, 250);
  TickInput in = random_tick_input(r);
  // irq_count() at the hook: context tracking runs outside irq, vtime_account_kernel in irq too
  in.x.preempt_count = r.below(4) ? 0 : unsigned(r.coin() ? model::HARDIRQ_OFFSET : model::SOFTIRQ_OFFSET);
  if (r.below(16) == 0) in.x.preempt_count = unsigned(r.next());
  if (!in.x.irq_time && r.below(4)) in.c.irq_tick_delta = 0;  // pending irq time needs irq time on
  VtimeInput a = random_vtime(r), b = random_vtime(r);
  const int op = int(r.below(7));
  const u64 now = r.below(4) ? a.v.starttime + (r.next() >> r.below(64)) : edge(r);
  const TickInput before = in;
  const VtimeInput a0 = a, b0 = b;
  auto input = [&] {
    std::string s = fmt::format("{} now={} ", op_names[op], now) + describe(before.c, before.p) + " " +
                    describe(before.x) + " task " + describe(a0.v) +
                    fmt::format(" times=(utime {}, stime {}, gtime {})", a0.p.utime, a0.p.stime, a0.p.gtime);
    if (op == 5) s += " next " + describe(b0.v);
    return s;
  };

  const std::uint32_t irq_count = in.x.preempt_count & unsigned(0xf00000u | model::HARDIRQ_MASK | model::SOFTIRQ_MASK);
  const model::GenCtx x{irq_count, bool(in.x.nr_iowait)};
  const model::GenNow<Concrete> gn{now, 0};
  ++rep.runs;
  if (op == 6) {  // the reader
    u64 ku = 0, ks = 0;
    const int kr = t.x86->task_cputime(&a.p, &a.v, now, &ku, &ks);
    Concrete dz;
    model::TaskAcct<Concrete> mt_ = model::zero_task(dz);
    mt_.utime = a.p.utime, mt_.stime = a.p.stime, mt_.gtime = a.p.gtime;
    const auto mt = model::task_cputime(g, model_vtime(a.v), model_ctl(a.v), mt_, now, 0);
    if (ku == mt.utime && ks == mt.stime && bool(kr) == mt.pending) {
      ++rep.agree;
      return;
    }
    rep.disagree(seed, input, fmt::format("(utime {}, stime {}, {})", ku, ks, kr),
                 fmt::format("(utime {}, stime {}, {})", mt.utime, mt.stime, mt.pending), "");
    return;
  }
  struct Out {
    kd_cpu c;
    kd_task p;
    kd_vtime v, nv;
    bool ok;
  };
  auto run_model = [&](bool irq_time) {
    TickInput mi = before;
    mi.x.irq_time = irq_time;
    ModelTick m = model_state(mi, mc);
    m.p.utime = a0.p.utime, m.p.stime = a0.p.stime, m.p.gtime = a0.p.gtime;
    Concrete d;
    auto vc = model::zero_vtime_cpu(d);
    model::GenCost cost;
    model::GenStep<Concrete> st{d, m.cfg, g, m.c, vc, cost};
    auto mv = model_vtime(a0.v);
    auto ms = model_ctl(a0.v);
    auto nv = model_vtime(b0.v);
    auto ns = model_ctl(b0.v);
    switch (op) {
      case 0: st.user_enter(mv, m.p, ms, x, gn); break;
      case 1: st.user_exit(mv, m.p, ms, x, gn); break;
      case 2: st.guest_enter(mv, m.p, ms, x, gn); break;
      case 3: st.guest_exit(mv, m.p, ms, x, gn); break;
      case 4: st.account_kernel(mv, m.p, ms, x, gn); break;
      default: st.task_switch(mv, m.p, ms, nv, ns, x, gn, gn, 0); break;
    }
    return Out{
        from_model(m.c), {m.p.utime, m.p.stime, m.p.gtime}, from_model(mv, ms, a0.v), from_model(nv, ns, b0.v), d.ok()};
  };
  if (op == 5)
    t.x86->vtime_task_switch(&in.c, &a.p, &a.v, &b.p, &b.v, &in.x, now);
  else
    t.x86->vtime_op(kd_vtime_op(op), &in.c, &a.p, &a.v, &in.x, now);
  auto agrees = [&](const Out& o) {
    return o.ok && same(in.c, o.c) && a.p.utime == o.p.utime && a.p.stime == o.p.stime && a.p.gtime == o.p.gtime &&
           same_vtime(a.v, o.v) && (op != 5 || same_vtime(b.v, o.nv));
  };
  const Out o = run_model(in.x.irq_time);
  if (agrees(o)) {
    ++rep.agree;
    return;
  }
  std::string why;
  if (in.x.preempt_count & 0xf00000u)
    why = "NMI bits in irq_count(): vtime hooks never run in NMI";
  else if (!in.x.irq_time && before.c.irq_tick_delta != 0 && agrees(run_model(true)))
    why = "irq time pending with sched_clock_irqtime off (only after disable_sched_clock_irqtime())";
  std::string ks = describe(in.c, a.p) + " task " + describe(a.v) + (op == 5 ? " next " + describe(b.v) : "");
  std::string mstr = describe(o.c, o.p) + " task " + describe(o.v) + (op == 5 ? " next " + describe(o.nv) : "");
  rep.disagree(seed, input, ks, mstr, why);
}

// ---- PSI irq: psi_account_irqtime(rq, curr, prev) on a random cgroup tree, against
// model::psi::psi_account_irqtime_new (the form both trees carry; a model version without
// ddae0ca2a8fe has no such call and is reported as a deviation).
struct PsiOut {
  std::vector<kd_psi_group> g;
  kd_psi s{};
  bool ok = true;
};
inline PsiOut run_model_psi(arch::KVersion ver, const std::vector<kd_psi_group>& g, const kd_psi& s, int curr_pid,
                            int curr_group, int prev_group) {
  namespace psi = model::psi;
  psi::PsiCfg cfg;
  cfg.ver = ver;
  cfg.irqtime = true;
  Concrete d;
  psi::World<Concrete> w;
  const int ng = int(g.size());
  for (int i = 0; i < ng; ++i) {
    w.c.parent.push_back(g[i].parent);
    w.c.enabled.push_back(char(g[i].enabled));
  }
  // task 0: the idle task (root group); 1: curr; 2: prev
  w.c.tasks = {psi::Task{0, 0}, psi::Task{curr_group, 0}, psi::Task{std::max(prev_group, 0), 0}};
  const int mcurr = curr_pid == 0 ? 0 : 1, mprev = prev_group < 0 ? -1 : 2;
  w.c.curr = {mcurr};
  w.c.lock_owner = {0};
  w.c.in_irq = {0};
  w.v.now = s.now;
  auto acct = model::zero_cpu(d);
  acct.irqtime.total = s.irq_total;
  w.v.cpu = {psi::PsiCpu<Concrete>{acct, s.psi_irq_time, s.psi_seq}};
  for (int i = 0; i < ng; ++i) w.v.gc.push_back({psi::GroupCpu<Concrete>{g[i].irq_full, g[i].state_start, g[i].seq}});
  PsiOut o{g, s, true};
  psi::psi_account_irqtime_new(d, cfg, w, 0, 0, mcurr, mprev, psi::Site::Tick);
  for (int i = 0; i < ng; ++i) {
    o.g[i].irq_full = w.v.gc[i][0].irq_full;
    o.g[i].state_start = w.v.gc[i][0].state_start;
    o.g[i].seq = w.v.gc[i][0].seq;
  }
  o.s.psi_irq_time = w.v.cpu[0].psi_irq_time;
  o.s.psi_seq = w.v.cpu[0].psi_seq;
  o.ok = d.ok();
  return o;
}
inline bool same_psi(const std::vector<kd_psi_group>& a, const kd_psi& as, const PsiOut& b) {
  if (!b.ok || as.psi_irq_time != b.s.psi_irq_time || as.psi_seq != b.s.psi_seq) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].irq_full != b.g[i].irq_full || a[i].state_start != b.g[i].state_start || a[i].seq != b.g[i].seq)
      return false;
  return true;
}
inline std::string describe_psi(const std::vector<kd_psi_group>& g, const kd_psi& s) {
  std::string out = fmt::format("rq->psi_irq_time={} psi_seq={} irq_time_read={} cpu_clock={} groups=[", s.psi_irq_time,
                                s.psi_seq, s.irq_total, s.now);
  for (std::size_t i = 0; i < g.size(); ++i)
    out += fmt::format("{}(parent {}, {}, irq_full {}, state_start {}, seq {})", i ? " " : "", g[i].parent,
                       g[i].enabled ? "on" : "off", g[i].irq_full, g[i].state_start, g[i].seq);
  return out + "]";
}

inline void diff_psi_account_irqtime(const Tree& t, Report& rep, u64 seed, Rng& r) {
  const auto& mc = tree_config(t);
  model::psi::PsiCfg cfg;
  cfg.ver = mc.ver;
  const int ng = 1 + int(r.below(4));
  std::vector<kd_psi_group> g(ng);
  for (int i = 0; i < ng; ++i) {
    g[i].parent = i == 0 ? -1 : int(r.below(u64(i)));
    g[i].enabled = i == 0 || r.below(4) != 0;
    g[i].irq_full = std::uint32_t(r.below(3) ? r.next() >> r.below(32) : edge(r));
    g[i].state_start = edge(r);
    g[i].seq = unsigned(r.below(3) ? 2 * r.below(1000) : r.next());
  }
  kd_psi s{};
  s.psi_irq_time = r.below(3) ? r.next() >> r.below(64) : edge(r);
  s.irq_total = r.below(3) ? s.psi_irq_time + (r.next() >> r.below(64)) : edge(r);
  s.psi_seq = unsigned(r.below(3) ? 2 * r.below(1000) : r.next());
  s.now = edge(r);
  const int curr_pid = r.below(5) == 0 ? 0 : 1 + int(r.below(1000));
  const int curr_group = curr_pid == 0 ? 0 : int(r.below(u64(ng)));
  const int prev_group = r.below(3) == 0 ? -1 : int(r.below(u64(ng)));
  const auto g0 = g;
  const kd_psi s0 = s;
  auto input = [&] {
    return fmt::format("curr pid {} group {} prev {} ", curr_pid, curr_group,
                       prev_group < 0 ? std::string("NULL") : fmt::format("group {}", prev_group)) +
           describe_psi(g0, s0);
  };
  t.x86->psi_account_irqtime(g.data(), ng, &s, curr_pid, curr_group, prev_group);
  ++rep.runs;
  std::string cause;
  if (cfg.charge_at_tick()) {
    const PsiOut o = run_model_psi(mc.ver, g0, s0, curr_pid, curr_group, prev_group);
    if (same_psi(g, s, o)) {
      ++rep.agree;
      return;
    }
    if (!cfg.percpu_seq() && same_psi(g, s, run_model_psi(arch::v(6, 17), g0, s0, curr_pid, curr_group, prev_group)))
      cause = "the model's version lacks the per-CPU psi_seq of 570c8efd5eb7 (a stable backport)";
    rep.disagree(seed, input, describe_psi(g, s), describe_psi(o.g, o.s), "", cause);
    return;
  }
  // The model's version charges PSI irq time from update_rq_clock_task() (before
  // ddae0ca2a8fe): it has no psi_account_irqtime(rq, curr, prev) to compare with.
  const PsiOut o = run_model_psi(arch::v(6, 10), g0, s0, curr_pid, curr_group, prev_group);
  rep.disagree(seed, input, describe_psi(g, s), "no such call in the model's version", "",
               same_psi(g, s, o) ? "the model's version lacks ddae0ca2a8fe (psi_account_irqtime out of "
                                   "update_rq_clock_task; a stable backport); its 6.10 form agrees"
                                 : "");
}

}  // namespace kacct::kdiff
