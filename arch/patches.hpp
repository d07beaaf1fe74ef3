// Kernel patches as data: the one place where a commit, its release and the claims to check
// about it are written. Models ask `applied(id, version)` instead of hard-coding versions.
// Ids and releases were checked against the kernel history (docs/models/cputime-adjust.md lists the
// sources; 173be9a14f7b's release, 4.7, is inferred from its sched/urgent merge, not read from a tag).
#pragma once
#include <array>
#include <optional>
#include <string_view>

#include "arch/version.hpp"

namespace kacct::arch {

enum class Mechanism { Tick, CputimeAdjust, NativeVtime, GenVtime, LazyTlb, PsiIrq };

struct Patch {
  std::string_view id;     // 12-hex abbreviated commit id
  std::string_view title;  // subject line
  KVersion before;         // last release without it
  KVersion after;          // first release with it
  Mechanism mechanism;
  std::array<std::string_view, 4> claims;  // names resolved by proofs/validate.cpp; "" = unused
  std::string_view why;    // one line: what the patch changed in the model
};

inline constexpr std::array patches = {
    Patch{"9d7fb0427648", "sched/cputime: Guarantee stime + utime == rtime", v(4, 2), v(4, 3),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.sum_is_rtime", "cputime_adjust.monotonic", "cputime_adjust.stime_le_rtime", ""},
          "per-field max clamps replaced by clamps that keep utime + stime == rtime"},
    Patch{"173be9a14f7b", "sched/cputime: Fix NO_HZ_FULL getrusage() monotonicity regression",
          v(4, 6), v(4, 7), Mechanism::CputimeAdjust,
          {"cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", "", ""},
          "the utime == 0 / stime == 0 shortcuts now run through the monotonicity clamps"},
    Patch{"3dc167ba5729", "sched/cputime: Improve cputime_adjust()", v(5, 8), v(5, 9),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.exact_ratio", "cputime_adjust.monotonic", ""},
          "scale_stime()'s 32-bit balancing loop replaced by mul_u64_u64_div_u64()"},
    Patch{"77baa5bafcbe", "sched/cputime: Fix mul_u64_u64_div_u64() precision for cputime",
          v(6, 10), v(6, 11), Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.monotonic", "cputime_adjust.sum_is_rtime", ""},
          "stime clamped to rtime after the division"},
    Patch{"b29a62d87cc0", "mul_u64_u64_div_u64: make it precise always", v(6, 11), v(6, 12),
          Mechanism::CputimeAdjust,
          {"cputime_adjust.stime_le_rtime", "cputime_adjust.exact_ratio", "", ""},
          "the generic C mul_u64_u64_div_u64 computes the exact 128-bit quotient on every arch"},
    // Gen vtime (docs/models/gen-vtime.md lists the sources of each id and release).
    Patch{"ff9a9b4c4334", "sched, time: Switch VIRT_CPU_ACCOUNTING_GEN to jiffy granularity", v(4, 5), v(4, 6),
          Mechanism::GenVtime,
          {"gen.no_time_lost", "gen.frederic_loops", "gen.attribution_bound", "gen.fewer_clock_reads"},
          "vtime snapshots become jiffies; flushes only when jiffies moved (no sched_clock per transition)"},
    Patch{"2a42eb9594a1", "sched/cputime: Accumulate vtime on top of nsec clocksource", v(4, 12), v(4, 13),
          Mechanism::GenVtime,
          {"gen.no_time_lost", "gen.attribution_bound", "gen.aligned_tick_user_loop", "gen.reader_monotonic"},
          "ns clock again, accumulated per task and flushed once a residue reaches TICK_NSEC"},
    Patch{"8d495477d62e", "sched/cputime: Spare a seqcount lock/unlock cycle on context switch", v(5, 4), v(5, 5),
          Mechanism::GenVtime,
          {"gen.seq_brackets", "gen.no_time_lost", "", ""},
          "one prev write section per switch; the idle flush moves inside it (with the 5.5 IDLE/GUEST states)"},
};

constexpr std::optional<Patch> find_patch(std::string_view id) {
  for (const auto& p : patches)
    if (p.id.substr(0, id.size()) == id && id.size() >= 7) return p;
  return std::nullopt;
}
// Is the patch in this release? (An unknown id is a programming error: it throws.)
constexpr bool applied(std::string_view id, KVersion ver) {
  for (const auto& p : patches)
    if (p.id == id) return ver >= p.after;
  throw "kacct: unknown patch id";
}

}  // namespace kacct::arch
