// Kernel patches as data: the one place where a commit, its release and the claims to check
// about it are written. Models ask `applied(id, version)` instead of hard-coding versions.
// Ids and releases were checked against the kernel history (docs/models/cputime-adjust.md lists the
// sources; 173be9a14f7b's release, 4.7, is inferred from its sched/urgent merge, not read from a tag).
#pragma once
#include <array>
#include <concepts>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arch/mechanisms.hpp"
#include "arch/version.hpp"

namespace kacct::arch {

struct Patch {
  std::string_view id;     // 12-hex abbreviated commit id (a key where the id is unknown)
  std::string_view title;  // subject line
  KVersion before;         // last release without it
  KVersion after;          // first release with it
  Mechanism mechanism;
  std::array<std::string_view, 5> claims;  // names resolved by proofs/validate.cpp; "" = unused
  std::string_view why;                    // one line: what the patch changed in the model
  // A fix kacct proposes (docs/findings/), in no kernel release: applied() is false for every
  // version; a run selects it explicitly (`--with-fix ID`), before == after is the release it
  // is judged on, and its validator compares that release without and with it.
  bool local = false;
};

inline constexpr std::array patches = {
    Patch{"9d7fb0427648",
          "sched/cputime: Guarantee stime + utime == rtime",
          v(4, 2),
          v(4, 3),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.sum_is_rtime", "cputime_adjust.monotonic", "cputime_adjust.stime_le_rtime", ""},
          "per-field max clamps replaced by clamps that keep utime + stime == rtime"},
    Patch{"173be9a14f7b",
          "sched/cputime: Fix NO_HZ_FULL getrusage() monotonicity regression",
          v(4, 6),
          v(4, 7),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", "", ""},
          "the utime == 0 / stime == 0 shortcuts now run through the monotonicity clamps"},
    Patch{"3dc167ba5729",
          "sched/cputime: Improve cputime_adjust()",
          v(5, 8),
          v(5, 9),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.exact_ratio", "cputime_adjust.monotonic", ""},
          "scale_stime()'s 32-bit balancing loop replaced by mul_u64_u64_div_u64()"},
    Patch{"77baa5bafcbe",
          "sched/cputime: Fix mul_u64_u64_div_u64() precision for cputime",
          v(6, 10),
          v(6, 11),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", ""},
          "stime clamped to rtime after the division"},
    Patch{"b29a62d87cc0",
          "mul_u64_u64_div_u64: make it precise always",
          v(6, 11),
          v(6, 12),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.exact_ratio", "", ""},
          "the generic C mul_u64_u64_div_u64 computes the exact 128-bit quotient on every arch"},
    // Lazy-TLB mm references (docs/models/lazy-tlb.md): the "shoot lazy tlbs" series (v7,
    // merged for 6.4 via mm-stable) and the 6.6 radix follow-up; ids and titles checked against
    // the mainline merge log, releases from the 6.4-rc Fixes: tags and the 6.1/6.12 sources.
    Patch{"6cad87b0d216",
          "kthread: simplify kthread_use_mm refcounting",
          v(6, 3),
          v(6, 4),
          Mechanism::LazyTlb,
          {"lazy_tlb.as_safe_as_before", "", "", ""},
          "kthread_use_mm always mmgrab()s and drops the old active_mm lazily; unuse takes a lazy ref"},
    Patch{"2655421ae69f",
          "lazy tlb: shoot lazies, non-refcounting lazy tlb mm reference handling scheme",
          v(6, 3),
          v(6, 4),
          Mechanism::LazyTlb,
          {"lazy_tlb.shootdown_as_safe_as_refcount", "lazy_tlb.free_timing", "lazy_tlb.ipi_cost", ""},
          "MMU_LAZY_TLB_SHOOTDOWN: lazy references uncounted; __mmdrop IPIs mm_cpumask to shoot lazies"},
    Patch{"77f68ebeee20",
          "powerpc/64s: enable MMU_LAZY_TLB_SHOOTDOWN",
          v(6, 3),
          v(6, 4),
          Mechanism::LazyTlb,
          {"lazy_tlb.shootdown_as_safe_as_refcount", "lazy_tlb.free_timing", "lazy_tlb.ipi_cost", ""},
          "powerpc Book3S-64 selects MMU_LAZY_TLB_SHOOTDOWN"},
    Patch{"e43c0a0c3c28",
          "powerpc/64s/radix: combine final TLB flush and lazy tlb mm shootdown IPIs",
          v(6, 5),
          v(6, 6),
          Mechanism::LazyTlb,
          {"lazy_tlb.as_safe_as_before", "lazy_tlb.ipi_cost", "", ""},
          "the radix fullmm exit flush IPIs mm_cpumask and shoots lazies, so __mmdrop rarely IPIs"},
    // The hotplug fix (Fixes: 2655421ae69f); id from the mainline scheduler log, 6.14 inferred
    // from its neighbours there (a6fd16148fdd, 3429dd57f0de), not read from a tag.
    Patch{"21641bd9a7a7",
          "lazy tlb: fix hotplug exit race with MMU_LAZY_TLB_SHOOTDOWN",
          v(6, 13),
          v(6, 14),
          Mechanism::LazyTlb,
          {"lazy_tlb.hotplug_safe", "", "", ""},
          "the outgoing CPU leaves its lazy mm for init_mm at sched_cpu_wait_empty, before __cpu_disable"},
    // PSI irq pressure (model/psi, docs/models/psi-irq.md). Releases from the mainline merge
    // logs and stable mails found with the search tools; a6fd16148fdd's 6.14 is inferred from
    // the sched/core merge it sits in.
    Patch{"52b1364ba0b1",
          "sched/psi: Add PSI_IRQ to track IRQ/SOFTIRQ pressure",
          v(6, 0),
          v(6, 1),
          Mechanism::PsiIrq,
          {"psi_irq.no_double_count", "psi_irq.lock_held", "psi_irq.seq_even", ""},
          "psi_account_irqtime(rq->curr, irq_delta) on every update_rq_clock_task"},
    Patch{"ddae0ca2a8fe",
          "sched: Move psi_account_irqtime() out of update_rq_clock_task() hotpath",
          v(6, 9),
          v(6, 10),
          Mechanism::PsiIrq,
          {"psi_irq.same_charge", "psi_irq.no_double_count", "psi_irq.lock_held", "psi_irq.seq_even"},
          "own base rq->psi_irq_time, charged at sched_tick and cross-group __schedule, rq lock asserted"},
    Patch{"3840cbe24cf0",
          "sched: psi: fix bogus pressure spikes from aggregation race",
          v(6, 11),
          v(6, 12),
          Mechanism::PsiIrq,
          {"psi_irq.no_double_count", "psi_irq.seq_even", "", ""},
          "cpu_clock() read inside each group's write section"},
    Patch{"a6fd16148fdd",
          "sched, psi: Don't account irq time if sched_clock_irqtime is disabled",
          v(6, 13),
          v(6, 14),
          Mechanism::PsiIrq,
          {"psi_irq.no_double_count", "", "", ""},
          "psi_account_irqtime returns when irq time accounting is off at run time"},
    Patch{"570c8efd5eb7",
          "sched/psi: Optimize psi_group_change() cpu_clock() usage",
          v(6, 16),
          v(6, 17),
          Mechanism::PsiIrq,
          {"psi_irq.no_double_count", "psi_irq.lock_held", "psi_irq.seq_even", ""},
          "one per-CPU psi_seq section and one cpu_clock() per update"},
    Patch{"abcff86df2d2",
          "powerpc/time: Only set CONFIG_ARCH_HAS_SCALED_CPUTIME on PPC64",
          v(4, 19),
          v(4, 20),
          Mechanism::NativeVtime,
          {"native_vtime.unscaled_unchanged", "native_vtime.scaled_equals_unscaled", "native_vtime.split_no_overflow",
           ""},
          "PPC32 native builds drop the SPURR split, the scaled buckets and the startspurr hand-over"},
    Patch{"b4645ffc49cf",
          "powerpc/64: don't select ARCH_HAS_SCALED_CPUTIME on book3E",
          v(5, 3),
          v(5, 4),
          Mechanism::NativeVtime,
          {"native_vtime.unscaled_unchanged", "native_vtime.scaled_equals_unscaled", "native_vtime.split_no_overflow",
           ""},
          "Book3E-64 (e5500/e6500) native builds drop the scaled cputime split"},
    // Gen vtime (docs/models/gen-vtime.md lists the sources of each id and release).
    Patch{"ff9a9b4c4334",
          "sched, time: Switch VIRT_CPU_ACCOUNTING_GEN to jiffy granularity",
          v(4, 5),
          v(4, 6),
          Mechanism::GenVtime,
          {"gen_vtime.no_time_lost", "gen_vtime.frederic_loops", "gen_vtime.attribution_bound",
           "gen_vtime.fewer_clock_reads"},
          "vtime snapshots become jiffies; flushes only when jiffies moved (no sched_clock per transition)"},
    Patch{"2a42eb9594a1",
          "sched/cputime: Accumulate vtime on top of nsec clocksource",
          v(4, 12),
          v(4, 13),
          Mechanism::GenVtime,
          {"gen_vtime.no_time_lost", "gen_vtime.attribution_bound", "gen_vtime.aligned_tick_user_loop",
           "gen_vtime.reader_monotonic", "gen_vtime.fork_no_double_count"},
          "ns clock again, accumulated per task and flushed once a residue reaches TICK_NSEC"},
    Patch{"8d495477d62e",
          "sched/cputime: Spare a seqcount lock/unlock cycle on context switch",
          v(5, 4),
          v(5, 5),
          Mechanism::GenVtime,
          {"gen_vtime.seq_brackets", "gen_vtime.no_time_lost", "", ""},
          "one prev write section per switch; the idle flush moves inside it (with the 5.5 IDLE/GUEST states)"},
    // KVM x86's vtime guest exit against its irq window (vcpu_enter_guest()): where a host irq that
    // arrives in guest mode is charged under gen vtime without irq time accounting.
    Patch{"87fa7f3e98a1",
          "x86/kvm: Move context tracking where it belongs",
          v(5, 8),
          v(5, 9),
          Mechanism::GenVtime,
          {"gen_vtime.guest_irq_no_time_lost", "", "", ""},
          "x86: vtime guest exit right after VM exit, before KVM's irq window (a host irq is system time)"},
    Patch{"160457140187",
          "KVM: x86: Defer vtime accounting 'til after IRQ handling",
          v(5, 12),
          v(5, 13),
          Mechanism::GenVtime,
          {"gen_vtime.guest_irq_no_time_lost", "", "", ""},
          "x86: vtime guest exit after the irq window again (a host irq in guest mode is guest time)"},
    // CPU bring-up: idle_thread_get() stops calling init_idle() (made __init), so a CPU coming back
    // online keeps its idle task's vtime snapshot instead of vtime_init_idle()'s fresh one. Not a
    // vtime patch, but it decides what a hotplug does to gen vtime (docs/models/gen-vtime.md).
    Patch{"f1a0a376ca0c",
          "sched/core: Initialize the idle task with preemption disabled",
          v(5, 13),
          v(5, 14),
          Mechanism::GenVtime,
          {"gen_vtime.hotplug_online_time_kept", "", "", ""},
          "no vtime_init_idle() at CPU bring-up: the idle time before cpu_offline is no longer dropped"},
    // Steal in update_rq_clock_task(): prev_steal_time_rq jumps to the steal clock instead of
    // advancing by the clamped steal, so steal beyond the elapsed delta is dropped, not charged
    // to later updates. Id from the stable backports; 6.14 inferred from the v3 posting
    // (2024-11-18, after the 6.13 merge window opened) and the 6.12.14 / 6.1.129 backports.
    Patch{"108ad0999085",
          "sched: Don't try to catch up excess steal time.",
          v(6, 13),
          v(6, 14),
          Mechanism::Tick,
          {"tick.steal_not_caught_up", "", "", ""},
          "update_rq_clock_task: prev_steal_time_rq = steal clock (excess steal dropped, not carried)"},
    // powerpc native vtime: vtime_reset() (starttime = mftb(), startspurr) from
    // init_decrementer_clockevent() and secondary_cpu_time_init(), read in the Debian 6.12.117
    // arch/powerpc/kernel/time.c. Its mainline id was not found in any source reachable here (the
    // stable pushes list only their own ids); the key names it. 7.2 is inferred from the
    // linux-7.1.y stable push of 2026-08-03 that carries it.
    Patch{"ppc-vtime-boot-starttime",
          "powerpc/vtime: Initialize starttime at boot for native accounting",
          v(7, 1),
          v(7, 2),
          Mechanism::NativeVtime,
          {"native_vtime.boot_starttime", "", "", ""},
          "starttime (and startspurr) read from the TB at boot and at secondary CPU bring-up, not 0"},
    // kacct-local proposed fixes (NOT upstream commits; docs/findings/): each is a config value
    // of its model, selected only by `--with-fix ID`; applied() is false for every release.
    Patch{"kacct-gen-fork-residues",
          "[kacct-local fix, not upstream] copy_process(): clear the child's vtime residues",
          v(6, 12),
          v(6, 12),
          Mechanism::GenVtime,
          {"gen_vtime.fork_no_double_count", "gen_vtime.fix_changes_nothing_else", "", ""},
          "the child's vtime.utime/stime/gtime start at 0 (and vtime.cpu at -1) instead of the parent's residues",
          true},
    Patch{"kacct-psi-idle-irq",
          "[kacct-local fix, not upstream] psi_account_irqtime(): drop irq time accrued while idle",
          v(6, 12),
          v(6, 12),
          Mechanism::PsiIrq,
          {"psi_irq.idle_irq_not_charged", "psi_irq.fix_changes_nothing_else", "", ""},
          "with the idle task current, rq->psi_irq_time is advanced to irq_time_read() and nothing is charged",
          true},
    Patch{"kacct-ppc-idle-steal",
          "[kacct-local fix, not upstream] powerpc vtime_account_idle(): steal out of idle",
          v(6, 12),
          v(6, 12),
          Mechanism::NativeVtime,
          {"native_vtime.idle_steal_once", "native_vtime.fix_changes_nothing_else", "", ""},
          "SPLPAR idle: the DTL steal is taken out of the idle interval and added to steal_time, as for kernel time",
          true},
    Patch{"kacct-ppc-user-exit-split",
          "[kacct-local fix, not upstream] powerpc: scaled split for the kernel time before user return",
          v(6, 12),
          v(6, 12),
          Mechanism::NativeVtime,
          {"native_vtime.scaled_equals_unscaled", "native_vtime.fix_changes_nothing_else", "", ""},
          "account_cpu_user_exit() reads the SPURR and splits its kernel interval like vtime_delta_scaled()",
          true},
    Patch{"kacct-scale-stime-clamp",
          "[kacct-local fix, not upstream] pre-5.9 cputime_adjust(): clamp stime to rtime",
          v(5, 8),
          v(5, 8),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.fix_changes_nothing_else", "", ""},
          "77baa5bafcbe's stime <= rtime clamp after the scale_stime() loop (4.8 .. 5.8 stable and CIP trees)",
          true},
};

// Stable backports: the first point release of a stable series that carries a patch, each row
// with where it was read. The Debian changelogs list each upstream stable update under its
// ChangeLog-X.Y.Z heading; a patch under that heading arrived in X.Y.Z. Series not listed here
// (e.g. 6.6.y, 5.15.y) are not modelled as having the backport: no source reachable here showed it.
struct Backport {
  std::string_view id;
  KVersion first;  // first point release of its series with the patch
  std::string_view source;
};
inline constexpr std::array backports = {
    Backport{"77baa5bafcbe", v(6, 1, 105), "linux-source-6.1 changelog.Debian: 6.1.106-1, ChangeLog-6.1.105"},
    Backport{"77baa5bafcbe", v(6, 10, 5), "linux-source-6.12 changelog.Debian: 6.10.6-1, ChangeLog-6.10.5"},
    Backport{"ddae0ca2a8fe", v(6, 1, 100), "linux-source-6.1 changelog.Debian: 6.1.106-1, ChangeLog-6.1.100"},
    Backport{"3840cbe24cf0", v(6, 1, 113), "linux-source-6.1 changelog.Debian: 6.1.115-1, ChangeLog-6.1.113"},
    Backport{"3840cbe24cf0", v(6, 11, 3), "linux-source-6.12 changelog.Debian: 6.11.4-1, ChangeLog-6.11.3"},
    Backport{"108ad0999085", v(6, 1, 129), "linux-source-6.1 changelog.Debian: 6.1.129-1, ChangeLog-6.1.129"},
    Backport{"108ad0999085", v(6, 12, 14), "linux-source-6.12 changelog.Debian: 6.12.15-1, ChangeLog-6.12.14"},
    Backport{"570c8efd5eb7", v(6, 12, 42), "linux-source-6.12 changelog.Debian: 6.12.43-1, ChangeLog-6.12.42"},
    // Fixes: 87fa7f3e98a1, Cc: stable; in 5.10.y and 5.12.y with its two context_tracking helper
    // prerequisites (5.11.y had ended).
    Backport{"160457140187", v(5, 10, 41),
             "stable review <20210527151139.438439088@linuxfoundation.org> (5.10.41-rc1 6/9); "
             "Linux 5.10.41 announcement <16222017579575@kroah.com>"},
    Backport{"160457140187", v(5, 12, 8),
             "stable review <20210527151139.442692176@linuxfoundation.org> (5.12.8-rc1 6/7); "
             "linux-5.12.y push: a7fcb65fa1cf, then Linux 5.12.8"},
    // Stable pushes of July 2021: each series' pending list ends in its release line ("Linux
    // 5.10.50", ...); the 5.10.50-rc2 review lists it with kernel/smpboot.c "1 -". Not in 5.4.132
    // or any 4.x series (their lists of the same pushes lack it).
    Backport{"f1a0a376ca0c", v(5, 10, 50),
             "stable review <20210712184832.376480168@linuxfoundation.org> (5.10.50-rc2); "
             "sashal/linux-stable pending-5.10 push of 2021-07-14 (3c51d82d0b78, then Linux 5.10.50)"},
    Backport{"f1a0a376ca0c", v(5, 12, 17),
             "sashal/linux-stable pending-5.12 push of 2021-07-14 (1cb358b3ac1b, then Linux 5.12.17)"},
    Backport{"f1a0a376ca0c", v(5, 13, 2),
             "sashal/linux-stable pending-5.13 push of 2021-07-14 (24c79a7e54cc, then Linux 5.13.2)"},
    Backport{"ppc-vtime-boot-starttime", v(6, 12, 101),
             "linux-source-6.12 changelog.Debian: 6.12.101-1, ChangeLog-6.12.101; vtime_reset() callers read in "
             "the 6.12.117 arch/powerpc/kernel/time.c"},
};

constexpr std::optional<Patch> find_patch(std::string_view id) {
  for (const auto& p : patches)
    if (p.id.substr(0, id.size()) == id && id.size() >= 7) return p;
  return std::nullopt;
}
namespace detail {
// An id's first 8 bytes as one integer (zero-padded): model steps ask applied() per event, and a
// scan of these finds the entry without comparing strings (ids that match share the prefix).
constexpr std::uint64_t id_prefix(std::string_view s) {
  std::uint64_t k = 0;
  for (std::size_t i = 0; i < 8; ++i) k = (k << 8) | (i < s.size() ? std::uint8_t(s[i]) : 0u);
  return k;
}
inline constexpr auto patch_prefixes = [] {
  std::array<std::uint64_t, patches.size()> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = id_prefix(patches[i].id);
  return a;
}();
// The table index of a patch id (exact match); patches.size() if unknown.
constexpr std::size_t patch_index(std::string_view id) {
  const std::uint64_t key = id_prefix(id);
  for (std::size_t i = 0; i < patches.size(); ++i)
    if (patch_prefixes[i] == key && patches[i].id == id) return i;
  return patches.size();
}
// Each backport's patch, as a table index.
inline constexpr auto backport_patch = [] {
  std::array<std::size_t, backports.size()> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = patch_index(backports[i].id);
  return a;
}();
static_assert(
    [] {
      for (auto i : backport_patch)
        if (i == patches.size()) return false;
      return true;
    }(),
    "a backport names a patch the table does not have");
// The backports grouped by patch: patch i's are backport_order[backport_begin[i] ..
// backport_begin[i + 1]), in table order (applied() on a release before the patch scans only its own).
inline constexpr auto backport_begin = [] {
  std::array<std::size_t, patches.size() + 1> a{};
  for (auto i : backport_patch) ++a[i + 1];
  for (std::size_t i = 1; i < a.size(); ++i) a[i] += a[i - 1];
  return a;
}();
inline constexpr auto backport_order = [] {
  std::array<std::size_t, backports.size()> a{};
  auto next = backport_begin;
  for (std::size_t j = 0; j < backports.size(); ++j) a[next[backport_patch[j]]++] = j;
  return a;
}();
// A version as one integer in the order of KVersion's <=> (major, minor, point, build).
constexpr std::uint64_t version_key(KVersion k) {
  return std::uint64_t(k.major) << 32 | std::uint64_t(k.minor) << 24 | std::uint64_t(k.point) << 8 | k.build;
}
// Each patch's first release as a key; a kacct-local fix's is above every version.
inline constexpr auto patch_after_key = [] {
  std::array<std::uint64_t, patches.size()> a{};
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = patches[i].local ? ~std::uint64_t(0) : version_key(patches[i].after);
  return a;
}();
// Patch i in a stable series that got it as a backport (out of line: the rarer case).
constexpr bool backported(std::size_t i, KVersion ver) {
  if (patches[i].local) return false;  // a kacct-local fix is in no release
  for (std::size_t k = backport_begin[i]; k < backport_begin[i + 1]; ++k) {
    const auto& b = backports[backport_order[k]];
    if (b.first.series() == ver.series() && ver.upstream() >= b.first) return true;
  }
  return false;
}
// Is the patch (by table index) in this release? In every point release of its mainline
// release's series and later ones, and in a stable series that got it from the backported point
// release on. A distro build answers as its base point release.
constexpr bool applied_at(std::size_t i, KVersion ver) {
  if (version_key(ver.series()) >= patch_after_key[i]) return true;
  return backport_begin[i] != backport_begin[i + 1] && backported(i, ver);
}
}  // namespace detail
// A patch id written in the source: its table index is found at compile time (an unknown id
// does not compile), so that the steps' per-event version facts compare no strings.
struct PatchId {
  std::size_t index;
  consteval PatchId(const char* id) : index(detail::patch_index(id)) {
    if (index == patches.size()) throw "arch::applied: unknown patch id";
  }
};
// Is the patch in this release? (detail::applied_at says how it is decided.)
constexpr bool applied(PatchId id, KVersion ver) { return detail::applied_at(id.index, ver); }
// The same for an id known at run time (a table row, a command-line argument): an unknown id
// is a programming error and throws.
template <class S>
requires std::same_as<S, std::string_view> || std::same_as<S, std::string>
constexpr bool applied(const S& id, KVersion ver) {
  const std::size_t i = detail::patch_index(id);
  if (i == patches.size()) throw std::logic_error("arch::applied: unknown patch id " + std::string(id));
  return detail::applied_at(i, ver);
}
// The stable series (other than the patch's own mainline release) that carry a patch, oldest first.
constexpr std::size_t backport_count(std::string_view id) {
  std::size_t n = 0;
  for (const auto& b : backports) n += b.id == id;
  return n;
}

}  // namespace kacct::arch
