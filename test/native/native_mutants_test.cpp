// Mutants for spec/native_vtime.hpp: each invariant first holds of a real step of the model,
// then a plausibly broken variant of that step makes it false.
#include <gtest/gtest.h>

#include "spec/native_vtime.hpp"

namespace kacct {
namespace {
using namespace model::native;
namespace sn = spec::native;
using C = Concrete;

NativeCfg cfg64() {
  NativeCfg n;
  n.tb_hz = 512'000'000;
  n.tb_scale = tb_scale_of(n.tb_hz).scale;
  n.tb_shift = tb_scale_of(n.tb_hz).shift;
  n.scaled = true;
  n.source = ScaledSource::Spurr;
  return n;
}

// A task: kernel 0-100, user 100-300, kernel 300-450, irq 450-470, tick flush at 470.
struct Steps {
  C d;
  NativeCfg n = cfg64();
  Acct<C, 64> a = zero_acct<C, 64>(d);
  Cost k;
  std::uint64_t flushed = 0;
  model::CpuAcct<C> cpu = model::zero_cpu(d);
  model::TaskAcct<C> task = model::zero_task(d);
  Scaled<C> sc{0, 0};
  void upto_flush() {
    user_exit(d, a, std::uint64_t{100}, k);
    user_entry(d, n, a, std::uint64_t{300}, 0, 0, k);
    account_kernel_side(d, n, a, Kctx::Kernel, std::uint64_t{450}, std::uint64_t{400}, 0, k);
    account_kernel_side(d, n, a, Kctx::Hardirq, std::uint64_t{470}, std::uint64_t{420}, 0, k);
  }
  void flush() {
    flushed += sn::pending_tb(d, a);
    vtime_flush(d, n, a, cpu, task, sc, {}, k);
  }
};

TEST(NativeMutant, StarttimeNotRestartedAtUserEntryBreaksTbConserved) {
  Steps r;
  r.upto_flush();
  EXPECT_TRUE(sn::tb_conserved(r.d, r.a, true, std::uint64_t{470}, r.flushed, std::uint64_t{0}));
  Steps m;
  user_exit(m.d, m.a, std::uint64_t{100}, m.k);
  m.a.utime += 300 - m.a.starttime_user;  // user entry that forgets starttime = now
  EXPECT_FALSE(sn::tb_conserved(m.d, m.a, true, std::uint64_t{300}, m.flushed, std::uint64_t{0}));
}
TEST(NativeMutant, FlushThatKeepsABucketBreaksFlushZeroesAndTbConserved) {
  Steps r;
  r.upto_flush();
  r.flush();
  EXPECT_TRUE(sn::flush_zeroes(r.d, r.n, r.a));
  EXPECT_TRUE(sn::tb_conserved(r.d, r.a, true, std::uint64_t{470}, r.flushed, std::uint64_t{0}));
  r.a.hardirq_time = 20;  // the hardirq bucket is converted but not zeroed
  EXPECT_FALSE(sn::flush_zeroes(r.d, r.n, r.a));
  EXPECT_FALSE(sn::tb_conserved(r.d, r.a, true, std::uint64_t{470}, r.flushed, std::uint64_t{0}));
}
TEST(NativeMutant, RoundingUpConversionBreaksNsBounded) {
  Steps r;
  r.upto_flush();
  r.flush();
  C d;
  const std::uint64_t ns = r.cpu.cpustat[model::USER] + r.cpu.cpustat[model::SYSTEM] + r.cpu.cpustat[model::IRQ];
  EXPECT_TRUE(sn::ns_bounded(d, r.n, ns, r.flushed, std::uint64_t{3}));
  // A tb_to_ns that rounds up by one granule per bucket.
  EXPECT_FALSE(sn::ns_bounded(d, r.n, ns + 3 * (std::uint64_t{1} << r.n.tb_shift), r.flushed, std::uint64_t{3}));
  // A conversion that drops more than a granule per bucket.
  EXPECT_FALSE(sn::ns_bounded(d, r.n, ns / 2, r.flushed, std::uint64_t{3}));
}
TEST(NativeMutant, SnapshotPastNowBreaksSnapshotsMonotone) {
  Steps r;
  auto before = r.a;
  user_exit(r.d, r.a, std::uint64_t{100}, r.k);
  EXPECT_TRUE(sn::snapshots_monotone(r.d, before, r.a, std::uint64_t{100}));
  r.a.starttime_user = 101;  // a snapshot ahead of the TB read
  EXPECT_FALSE(sn::snapshots_monotone(r.d, before, r.a, std::uint64_t{100}));
  auto back = r.a;
  back.starttime_user = 50;
  r.a.starttime_user = 100;
  EXPECT_FALSE(sn::snapshots_monotone(r.d, r.a, back, std::uint64_t{120}));  // moved backwards
}

sn::SplitIo<C, 64> real_split(std::uint64_t ds, std::uint64_t s, std::uint64_t u) {
  C d;
  NativeCfg n = cfg64();
  Cost k;
  std::vector<std::array<std::uint64_t, 5>> log;
  k.split_log = &log;
  Acct<C, 64> a = zero_acct<C, 64>(d);
  a.utime = u;
  delta_scaled<C, 64>(d, n, a, ds, s, k);
  return {log[0][0], log[0][1], log[0][2], log[0][3], log[0][4]};
}
TEST(NativeMutant, RemainderLostBreaksSplitSum) {
  C d;
  auto io = real_split(1000, 333, 334);
  EXPECT_TRUE(sn::split_sum(d, io));
  io.u_sc = io.ds - io.s_sc - 1;  // user share computed by a second floor division
  EXPECT_FALSE(sn::split_sum(d, io));
}
TEST(NativeMutant, ShareAboveDeltaBreaksSplitBounds) {
  C d;
  auto io = real_split(1000, 400, 100);
  EXPECT_TRUE(sn::split_bounds(d, io));
  io.s_sc = io.ds + 1;
  EXPECT_FALSE(sn::split_bounds(d, io));
}
TEST(NativeMutant, SplittingAnExactDeltaBreaksSplitIdentity) {
  C d;
  auto io = real_split(500, 400, 100);
  EXPECT_TRUE(sn::split_identity(d, io));
  EXPECT_EQ(io.s_sc, 400u);
  io.s_sc = 399;  // a variant that always divides (rounding moves one tick)
  io.u_sc = 101;
  EXPECT_FALSE(sn::split_identity(d, io));
}
TEST(NativeMutant, WideProductDetectedBySplitNoOverflow) {
  C d;
  EXPECT_TRUE(sn::split_no_overflow(d, real_split(1000, 400, 100)));
  sn::SplitIo<C, 32> io{100'000, 70'000, 10, 0, 0};  // 7e9 >= 2^32
  EXPECT_FALSE(sn::split_no_overflow(d, io));
  sn::SplitIo<C, 32> ok{60'000, 70'000, 10, 0, 0};  // 4.2e9 < 2^32
  EXPECT_TRUE(sn::split_no_overflow(d, ok));
}

}  // namespace
}  // namespace kacct
