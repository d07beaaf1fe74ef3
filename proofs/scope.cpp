// The scope of every verdict: what each model ranges over and what it leaves out, written once
// per model or mechanism, with additions where a job or claim ranges over less (a step, a
// scenario). Checked against docs/models/*.md, model/<mech>/, spec/ and the jobs and claims
// themselves; bounds and reduced widths are the verdicts' approximations, not repeated here.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "proofs/registry.hpp"

namespace kacct::proofs {

namespace {

enum class Kind {
  Model,  // key = proof model or mechanism name: every job and claim of it
  Job,    // key = prefix of a proof job's name
  Claim,  // key = prefix of a patch claim's name
};
struct Row {
  Kind kind;
  std::string_view key;
  std::vector<std::string> covers, omits;
};

// Said of every model below that has none of these events.
constexpr const char* kNoHotplug = "CPU hotplug: no CPU goes offline or comes back";
constexpr const char* kNoNmi = "NMIs (no NMI context or event)";
constexpr const char* kScenarioOnly = "every other workload: judged on the traces named here, not over all runs";

const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      // ---- tick (CONFIG_TICK_CPU_ACCOUNTING), docs/models/tick.md, proofs/jobs_tick.cpp
      {Kind::Model,
       "tick",
       {"per-CPU kernel_cpustat, steal clock, struct irqtime and rq clock of releases 4.11 on (cputime in ns)",
        "with and without IRQ_TIME_ACCOUNTING and paravirt steal, every HZ value of the table (arch/)",
        "stable point releases through the backport table (e.g. 108ad0999085 in 6.1.129 and 6.12.14)",
        "CPU hotplug on traces: a CPU going offline in its idle task and coming back; no accounting call runs for "
        "either (no proof job: no step), offline time is in no bucket"},
       {"releases before 4.11 (cputime_t in jiffies, whole-tick steal and irq sampling)",
        "32-bit unsigned long arithmetic (TICK_NSEC * ticks in 32 bits, the ULONG_MAX cap on other time)",
        "NO_HZ_FULL (gen_vtime is its own model)", "the idle-cputime refactor and the irqtime static key of 2026",
        kNoNmi,
        "CPU hotplug beyond the cpustat side: tick_sched's idle_sleeptime over hotplug and /proc/stat's fallback to "
        "cpustat idle for an offline CPU (no tick_sched in the model), steal the hypervisor reports for an offline "
        "period, 6.12's extra update_rq_clock() in sched_cpu_dying()"}},
      {Kind::Job,
       "tick.",
       {"one step of account_process_tick(), account_idle_ticks(n), irqtime_account_irq() or update_rq_clock() from "
        "any per-CPU and task state satisfying the invariants"},
       {"the context switch's update_curr(), task exit and the readers (sum_exec_runtime and cputime_adjust are not "
        "in these jobs)"}},
      {Kind::Claim,
       "tick.steal_not_caught_up",
       {"one update_rq_clock() with steal from any rq state on the release after the patch (Z3); a two-update "
        "scenario on the release before for contrast"},
       {"the tick's own steal_account_process_time() (unchanged by the patch)"}},
      {Kind::Job,
       "tick.account_process_tick",
       {"14 CPU contexts at the tick (user, nice, kernel, kernel in hardirq or softirq, idle, iowait, idle in "
        "hardirq or softirq, ksoftirqd, ksoftirqd serving, guest, guest nice, guest in hardirq)"},
       {}},
      {Kind::Job,
       "tick.account_idle_ticks",
       {"the NO_HZ idle exit's batch: any tick count n (jiffies - idle_jiffies) at once"},
       {"the jiffies bookkeeping of tick_nohz_idle_enter/exit itself (n is arbitrary, not derived from it)",
        "with irq time, n >= 2^31 (irqtime_account_idle_ticks(int) truncates it; 24.8 days at HZ=1000; the "
        "concrete model follows the kernel there)"}},
      {Kind::Job,
       "tick.irqtime_account_irq",
       {"a hardirq or softirq boundary leaving task, hardirq or softirq context"},
       {}},

