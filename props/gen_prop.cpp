// Gen vtime outcomes over every legal CPU x gen config (arch::combos()), against the
// ground-truth ledger: per task, the vtime clock time consumed plus the pending delta equals the
// task's true on-CPU time on the ns variants (every CPU nohz_full, no switch gap), and within
// one jiffy per context switch of it on the jiffy variant; residues stay below TICK_NSEC;
// cpustat never shows more than the CPU's elapsed time. Per category (user, guest, system) and
// per residue, on every variant, with steal and irq time, and for tasks that start with
// residues or inherit them at fork: what each task flushed to its sinks and what its residues
// hold equal a split computed from the trace alone by the kernel's rule (split_by_flush below).
#include <algorithm>
#include <map>

#include "props/props.hpp"

namespace kacct::props {
namespace {

// The kernel's per-category split of vtime (kernel/sched/cputime.c, 4.x-6.12), computed from the
// trace: a task's vtime is cut into stretches at the events where its vtime state (idle, user,
// system, guest) changes or the task is switched out, plus, before 4.8, at each irq boundary
// (the irq hooks). At each cut get_vtime_delta() takes the stretch (ns; Jiffy: whole jiffies
// since the snapshot) less account_other_time(delta): first all steal pending on the CPU
// (paravirt steal clock - prev_steal_time), then irq time pending (IRQ_TIME_ACCOUNTING: hardirq
// and non-ksoftirqd softirq time, measured on sched_clock, so steal inside an irq is in it
// too), each up to what is left of the delta; what does not fit stays pending for the next cut
// on that CPU, whichever task and category it is. The rest goes to the stretch's category (Accum:
// into its residue, flushed once it reaches TICK_NSEC). So steal and irq time move between
// categories exactly when the kernel moves them; nothing is read from the model's state.
struct Split {
  std::uint64_t user = 0, guest = 0, sys = 0;  // handed to account_user/guest/system_time
  std::uint64_t ru = 0, rs = 0, rg = 0;        // residues (Accum)
};
enum class Cat : std::uint8_t { Idle, User, Sys, Guest };

std::map<std::uint64_t, Split> split_by_flush(const trace::Trace& t, const sim::ModelCfg& m) {
  const auto& g = m.gen;
  const auto& tc = m.tick;
  const bool jiffy = g.variant == model::GenVariant::Jiffy, accum = g.variant == model::GenVariant::Accum;
  std::map<std::uint64_t, Split> out;
  for (const auto& dcl : t.header.tasks) {
    auto& s = out[dcl.tid];
    s.user = dcl.utime.value_or(0);
    s.sys = dcl.stime.value_or(0);
    s.ru = dcl.vtime_utime.value_or(0);
    s.rs = dcl.vtime_stime.value_or(0);
    s.rg = dcl.vtime_gtime.value_or(0);
  }
  struct Cpu {
    std::uint64_t snap = 0;            // the running task's vtime snapshot (ns, or jiffies)
    std::uint64_t steal = 0, irq = 0;  // pending other time
  };
  std::vector<Cpu> cpus(t.header.ncpus);
  trace::Tracker tr(t.header);
  auto is_ksoftirqd = [](const trace::TaskState& x) { return x.kthread && x.comm.rfind("ksoftirqd/", 0) == 0; };
  auto cat = [&](const trace::CpuContext& x) {
    if (x.current == 0 || x.offline) return Cat::Idle;
    if (x.irq_depth > 0 || x.in_softirq)  // an irq from user mode left it first (user_exit_irqoff)
      return x.mode == trace::Mode::Guest && !g.guest_exit_before_irq ? Cat::Guest : Cat::Sys;
    return x.mode == trace::Mode::User ? Cat::User : x.mode == trace::Mode::Guest ? Cat::Guest : Cat::Sys;
  };
  auto add = [&](std::uint64_t& flushed, std::uint64_t& res, std::uint64_t a) {
    if (!accum) {
      flushed += a;
      return;
    }
    res += a;
    if (res >= tc.tick_nsec) flushed += res, res = 0;
  };
  auto cut = [&](std::uint32_t c, const trace::CpuContext& x, std::uint64_t ts) {
    auto& pc = cpus[c];
    const std::uint64_t now = jiffy ? ts / tc.tick_nsec : ts;
    const std::uint64_t delta = now > pc.snap ? (now - pc.snap) * (jiffy ? g.jiffy_ns : 1) : 0;
    pc.snap = std::max(pc.snap, now);
    std::uint64_t other = 0;
    if (g.other_time) {
      if (tc.steal) other = std::min(pc.steal, delta), pc.steal -= other;
      if (tc.irq_time) {
        const std::uint64_t i = std::min(pc.irq, delta - other);
        pc.irq -= i, other += i;
      }
    }
    const Cat k = cat(x);
    if (k == Cat::Idle) return;
    auto& s = out[x.current];
    if (k == Cat::User) add(s.user, s.ru, delta - other);
    if (k == Cat::Sys) add(s.sys, s.rs, delta - other);
    if (k == Cat::Guest) add(s.guest, s.rg, delta - other);
  };
  for (const auto& e : t.events) {
    const trace::CpuContext before = tr.cpu(e.cpu);
    const bool ksoft = is_ksoftirqd(tr.current(e.cpu));
    if (tr.apply(e)) break;
    const trace::CpuContext& after = tr.cpu(e.cpu);
    auto& pc = cpus[e.cpu];
    const std::uint64_t dt = e.ts - before.last_ts;
    if (tc.irq_time && (before.irq_depth > 0 || (before.in_softirq && !ksoft))) pc.irq += dt;
    if (e.kind == trace::Kind::Steal) pc.steal += e.a;
    if (e.kind == trace::Kind::Fork && g.fork_copies_residues) {
      const Split p = out[e.a];
      auto& ch = out[e.b];
      ch.ru = p.ru, ch.rs = p.rs, ch.rg = p.rg;
    }
    const bool boundary = e.kind == trace::Kind::IrqEnter || e.kind == trace::Kind::IrqExit ||
                          e.kind == trace::Kind::SoftirqEnter || e.kind == trace::Kind::SoftirqExit;
    if (before.current != after.current || cat(before) != cat(after) || (g.irq_hooks && boundary))
      cut(e.cpu, before, e.ts);
    if (e.kind == trace::Kind::Switch) {  // next's snapshot, `gap` after prev's flush
      const std::uint64_t at = e.ts + e.switch_gap.value_or(g.switch_gap);
      pc.snap = jiffy ? at / tc.tick_nsec : at;
    }
    if (e.kind == trace::Kind::CpuOnline && g.idle_init_on_online) pc.snap = jiffy ? e.ts / tc.tick_nsec : e.ts;
  }
  return out;
}

// Residues a declared task starts with (a trace cut from a longer run: perf_vtime's headers)
// and the times its task_struct already holds: below the smallest TICK_NSEC, so the Accum
// invariant (a residue is flushed once it reaches TICK_NSEC) holds from the start.
rc::Gen<std::vector<std::array<std::uint32_t, 5>>> gen_start_residues() {
  return rc::gen::container<std::vector<std::array<std::uint32_t, 5>>>(
      rc::gen::map(rc::gen::container<std::vector<std::uint32_t>>(5, rc::gen::inRange<std::uint32_t>(0, 900'000)),
                   [](const std::vector<std::uint32_t>& v) {
                     return std::array<std::uint32_t, 5>{v[0], v[1], v[2], v[3], v[4]};
                   }));
}

class GenProp : public CpuTest {};
KACCT_CPUS_WITH(GenProp, arch::Accounting::Gen);  // the CPUs with gen vtime configs

TEST_P(GenProp, VtimeMatchesLedger) {
  const arch::CpuFacts cpu = GetParam();
  std::vector<CfgCase> cfgs;
  for (auto& c : configs_of(cpu))
    if (c.cfg.acct == arch::Accounting::Gen) cfgs.push_back(c);
  ASSERT_FALSE(cfgs.empty()) << cpu.name;
  // Per-category checks run, by kind of config (the check must not be vacuous where it matters).
  std::uint64_t runs_steal = 0, runs_jiffy = 0, runs_residues = 0, runs_inherited = 0;
  check(
      [&] {
        const auto spec = *gen_spec(std::string(cpu.name));
        const auto actions = *gen_actions();
        const auto start = *gen_start_residues();
        const trace::Trace t0 = trace::build(spec, actions);
        // The same trace with starting residues and times (Accum configs: the other variants
        // keep no residues).
        trace::Trace t1 = t0;
        bool with_res = false;
        for (std::size_t j = 0; j < t1.header.tasks.size() && j < start.size(); ++j) {
          auto& d = t1.header.tasks[j];
          if (!start[j][0] && !start[j][1] && !start[j][2]) continue;
          d.vtime_utime = start[j][0], d.vtime_stime = start[j][1], d.vtime_gtime = start[j][2];
          d.utime = start[j][3], d.stime = start[j][4];
          with_res = true;
        }
        auto prog0 = sim::compile(t0);
        RC_ASSERT(prog0.ok());
        auto prog1 = with_res ? sim::compile(t1) : prog0;
        RC_ASSERT(prog1.ok());
        const auto truth = trace::ground_truth(t0);
        RC_ASSERT(truth.ok());
        const auto& L = truth.value();
        for (const auto& c : cfgs) {
          const auto& g = c.model.gen;
          const bool res = with_res && g.variant == model::GenVariant::Accum;
          const trace::Trace& t = res ? t1 : t0;
          const auto& prog = res ? prog1 : prog0;
          const auto r = sim::run(prog.value(), c.model, {.check = false});
          const auto* gr = r.backend_result<model::GenResult>();
          RC_ASSERT(gr != nullptr);
          std::uint64_t switches = 0;
          for (const auto& e : t.events) switches += e.kind == trace::Kind::Switch;
          bool all_nohz = true;
          for (std::uint32_t cc = 0; cc < t.header.ncpus; ++cc) all_nohz = all_nohz && g.nohz(cc);
          const auto split = all_nohz ? split_by_flush(t, c.model) : std::map<std::uint64_t, Split>{};
          bool inherited = false;
          for (std::size_t k = t.header.ncpus; k < prog.value().tasks.size(); ++k) {
            const auto tid = prog.value().tasks[k].tid;
            const auto it = L.task.find(tid);
            if (it == L.task.end()) continue;
            const auto& v = gr->vtime[k];
            const auto& s = gr->ctl[k];
            std::uint64_t pend = 0;
            if (s.state != model::VT_INACTIVE) {
              const std::uint64_t now =
                  g.variant == model::GenVariant::Jiffy ? L.end_ts / c.model.tick.tick_nsec : L.end_ts;
              if (now > v.starttime)
                pend = (now - v.starttime) * (g.variant == model::GenVariant::Jiffy ? g.jiffy_ns : 1);
            }
            // A forked child's copy of its parent's residues (copy_process()) and the residues a
            // declared task starts with are no time of its own in this trace.
            std::uint64_t started = 0;
            for (const auto& dcl : t.header.tasks)
              if (dcl.tid == tid)
                started = dcl.vtime_utime.value_or(0) + dcl.vtime_stime.value_or(0) + dcl.vtime_gtime.value_or(0);
            inherited = inherited || gr->inherited[k] != 0;
            const std::uint64_t total = v.consumed - gr->inherited[k] - started + pend, want = it->second.total();
            if (g.variant != model::GenVariant::Jiffy) {
              if (total != want)
                RC_FAIL(
                    report(cpu, c.cfg, "task vtime " + std::to_string(total) + " != truth " + std::to_string(want), t));
            } else {
              const std::uint64_t slack = (switches + 2) * g.jiffy_ns;
              if (total > want + slack || want > total + slack)
                RC_FAIL(report(cpu, c.cfg, "jiffy vtime off by more than a jiffy per switch", t));
            }
            // Per category and residue: exactly the kernel's split (split_by_flush). Guest time
            // is also user time (account_guest_time()).
            if (all_nohz) {
              const auto sp = split.find(tid);
              const Split want_s = sp == split.end() ? Split{} : sp->second;
              const auto& ta = r.tasks[k];
              const struct {
                const char* name;
                std::uint64_t got, want;
              } cats[] = {{"utime (incl. guest)", ta.utime, want_s.user + want_s.guest},
                          {"gtime", ta.gtime, want_s.guest},
                          {"stime", ta.stime, want_s.sys},
                          {"user residue", v.utime, want_s.ru},
                          {"system residue", v.stime, want_s.rs},
                          {"guest residue", v.gtime, want_s.rg}};
              for (const auto& x : cats)
                if (x.got != x.want)
                  RC_FAIL(report(cpu, c.cfg,
                                 "task " + std::to_string(tid) + " " + x.name + " " + std::to_string(x.got) +
                                     " != kernel split of the trace " + std::to_string(x.want) + " (pending " +
                                     std::to_string(pend) + ")",
                                 t));
            }
            const std::uint64_t lim = g.variant == model::GenVariant::Accum ? c.model.tick.tick_nsec : 1;
            if (v.utime >= lim || v.stime >= lim || v.gtime >= lim)
              RC_FAIL(report(cpu, c.cfg, "residue not below TICK_NSEC", t));
          }
          if (all_nohz) {
            runs_steal += c.model.tick.steal && g.other_time;
            runs_jiffy += g.variant == model::GenVariant::Jiffy;
            runs_residues += res;
            runs_inherited += inherited;
          }
          for (std::uint32_t cc = 0; cc < t.header.ncpus; ++cc) {
            std::uint64_t sum = 0;
            for (unsigned b : {model::USER, model::NICE, model::SYSTEM, model::IDLE, model::IOWAIT})
              sum += r.cpus[cc].cpustat[b];
            // A task's residues (< TICK_NSEC each of utime/stime/gtime) move with it and are flushed
            // on whichever CPU it runs when they fill up, so a CPU's cpustat can pass its elapsed
            // time by up to 3 TICK_NSEC per task; residues copied at fork count twice (the kernel
            // finding fork_inherited); declared times and residues a task starts with count too.
            const std::uint64_t carried = 3 * c.model.tick.tick_nsec * (prog.value().tasks.size() - t.header.ncpus);
            std::uint64_t declared = 0;
            for (const auto& dcl : t.header.tasks) declared += dcl.utime.value_or(0) + dcl.stime.value_or(0);
            if (sum > L.end_ts + c.model.tick.tick_nsec + carried + gr->fork_inherited + declared)
              RC_FAIL(report(cpu, c.cfg, "cpustat above elapsed time", t));
          }
        }
      },
      60);
  // Every kind of config the per-category check covers ran it (where the CPU has such configs).
  bool has_steal = false, has_jiffy = false;
  for (const auto& c : cfgs) {
    has_steal = has_steal || (c.model.tick.steal && c.model.gen.other_time);
    has_jiffy = has_jiffy || c.model.gen.variant == model::GenVariant::Jiffy;
  }
  EXPECT_TRUE(!has_steal || runs_steal > 0) << cpu.name;
  EXPECT_TRUE(!has_jiffy || runs_jiffy > 0) << cpu.name;
  EXPECT_GT(runs_residues, 0u) << cpu.name;
  EXPECT_GT(runs_inherited, 0u) << cpu.name;
}

}  // namespace
}  // namespace kacct::props
