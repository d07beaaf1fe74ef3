// The native vtime backend of the trace machine: turns trace events into the powerpc hooks
// (user entry/exit, vtime_account_irq's paths, vtime_task_switch, the tick's vtime_flush, DTL
// steal) on the per-CPU (PPC64) or per-task (PPC32) accounting data, in the kernel's order.
#include <fmt/format.h>

#include <algorithm>

#include "arch/registry.hpp"
#include "model/sim/machine_impl.hpp"
#include "spec/native_vtime.hpp"

namespace kacct::sim {
using namespace model::native;

namespace {
model::native::NativeCfg native_cfg(const arch::CpuFacts& cpu, const arch::Config& cfg) {
  NativeCfg n;
  n.word_bits = cpu.word_bits;
  n.per_task = cpu.isa == arch::Isa::PPC32;
  n.scaled = arch::native_scaled_cputime(cpu, KACCT_MUTANT(335, cfg.version, arch::next_mainline(cfg.version)));
  n.source = KACCT_MUTANT(337,
                          cpu.spurr  ? ScaledSource::Spurr
                          : cpu.purr ? ScaledSource::Purr
                                     : ScaledSource::Timebase,
                          cpu.purr    ? ScaledSource::Purr
                          : cpu.spurr ? ScaledSource::Spurr
                                      : ScaledSource::Timebase);
  // cpu_has_feature() folds to false when the feature is outside CPU_FTRS_POSSIBLE: every PPC32
  // and Book3E-64 build; Book3S-64 tests it at run time (patched branch).
  n.source_folded = cpu.platform != arch::Platform::PPC_BOOK3S_64;
  n.flush_epoch = cfg.version >= KACCT_MUTANT(334, arch::v(4, 11), arch::v(4, 12));
  n.copy_startspurr = n.per_task && n.scaled && n.flush_epoch;  // 4.11..4.19 on PPC32
  n.zero_on_switch = n.per_task && !n.flush_epoch;              // 4.7..4.10
  n.splpar = cfg.steal && arch::native_splpar(cpu);
  n.starttime_init =
      arch::applied("ppc-vtime-boot-starttime", KACCT_MUTANT(336, cfg.version, cfg.version.series()));  // 6.12.101+
  n.tb_hz = cpu.tb_hz;
  const auto sc = tb_scale_of(cpu.tb_hz);
  n.tb_scale = sc.scale;
  n.tb_shift = sc.shift;
  return n;
}

template <unsigned W>
class NativeBackend {
 public:
  using UL = typename C::template U<W>;
  using A = Acct<C, W>;

  // cputime_adjust() and task_cputime_adjusted() are the identity under NATIVE.
  static constexpr ReadRules reads{.cputime_adjust = false};
  using Result = NativeResult;

  explicit NativeBackend(Core& k) : k_(k), cfg_(k.cfg.native) {
    const auto n = k_.p.header.ncpus;
    A z = zero_acct<C, W>(k_.d);
    accts_.assign(cfg_.per_task ? k_.p.tasks.size() : n, z);
    out_.task_scaled.assign(k_.p.tasks.size(), Scaled<C>{0, 0});
    out_.tb_elapsed.assign(n, 0);
    out_.tb_flushed.assign(n, 0);
    flushed_.assign(n, 0);
    conversions_.assign(n, 0);
    dtl_.resize(n);
    origin_.assign(n, 0);
    overcount_.assign(n, 0);
    hw_.assign(n, HwLast{});
    steal_wrapped_.assign(n, false);
    started_.assign(n, false);
    tb_sinks_cpu_.assign(n, TbSinks<C, W>{});
    for (auto& s : tb_sinks_cpu_) zero_sinks(s);
    tb_sinks_task_.resize(k_.p.tasks.size());
    for (auto& s : tb_sinks_task_) zero_sinks(s);
    if (k_.o.check) cost_.split_log = &splits_;
  }
  // A streamed program forked tasks (machine_impl.hpp): they start as the constructor starts them.
  void grow() {
    const auto nt = k_.p.tasks.size();
    if (cfg_.per_task) accts_.resize(nt, zero_acct<C, W>(k_.d));
    out_.task_scaled.resize(nt, Scaled<C>{0, 0});
    const auto old = tb_sinks_task_.size();
    tb_sinks_task_.resize(nt);
    for (auto j = old; j < nt; ++j) zero_sinks(tb_sinks_task_[j]);
    tb_scaled_.resize(nt, Scaled<C>{0, 0});
  }