      // ---- cputime_adjust(), docs/models/cputime-adjust.md, proofs/jobs_cputime.cpp
      {Kind::Model,
       "cputime_adjust",
       {"cputime_adjust() / scale_stime() of the four eras (per-field max, goto update, clamp always, clamp to rtime) "
        "with the 32-bit balancing loop, the 2020 generic C and the exact 128-bit division"},
       {"where stime, utime and rtime come from (tick sampling, vtime, sum_exec_runtime: the other models)",
        "the jiffy units of releases before 4.11 (every era runs on nanoseconds)",
        "arch overrides of mul_u64_u64_div_u64 other than x86-64 mulq/divq"}},
      {Kind::Job,
       "cputime_adjust.",
       {"one call from any prev_cputime state and any stime, utime, rtime (division abstracted); a violation is "
        "confirmed by a call sequence from prev = 0"},
       {}},
      {Kind::Claim,
       "cputime_adjust.",
       {"each CPU class of the table whose division differs (exact or generic), on the release after the patch "
        "(the release before for contrast)"},
       {}},
      {Kind::Claim,
       "cputime_adjust.exact_ratio",
       {"100,000 pseudo-random (stime, utime, rtime) inputs per routine; exact 128-bit division by construction"},
       {"inputs outside the search (an approximate routine that is never found wrong is unknown, not holds)"}},
      {Kind::Claim,
       "cputime_adjust.monotonic",
       {"one call from any prev state (Z3); a violation confirmed by calls from prev = 0"},
       {}},
      {Kind::Claim,
       "cputime_adjust.sum_is_rtime",
       {"one call from any prev state (Z3); a violation confirmed by calls from prev = 0"},
       {}},
      {Kind::Claim,
       "cputime_adjust.stime_le_rtime",
       {"one call from any prev state (Z3); a violation confirmed by calls from prev = 0"},
       {}},
      {Kind::Claim,
       "cputime_adjust.fix_changes_nothing_else",
       {"200000 random calls from prev = 0 on the release without and with the kacct-local clamp"},
       {"calls from a prev state other than 0"}},

      // ---- division lemmas (mul_u64_u64_div_u64), proofs/jobs_cputime.cpp
      {Kind::Model,
       "division",
       {"the division routines of cputime_adjust: 32-bit balancing loop, 2020 generic C mul_u64_u64_div_u64, exact "
        "128-bit; the facts of exact floor division (exhaustive at 8 bits, proved by Z3 over the integers at 64 bits) "
        "and quotient <= "
        "rtime per routine"},
       {"other callers of mul_u64_u64_div_u64 than scale_stime()", "arch overrides other than x86-64 mulq/divq"}},

      // ---- lazy-TLB mm references, docs/models/lazy-tlb.md, proofs/jobs_lazytlb.cpp
      {Kind::Model,
       "lazy_tlb",
       {"mm_users, mm_count, mm_cpumask, active_mm and rq->prev_mm under refcounting (generic), shootdown "
        "(ppc64-radix, ppc64-hash, 6.4+) and pre-6.4 kthread_use_mm",
        "the event kinds switch, idle, finish, exit, exec, fork, forkvm, use, unuse, outside mmget, mmput, mmgrab, "
        "mmdrop, and the radix trim flush; IPIs delivered synchronously inside the sender's event, to online CPUs only",
        "CPU hotplug of any CPU but 0, from its idle task: offline (sched_force_init_mm from 21641bd9a7a7, 6.14; "
        "__cpu_disable leaving cpu_online_mask; Book3S-64 cleanup_cpu_mmu_context/clear_tasks_mm_cpumask), dead "
        "(idle_task_exit with finish_cpu's active_mm reset and mmdrop_lazy_tlb) and online (start_secondary on "
        "init_mm), interleaved with every other event of the other CPUs"},
       {"CPU hotplug beyond that: a CPU going offline while one of its tasks still runs (the scheduler's migration "
        "and balance_push are taken as done), the hotplug threads as tasks of their own (folded into the idle task), "
        "idle_task_exit and finish_cpu as separate events, the boot CPU going offline, failed or rolled-back "
        "hotplug, and (explorer, step jobs) more than one CPU offline at a time",
        "the model's powerpc trims masks at offline in every release (the kernel since 01b0f0eae081, 5.11)",
        "an event interrupted midway (each runs atomically, e.g. exit_lazy_flush_tlb with irqs enabled before "
        "dfaed3e1fa70)",
        "PREEMPT_RT's RCU-deferred mmdrop_sched and mmput_async",
        "x86's cpu_tlbstate.loaded_mm (only active_mm), membarrier barriers, mm_cid, coprocessor flushes, init_mm's "
        "own refcount",
        kNoNmi}},
      {Kind::Job,
       "lazy_tlb.",
       {"one event of each kind in the refcount (generic 6.12), pre-6.4 (ppc64-radix 6.3) and shootdown "
        "(ppc64-radix 6.14) modes, and the hotplug events offline, dead, online in shootdown-6.12 (before "
        "21641bd9a7a7), from reachable structural states that satisfy the structural invariants with the hotplug "
        "strengthening (the approximations say which), with any counter values satisfying accounting and every "
        "outcome of the step's dec_and_test decisions"},
       {"ppc64-hash in these jobs (the claims explore it)",
        "hotplug shapes beyond the first few per event kind (the explorer covers every reachable one)"}},
      {Kind::Claim,
       "lazy_tlb.as_safe_as_before",
       {"every reachable state of a 2-CPU, 2-task, 2-mm world on ppc64-radix before and after the patch, and the Z3 "
        "step jobs in both releases"},
       {"larger worlds (more CPUs, tasks or mms)"}},
      {Kind::Claim,
       "lazy_tlb.shootdown_as_safe_as_refcount",
       {"every reachable state of a 2-CPU, 2-task, 2-mm world on ppc64-radix before and after, ppc64-hash and "
        "generic after, and the Z3 step jobs in both releases"},
       {"larger worlds (more CPUs, tasks or mms)"}},
      {Kind::Claim,
       "lazy_tlb.hotplug_safe",
       {"every reachable state of a 2-CPU, 2-task, 2-mm world with CPU 1 going offline and back, on ppc64-radix "
        "and ppc64-hash after the patch and ppc64-radix before it, and the Z3 step jobs on the hotplug shapes in both "
        "releases"},
       {"larger worlds (more CPUs, tasks or mms)",
        "hotplug racing with a shootdown IPI in flight (events are atomic)"}},
      {Kind::Claim,
       "lazy_tlb.free_timing",
       {"the pin script (2 CPUs, 2 tasks, 1 mm: CPU 1 idles lazily on the mm, its last task exits on CPU 0, which "
        "then makes 250 idle and kthread round trips) and zombie mms in every reachable state of the 2-CPU, 2-task, "
        "2-mm world after the patch"},
       {"how long a real idle CPU stays lazy (the script fixes it)"}},
      {Kind::Claim,
       "lazy_tlb.ipi_cost",
       {"the seed scenario on ppc64-radix: 16 CPUs and threads of one process, 4 idle trips each, then exit; IPIs "
        "per event in the explored 2-CPU, 2-task, 2-mm worlds"},
       {kScenarioOnly, "the time an IPI or a cache-line transfer costs (counts only)"}},

