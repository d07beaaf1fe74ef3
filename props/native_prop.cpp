// Native vtime over every legal CPU x native config (arch::combos()), on generated traces with a
// random SPURR/PURR rate (0.5x .. 1.3x the timebase, and exactly 1x):
//  - Checked: check mode finds no violation of the must-hold native invariants (TB conservation,
//    ns bounds, monotone snapshots, split sum/bounds/identity, flush zeroing) and no domain
//    obligation fails; the known hazards land in NativeResult::findings only.
//  - Ledger: per CPU, each kcpustat class (user+nice incl. guest, guest, system, irq, softirq,
//    idle+iowait) is at most the ground truth of that class plus one TB tick per event and
//    (without SPLPAR) the trace's steal, and at least the truth minus that slack, the steal, the
//    TB ticks not yet flushed and hotplug time; the whole likewise against the CPU's truth. With
//    a steal finding only what it leaves meaningful is skipped (a wrapped bucket: user, system
//    and the totals; idle steal counted twice: idle and the total may exceed by the steal); per task,
//    utime + stime <= its ground-truth on-CPU time plus the same slack (flush attribution).
//  - Scaled: with the timebase as source and scaled code compiled, utimescaled + stimescaled
//    never exceed the TB ticks flushed (the split only redistributes).
#include "props/props.hpp"

#include <algorithm>

#include "model/trace/ledger.hpp"
#include "spec/invariants.hpp"

