// Gen vtime outcomes over every legal CPU x gen config (arch::combos()), against the
// ground-truth ledger: per task, the vtime clock time consumed plus the pending delta equals the
// task's true on-CPU time on the ns variants (every CPU nohz_full, no switch gap), and within
// one jiffy per context switch of it on the jiffy variant; residues stay below TICK_NSEC;
// cpustat never shows more than the CPU's elapsed time; per category (user incl. guest, guest,
// system incl. irq, or without irq under IRQ_TIME_ACCOUNTING), a task's flushed time plus residues
// is its truth less the pending interval, with irq time inside guest mode as guest where KVM
// serves it before its vtime guest exit. (With steal accounting a flush may take steal that ran
// in another category: those configs keep the total checks only.)
#include <map>

#include "props/props.hpp"

namespace kacct::props {
namespace {

class GenProp : public CpuTest {};
KACCT_CPUS_WITH(GenProp, arch::Accounting::Gen);  // the CPUs with gen vtime configs

TEST_P(GenProp, VtimeMatchesLedger) {
  const arch::CpuFacts cpu = GetParam();
  std::vector<CfgCase> cfgs;
  for (auto& c : configs_of(cpu))
    if (c.cfg.acct == arch::Accounting::Gen) cfgs.push_back(c);
  ASSERT_FALSE(cfgs.empty()) << cpu.name;
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
          // Irq and softirq time the trace shows inside guest mode, per task (less its steal, as
          // the ledger takes it). Where KVM serves such an irq before its vtime guest exit
          // (GenCfg::guest_exit_before_irq false) vtime without IRQ_TIME_ACCOUNTING sees no irq
          // boundary, so the kernel charges that time to guest; else the irq ends the guest
          // stretch and it is system time like any other irq.
          std::map<std::uint64_t, std::uint64_t> irq_in_guest;
          {
            trace::Tracker tr(t.header);
            auto in_guest_irq = [](const trace::CpuContext& x) {
              return x.current != 0 && !x.offline && x.mode == trace::Mode::Guest && (x.irq_depth > 0 || x.in_softirq);
            };
            for (const auto& e : t.events) {
              const trace::CpuContext before = tr.cpu(e.cpu);
              if (tr.apply(e)) break;
              if (in_guest_irq(before))
                irq_in_guest[before.current] += e.ts - before.last_ts - (e.kind == trace::Kind::Steal ? e.a : 0);
            }
            for (std::uint32_t cc = 0; cc < t.header.ncpus; ++cc)
              if (in_guest_irq(tr.cpu(cc))) irq_in_guest[tr.cpu(cc).current] += L.end_ts - tr.cpu(cc).last_ts;
          }
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
            // Per category (ns variants, no irq time or steal taken out, no inherited or starting
            // residues): flushed plus residue time is the truth of that category, less at most
            // the pending interval (still unflushed, of the current state's category). Guest time
            // is also user time (account_guest_time()); irq time is the task's system time.
            const auto& ta = r.tasks[k];
            bool fresh = r.backend_result<model::GenResult>()->inherited[k] == 0;
            for (const auto& dcl : t.header.tasks)
              if (dcl.tid == prog.value().tasks[k].tid)
                fresh = fresh && !dcl.utime && !dcl.stime && !dcl.vtime_utime && !dcl.vtime_stime && !dcl.vtime_gtime;
            if (g.variant != model::GenVariant::Jiffy && !c.model.tick.steal && fresh) {
              const auto& tr = it->second;
              const auto ig = irq_in_guest.find(it->first);
              const bool irqt = c.model.tick.irq_time;
              const std::uint64_t as_guest =
                  irqt || g.guest_exit_before_irq || ig == irq_in_guest.end() ? 0 : ig->second;
              // With IRQ_TIME_ACCOUNTING the irq time goes to cpustat (taken out of the next
              // vtime flush as other time), except softirq run by ksoftirqd (irqtime_account_irq
              // leaves it to the task): the task's system time is then the rest.
              const std::uint64_t sys = irqt ? tr.system + (prog.value().tasks[k].ksoftirqd ? tr.softirq : 0)
                                             : tr.system + tr.irq + tr.softirq - as_guest;
              const struct {
                const char* name;
                std::uint64_t got, truth;
              } cats[] = {{"user (incl. guest)", ta.utime + v.utime + v.gtime, tr.user + tr.guest + as_guest},
                          {"guest", ta.gtime + v.gtime, tr.guest + as_guest},
                          {"system", ta.stime + v.stime, sys}};
              for (const auto& x : cats)
                // (without steal accounting the trace's steal stays in whatever was running)
                if (x.got > x.truth + tr.steal || x.got + pend < x.truth)
                  RC_FAIL(report(cpu, c.cfg,
                                 std::string("task ") + x.name + " " + std::to_string(x.got) + " vs truth " +
                                     std::to_string(x.truth) + " (pending " + std::to_string(pend) + ")",
                                 t));
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
