// Kernel configurations and the Kconfig rules that decide which are legal on which CPU in which
// release. Every view (CLI names, test matrix, fuzzer selector, proof jobs) comes from here
// through arch/registry.hpp.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "arch/cpus.hpp"
#include "arch/mechanisms.hpp"
#include "arch/patches.hpp"
#include "arch/version.hpp"

namespace kacct::arch {

struct Config {
  KVersion version;
  Accounting acct = Accounting::Tick;
  bool irq_time = false;  // CONFIG_IRQ_TIME_ACCOUNTING
  bool steal = false;     // CONFIG_PARAVIRT_TIME_ACCOUNTING, steal clock enabled
  unsigned hz = 250;      // CONFIG_HZ
  std::string name() const {
    std::string n = version.str() + "-" + std::string(config_part(acct));
    if (irq_time) n += "-irqtime";
    if (steal) n += "-steal";
    return n + "-hz" + std::to_string(hz);
  }
  auto operator<=>(const Config&) const = default;
};

// Releases the tick model covers (cputime in nanoseconds: 4.11 on) and the HZ values offered.
inline constexpr std::array tick_versions = {v(4, 11), v(4, 14), v(4, 19), v(5, 4),
                                             v(5, 10), v(6, 1),  v(6, 6),  v(6, 12)};
inline constexpr std::array hz_values = {100u, 250u, 300u, 1000u};

// Releases the gen vtime model covers: one per granularity and era (model/gen/gen.hpp): 4.4
// ns snapshots, 4.7 jiffies with irq hooks, 4.9 jiffies with other time, 4.14 and 5.4
// accumulated ns, 5.5 (states and kcpustat readers), 6.1, 6.12; one HZ value keeps the
// property matrix small (HZ only sets TICK_NSEC and the jiffy length here; tests and proofs
// use 250 too). 4.6, the first jiffy release, is not offered: its cputime_adjust has the
// getrusage monotonicity bug fixed in 4.7 (173be9a14f7b), which gen vtime readers trigger
// (test GenVtime.Getrusage46Regression) and which the props would report on every run.
inline constexpr std::array gen_versions = {v(4, 4), v(4, 7), v(4, 9), v(4, 14), v(5, 4), v(5, 5), v(6, 1), v(6, 12)};
inline constexpr std::array gen_hz_values = {1000u};

// Debian 12's kernels as point releases (the distro builds of arch/version.hpp run their base):
// 6.1.192 (bookworm) and 6.12.117 (bookworm-backports). The props matrix runs them at HZ=250,
// Debian's CONFIG_HZ, in every accounting mode with and without irq time and steal.
inline constexpr std::array debian_versions = {v(6, 1, 192), v(6, 12, 117)};
inline constexpr unsigned debian_hz = 250;

// HAVE_VIRT_CPU_ACCOUNTING_GEN ("default y if 64BIT", arch/Kconfig; powerpc selects it outright
// in 6.12) and HAVE_CONTEXT_TRACKING_USER (x86: if X86_64; powerpc: if PPC64 in 6.1, always in
// 6.12), both needed by VIRT_CPU_ACCOUNTING_GEN (init/Kconfig 6.1 and 6.12). The release in
// between where PPC32 gained them is not pinned down: the table only offers 6.1 and 6.12.
constexpr bool have_virt_cpu_accounting_gen(const CpuFacts& c, KVersion ver) {
  if (c.word_bits == 64) return true;
  return c.isa == Isa::PPC32 && ver >= v(6, 12);
}

// TICK_NSEC = (NSEC_PER_SEC + HZ/2) / HZ (include/linux/jiffies.h; the rounding matters at HZ=300).
constexpr std::uint64_t tick_nsec(unsigned hz) { return (1'000'000'000ull + hz / 2) / hz; }

// HAVE_IRQ_TIME_ACCOUNTING: x86 and powerpc both select it (4.19 .. 6.12, unconditionally);
// IRQ_TIME_ACCOUNTING then depends on !VIRT_CPU_ACCOUNTING_NATIVE (init/Kconfig).
constexpr bool have_irq_time_accounting(const CpuFacts& c) { return true; }
// PARAVIRT_TIME_ACCOUNTING: x86 (PARAVIRT); on powerpc only pseries PPC_SPLPAR selects it, and
// only "if VIRT_CPU_ACCOUNTING_GEN" (6.1 arch/powerpc/platforms/pseries/Kconfig).
constexpr bool have_paravirt_steal(const CpuFacts& c, Accounting acct) {
  return c.isa == Isa::X86_64 || (c.platform == Platform::PPC_BOOK3S_64 && acct == Accounting::Gen);
}

// Releases the native vtime model covers: 4.9 (immediate accounting, before the 4.11
// accumulate-then-flush rework; 4.10 adds only the ARCH_HAS_SCALED_CPUTIME symbol, selected for
// every native powerpc build), then each release with a semantic or Kconfig change in between.
inline constexpr std::array native_versions = {v(4, 9), v(4, 11), v(4, 14), v(4, 19), v(4, 20),
                                               v(5, 4), v(5, 10), v(6, 1),  v(6, 12)};
// HAVE_VIRT_CPU_ACCOUNTING: powerpc only among the modelled arches (PPC64 since 2.6.17, PPC32
// since 4.7, c223c90386bc); s390 and ia64 also have it but are not in the CPU table.
constexpr bool have_virt_cpu_accounting(const CpuFacts& c, KVersion ver) {
  return c.isa == Isa::PPC64 || (c.isa == Isa::PPC32 && ver >= v(4, 7));
}
// ARCH_HAS_SCALED_CPUTIME with VIRT_CPU_ACCOUNTING_NATIVE (arch/powerpc/Kconfig): before 4.10
// no symbol (the scaled fields and code exist everywhere); 4.10..4.19 every native powerpc
// build; abcff86df2d2 (4.20) PPC64 only; b4645ffc49cf (5.4) PPC_BOOK3S_64 only.
constexpr bool native_scaled_cputime(const CpuFacts& c, KVersion ver) {
  if (applied("b4645ffc49cf", ver)) return c.platform == Platform::PPC_BOOK3S_64;
  if (applied("abcff86df2d2", ver)) return c.isa == Isa::PPC64;
  return true;
}
// Steal under NATIVE comes from the pseries shared-processor LPAR dispatch trace log
// (PPC_SPLPAR, Book3S-64 pseries only); PARAVIRT_TIME_ACCOUNTING is not used by native.
constexpr bool native_splpar(const CpuFacts& c) { return c.platform == Platform::PPC_BOOK3S_64; }

// Why the kernel's Kconfig (or the model's coverage) rejects `cfg` on this CPU; empty if legal.
constexpr std::string_view illegal_reason(const CpuFacts& c, const Config& cfg) {
  if (cfg.acct == Accounting::Native) {
    if (!have_virt_cpu_accounting(c, cfg.version))
      return "VIRT_CPU_ACCOUNTING_NATIVE depends on HAVE_VIRT_CPU_ACCOUNTING: powerpc (PPC32 from 4.7) among the "
             "modelled CPUs";
    if (cfg.irq_time) return "IRQ_TIME_ACCOUNTING depends on !VIRT_CPU_ACCOUNTING_NATIVE (init/Kconfig)";
    if (cfg.steal && !native_splpar(c))
      return "native steal comes from the pseries SPLPAR dispatch trace log (PPC_SPLPAR: Book3S-64 only)";
    return {};
  }
  if (cfg.acct == Accounting::Gen) {
    if (!have_virt_cpu_accounting_gen(c, cfg.version))
      return "VIRT_CPU_ACCOUNTING_GEN depends on HAVE_CONTEXT_TRACKING_USER and HAVE_VIRT_CPU_ACCOUNTING_GEN: 64-bit "
             "only (x86-64, PPC64) before powerpc selected both for PPC32 (present in 6.12)";
    if ((cfg.irq_time || cfg.steal) && cfg.version < v(4, 11))
      return "gen vtime with IRQ_TIME_ACCOUNTING or steal is modelled from 4.11 (struct irqtime) on";
  }
  if (cfg.irq_time && !have_irq_time_accounting(c))
    return "IRQ_TIME_ACCOUNTING depends on HAVE_IRQ_TIME_ACCOUNTING, which this CPU's arch does not select";
  if (cfg.steal && !have_paravirt_steal(c, cfg.acct))
    return "PARAVIRT_TIME_ACCOUNTING (steal) needs x86 PARAVIRT, or on powerpc pseries PPC_SPLPAR, which selects it "
           "only if VIRT_CPU_ACCOUNTING_GEN";
  return {};
}
// Is `cfg` a configuration the kernel's Kconfig allows for this CPU?
constexpr bool legal(const CpuFacts& c, const Config& cfg) { return illegal_reason(c, cfg).empty(); }

}  // namespace kacct::arch
