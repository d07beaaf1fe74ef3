// Concrete domain: kernel unsigned integers with wrap-around, truncating division and explicit
// obligations where C is undefined (division by zero, over-wide shifts). Zero-overhead in the
// hot path: operations are constexpr on native types; an obligation failure is recorded, and the
// result then follows SMT-LIB (x/0 = all ones, x%0 = x, x<<n = 0 for n >= width) so that both
// domains agree bit for bit even on failing paths.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/domain/domain.hpp"

namespace kacct {

namespace detail {
template <unsigned W>
struct uint_of;
template <>
struct uint_of<8> {
  using type = std::uint8_t;
};
template <>
struct uint_of<16> {
  using type = std::uint16_t;
};
template <>
struct uint_of<32> {
  using type = std::uint32_t;
};
template <>
struct uint_of<64> {
  using type = std::uint64_t;
};
template <>
struct uint_of<128> {
  using type = unsigned __int128;
};
template <class T>
struct width_of {
  static constexpr unsigned value = sizeof(T) * 8;
};
// Arithmetic in a type at least as wide as unsigned int, so that uint8/16 never promote to int.
template <class T>
using work_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>;
}  // namespace detail

template <class T>
concept ConcreteUInt = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, unsigned __int128>;

struct Concrete {
  using Bool = bool;
  template <unsigned W>
  using U = typename detail::uint_of<W>::type;
  static constexpr bool is_symbolic = false;

  // Failed obligations, in order (site names are string literals owned by the model).
  std::vector<std::string_view> failed;
  bool ok() const { return failed.empty(); }

  void require(bool c, std::string_view site) {
    if (!c) [[unlikely]]
      failed.push_back(site);
  }

  template <unsigned W>
  static constexpr U<W> lit(std::uint64_t v) {
    return static_cast<U<W>>(v);
  }
  static constexpr bool lit_bool(bool b) { return b; }

  template <ConcreteUInt T>
  static constexpr T add(T a, T b) {
    using X = detail::work_t<T>;
    return static_cast<T>(X(a) + X(b));
  }
  template <ConcreteUInt T>
  static constexpr T sub(T a, T b) {
    using X = detail::work_t<T>;
    return static_cast<T>(X(a) - X(b));
  }
  template <ConcreteUInt T>
  static constexpr T mul(T a, T b) {
    using X = detail::work_t<T>;
    return static_cast<T>(X(a) * X(b));
  }
  template <ConcreteUInt T>
  T udiv(T a, T b, std::string_view site) {
    require(b != 0, site);
    return b != 0 ? static_cast<T>(a / b) : static_cast<T>(~T(0));
  }
  template <ConcreteUInt T>
  T urem(T a, T b, std::string_view site) {
    require(b != 0, site);
    return b != 0 ? static_cast<T>(a % b) : a;
  }
  template <ConcreteUInt T>
  T shl(T a, T n, std::string_view site) {
    constexpr unsigned W = detail::width_of<T>::value;
    require(n < W, site);
    using X = detail::work_t<T>;
    return n < W ? static_cast<T>(X(a) << unsigned(n)) : T(0);
  }
  template <ConcreteUInt T>
  T lshr(T a, T n, std::string_view site) {
    constexpr unsigned W = detail::width_of<T>::value;
    require(n < W, site);
    return n < W ? static_cast<T>(a >> unsigned(n)) : T(0);
  }
  template <ConcreteUInt T>
  static constexpr T band_bits(T a, T b) {
    return a & b;
  }
  template <ConcreteUInt T>
  static constexpr T bor_bits(T a, T b) {
    return a | b;
  }
  template <ConcreteUInt T>
  static constexpr bool ult(T a, T b) {
    return a < b;
  }
  template <ConcreteUInt T>
  static constexpr bool ule(T a, T b) {
    return a <= b;
  }
  template <ConcreteUInt T>
  static constexpr bool ugt(T a, T b) {
    return a > b;
  }
  template <ConcreteUInt T>
  static constexpr bool uge(T a, T b) {
    return a >= b;
  }
  template <ConcreteUInt T>
  static constexpr bool eq(T a, T b) {
    return a == b;
  }
  template <ConcreteUInt T>
  static constexpr bool ne(T a, T b) {
    return a != b;
  }
  static constexpr bool eq(bool a, bool b) { return a == b; }
  template <ConcreteUInt T>
  static constexpr T min(T a, T b) {
    return a < b ? a : b;
  }
  template <ConcreteUInt T>
  static constexpr T max(T a, T b) {
    return a < b ? b : a;
  }
  template <class T>
  static constexpr T select(bool c, T a, T b) {
    return c ? a : b;
  }
  static constexpr bool band(bool a, bool b) { return a && b; }
  static constexpr bool bor(bool a, bool b) { return a || b; }
  static constexpr bool bnot(bool a) { return !a; }
  static constexpr bool implies(bool a, bool b) { return !a || b; }
  // Did a + b wrap? (an explicit overflow question, used by obligations)
  template <ConcreteUInt T>
  static constexpr bool add_overflows(T a, T b) {
    return T(a + b) < a;
  }
  template <ConcreteUInt T>
  static constexpr bool mul_overflows(T a, T b) {
    using Wide = std::conditional_t<(sizeof(T) < 8), std::uint64_t, unsigned __int128>;
    constexpr unsigned W = detail::width_of<T>::value;
    return (Wide(a) * Wide(b)) >> W != 0;
  }