namespace kacct::props {
namespace {

class NativeProp : public CpuTest {};
// Only the CPUs with VIRT_CPU_ACCOUNTING_NATIVE configs (powerpc); the others: NativeCpus below.
KACCT_CPUS_WITH(NativeProp, arch::Accounting::Native);

std::vector<CfgCase> native_cfgs(const arch::CpuFacts& cpu) {
  std::vector<CfgCase> out;
  for (auto& c : configs_of(cpu))
    if (c.cfg.acct == arch::Accounting::Native) out.push_back(c);
  return out;
}

// The kernel's DTL steal handling as the run's findings report it: a bucket that wrapped
// (steal_clamped: the user and system classes and the totals are garbage from there on) and
// idle counting the interval's steal twice (idle and the totals may exceed the truth by the
// trace's steal).
struct StealFindings {
  bool wrapped = false, idle_twice = false;
};

std::string ledger_error(const trace::Trace& t, const sim::Program& prog, const sim::RunResult& r,
                         const model::native::NativeCfg& n, bool stale_startspurr, StealFindings sf) {
  Concrete d;
  using B = trace::Bucket;
  const trace::Ledger l = trace::ground_truth(t).value();
  const std::uint64_t tick_ns = 1'000'000'000u / n.tb_hz + 1;
  const auto tb_ns = [&](std::uint64_t tb) {
    return std::uint64_t((unsigned __int128)tb * 1'000'000'000u / n.tb_hz) + 1;
  };
  const auto& p = *r.backend_result<model::native::NativeResult>();
  std::vector<std::uint64_t> events(t.header.ncpus, 0), first(t.header.ncpus, l.end_ts), last(t.header.ncpus, 0);
  for (const auto& e : t.events)
    ++events[e.cpu], first[e.cpu] = std::min(first[e.cpu], e.ts), last[e.cpu] = std::max(last[e.cpu], e.ts);
  for (std::uint32_t c = 0; c < t.header.ncpus; ++c) {
    const auto& k = r.cpus[c].cpustat;
    const auto L = [&](B b) { return l.at(c, b); };
    const std::uint64_t slack = events[c] * tick_ns * 2 + (n.splpar ? 0 : L(B::Steal));
    // Below the truth by at most: the per-event slack, the steal (taken out of any class, or
    // never seen without SPLPAR), the TB ticks not flushed yet at the end, the time before the
    // CPU's first event and after its last, and hotplug time.
    const std::uint64_t unflushed = p.tb_elapsed[c] > p.tb_flushed[c] ? tb_ns(p.tb_elapsed[c] - p.tb_flushed[c]) : 0;
    // The ledger charges each CPU from 0 to the trace's end, the model's TB clock of a CPU runs
    // from its first event to its last.
    const std::uint64_t low = (events[c] + 1) * tick_ns * 2 + L(B::Steal) + unflushed + first[c] +
                              (l.end_ts - last[c]) + tb_ns(p.hotplug_online_lost_tb + p.hotplug_offline_tb);
    struct Cls {
      const char* name;
      std::uint64_t got, truth;
      bool steal_bucket;  // a DTL steal wrap lands here
    } cls[] = {
        {"user+nice", k[model::USER] + k[model::NICE], L(B::User) + L(B::Nice) + L(B::Guest) + L(B::GuestNice), true},
        {"guest", k[model::GUEST] + k[model::GUEST_NICE], L(B::Guest) + L(B::GuestNice), true},
        {"system", k[model::SYSTEM], L(B::System), true},
        {"irq", k[model::IRQ], L(B::Irq), false},
        {"softirq", k[model::SOFTIRQ], L(B::Softirq), false},
        {"idle+iowait", k[model::IDLE] + k[model::IOWAIT], L(B::Idle) + L(B::Iowait), false},
    };
    for (const auto& x : cls) {
      if (sf.wrapped && x.steal_bucket) continue;
      // vtime_account_idle() counts steal during idle as idle, by design
      const bool idle = std::string(x.name) == "idle+iowait";
      // (twice with the finding: the interval, which contains it, and the DTL steal again)
      if (x.got > x.truth + slack + (idle ? L(B::Steal) * (sf.idle_twice ? 2 : 1) : 0))
        return "cpu " + std::to_string(c) + " " + x.name + ": " + std::to_string(x.got) + " ns > truth " +
               std::to_string(x.truth) + " + slack " + std::to_string(slack);
      if (x.got + low < x.truth)
        return "cpu " + std::to_string(c) + " " + x.name + ": " + std::to_string(x.got) + " ns < truth " +
               std::to_string(x.truth) + " - slack " + std::to_string(low);
    }
    if (sf.wrapped) continue;
    const std::uint64_t all = spec::tick::time_buckets(d, r.cpus[c]) + k[model::STEAL];
    if (all > l.end_ts + events[c] * tick_ns + (sf.idle_twice ? 2 * L(B::Steal) : 0))
      return "cpu " + std::to_string(c) + ": " + std::to_string(all) + " ns accounted > elapsed " +
             std::to_string(l.end_ts);
    std::uint64_t truth = 0;
    for (B b : {B::User, B::Nice, B::System, B::Irq, B::Softirq, B::Idle, B::Iowait, B::Steal}) truth += L(b);
    if (all + low < truth)
      return "cpu " + std::to_string(c) + ": " + std::to_string(all) + " ns accounted < truth " +
             std::to_string(truth) + " - slack " + std::to_string(low);
  }
  std::uint64_t all_events = 0, all_steal = 0;
  for (std::uint32_t c = 0; c < t.header.ncpus; ++c) all_events += events[c], all_steal += l.at(c, B::Steal);
  for (std::size_t i = t.header.ncpus; i < r.tasks.size() && !sf.wrapped; ++i) {  // flush attribution
    const auto it = l.task.find(prog.tasks[i].tid);
    if (it == l.task.end()) continue;
    const std::uint64_t got = r.tasks[i].utime + r.tasks[i].stime;
    const std::uint64_t bound = it->second.total() + all_events * tick_ns * 2 + (n.splpar ? 0 : all_steal);
    if (got > bound)
      return "task " + std::to_string(prog.tasks[i].tid) + ": utime+stime " + std::to_string(got) +
             " ns > on-CPU truth " + std::to_string(it->second.total()) + " + slack";
  }
  if (n.scaled && n.source == model::native::ScaledSource::Timebase && !stale_startspurr) {
    std::uint64_t sc = 0, flushed = 0;
    for (const auto& s : p.task_scaled) sc += s.utimescaled + s.stimescaled;
    for (auto f : p.tb_flushed) flushed += f;
    const std::uint64_t bound = std::uint64_t((unsigned __int128)flushed * 1'000'000'000u / n.tb_hz);
    if (sc > bound) return "scaled ns " + std::to_string(sc) + " > ns of the flushed TB ticks " + std::to_string(bound);
  }
  return {};
}

TEST_P(NativeProp, CheckedAndBoundedByTheLedger) {
  const arch::CpuFacts cpu = GetParam();
  const auto cfgs = native_cfgs(cpu);
  ASSERT_FALSE(cfgs.empty()) << cpu.name;
  check(
      [&] {
        const auto spec = *gen_spec(std::string(cpu.name));
        const auto actions = *gen_actions();
        const auto ratio =
            *rc::gen::element(std::pair{1u, 1u}, std::pair{1u, 2u}, std::pair{13u, 10u}, std::pair{7u, 8u});
        const trace::Trace t = trace::build(spec, actions);
        auto prog = sim::compile(t);
        RC_ASSERT(prog.ok());
        for (auto c : cfgs) {
          c.model.native.spurr_num = ratio.first;
          c.model.native.spurr_den = ratio.second;
          const auto r = sim::run(prog.value(), c.model, {.check = true, .tolerate_known_bugs = true});
          if (r.violation)
            RC_FAIL(report(cpu, c.cfg,
                           "invariant " + r.violation->invariant + " violated (" + r.violation->detail + ")", t));
          if (!r.obligations_failed.empty())
            RC_FAIL(report(cpu, c.cfg, "obligation failed: " + std::string(r.obligations_failed.front()), t));
          RC_ASSERT(r.backend_result<model::native::NativeResult>() != nullptr);
          StealFindings sf;
          bool stale = false;
          for (const auto& f : r.backend_result<model::native::NativeResult>()->findings) {
            sf.wrapped = sf.wrapped || f.invariant == "native_vtime.steal_clamped";
            sf.idle_twice = sf.idle_twice || f.invariant == "native_vtime.idle_steal_counted_twice";
            stale = stale || f.invariant == "native_vtime.stale_startspurr";
          }
          RC_TAG(sf.wrapped ? "steal wrapped a bucket" : sf.idle_twice ? "idle steal twice" : "no steal finding");
          const auto err = ledger_error(t, prog.value(), r, c.model.native, stale, sf);
          if (!err.empty()) RC_FAIL(report(cpu, c.cfg, err, t));
        }
      },
      250);
}

// The suite runs on every CPU that has a native config, and a CPU left out has none (x86-64 has
// no HAVE_VIRT_CPU_ACCOUNTING).
TEST(NativeCpus, SuiteCoversEveryNativeCpu) {
  const auto with = cpus_with(arch::Accounting::Native);
  EXPECT_GE(with.size(), 10u);
  for (const auto& cpu : arch::cpus()) {
    const bool in = std::any_of(with.begin(), with.end(), [&](const auto& c) { return c.name == cpu.name; });
    EXPECT_EQ(in, !native_cfgs(cpu).empty()) << cpu.name;
    if (cpu.name == std::string_view("x86_64")) { EXPECT_FALSE(in); }
  }
}

}  // namespace
}  // namespace kacct::props