      // ---- PSI irq pressure, docs/models/psi-irq.md, proofs/jobs_psi.cpp
      {Kind::Model,
       "psi_irq",
       {"which irq and softirq time (IRQ_TIME_ACCOUNTING) PSI charges to which cgroup, from which call site, under "
        "which lock, as in 6.1, 6.10, 6.12 and 6.17"},
       {"nested irqs (irqs do not nest in the model)", "clock skew between CPUs (one sched_clock)",
        "proxy execution's rq->donor (taken as rq->curr) and the boot-time psi=0 of 0c2924079f5a", kNoNmi, kNoHotplug}},
      {Kind::Job,
       "psi_irq.",
       {"one step (remote and idle wakeup, clock_gettime, sched_tick, schedule across, within, to and from idle, "
        "cgroup move, pressure on) on CPU 0 from any clock, irq-time and PSI counter values satisfying the "
        "invariants, any irq time pending"},
       {"an irq or another CPU's step inside a step (each step runs whole)"}},
      {Kind::Claim,
       "psi_irq.",
       {"the step jobs of the nearest modelled version at or below the release after the patch"},
       {}},
      {Kind::Claim,
       "psi_irq.same_charge",
       {"three scenarios: irq while idle, cgroup move with irq pending, irq between ticks"},
       {kScenarioOnly}},
      {Kind::Claim,
       "psi_irq.lock_held",
       {"from 6.10 also the race script: a tick concurrent with a cgroup move (race_tick_move) under the pre-merge "
        "draft"},
       {}},
      {Kind::Claim,
       "psi_irq.idle_irq_not_charged",
       {"the kacct-local fix's witness script (irq while idle, then a task in a child group) without and with it"},
       {kScenarioOnly, "the u32 wrap of one delta >= 2^32 ns on a nohz_full CPU (not this fix's)"}},
      {Kind::Claim,
       "psi_irq.fix_changes_nothing_else",
       {"four scripts without and with the kacct-local fix: three without idle irq time, the witness"},
       {kScenarioOnly}},