  struct Snapshot {
    A acct;
    CpuAcct<C> cpu;
    TaskAcct<C> task;
  };
  Snapshot snapshot(std::uint32_t cpu, std::uint32_t task) const {
    return {acct_of(cpu, task), k_.r.cpus[cpu], k_.r.tasks[task]};
  }

  KACCT_INLINE void event(std::size_t i, const CEvent& e, const CpuCtx& x) {
    const std::uint32_t cpu = e.cpu;
    const std::uint64_t ts_tb = derive(e.ts, cfg_.tb_hz);  // once an event: one divq
    const std::uint64_t now64 = tb64_at(i, e, ts_tb);
    const UL now = UL(now64);
    auto& h = hw_[cpu];
    h.now64 = now64;
    if (W < 64 && !h.wrapped && now64 - h.last_flush64 >= (std::uint64_t{1} << (W % 64))) [[unlikely]] {
      // An unflushed stretch of 2^W TB ticks or more: the W-bit buckets and deltas wrap (on
      // PPC32: TBL-based deltas, e.g. a u32 idle_time over many tickless wake-ups).
      stop_ns_bounded(cpu, i, "native_vtime.word_wrap");
      h.wrapped = true;
      finding(i, "native_vtime.word_wrap", [&] {
        return fmt::format("cpu {}: {} TB ticks since the last flush >= 2^{}: {}-bit accounting fields wrap", cpu,
                           now64 - h.last_flush64, W, W);
      });
    }
    const UL spurr = spurr_at(i, e, now, ts_tb);
    now_ = now;
    cur_event_ = i;
    if (unstarted_ != 0 && !started_[cpu]) [[unlikely]]
      start(cpu, now, spurr);
    flushed_step_ = false;
    // The CPU's context (PPC32: its idle task's) before the event, read only while a CPU came
    // online with offline time not yet counted (the test after the switch below).
    const bool pending = offline_pending_any_;
    const UL idle_start = pending ? accts_[cpu].starttime : UL(0);
    const auto cur = x.cur;
    const bool user = !kernel_side(x);
    switch (e.kind) {
      case Kind::SyscallEnter:
      case Kind::ExcEnter: enter(cpu, cur, now); break;
      case Kind::SyscallExit:
      case Kind::ExcExit: ret_user(cpu, cur, now, spurr); break;
      case Kind::IrqEnter:
        if (user) enter(cpu, cur, now);
        side(cpu, cur, cls(x), now, spurr);
        break;
      case Kind::IrqExit:
        side(cpu, cur, Kctx::Hardirq, now, spurr);
        if (x.irq_depth == 1 && !x.softirq && x.mode == Mode::User) ret_user(cpu, cur, now, spurr);
        break;
      case Kind::SoftirqEnter:
        if (user) enter(cpu, cur, now);
        side(cpu, cur, cls(x), now, spurr);
        break;
      case Kind::SoftirqExit:
        side(cpu, cur, Kctx::Softirq, now, spurr);
        if (x.irq_depth == 0 && x.mode == Mode::User) ret_user(cpu, cur, now, spurr);
        break;
      case Kind::GuestEnter: side(cpu, cur, Kctx::Kernel, now, spurr); break;  // then PF_VCPU is set
      case Kind::GuestExit: side(cpu, cur, Kctx::Guest, now, spurr); break;    // PF_VCPU still set
      case Kind::Tick:
        // timer interrupt: (user entry), irq entry accounting, vtime_flush(current) from
        // account_process_tick(), irq exit accounting, (user exit); then scheduler_tick().
        if (user) enter(cpu, cur, now);
        side(cpu, cur, cls(x), now, spurr);
        flush(cpu, cur, x);
        side(cpu, cur, Kctx::Hardirq, now, spurr);
        if (user) ret_user(cpu, cur, now, spurr);
        k_.sched_clock_update(cpu, e.ts);
        break;
      case Kind::Switch: {
        // vtime_task_switch(prev) from finish_task_switch(): idle or kernel path, flush, PPC32 hand-over.
        if (user) enter(cpu, cur, now);
        side(cpu, cur, k_.is_idle(cur) ? Kctx::Idle : Kctx::Kernel, now, spurr);
        flush(cpu, cur, x);
        const auto next = e.arg;
        if (cfg_.per_task) {
          if (cfg_.scaled && !cfg_.copy_startspurr && accts_[next].startspurr != accts_[cur].startspurr)
            finding(i, "native_vtime.stale_startspurr", [&] {
              return fmt::format(
                  "PPC32 hand-over copies starttime but not startspurr ({} vs {}): the incoming task's "
                  "next SPURR delta includes its time off the CPU",
                  accts_[next].startspurr, accts_[cur].startspurr);
            });
          hand_over(k_.d, cfg_, accts_[cur], accts_[next], cost_);
        }
        k_.sched_clock_update(cpu, e.ts);
        if (!k_.is_idle(next)) k_.r.tasks[next].exec_start = k_.r.cpus[cpu].rq.clock_task;
        if (k_.saved_mode[next] == Mode::User) ret_user(cpu, next, now, spurr);
        break;
      }
      case Kind::CpuOffline:  // no accounting hook: the CPU dies in its idle loop
        tb_offline_[cpu] = now;
        break;
      case Kind::CpuOnline: online(cpu, now, spurr); break;
      case Kind::Steal:
        if (cfg_.splpar) {  // the hypervisor logs a dispatch entry: its TB and the ticks waited
          const std::uint64_t ticks = std::uint64_t((unsigned __int128)k_.p.wide[e.arg] * cfg_.tb_hz / 1'000'000'000u);
          dtl_[cpu].push_back({now, UL(ticks)});
        }
        break;
      default: break;
    }
    // Without vtime_reset() at bring-up the first hook after it takes the whole interval since
    // the last pre-offline hook, offline period included.
    if (pending && offline_pending_[cpu] != 0 && accts_[cpu].starttime != idle_start) [[unlikely]] {
      hotplug_inv_ = "native_vtime.hotplug_offline_not_accounted";
      hotplug_fix_ = "ppc-vtime-boot-starttime";
      hotplug_msg_ = fmt::format(
          "cpu {}: the first vtime delta after cpu_online includes the {} TB ticks the CPU was offline "
          "(no vtime_reset() in secondary_cpu_time_init() before 6.12.101)",
          cpu, offline_pending_[cpu]);
      hotplug_at_ = i;
      out_.hotplug_offline_tb += offline_pending_[cpu];
      offline_pending_[cpu] = 0;
      offline_pending_any_ = std::any_of(offline_pending_.begin(), offline_pending_.end(), [](UL v) { return v != 0; });
    }
  }

  void sync(std::uint32_t cpu, std::uint64_t now) { k_.sched_clock_update(cpu, now); }

  void check(std::size_t i, std::uint32_t cpu, std::uint32_t cur, const Snapshot& before) {
    auto& d = k_.d;
    if (hotplug_at_ == i) k_.violate(i, hotplug_inv_, hotplug_msg_, hotplug_fix_);
    const auto& x = k_.ctx[cpu];
    const A& a = acct_of(cpu, x.cur);
    const bool ks = kernel_side(x);
    // The context whose clock runs now: on PPC32 the current task's, else the CPU's.
    if (!spec::native::snapshots_monotone(d, before.acct, acct_of(cpu, cur), now_) && !(cfg_.per_task && x.cur != cur))
      k_.violate(i, "native_vtime.snapshots_monotone", "starttime or starttime_user moved backwards or past now");
    if (!spec::native::tb_conserved(d, a, ks, now_, flushed_[cpu], UL(origin_[cpu] - overcount_[cpu])))
      k_.violate(i, "native_vtime.tb_conserved",
                 fmt::format("pending {} + flushed {} + open {} != elapsed {} TB ticks", spec::native::pending_tb(d, a),
                             flushed_[cpu], spec::native::open_tb(d, a, ks, now_), UL(now_ - origin_[cpu])));
    if (cfg_.flush_epoch && !hw_[cpu].wrapped && !steal_wrapped_[cpu]) {
      const auto& c = k_.r.cpus[cpu];
      std::uint64_t ns = spec::tick::time_buckets(d, c) + c.cpustat[model::STEAL];
      if (!spec::native::ns_bounded(d, cfg_, ns, out_.tb_flushed[cpu], conversions_[cpu]))
        k_.violate(i, "native_vtime.ns_bounded",
                   fmt::format("{} ns flushed for {} TB ticks in {} conversions", ns, out_.tb_flushed[cpu],
                               conversions_[cpu]));
    }
    if (flushed_step_ && !spec::native::flush_zeroes(d, cfg_, acct_of(cpu, cur)))
      k_.violate(i, "native_vtime.flush_zeroes", "a bucket is nonzero right after vtime_flush");
    for (const auto& s : splits_) {
      spec::native::SplitIo<C, W> io{UL(s[0]), UL(s[1]), UL(s[2]), UL(s[3]), UL(s[4])};
      if (!spec::native::split_no_overflow(d, io))
        finding(i, "native_vtime.split_no_overflow", [&] {
          return fmt::format("dS={} s={} u={}: dS*s wraps at {} bits (s_sc={}, u_sc={})", s[0], s[1], s[2], W, s[3],
                             s[4]);
        });
      if (!spec::native::split_sum(d, io))
        k_.violate(i, "native_vtime.split_sum", "stime_scaled + utime_scaled != SPURR delta");
      if (!spec::native::split_bounds(d, io))
        k_.violate(i, "native_vtime.split_bounds", "a scaled share exceeds the SPURR delta");
      if (!spec::native::split_identity(d, io))
        k_.violate(i, "native_vtime.split_identity", "dS == s+u but the shares differ");
      if (cfg_.source == ScaledSource::Timebase && (io.s_sc != io.s || io.u_sc != io.u))
        finding(i, "native_vtime.scaled_equals_unscaled", [&] {
          return fmt::format("SPURR source is the timebase, yet the split gives ({}, {}) for (s, u) = ({}, {})", s[3],
                             s[4], s[1], s[2]);
        });
    }
    splits_.clear();
  }

  Result finish() {
    // the CPU's last TB: hw_[c].now64 (its low W bits), 0 if the CPU had no event
    for (std::size_t c = 0; c < hw_.size(); ++c) out_.tb_elapsed[c] = std::uint64_t(UL(UL(hw_[c].now64) - origin_[c]));
    for (const auto& a : accts_) out_.acct.push_back(to_json(a));
    out_.cost = cost_;
    out_.cost.split_log = nullptr;
    return std::move(out_);
  }

 private:
  struct DtlEntry {
    UL tb, ticks;
  };
  static void zero_sinks(TbSinks<C, W>& s) {
    s.cpustat.fill(0);
    s.utime = s.stime = s.gtime = 0;
  }
  static bool kernel_side(const CpuCtx& x) { return !(x.mode == Mode::User && x.irq_depth == 0 && !x.softirq); }
  Kctx cls(const CpuCtx& x) const {
    if (x.irq_depth > 0) return Kctx::Hardirq;
    if (x.softirq) return Kctx::Softirq;
    if (k_.is_idle(x.cur)) return Kctx::Idle;
    if (x.mode == Mode::Guest) return Kctx::Guest;
    return Kctx::Kernel;
  }
  A& acct(std::uint32_t cpu, std::uint32_t task) { return cfg_.per_task ? accts_[task] : accts_[cpu]; }
  const A& acct_of(std::uint32_t cpu, std::uint32_t task) const { return cfg_.per_task ? accts_[task] : accts_[cpu]; }

  // mftb(): the trace's tb= if given, else the TB derived from ts at the CPU's frequency (from
  // the last given value on this CPU, so that mixing given and derived values stays monotone);
  // PPC32 reads TBL only (the low W bits). Same for SPURR/PURR, at spurr_num/spurr_den of the rate.
  static std::uint64_t derive(std::uint64_t ts, std::uint64_t hz) { return muldiv_trunc(ts, hz, 1'000'000'000u); }
  // a * b / c truncated to 64 bits, as the plain 128-bit expression; one divq when the quotient
  // fits (every event derives its TB and SPURR: the libgcc call was a hot spot)
  static std::uint64_t muldiv_trunc(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    const unsigned __int128 n = (unsigned __int128)a * b;
    if (std::uint64_t(n >> 64) < c) [[likely]]
      return C::udiv_128_64(n, c);
    return std::uint64_t(n / c);
  }
  // ts_tb: derive(e.ts, tb_hz). A given value v at ts0 makes the TB v + derive(ts) - derive(ts0)
  // (mod 2^64): the offset v - derive(ts0) is kept, so that an event derives once.
  KACCT_INLINE std::uint64_t tb64_at(std::size_t i, const CEvent& e, std::uint64_t ts_tb) {
    auto& h = hw_[e.cpu];
    if (!k_.p.hw_mask.empty() && (k_.p.hw_mask[i - k_.p.base] & 1)) {
      h.tb_off = k_.p.hw[i - k_.p.base][0] - ts_tb;
      h.tb_set = true;
    }
    const std::uint64_t tb = h.tb_set ? h.tb_off + ts_tb : ts_tb;
    // mftb() never goes back: a given value below a TB this CPU already read (derived at the
    // nominal rate since an earlier given value that advanced more slowly) holds at that TB.
    return std::max(tb, h.now64);
  }
  // The same for SPURR/PURR (ts_tb as above; rate: the TB's, scaled by spurr_num/spurr_den).
  KACCT_INLINE UL spurr_at(std::size_t i, const CEvent& e, UL tb, std::uint64_t ts_tb) {
    if (cfg_.source == ScaledSource::Timebase) return tb;  // read_spurr(tb) returns its argument
    auto& h = hw_[e.cpu];
    const unsigned bit = cfg_.source == ScaledSource::Spurr ? 4 : 2;
    const std::uint64_t rate =
        cfg_.spurr_num == cfg_.spurr_den ? ts_tb : muldiv_trunc(ts_tb, cfg_.spurr_num, cfg_.spurr_den);
    if (!k_.p.hw_mask.empty() && (k_.p.hw_mask[i - k_.p.base] & bit)) {
      h.sp_off = k_.p.hw[i - k_.p.base][bit == 4 ? 2 : 1] - rate;
      h.sp_set = true;
    }
    return UL(h.sp_set ? h.sp_off + rate : rate);
  }
  // What each event reads and writes per CPU, in one record (one base address an event): the
  // counters last read (now64: the TB of the CPU's last event), the TB at the last flush, and
  // whether the W-bit fields wrapped since.
  struct HwLast {
    std::uint64_t tb_off = 0, sp_off = 0, now64 = 0;  // given value - derived value at its ts
    std::uint64_t last_flush64 = 0;
    bool tb_set = false, sp_set = false;
    bool wrapped = false;
  };
  // Boot: the accounting data is zero (paca / thread_info). With the boot-starttime patch,
  // vtime_reset() on the running (idle) context from init_decrementer_clockevent() (boot CPU)
  // and secondary_cpu_time_init(): starttime = mftb(), startspurr = read_spurr(starttime) if
  // scaled; starttime_user is not touched (a user exit sets it before a user entry reads it).
  void start(std::uint32_t cpu, UL now, UL spurr) {
    started_[cpu] = true;
    --unstarted_;
    if (cfg_.starttime_init) {
      auto& a = accts_[cpu];  // per CPU, or on PPC32 the CPU's idle task (task index cpu)
      a.starttime = now;
      if (cfg_.scaled) a.startspurr = spurr;
      origin_[cpu] = now;
    } else {
      origin_[cpu] = 0;
      if (now != 0)
        finding(0, "native_vtime.boot_starttime", [&] {
          return fmt::format(
              "cpu {}: starttime is 0 at boot but the TB reads {}: the first delta counts TB ticks since TB reset", cpu,
              now);
        });
    }
  }
  // start_secondary() -> secondary_cpu_time_init(): with the boot-starttime patch vtime_reset()
  // on the idle context; the skipped TB joins the ghost origin, so tb_conserved keeps counting
  // what is accounted. Its part before the CPU died was online time: lost.
  void online(std::uint32_t cpu, UL now, UL spurr) {
    auto& a = accts_[cpu];  // the CPU's data, or on PPC32 its idle task's (task index cpu)
    if (!cfg_.starttime_init) {
      offline_pending_[cpu] = UL(offline_pending_[cpu] + UL(now - tb_offline_[cpu]));
      offline_pending_any_ = offline_pending_any_ || offline_pending_[cpu] != 0;
      return;
    }
    const UL lost = UL(tb_offline_[cpu] - a.starttime);
    origin_[cpu] = UL(origin_[cpu] + vtime_reset(k_.d, cfg_, a, now, spurr, cost_));
    if (lost != 0) {
      out_.hotplug_online_lost_tb += lost;
      hotplug_inv_ = "native_vtime.hotplug_online_time_kept";
      hotplug_fix_ = kNotFixed;
      hotplug_msg_ = fmt::format(
          "cpu {}: vtime_reset() at cpu_online drops the {} TB ticks between the last accounting hook and "
          "cpu_offline (online time in no bucket)",
          cpu, lost);
      hotplug_at_ = cur_event_;
    }
  }
  // scan_dispatch_log(upto): the steal of every logged entry with a TB <= upto.
  UL scan(std::uint32_t cpu, UL upto) {
    UL sum = 0;
    auto& q = dtl_[cpu];
    std::size_t n = 0;
    while (n < q.size() && q[n].tb <= upto) sum = UL(sum + q[n++].ticks);
    q.erase(q.begin(), q.begin() + std::ptrdiff_t(n));
    return sum;
  }
  void enter(std::uint32_t cpu, std::uint32_t cur, UL now) {
    auto& a = acct(cpu, cur);
    UL sst = 0, ust = 0;
    if (cfg_.splpar && !dtl_[cpu].empty()) {  // account_stolen_time(): only when the DTL moved
      sst = scan(cpu, a.starttime_user);
      ust = scan(cpu, now);
      const UL user_now = UL(a.utime + UL(now - a.starttime_user));
      if (sst > a.stime || ust > user_now) {
        // the bucket wraps (a huge flush follows): ns_bounded no longer applies on this CPU
        stop_ns_bounded(cpu, cur_event_, "native_vtime.steal_clamped");
        steal_wrapped_[cpu] = true;
        finding(cur_event_, "native_vtime.steal_clamped", [&] {
          return fmt::format(
              "account_stolen_time(): DTL steal sst={} ust={} exceeds stime={} / utime={}: the bucket wraps", sst, ust,
              a.stime, user_now);
        });
      }
    }
    user_entry(k_.d, cfg_, a, now, sst, ust, cost_);
  }
  // account_cpu_user_exit() on the return to user (with the proposed split fix: and the split).
  void ret_user(std::uint32_t cpu, std::uint32_t cur, UL now, UL spurr) {
    if (cfg_.split_at_user_exit && cfg_.flush_epoch)
      user_exit_split(k_.d, cfg_, acct(cpu, cur), now, spurr, cost_);
    else
      user_exit(k_.d, acct(cpu, cur), now, cost_);
  }
  void side(std::uint32_t cpu, std::uint32_t cur, Kctx where, UL now, UL spurr) {
    auto& a = acct(cpu, cur);
    const UL steal = cfg_.splpar ? scan(cpu, now) : UL(0);
    if (where == Kctx::Idle && cfg_.flush_epoch && steal != 0 && cfg_.idle_steal_out) {
      // proposed fix: only steal beyond the interval is counted twice (as on the kernel path)
      const UL s = UL(now - a.starttime);
      overcount_[cpu] = UL(overcount_[cpu] + (steal > s ? UL(steal - s) : UL(0)));
    } else if (where == Kctx::Idle && cfg_.flush_epoch && steal != 0) {
      // 4.11+: vtime_delta() no longer takes the steal out of the interval, yet
      // vtime_account_idle() still adds it: idle_time += (now - starttime) + steal.
      overcount_[cpu] = UL(overcount_[cpu] + steal);
      finding(cur_event_, "native_vtime.idle_steal_counted_twice", [&] {
        return fmt::format(
            "vtime_account_idle(): idle += {} TB ticks of interval (which already contains the stolen "
            "time) + {} TB ticks of DTL steal",
            UL(now - a.starttime), steal);
      });
    } else if (where != Kctx::Idle && cfg_.flush_epoch && steal != 0) {
      // vtime_delta_kernel() callers: stime -= min(stime, steal), steal_time += steal; DTL steal
      // beyond the interval (a log that ran ahead of the TB, as only a made-up trace does) is
      // counted on top of it: the ledger of tb_conserved takes it, as for idle.
      const UL s = UL(now - a.starttime);
      if (steal > s) overcount_[cpu] = UL(overcount_[cpu] + UL(steal - s));
    }
    account_kernel_side(k_.d, cfg_, a, where, now, spurr, steal, cost_);
    if (!cfg_.flush_epoch) immediate(cpu, cur, false);
  }
  FlushCtx fctx(std::uint32_t cpu, std::uint32_t cur) const {
    return {k_.p.tasks[cur].nice > 0, k_.ctx[cpu].nr_iowait > 0};
  }
  // Pre-4.11: the kernel-side buckets go to the generic code at once (TB ticks); ns for the
  // common outputs are the conversion of the TB totals (cputime read-side conversion).
  void immediate(std::uint32_t cpu, std::uint32_t cur, bool user_too) {
    auto& a = acct(cpu, cur);
    const UL before = spec::native::pending_tb(k_.d, a);
    flush_immediate(k_.d, cfg_, a, tb_sinks_cpu_[cpu], tb_sinks_task_[cur], tb_scaled_[cur], fctx(cpu, cur), user_too,
                    cost_);
    const UL moved = UL(before - spec::native::pending_tb(k_.d, a));
    flushed_[cpu] = UL(flushed_[cpu] + moved);
    out_.tb_flushed[cpu] += moved;
    auto& c = k_.r.cpus[cpu];
    for (unsigned b = 0; b < model::NR_STATS; ++b) c.cpustat[b] = conv(tb_sinks_cpu_[cpu].cpustat[b]);
    auto& t = k_.r.tasks[cur];
    t.utime = conv(tb_sinks_task_[cur].utime);
    t.stime = conv(tb_sinks_task_[cur].stime);
    t.gtime = conv(tb_sinks_task_[cur].gtime);
    out_.task_scaled[cur] = {conv(tb_scaled_[cur].utimescaled), conv(tb_scaled_[cur].stimescaled)};
    conversions_[cpu] = model::NR_STATS;
  }
  std::uint64_t conv(std::uint64_t t) {
    Cost unused;
    return tb_to_ns(k_.d, cfg_, t, unused);
  }
  void flush(std::uint32_t cpu, std::uint32_t cur, const CpuCtx&) {
    flushed_step_ = true;
    hw_[cpu].last_flush64 = hw_[cpu].now64;
    if (!cfg_.flush_epoch) return immediate(cpu, cur, true);
    auto& a = acct(cpu, cur);
    const UL before = spec::native::pending_tb(k_.d, a);
    // Bucket conversions that reach cpustat (the kernel converts only nonzero buckets).
    // (summed, not looped over an initializer_list: that copied the six buckets to the stack)
    std::uint64_t n = std::uint64_t(a.utime != 0) + (a.gtime != 0) + (a.idle_time != 0) + (a.stime != 0) +
                      (a.hardirq_time != 0) + (a.softirq_time != 0);
    if (cfg_.splpar) n += a.steal_time != 0;
    vtime_flush(k_.d, cfg_, a, k_.r.cpus[cpu], k_.r.tasks[cur], out_.task_scaled[cur], fctx(cpu, cur), cost_);
    const UL moved = UL(before - spec::native::pending_tb(k_.d, a));
    flushed_[cpu] = UL(flushed_[cpu] + moved);
    out_.tb_flushed[cpu] += moved;
    conversions_[cpu] += n;
    out_.flushes += n;
  }
  // ns_bounded's premise (no bucket wrap) ended on `cpu`: the run says so once per CPU, so that
  // "every invariant holds" does not cover it (RunResult::unjudged).
  void stop_ns_bounded(std::uint32_t cpu, std::size_t i, const char* cause) {
    if (cfg_.flush_epoch && !hw_[cpu].wrapped && !steal_wrapped_[cpu])
      k_.r.unjudged.push_back({"native_vtime.ns_bounded", cpu, i, k_.p.line_at(i), cause});
  }
  // The first finding of each invariant; detail() is formatted only for that one (some hold
  // on every event of a config, e.g. split_no_overflow on MPC8xx 4.19).
  template <class Detail>
  void finding(std::size_t i, const char* inv, Detail&& detail) {
    for (const auto& f : out_.findings)
      if (f.invariant == inv) return;
    out_.findings.push_back({inv, i, k_.p.line_at(i), detail()});
  }

  Core& k_;
  const NativeCfg& cfg_;
  std::vector<A> accts_;
  NativeResult out_;
  Cost cost_;
  std::vector<std::array<std::uint64_t, 5>> splits_;
  std::vector<UL> flushed_;  // W-bit: TB ticks handed to the sinks, per CPU
  std::vector<std::uint64_t> conversions_;
  std::vector<std::vector<DtlEntry>> dtl_;
  std::vector<HwLast> hw_;
  // Per-CPU flags as bytes: std::vector<bool>'s bit arithmetic was ~15 instructions an event.
  std::vector<std::uint8_t> steal_wrapped_;  // a bucket wrapped by unclamped DTL steal (steal_clamped)
  std::vector<UL> origin_, overcount_;       // overcount_: TB ticks the kernel counts twice (findings)
  std::vector<std::uint8_t> started_;
  std::uint32_t unstarted_ = k_.p.header.ncpus;  // CPUs not yet started (one test an event once all are)
  std::vector<TbSinks<C, W>> tb_sinks_cpu_, tb_sinks_task_;
  std::vector<Scaled<C>> tb_scaled_ = std::vector<Scaled<C>>(k_.p.tasks.size(), Scaled<C>{0, 0});
  std::vector<UL> tb_offline_ = std::vector<UL>(k_.p.header.ncpus, 0);       // TB at the last cpu_offline
  std::vector<UL> offline_pending_ = std::vector<UL>(k_.p.header.ncpus, 0);  // before 6.12.101: not yet counted
  const char* hotplug_inv_ = "";
  std::string_view hotplug_fix_;
  std::string hotplug_msg_;
  std::size_t hotplug_at_ = SIZE_MAX;  // the event whose hotplug finding hotplug_msg_ holds (judged in its check)
  bool offline_pending_any_ = false;   // an offline_pending_ entry is not 0 (one flag on the per-event path)
  UL now_ = 0;
  std::size_t cur_event_ = 0;
  bool flushed_step_ = false;
};

}  // namespace

void Backend<arch::Accounting::Native>::configure(ModelCfg& m, const arch::CpuFacts& cpu, const arch::Config& cfg) {
  m.native = native_cfg(cpu, cfg);
}

RunResult Backend<arch::Accounting::Native>::run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  if (cfg.native.word_bits == 32) return run_with<NativeBackend<32>>(p, cfg, o);
  return run_with<NativeBackend<64>>(p, cfg, o);
}
std::unique_ptr<LiveMachine> Backend<arch::Accounting::Native>::live(const Program& p, const ModelCfg& cfg,
                                                                     const RunOptions& o) {
  if (cfg.native.word_bits == 32) return live_with<NativeBackend<32>>(p, cfg, o);
  return live_with<NativeBackend<64>>(p, cfg, o);
}

}  // namespace kacct::sim
