// Gen vtime outcomes over every legal CPU x gen config (arch::combos()), against the
// ground-truth ledger: per task, the vtime clock time consumed plus the pending delta equals the
// task's true on-CPU time on the ns variants (every CPU nohz_full, no switch gap), and within
// one jiffy per context switch of it on the jiffy variant; residues stay below TICK_NSEC;
// cpustat never shows more than the CPU's elapsed time.
#include "props/props.hpp"

namespace kacct::props {
namespace {

class GenProp : public CpuTest {};
KACCT_EVERY_CPU(GenProp);

TEST_P(GenProp, VtimeMatchesLedger) {
  const arch::CpuFacts cpu = GetParam();
  std::vector<CfgCase> cfgs;
  for (auto& c : configs_of(cpu))
    if (c.cfg.acct == arch::Accounting::Gen) cfgs.push_back(c);
  if (cfgs.empty()) GTEST_SKIP() << "no legal gen vtime config on " << cpu.name;
  check(
      [&] {
        const auto spec = *gen_spec(std::string(cpu.name));
        const auto actions = *gen_actions();
        const trace::Trace t = trace::build(spec, actions);
        auto prog = sim::compile(t);
        RC_ASSERT(prog.ok());
        const auto truth = trace::ground_truth(t);
        RC_ASSERT(truth.ok());
        const auto& L = truth.value();
        for (const auto& c : cfgs) {
          const auto r = sim::run(prog.value(), c.model, {.check = false});
          RC_ASSERT(r.backend_result<model::GenResult>() != nullptr);
          const auto& g = c.model.gen;
          std::uint64_t switches = 0;
          for (const auto& e : t.events) switches += e.kind == trace::Kind::Switch;
          for (std::size_t k = t.header.ncpus; k < prog.value().tasks.size(); ++k) {
            const auto it = L.task.find(prog.value().tasks[k].tid);
            if (it == L.task.end()) continue;
            const auto& v = r.backend_result<model::GenResult>()->vtime[k];
            const auto& s = r.backend_result<model::GenResult>()->ctl[k];
            std::uint64_t pend = 0;
            if (s.state != model::VT_INACTIVE) {
              const std::uint64_t now =
                  g.variant == model::GenVariant::Jiffy ? L.end_ts / c.model.tick.tick_nsec : L.end_ts;
              if (now > v.starttime)
                pend = (now - v.starttime) * (g.variant == model::GenVariant::Jiffy ? g.jiffy_ns : 1);
            }
            // A forked child's copy of its parent's residues (copy_process()) is no time of its own.
            const std::uint64_t total = v.consumed - r.backend_result<model::GenResult>()->inherited[k] + pend,
                                want = it->second.total();
            if (g.variant != model::GenVariant::Jiffy) {
              if (total != want)
                RC_FAIL(
                    report(cpu, c.cfg, "task vtime " + std::to_string(total) + " != truth " + std::to_string(want), t));
            } else {
              const std::uint64_t slack = (switches + 2) * g.jiffy_ns;
              if (total > want + slack || want > total + slack)
                RC_FAIL(report(cpu, c.cfg, "jiffy vtime off by more than a jiffy per switch", t));
            }
            const std::uint64_t lim = g.variant == model::GenVariant::Accum ? c.model.tick.tick_nsec : 1;
            if (v.utime >= lim || v.stime >= lim || v.gtime >= lim)
              RC_FAIL(report(cpu, c.cfg, "residue not below TICK_NSEC", t));
          }
          for (std::uint32_t cc = 0; cc < t.header.ncpus; ++cc) {
            std::uint64_t sum = 0;
            for (unsigned b : {model::USER, model::NICE, model::SYSTEM, model::IDLE, model::IOWAIT})
              sum += r.cpus[cc].cpustat[b];
            // A task's residues (< TICK_NSEC each of utime/stime/gtime) move with it and are flushed
            // on whichever CPU it runs when they fill up, so a CPU's cpustat can pass its elapsed
            // time by up to 3 TICK_NSEC per task; residues copied at fork count twice (the kernel
            // finding fork_inherited).
            const std::uint64_t carried = 3 * c.model.tick.tick_nsec * (prog.value().tasks.size() - t.header.ncpus);
            if (sum >
                L.end_ts + c.model.tick.tick_nsec + carried + r.backend_result<model::GenResult>()->fork_inherited)
              RC_FAIL(report(cpu, c.cfg, "cpustat above elapsed time", t));
          }
        }
      },
      60);
}

}  // namespace
}  // namespace kacct::props
