// The CPU table. One type per CPU, so the word width (the model's `unsigned long`) is a
// compile-time fact; `facts` carries everything else. Sources: the `source` of each entry
// (`kacct list cpus` prints them). Adding a CPU is one entry here plus its name in `all_cpus`.
#pragma once
#include <boost/hana.hpp>

#include <cstdint>
#include <string_view>

namespace kacct::arch {

enum class Isa : std::uint8_t { X86_64, PPC32, PPC64 };
// Kernel platform family (arch/powerpc/platforms/Kconfig.cputype), which the Kconfig rules test.
enum class Platform : std::uint8_t { X86, PPC_8xx, PPC_BOOK3S_32, PPC_44x, PPC_E500, PPC_BOOK3E_64, PPC_BOOK3S_64 };

struct CpuFacts {
  std::string_view name;
  Isa isa;
  unsigned word_bits;  // sizeof(unsigned long) * 8 in the kernel built for it
  Platform platform;
  bool purr;                       // CPU_FTR_PURR
  bool spurr;                      // CPU_FTR_SPURR
  std::uint64_t tb_hz;             // typical timebase (x86: the TSC is not used by these models; 0)
  unsigned smt;                    // hardware threads per core
  bool exact_mul_u64_u64_div_u64;  // arch overrides the generic C with an exact 128-bit divide
  std::string_view kconfig;        // the CPU/platform Kconfig symbol
  // /proc/cpuinfo's "cpu" names for it (powerpc cputable cpu_name, e.g. "POWER9 (architected)",
  // "POWER8E (raw)", "e300c3", "440EPX"): '|'-separated, a trailing '*' matches a prefix of the line,
  // else the line's first word must equal it; empty: no "cpu" line (x86).
  std::string_view cpuinfo;
  std::string_view source;  // where the facts come from
};

#define KACCT_CPU(Type, ...)                      \
  struct Type {                                   \
    static constexpr CpuFacts facts{__VA_ARGS__}; \
  }

// clang-format off
KACCT_CPU(X86_64, "x86-64", Isa::X86_64, 64, Platform::X86, false, false, 0, 1, true, "X86_64", "",
  "arch/x86/include/asm/div64.h (mul_u64_u64_div_u64 in mulq/divq asm, 5.9+)");
KACCT_CPU(MPC8xx, "MPC8xx", Isa::PPC32, 32, Platform::PPC_8xx, false, false, 8'312'500, 1, false, "PPC_8xx", "8xx",
  "6.1 Kconfig.cputype PPC_8xx; PURR/SPURR are 0 on PPC32 (cputable.h LONG_ASM_CONST); tb = sysclk/16 (boot/mpc8xx.c), 133 MHz sysclk");
KACCT_CPU(E300, "e300", Isa::PPC32, 32, Platform::PPC_BOOK3S_32, false, false, 66'000'000, 1, false, "PPC_BOOK3S_32 + PPC_BOOK3S_603 (E300C2/3_CPU)", "e300c*",
  "6.1 cputable.h CPU_FTRS_E300 (no PURR); tb = CSB/4 (boot/cuboot-83xx.c); boot/dts/mpc836x_mds.dts 66000000");
KACCT_CPU(PPC44x, "44x", Isa::PPC32, 32, Platform::PPC_44x, false, false, 533'333'333, 1, false, "44x (440_CPU/464_CPU)", "440*|460*|(generic 44x*",
  "6.1 cputable.h CPU_FTRS_44X (no PURR); tb = CPU clock (boot/4xx.c); 533 MHz is a typical 440EPx part, not verified");
KACCT_CPU(E500, "e500", Isa::PPC32, 32, Platform::PPC_E500, false, false, 82'500'000, 1, false, "PPC_85xx -> PPC_E500 (E500_CPU)", "e500|e500v1|e500v2",
  "6.1 cputable.h CPU_FTRS_E500_2 (no PURR); tb = CCB/8 (boot/cuboot-85xx.c); boot/dts/mpc8560ads.dts 82500000");
KACCT_CPU(E5500, "e5500", Isa::PPC64, 64, Platform::PPC_BOOK3E_64, false, false, 37'500'000, 1, false, "PPC_BOOK3E_64 (E5500_CPU)", "e5500",
  "6.1 Kconfig.cputype PPC_BOOK3E_64 + E5500_CPU; CPU_FTRS_E5500 (no PURR); tb = platform clock/16 (U-Boot), 37.5 MHz not verified");
KACCT_CPU(E6500, "e6500", Isa::PPC64, 64, Platform::PPC_BOOK3E_64, false, false, 37'500'000, 2, false, "PPC_BOOK3E_64 (E6500_CPU)", "e6500",
  "6.1 Kconfig.cputype E6500_CPU; CPU_FTRS_E6500 (no PURR, CPU_FTR_SMT: 2 threads); tb 37.5 MHz not verified");
KACCT_CPU(PPC970, "PPC970", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, false, false, 33'333'333, 1, false, "PPC_BOOK3S_64 (POWER4/970)", "PPC970*",
  "6.1 cputable.h CPU_FTRS_PPC970 (no PURR, no SMT); PowerMac7,2 /proc/cpuinfo timebase 33333333");
KACCT_CPU(POWER5, "POWER5", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, false, 512'000'000, 2, false, "PPC_BOOK3S_64 (POWER5_CPU)", "POWER5*",
  "6.1 cputable.h CPU_FTRS_POWER5: CPU_FTR_PURR, no SPURR; SMT2 (IBM Redbook E870/E880 table 2-2); tb 512 MHz under QEMU pseries");
KACCT_CPU(POWER6, "POWER6", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, true, 512'000'000, 2, false, "PPC_BOOK3S_64 (POWER6_CPU)", "POWER6*",
  "6.1 cputable.h CPU_FTRS_POWER6: CPU_FTR_PURR | CPU_FTR_SPURR; SMT2 (Redbook); tb 512 MHz not verified");
KACCT_CPU(POWER7, "POWER7", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, true, 512'000'000, 4, false, "PPC_BOOK3S_64 (POWER7_CPU)", "POWER7*",
  "6.1 cputable.h CPU_FTRS_POWER7: CPU_FTR_PURR | CPU_FTR_SPURR; SMT4 (Redbook); tb 512000000 (pSeries /proc/cpuinfo)");
KACCT_CPU(POWER8, "POWER8", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, true, 512'000'000, 8, false, "PPC_BOOK3S_64 (POWER8_CPU)", "POWER8*",
  "6.1 cputable.h CPU_FTRS_POWER8: CPU_FTR_PURR | CPU_FTR_SPURR; SMT8 (Redbook); tb 512000000 (skiboot hdata/cpu-common.c)");
KACCT_CPU(POWER9, "POWER9", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, true, 512'000'000, 4, false, "PPC_BOOK3S_64 (POWER9_CPU)", "POWER9*",
  "6.1 cputable.h CPU_FTRS_POWER9: CPU_FTR_PURR | CPU_FTR_SPURR; SMT4 on PowerNV scale-out; tb 512000000 (skiboot)");
KACCT_CPU(POWER10, "POWER10", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, true, 512'000'000, 8, false, "PPC_BOOK3S_64 (POWER10_CPU)", "POWER10*",
  "6.1 cputable.h CPU_FTRS_POWER10: CPU_FTR_PURR | CPU_FTR_SPURR; SMT8 (pHyp lscpu); tb 512 MHz not verified");
KACCT_CPU(PA6T, "PA6T", Isa::PPC64, 64, Platform::PPC_BOOK3S_64, true, false, 33'333'333, 1, false, "PPC_BOOK3S_64 (PPC_PASEMI)", "PA6T",
  "6.1 cputable.h CPU_FTRS_PA6T: CPU_FTR_PURR, no SPURR; 1 thread/core (linuxppc-dev 2021-12-29); tb not verified");
// clang-format on
#undef KACCT_CPU

inline constexpr auto all_cpus = boost::hana::tuple_t<X86_64, MPC8xx, E300, PPC44x, E500, E5500, E6500, PPC970, POWER5,
                                                      POWER6, POWER7, POWER8, POWER9, POWER10, PA6T>;

}  // namespace kacct::arch
