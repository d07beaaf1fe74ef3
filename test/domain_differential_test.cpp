// The two domains must agree bit for bit: every primitive exhaustively at 8 bits, and on
// random plus edge values at 32 and 64 bits. The symbolic side is evaluated by Z3's simplifier
// on constant operands.
#include <gtest/gtest.h>

#include <random>

#include "model/domain/concrete.hpp"
#include "model/domain/symbolic.hpp"

namespace kacct {
namespace {

std::uint64_t val(const z3::expr& e) {
  std::uint64_t v = 0;
  z3::expr s = e.simplify();
  EXPECT_TRUE(s.is_numeral_u64(v)) << s.to_string();
  return v;
}
bool bval(const z3::expr& e) {
  z3::expr s = e.simplify();
  EXPECT_TRUE(s.is_true() || s.is_false()) << s.to_string();
  return s.is_true();
}

// One binary operation compared on (a, b) at width W; obligations must agree too.
template <unsigned W>
struct Pair {
  using T = typename Concrete::template U<W>;
  Concrete c;
  Symbolic& s;
  T a, b;
  SymBV<W> sa() { return s.template lit<W>(a); }
  SymBV<W> sb() { return s.template lit<W>(b); }
  void all() {
    ASSERT_EQ(c.add(a, b), T(val(s.add(sa(), sb()).e()))) << +a << "+" << +b;
    ASSERT_EQ(c.sub(a, b), T(val(s.sub(sa(), sb()).e())));
    ASSERT_EQ(c.mul(a, b), T(val(s.mul(sa(), sb()).e())));
    ASSERT_EQ(c.udiv(a, b, "t"), T(val(s.udiv(sa(), sb(), "t").e()))) << +a << "/" << +b;
    ASSERT_EQ(c.urem(a, b, "t"), T(val(s.urem(sa(), sb(), "t").e())));
    ASSERT_EQ(c.shl(a, b, "t"), T(val(s.shl(sa(), sb(), "t").e()))) << +a << "<<" << +b;
    ASSERT_EQ(c.lshr(a, b, "t"), T(val(s.lshr(sa(), sb(), "t").e())));
    ASSERT_EQ(c.min(a, b), T(val(s.min(sa(), sb()).e())));
    ASSERT_EQ(c.max(a, b), T(val(s.max(sa(), sb()).e())));
    ASSERT_EQ(c.ult(a, b), bval(s.ult(sa(), sb()).e()));
    ASSERT_EQ(c.ule(a, b), bval(s.ule(sa(), sb()).e()));
    ASSERT_EQ(c.eq(a, b), bval(s.eq(sa(), sb()).e()));
    ASSERT_EQ(c.add_overflows(a, b), bval(s.add_overflows(sa(), sb()).e()));
    ASSERT_EQ(c.mul_overflows(a, b), bval(s.mul_overflows(sa(), sb()).e()));
    ASSERT_EQ(c.select(a < b, a, b), T(val(s.select(s.ult(sa(), sb()), sa(), sb()).e())));
  }
};

// Obligations are recorded as conditions; compare "violated" truth values.
template <unsigned W>
void check_obligations(std::uint64_t a, std::uint64_t b) {
  z3::context ctx;
  Symbolic s(ctx);
  Concrete c;
  using T = typename Concrete::template U<W>;
  c.udiv(T(a), T(b), "div");
  s.udiv(s.template lit<W>(a), s.template lit<W>(b), "div");
  c.shl(T(a), T(b), "shl");
  s.shl(s.template lit<W>(a), s.template lit<W>(b), "shl");
  std::vector<std::string_view> sym_failed;
  for (const auto& o : s.obligations)
    if (bval(o.violated)) sym_failed.push_back(o.site);
  ASSERT_EQ(c.failed, sym_failed) << a << " " << b;
}

template <unsigned W>
void compare(Symbolic& s, std::uint64_t a, std::uint64_t b) {
  using T = typename Concrete::template U<W>;
  Pair<W>{Concrete{}, s, T(a), T(b)}.all();
}

TEST(DomainDifferential, Exhaustive8Bit) {
  z3::context ctx;
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0; b < 256; ++b) {
      Symbolic s(ctx);
      compare<8>(s, a, b);
      if (HasFatalFailure()) return;
    }
}

std::vector<std::uint64_t> edges(unsigned w) {
  const std::uint64_t m = w == 64 ? ~0ull : (1ull << w) - 1;
  return {0, 1, 2, 3, w - 1ull, w, w + 1ull, m, m - 1, m >> 1, (m >> 1) + 1, 0x5555555555555555ull & m};
}
template <unsigned W>
void random_width() {
  z3::context ctx;
  std::mt19937_64 rng(20261130 + W);
  auto vals = edges(W);
  for (int i = 0; i < 40; ++i) vals.push_back(rng());
  for (auto a : vals)
    for (auto b : vals) {
      Symbolic s(ctx);
      compare<W>(s, a, b);
      if (::testing::Test::HasFatalFailure()) return;
    }
}
TEST(DomainDifferential, Random32Bit) { random_width<32>(); }
TEST(DomainDifferential, Random64Bit) { random_width<64>(); }

TEST(DomainDifferential, ObligationsAgree) {
  for (std::uint64_t a : {0ull, 5ull, 255ull})
    for (std::uint64_t b : {0ull, 1ull, 7ull, 8ull, 9ull, 200ull}) check_obligations<8>(a, b);
  for (std::uint64_t b : {0ull, 63ull, 64ull, 65ull, ~0ull}) check_obligations<64>(12345, b);
}

TEST(DomainDifferential, MulDiv128AndWidthChanges) {
  z3::context ctx;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    Symbolic s(ctx);
    Concrete c;
    std::uint64_t a = rng(), b = rng() >> (i % 64), d = (rng() >> (i % 61)) | 1;
    if (i % 7 == 0) d = a;  // quotient == b: fits
    auto q = c.mul_u64_u64_div_u64(a, b, d, "m");
    auto sq = s.mul_u64_u64_div_u64(s.lit<64>(a), s.lit<64>(b), s.lit<64>(d), "m");
    ASSERT_EQ(q, val(sq.e()));
    // quotient_fits obligation agrees
    bool sym_fail = bval(s.obligations.back().violated);
    ASSERT_EQ(sym_fail, !c.failed.empty()) << a << "*" << b << "/" << d;
    ASSERT_EQ(c.trunc<32>(a), std::uint32_t(val(s.trunc<32>(s.lit<64>(a)).e())));
    ASSERT_EQ(c.zext<64>(std::uint32_t(b)), val(s.zext<64>(s.lit<32>(std::uint32_t(b))).e()));
  }
}

// Z3's own operators are signed; the wrapper must never be: a < b on 0x80.. vs 1.
TEST(DomainDifferential, WrapperIsUnsignedWhereZ3IsSigned) {
  z3::context ctx;
  Symbolic s(ctx);
  auto big = s.lit<64>(1ull << 63), one = s.lit<64>(1);
  EXPECT_FALSE(bval(s.ult(big, one).e()));
  EXPECT_TRUE(bval((big.e() < one.e())));  // the raw z3::expr operator: signed
  EXPECT_EQ(val(s.udiv(big, s.lit<64>(2), "t").e()), 1ull << 62);
}

}  // namespace
}  // namespace kacct