      // ---- powerpc native vtime, docs/models/native-vtime.md, proofs/jobs_native.cpp
      {Kind::Model,
       "native_vtime",
       {"powerpc VIRT_CPU_ACCOUNTING_NATIVE: struct cpu_accounting_data in TB and SPURR ticks, per CPU (PPC64) or "
        "per task with the switch hand-over (PPC32), the epochs 4.7 .. 6.12 of the table",
        "CPU hotplug: a CPU going offline (no hook) and coming back, with vtime_reset() from "
        "secondary_cpu_time_init() (6.12.101+) or without it"},
       {"other architectures' native vtime (e.g. s390): powerpc only",
        "a dispatch-trace-log ring that overflows, and whether the hypervisor logs steal for a ceded (idle) vCPU",
        "PPC32 fork's inherited accounting data (the child starts at zero)", "soft-NMIs and machine checks",
        "CPU hotplug beyond bring-up's vtime_reset(): DTL entries for an offline period, start_secondary()'s "
        "other early work"}},
      {Kind::Job,
       "native_vtime.",
       {"one kernel-side hook (user entry and exit, kernel, guest, hardirq, softirq, idle, vtime_flush, PPC32 "
        "hand-over, bring-up's vtime_reset) from any accounting state, 32 and 64-bit words; the SPURR split; tb_to_ns "
        "at the table's "
        "timebase rates"},
       {"a hook interrupted by another (each hook runs whole)"}},
      {Kind::Job,
       "native_vtime.vtime_delta_scaled.",
       {"one split at full width from any state; where the obligations hold, the division abstracted by the fact "
        "native_vtime.lemma.udiv_product_le (itself a job)"},
       {}},
      {Kind::Job,
       "native_vtime.lemma.",
       {"udiv(a * b, c) <= a for c != 0, a * b < 2^W, b <= c at every width (real arithmetic, nlsat; the bit-vector "
        "statement rechecked at 8 and 10 bits)"},
       {}},
      {Kind::Job,
       "native_vtime.tb_to_ns.",
       {"every 64-bit TB value t whose exact ns fits in 64 bits, per TB rate of the table, in integer arithmetic (the "
        "translation checked against the model's tb_to_ns at 78 values per rate)"},
       {"t with exact ns >= 2^64 (584 years of TB; the kernel's result wraps there)"}},
      {Kind::Claim,
       "native_vtime.unscaled_unchanged",
       {"each kernel-side hook from any state (Z3) with and without the scaled code, and generated traces per "
        "dropped CPU"},
       {}},
      {Kind::Claim,
       "native_vtime.scaled_equals_unscaled",
       {"a kernel-then-user trace per CPU that lost the scaled code (k=1000, u=3000, s=2000 TB ticks)"},
       {kScenarioOnly}},
      {Kind::Claim,
       "native_vtime.boot_starttime",
       {"a trace per CPU kind (POWER9 per CPU, MPC8xx per task) idling 10 ms from a boot TB of 1 s"},
       {kScenarioOnly, "secondary CPUs brought up later than the trace's first event on them"}},
      {Kind::Claim,
       "native_vtime.split_no_overflow",
       {"the smallest overflowing split (dS * s wraps at the CPU's word width) as a trace per CPU that lost the "
        "scaled code"},
       {"other overflowing inputs (one is enough for violated)"}},
      {Kind::Claim,
       "native_vtime.idle_steal_once",
       {"the kacct-local fix's witness trace (a POWER9 SPLPAR CPU idling with DTL steal) without and with it"},
       {kScenarioOnly, "whether the hypervisor logs dispatch steal for a ceded (idle) vCPU"}},
      {Kind::Claim,
       "native_vtime.fix_changes_nothing_else",
       {"40 generated traces (POWER9 with steal, or PPC970) on 6.12 without and with the kacct-local fix: verdicts, "
        "kcpustat and the unscaled task times"},
       {kScenarioOnly}},

