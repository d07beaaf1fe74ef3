// libFuzzer target: the model against the kernel's own accounting functions (Debian's
// linux-source-6.1 and linux-source-6.12, extracted at build time by test/kernel_diff/kdiff.cmake;
// no kernel code is committed), with the comparisons of test/kernel_diff/kdiff_cases.hpp: the
// same inputs' generators, documented classes and verdicts as kernel_diff_test, but the inputs
// drawn from the fuzzer's bytes instead of a seed.
//
// Input: byte 0 = selector: bit 0 the tree (6.1.192, 6.12.118), bit 1 the division flavour
// (mul_u64_u64_div_u64 and cputime_adjust: generic C or x86-64 divq), bits 2-4 the comparison
// (mul_u64_u64_div_u64, cputime_adjust, account_process_tick, account_idle_ticks, the tick
// helpers, irqtime_account_irq, gen vtime, psi_account_irqtime); the rest feeds the generators,
// 8 bytes per value (kdiff::Rng). An unexplained disagreement prints the comparison's report
// (input, kernel, model, likely cause) and aborts; so does a comparison that compared nothing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "test/kernel_diff/kdiff_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct::kdiff;
  if (size < 1) return 0;
  const unsigned sel = data[0];
  const Tree& t = trees[sel & 1];
  const bool x86 = sel & 2;
  Rng r{0, data + 1, size - 1};
  Report rep{"fuzz_kerneldiff"};
  rep.replay = [](std::uint64_t) { return std::string("fuzz_kerneldiff_replay <this input>"); };
  const std::uint64_t seed = ~std::uint64_t{0};  // no pinned input (cputime_adjust's pins are seeds 0..)
  static const char* const names[] = {"mul_u64_u64_div_u64", "cputime_adjust",     "account_process_tick",
                                      "account_idle_ticks",  "tick helpers",       "irqtime_account_irq",
                                      "gen vtime",           "psi_account_irqtime"};
  const unsigned which = (sel >> 2) & 7;
  switch (which) {
    case 0: diff_mul_u64_u64_div_u64(t, x86, rep, seed, r); break;
    case 1: diff_cputime_adjust(t, x86, rep, seed, r); break;
    case 2: diff_account_process_tick(t, rep, seed, r); break;
    case 3: diff_account_idle_ticks(t, rep, seed, r); break;
    case 4: diff_tick_helpers(t, rep, seed, r); break;
    case 5: diff_irqtime_account_irq(t, rep, seed, r); break;
    case 6: diff_gen_vtime(t, rep, seed, r); break;
    default: diff_psi_account_irqtime(t, rep, seed, r); break;
  }
  if (rep.runs == 0) {
    std::fprintf(stderr, "kacct fuzz_kerneldiff: %s %s compared nothing\n", names[which], t.name);
    std::abort();
  }
  if (rep.unexplained) {
    std::fprintf(stderr, "kacct fuzz_kerneldiff: %s %s %s: unexplained disagreement\n", names[which], t.name,
                 x86 ? "x86-64" : "generic");
    for (const auto& s : rep.shown) std::fprintf(stderr, "%s\n", s.c_str());
    std::abort();
  }
  return 0;
}
