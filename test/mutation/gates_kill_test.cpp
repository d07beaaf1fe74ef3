// Version gates at their boundary releases: for each gate the model reads from the patch table
// (arch::applied) or from an era fact, the last release without and the first with it, and the
// stable backports. A gate moved by one release, or a backport ignored, fails here. Each test
// names the catalogued mutants (tools/mutation/catalogue.tsv) it was written to kill.
#include <gtest/gtest.h>

#include "arch/registry.hpp"
#include "model/gen/gen.hpp"
#include "model/lazytlb/lazytlb.hpp"
#include "model/psi/psi.hpp"
#include "model/sim/machine.hpp"

namespace {
using namespace kacct;
using arch::v;

sim::ModelCfg cfg_of(std::string_view cpu, arch::KVersion ver, arch::Accounting acct, bool steal = false) {
  arch::Config c;
  c.version = ver;
  c.acct = acct;
  c.steal = steal;
  c.hz = 250;
  return sim::model_cfg(*arch::find_cpu(cpu), c);
}

// 728, 806: the simulator's settings: x86-64's own exact division; 108ad0999085 and backports.
TEST(GatesKill, SimulatorSettings) {
  EXPECT_EQ(cfg_of("x86-64", v(6, 1), arch::Accounting::Tick).adjust.div, model::ScaleDiv::Exact128);
  EXPECT_EQ(cfg_of("x86-64", v(5, 10), arch::Accounting::Tick).adjust.div, model::ScaleDiv::Exact128);
  EXPECT_EQ(cfg_of("POWER9", v(6, 1), arch::Accounting::Tick).adjust.div, model::ScaleDiv::Generic2020);
  EXPECT_FALSE(cfg_of("x86-64", v(6, 1, 128), arch::Accounting::Tick).tick.steal_drop_excess);
  EXPECT_TRUE(cfg_of("x86-64", v(6, 1, 129), arch::Accounting::Tick).tick.steal_drop_excess);
  EXPECT_FALSE(cfg_of("x86-64", v(6, 12, 13), arch::Accounting::Tick).tick.steal_drop_excess);
  EXPECT_TRUE(cfg_of("x86-64", v(6, 12, 14), arch::Accounting::Tick).tick.steal_drop_excess);
  EXPECT_TRUE(cfg_of("x86-64", v(6, 14), arch::Accounting::Tick).tick.steal_drop_excess);
}

// 334-337: native vtime settings per release and CPU.
TEST(GatesKill, NativeSettings) {
  using model::native::ScaledSource;
  EXPECT_FALSE(cfg_of("POWER9", v(4, 10), arch::Accounting::Native).native.flush_epoch);
  EXPECT_TRUE(cfg_of("POWER9", v(4, 11), arch::Accounting::Native).native.flush_epoch);
  EXPECT_EQ(cfg_of("POWER9", v(6, 1), arch::Accounting::Native).native.source, ScaledSource::Spurr);
  EXPECT_EQ(cfg_of("POWER5", v(6, 1), arch::Accounting::Native).native.source, ScaledSource::Purr);
  EXPECT_EQ(cfg_of("e500", v(6, 1), arch::Accounting::Native).native.source, ScaledSource::Timebase);
  EXPECT_FALSE(cfg_of("POWER9", v(6, 12, 100), arch::Accounting::Native).native.starttime_init);
  EXPECT_TRUE(cfg_of("POWER9", v(6, 12, 101), arch::Accounting::Native).native.starttime_init);
  // Scaled cputime (ARCH_HAS_SCALED_CPUTIME): every CPU before abcff86df2d2, then PPC64, then
  // Book3S-64 only (b4645ffc49cf).
  for (const auto& c : arch::cpus()) {
    if (c.isa == arch::Isa::X86_64) continue;
    for (auto ver = v(4, 9); ver <= v(6, 12); ver = arch::next_mainline(ver)) {
      arch::Config k;
      k.version = ver;
      k.acct = arch::Accounting::Native;
      if (!arch::illegal_reason(c, k).empty()) continue;
      EXPECT_EQ(sim::model_cfg(c, k).native.scaled, arch::native_scaled_cputime(c, ver)) << c.name << " " << ver.str();
    }
  }
}

// 431-436: gen vtime granularity and era facts at their first releases.
TEST(GatesKill, GenSettings) {
  using model::GenVariant;
  auto g = [](arch::KVersion ver) { return model::gen_cfg(ver, 1000); };
  EXPECT_EQ(g(v(4, 5)).variant, GenVariant::Snapshot);
  EXPECT_EQ(g(v(4, 6)).variant, GenVariant::Jiffy);
  EXPECT_EQ(g(v(4, 12)).variant, GenVariant::Jiffy);
  EXPECT_EQ(g(v(4, 13)).variant, GenVariant::Accum);
  EXPECT_FALSE(g(v(5, 4)).states55);
  EXPECT_TRUE(g(v(5, 5)).states55);
  EXPECT_TRUE(g(v(4, 7)).irq_hooks);
  EXPECT_FALSE(g(v(4, 8)).irq_hooks);
  EXPECT_FALSE(g(v(4, 7)).other_time);
  EXPECT_TRUE(g(v(4, 8)).other_time);
  EXPECT_TRUE(g(v(5, 13)).idle_init_on_online);
  EXPECT_FALSE(g(v(5, 14)).idle_init_on_online);
  // 438-439: x86's vtime guest exit before KVM serves irqs, 5.9 .. 5.12 only.
  EXPECT_FALSE(g(v(5, 8)).guest_exit_before_irq);
  EXPECT_TRUE(g(v(5, 9)).guest_exit_before_irq);
  EXPECT_TRUE(g(v(5, 12)).guest_exit_before_irq);
  EXPECT_FALSE(g(v(5, 13)).guest_exit_before_irq);
  EXPECT_FALSE(g(v(5, 10, 41)).guest_exit_before_irq);  // 160457140187's stable backports
  EXPECT_TRUE(g(v(5, 10, 40)).guest_exit_before_irq);
  EXPECT_FALSE(g(v(5, 12, 8)).guest_exit_before_irq);
  EXPECT_TRUE(model::gen_cfg(v(6, 1), 1000, arch::Platform::PPC_BOOK3S_64).guest_exit_before_irq);
  EXPECT_FALSE(model::gen_cfg(v(6, 1), 1000, arch::Platform::PPC_BOOK3E_64).guest_exit_before_irq);
}

// 527-530: lazy-TLB code per arch and release.
TEST(GatesKill, LazyTlbSettings) {
  using model::lazytlb::Arch;
  using model::lazytlb::config_for;
  EXPECT_FALSE(config_for(Arch::PpcRadix, v(6, 3)).shootdown);
  EXPECT_TRUE(config_for(Arch::PpcRadix, v(6, 4)).shootdown);
  EXPECT_FALSE(config_for(Arch::Generic, v(6, 4)).shootdown);
  EXPECT_FALSE(config_for(Arch::Generic, v(6, 3)).use_mm_always_grabs);
  EXPECT_TRUE(config_for(Arch::Generic, v(6, 4)).use_mm_always_grabs);
  EXPECT_FALSE(config_for(Arch::PpcRadix, v(6, 5)).exit_flush_shoots);
  EXPECT_TRUE(config_for(Arch::PpcRadix, v(6, 6)).exit_flush_shoots);
  EXPECT_FALSE(config_for(Arch::Generic, v(6, 13)).force_init_mm);
  EXPECT_TRUE(config_for(Arch::Generic, v(6, 14)).force_init_mm);
}

// 617, 619-622: PSI irq facts per release, with the stable backports.
TEST(GatesKill, PsiSettings) {
  auto at = [](arch::KVersion ver) {
    model::psi::PsiCfg c;
    c.ver = ver;
    return c;
  };
  EXPECT_FALSE(at(v(6, 0)).has_psi_irq());
  EXPECT_TRUE(at(v(6, 1)).has_psi_irq());
  EXPECT_TRUE(at(v(6, 1)).charge_in_clock());
  EXPECT_FALSE(at(v(6, 1, 99)).charge_at_tick());
  EXPECT_TRUE(at(v(6, 1, 100)).charge_at_tick());
  EXPECT_FALSE(at(v(6, 1, 100)).charge_in_clock());
  EXPECT_FALSE(at(v(6, 9)).charge_at_tick());
  EXPECT_TRUE(at(v(6, 10)).charge_at_tick());
  EXPECT_FALSE(at(v(6, 10)).charge_in_clock());
  EXPECT_FALSE(at(v(6, 11)).clock_in_seq());
  EXPECT_TRUE(at(v(6, 12)).clock_in_seq());
  EXPECT_FALSE(at(v(6, 12, 41)).percpu_seq());
  EXPECT_TRUE(at(v(6, 12, 42)).percpu_seq());
}

}  // namespace