      // ---- gen vtime (VIRT_CPU_ACCOUNTING_GEN, nohz_full), docs/models/gen-vtime.md, proofs/jobs_gen.cpp
      {Kind::Model,
       "gen_vtime",
       {"a nohz_full CPU's vtime: user exit and enter, guest enter and exit, context switch, the <= 4.7 irq hooks, "
        "tick, steal and irq-time boundaries (4.11+), task exit and fork, in the snapshot, jiffy, accumulated and "
        "accumulated-with-states variants",
        "the kernel entries a trace implies: a switch in user mode (user exit before it, user enter for a next "
        "resuming in user mode) and an irq in guest mode (in guest state, or after KVM's vtime guest exit and "
        "before its next vtime guest entry, per platform and release: GenCfg::guest_exit_before_irq)",
        "CPU hotplug: a nohz_full CPU going offline (no hook) and coming back, with the idle task's "
        "vtime_init_idle() (before f1a0a376ca0c: 5.14, 5.10.50, 5.12.17, 5.13.2) or without it"},
       {"housekeeping CPUs (tick accounting: the tick model)",
        "irq time under gen before 4.11 (configurations rejected)",
        "the timekeeper's own jiffies update (jiffies advance at multiples of TICK_NSEC from ts 0)", kNoNmi,
        "CPU hotplug beyond the idle task's vtime: the nohz_full mask is fixed, context tracking on the dying CPU",
        "KVM Book3S PR on Book3S-64 (HV's order of an irq in guest mode is modelled)"}},
      {Kind::Job,
       "gen_vtime.",
       {"one step (user exit, user enter, guest enter, guest exit, irq-exit hook, task switch, and before 5.14 the "
        "bring-up's vtime_init_idle) of the eras 4.4, "
        "4.7, 4.9, 5.4, 6.1 and 6.1 with irq time and steal, at HZ=250, from any state satisfying the invariants",
        "gen_vtime.mul_distributes[era] (jiffy eras): x * jiffy_ns distributes over +, - and ite, for all 64-bit "
        "operands (the rewrite the jiffy eras' cpu_conserves jobs use)",
        "gen_vtime.other_time_le[era] (steal and irq time): account_other_time(m) takes at most m, for all 64-bit "
        "operands (a fact the monotonic jobs of that era assume)"},
       {"task exit and fork (traces only), and the tick and irq-time boundary steps (proved in the tick model)",
        "HZ values other than 250 (jiffy_ns and TICK_NSEC are those of HZ=250)"}},
      {Kind::Claim,
       "gen_vtime.no_time_lost",
       {"the step jobs of the eras with the variant of the release after the patch (task_conserves, "
        "cpu_conserves), and for the jiffy variant the lemma gen_vtime.mul_distributes they use"},
       {"task exit and fork (not steps of these jobs)"}},
      {Kind::Claim,
       "gen_vtime.frederic_loops",
       {"two traces at HZ=1000: the brk loop (1500 ns in brk, 200 ns user) and Frederic's user loop with the tick "
        "mid-jiffy"},
       {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.attribution_bound",
       {"the aligned-tick user loop at HZ=250 (irq from user just before jiffies move)"},
       {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.aligned_tick_user_loop",
       {"the aligned-tick user loop at HZ=250 (irq from user just before jiffies move)"},
       {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.fewer_clock_reads",
       {"a 20,000-syscall loop at HZ=1000, counts per syscall"},
       {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.reader_monotonic",
       {"a 40-syscall loop at HZ=250, task_cputime and kcpustat read after every event"},
       {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.fork_no_double_count",
       {"one trace: a task with unflushed residues forks"},
       {kScenarioOnly}},
      {Kind::Claim, "gen_vtime.seq_brackets", {"one trace: idle -> task -> idle -> task"}, {kScenarioOnly}},
      {Kind::Claim,
       "gen_vtime.hotplug_online_time_kept",
       {"one two-CPU trace: a nohz_full CPU goes offline in its idle task, comes back, switches to a task"},
       {kScenarioOnly, "a CPU dying outside its idle task; nohz_full CPUs other than CPU 1"}},
      {Kind::Claim,
       "gen_vtime.guest_irq_no_time_lost",
       {"one x86-64 trace: a 500 us host irq while a vCPU task is in guest mode, without irq time accounting"},
       {kScenarioOnly, "other platforms' KVM orders (Book3S-64 HV, Book3E, PR: per platform in gen_cfg, not per patch)",
        "with IRQ_TIME_ACCOUNTING the irq is irq time either way (not judged here)"}},
      // kacct-local proposed fixes (arch/patches.hpp `local` rows, proofs/claims_fixes.cpp)
      {Kind::Claim,
       "gen_vtime.fix_changes_nothing_else",
       {"40 generated x86-64 traces on the release without and with the fix: verdicts, kcpustat and task times"},
       {kScenarioOnly, "the exit half of the fork finding (a dead task's residues), which the fix leaves as is"}},
  };
  return rows;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& s : from)
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
}

Scope collect(std::string_view model, Kind kind, std::string_view name) {
  Scope s;
  for (const auto& r : table())
    if ((r.kind == Kind::Model && r.key == model) || (r.kind == kind && name.starts_with(r.key))) {
      append(s.covers, r.covers);
      append(s.omits, r.omits);
    }
  return s;
}

}  // namespace

Scope job_scope(std::string_view model, std::string_view job) { return collect(model, Kind::Job, job); }

Scope claim_scope(arch::Mechanism m, std::string_view claim) {
  return collect(arch::mechanism(m).name, Kind::Claim, claim);
}

Scope model_scope(std::string_view model) { return collect(model, Kind::Job, std::string(model) + "."); }

}  // namespace kacct::proofs