  template <unsigned W, ConcreteUInt T>
  static constexpr U<W> zext(T a) {
    static_assert(W >= detail::width_of<T>::value, "zext narrows");
    return static_cast<U<W>>(a);
  }
  template <unsigned W, ConcreteUInt T>
  static constexpr U<W> trunc(T a) {
    static_assert(W <= detail::width_of<T>::value, "trunc widens");
    return static_cast<U<W>>(a);
  }

  // Exact a*b/c with a 128-bit intermediate (x86-64 mulq/divq; the generic C code since the
  // 2025 rewrite). Obligations: c != 0 and the quotient fits in 64 bits (else #DE on x86-64).
  std::uint64_t mul_u64_u64_div_u64(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::string_view site) {
    const unsigned __int128 n = (unsigned __int128)a * b;
    if (std::uint64_t(n >> 64) < c) [[likely]]  // c != 0 and the quotient fits: both obligations hold
      return udiv_128_64(n, c);
    require(c != 0, site);
    if (c == 0) return ~std::uint64_t(0);
    unsigned __int128 q = n / c;
    require((q >> 64) == 0, "mul_u64_u64_div_u64.quotient_fits");
    return static_cast<std::uint64_t>(q);
  }
  // n / c for a quotient known to fit in 64 bits (n >> 64 < c): one divq on x86-64, where the
  // plain 128-bit division is a libgcc __udivti3 call.
  static std::uint64_t udiv_128_64(unsigned __int128 n, std::uint64_t c) {
#if defined(__x86_64__)
    std::uint64_t q, r;
    asm("divq %4" : "=a"(q), "=d"(r) : "a"(std::uint64_t(n)), "d"(std::uint64_t(n >> 64)), "rm"(c) : "cc");
    return q;
#else
    return std::uint64_t(n / c);
#endif
  }
  // floor(log2(x)) of a u64 as the kernel's ilog2() of a non-constant (fls64(x) - 1, so all
  // ones for 0): model::ilog2_u64() uses it where the domain has it (the symbolic domain builds
  // the same function from selects).
  static constexpr std::uint64_t ilog2_u64(std::uint64_t x) {
    return x == 0 ? ~std::uint64_t{0} : std::uint64_t(63 - __builtin_clzll(x));
  }
};

static_assert(Domain<Concrete>);

}  // namespace kacct
