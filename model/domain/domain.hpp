// Value domains: every model step, invariant and obligation is a template over a domain D.
// Two domains exist: Concrete (native kernel integers) and Symbolic (Z3 bit-vectors behind
// project-owned wrappers). Model code uses only the named operations declared here.
#pragma once
#include <concepts>
#include <cstdint>
#include <string_view>

// On the hot concrete paths whose nested lambdas GCC leaves out of line (their state then goes
// through memory, with store-forwarding stalls): inline them. Semantics unchanged.
#define KACCT_INLINE __attribute__((always_inline))

namespace kacct {

// Kernel integer types, by width. `ulong<D, Bits>` is the arch's `unsigned long`.
template <class D>
using u8 = typename D::template U<8>;
template <class D>
using u16 = typename D::template U<16>;
template <class D>
using u32 = typename D::template U<32>;
template <class D>
using u64 = typename D::template U<64>;
template <class D>
using u128 = typename D::template U<128>;
template <class D, unsigned Bits>
using ulong_t = typename D::template U<Bits>;
template <class D>
using boolean = typename D::Bool;

// The operations a domain provides (checked at compile time for both domains).
template <class D>
concept Domain = requires(D& d, u64<D> a, u32<D> b, boolean<D> c, std::string_view site) {
  { d.add(a, a) } -> std::same_as<u64<D>>;
  { d.sub(a, a) } -> std::same_as<u64<D>>;
  { d.mul(a, a) } -> std::same_as<u64<D>>;
  { d.udiv(a, a, site) } -> std::same_as<u64<D>>;
  { d.urem(a, a, site) } -> std::same_as<u64<D>>;
  { d.shl(a, a, site) } -> std::same_as<u64<D>>;
  { d.lshr(a, a, site) } -> std::same_as<u64<D>>;
  { d.ult(a, a) } -> std::same_as<boolean<D>>;
  { d.ule(a, a) } -> std::same_as<boolean<D>>;
  { d.eq(a, a) } -> std::same_as<boolean<D>>;
  { d.select(c, a, a) } -> std::same_as<u64<D>>;
  { d.min(a, a) } -> std::same_as<u64<D>>;
  { d.max(a, a) } -> std::same_as<u64<D>>;
  { d.band(c, c) } -> std::same_as<boolean<D>>;
  { d.bor(c, c) } -> std::same_as<boolean<D>>;
  { d.bnot(c) } -> std::same_as<boolean<D>>;
  { d.mul_u64_u64_div_u64(a, a, a, site) } -> std::same_as<u64<D>>;
  { d.template zext<64>(b) } -> std::same_as<u64<D>>;
  { d.template trunc<32>(a) } -> std::same_as<u32<D>>;
  { d.template lit<64>(std::uint64_t{1}) } -> std::same_as<u64<D>>;
  { d.lit_bool(true) } -> std::same_as<boolean<D>>;
  d.require(c, site);
};

}  // namespace kacct
