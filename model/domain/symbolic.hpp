// Symbolic domain: project-owned wrappers over Z3 bit-vectors. The wrappers have no operators,
// no implicit bool and no integer constructors (z3::expr has all three, with signed meanings);
// every operation is a named, unsigned one. Division by zero and over-wide shifts, which SMT-LIB
// defines, are recorded as obligations under the current path condition.
#pragma once
// The concrete libraries (kacct_model, kacct_trace, libkacct) are built with this defined: they
// must not depend on the solver.
#ifdef KACCT_CONCRETE_ONLY
#error "the symbolic domain (Z3) is included by a target that must build without Z3"
#endif
#include <z3++.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/domain/domain.hpp"
#include "model/domain/reflect.hpp"

namespace kacct {

// Default-constructible (state structs need it); reading an unset value is a tool error.
class SymValue {
 public:
  SymValue() = default;
  explicit SymValue(z3::expr x) : x_(std::move(x)) {}
  const z3::expr& e() const {
    if (!x_) throw std::logic_error("kacct: read of an uninitialised symbolic value");
    return *x_;
  }

 private:
  std::optional<z3::expr> x_;
};
template <unsigned W>
struct SymBV : SymValue {
  static constexpr unsigned width = W;
  SymBV() = default;
  explicit SymBV(z3::expr x) : SymValue(std::move(x)) {}
};
struct SymBool : SymValue {
  SymBool() = default;
  explicit SymBool(z3::expr x) : SymValue(std::move(x)) {}
};

template <class T>
struct is_symbv : std::false_type {};
template <unsigned W>
struct is_symbv<SymBV<W>> : std::true_type {};
template <class T>
concept SymUInt = is_symbv<T>::value;

struct Obligation {
  std::string site;
  z3::expr violated;  // path condition and not(requirement): sat means it can fail
};

class Symbolic {
 public:
  using Bool = SymBool;
  template <unsigned W>
  using U = SymBV<W>;
  static constexpr bool is_symbolic = true;

  explicit Symbolic(z3::context& c) : ctx_(c), path_(c.bool_val(true)) {}
  z3::context& ctx() const { return ctx_; }

  // Obligations collected so far (each under the path condition at the time).
  std::vector<Obligation> obligations;
  // Facts assumed by abstractions, and the names of the abstractions used (they go into every
  // verdict that depends on them).
  std::vector<z3::expr> assumptions;
  std::vector<std::string> approximations;

  // a*b/c replaced by a fresh value. With `facts`, it is constrained by properties of exact
  // floor division that the proofs need (proved separately at reduced width:
  // proofs/jobs_cputime.cpp "division.exact_facts"); without, it is any value (havoc).
  bool abstract_facts = true;
  SymBV<64> abstract_mul_div(const SymBV<64>& a, const SymBV<64>& b, const SymBV<64>& c, std::string_view site) {
    require(ne(c, lit<64>(0)), site);
    SymBV<64> q(ctx_.bv_const(("q!" + std::to_string(nfresh_++)).c_str(), 64));
    if (abstract_facts) {
      assumptions.push_back(exact_div_facts(a.e(), b.e(), c.e(), q.e()));
      note(
          "a*b/c abstracted by facts of exact floor division (c != 0): a <= c -> q <= b; b <= c -> q <= a; "
          "a == 0 or b == 0 -> q == 0; a == c -> q == b");
    } else {
      note("a*b/c abstracted as an arbitrary value (havoc)");
    }
    return q;
  }
  // The facts, at any width (the lemma jobs check them against exact division).
  static z3::expr exact_div_facts(const z3::expr& a, const z3::expr& b, const z3::expr& c, const z3::expr& q) {
    z3::context& x = a.ctx();
    z3::expr zero = x.bv_val(std::uint64_t{0}, a.get_sort().bv_size());
    return z3::implies(c != zero, z3::implies(z3::ule(a, c), z3::ule(q, b)) &&
                                      z3::implies(z3::ule(b, c), z3::ule(q, a)) &&
                                      z3::implies(a == zero || b == zero, q == zero) && z3::implies(a == c, q == b) &&
                                      z3::implies(b == c, q == a));
  }
  void note(const std::string& approximation) {
    for (const auto& a : approximations)
      if (a == approximation) return;
    approximations.push_back(approximation);
  }

  void require(const SymBool& c, std::string_view site) { obligations.push_back({std::string(site), path_ && !c.e()}); }
  const z3::expr& path() const { return path_; }
  // Run f under an extra path condition (used by branch()).
  template <class F>
  void under(const SymBool& c, F&& f) {
    z3::expr saved = path_;
    path_ = path_ && c.e();
    f();
    path_ = saved;
  }

  template <unsigned W>
  SymBV<W> lit(std::uint64_t v) const {
    if constexpr (W <= 64) {
      return SymBV<W>(ctx_.bv_val(static_cast<std::uint64_t>(v), W));
    } else {
      return SymBV<W>(z3::zext(ctx_.bv_val(static_cast<std::uint64_t>(v), 64), W - 64));
    }
  }
  SymBool lit_bool(bool b) const { return SymBool(ctx_.bool_val(b)); }
  template <unsigned W>
  SymBV<W> fresh(const std::string& name) const {
    return SymBV<W>(ctx_.bv_const(name.c_str(), W));
  }
  SymBool fresh_bool(const std::string& name) const { return SymBool(ctx_.bool_const(name.c_str())); }

  template <SymUInt T>
  T add(const T& a, const T& b) const {
    return T(a.e() + b.e());
  }
  template <SymUInt T>
  T sub(const T& a, const T& b) const {
    return T(a.e() - b.e());
  }
  template <SymUInt T>
  T mul(const T& a, const T& b) const {
    return T(a.e() * b.e());
  }
  template <SymUInt T>
  T udiv(const T& a, const T& b, std::string_view site) {
    require(ne(b, lit<T::width>(0)), site);
    return T(z3::udiv(a.e(), b.e()));
  }
  template <SymUInt T>
  T urem(const T& a, const T& b, std::string_view site) {
    require(ne(b, lit<T::width>(0)), site);
    return T(z3::urem(a.e(), b.e()));
  }
  template <SymUInt T>
  T shl(const T& a, const T& n, std::string_view site) {
    require(ult(n, lit<T::width>(T::width)), site);
    return T(z3::shl(a.e(), n.e()));
  }
  template <SymUInt T>
  T lshr(const T& a, const T& n, std::string_view site) {
    require(ult(n, lit<T::width>(T::width)), site);
    return T(z3::lshr(a.e(), n.e()));
  }
  template <SymUInt T>
  T band_bits(const T& a, const T& b) const {
    return T(a.e() & b.e());
  }
  template <SymUInt T>
  T bor_bits(const T& a, const T& b) const {
    return T(a.e() | b.e());
  }
  template <SymUInt T>
  SymBool ult(const T& a, const T& b) const {
    return SymBool(z3::ult(a.e(), b.e()));
  }
  template <SymUInt T>
  SymBool ule(const T& a, const T& b) const {
    return SymBool(z3::ule(a.e(), b.e()));
  }
  template <SymUInt T>
  SymBool ugt(const T& a, const T& b) const {
    return SymBool(z3::ugt(a.e(), b.e()));
  }
  template <SymUInt T>
  SymBool uge(const T& a, const T& b) const {
    return SymBool(z3::uge(a.e(), b.e()));
  }
  template <SymUInt T>
  SymBool eq(const T& a, const T& b) const {
    return SymBool(a.e() == b.e());
  }
  template <SymUInt T>
  SymBool ne(const T& a, const T& b) const {
    return SymBool(a.e() != b.e());
  }
  SymBool eq(const SymBool& a, const SymBool& b) const { return SymBool(a.e() == b.e()); }
  template <SymUInt T>
  T min(const T& a, const T& b) const {
    return T(z3::ite(z3::ult(a.e(), b.e()), a.e(), b.e()));
  }
  template <SymUInt T>
  T max(const T& a, const T& b) const {
    return T(z3::ite(z3::ult(a.e(), b.e()), b.e(), a.e()));
  }
  template <class T>
  T select(const SymBool& c, const T& a, const T& b) const {
    return T(z3::ite(c.e(), a.e(), b.e()));
  }
  SymBool band(const SymBool& a, const SymBool& b) const { return SymBool(a.e() && b.e()); }
  SymBool bor(const SymBool& a, const SymBool& b) const { return SymBool(a.e() || b.e()); }
  SymBool bnot(const SymBool& a) const { return SymBool(!a.e()); }
  SymBool implies(const SymBool& a, const SymBool& b) const { return SymBool(z3::implies(a.e(), b.e())); }
  template <SymUInt T>
  SymBool add_overflows(const T& a, const T& b) const {
    return SymBool(!z3::bvadd_no_overflow(a.e(), b.e(), false));
  }
  template <SymUInt T>
  SymBool mul_overflows(const T& a, const T& b) const {
    return SymBool(!z3::bvmul_no_overflow(a.e(), b.e(), false));
  }

  template <unsigned W, unsigned V>
  SymBV<W> zext(const SymBV<V>& a) const {
    static_assert(W >= V, "zext narrows");
    if constexpr (W == V)
      return a;
    else
      return SymBV<W>(z3::zext(a.e(), W - V));
  }
  template <unsigned W, unsigned V>
  SymBV<W> trunc(const SymBV<V>& a) const {
    static_assert(W <= V, "trunc widens");
    if constexpr (W == V)
      return a;
    else
      return SymBV<W>(a.e().extract(W - 1, 0));
  }

  // Exact a*b/c through a 128-bit intermediate, with the same two obligations as Concrete.
  SymBV<64> mul_u64_u64_div_u64(const SymBV<64>& a, const SymBV<64>& b, const SymBV<64>& c, std::string_view site) {
    require(ne(c, lit<64>(0)), site);
    z3::expr q = z3::udiv(z3::zext(a.e(), 64) * z3::zext(b.e(), 64), z3::zext(c.e(), 64));
    // Only a division that happens can overflow: with c == 0 the concrete domain stops at the
    // first obligation, and so must this one (SMT-LIB's x/0 is all ones, which would not fit).
    require(
        SymBool(c.e() == ctx_.bv_val(std::uint64_t{0}, 64) || q.extract(127, 64) == ctx_.bv_val(std::uint64_t{0}, 64)),
        "mul_u64_u64_div_u64.quotient_fits");
    return SymBV<64>(q.extract(63, 0));
  }

 private:
  z3::context& ctx_;
  z3::expr path_;
  unsigned nfresh_ = 0;
};

static_assert(Domain<Symbolic>);

// ==== Field walks over the symbolic domain (the Symbolic overloads of reflect.hpp). Calls from
// the model templates find them by argument-dependent lookup when D = Symbolic.

// ---- branch merging: both sides run under their path conditions and the states are merged.
template <class T>
T merge(Symbolic& d, const SymBool& c, const T& a, const T& b) {
  if constexpr (is_symbv<T>::value || std::is_same_v<T, SymBool>) {
    return d.select(c, a, b);
  } else if constexpr (Reflected<T>) {
    T out = a;
    hana::for_each(hana::accessors<T>(), [&](auto acc) {
      auto get = hana::second(acc);
      get(out) = merge(d, c, get(a), get(b));
    });
    return out;
  } else {
    T out = a;  // std::array
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = merge(d, c, a[i], b[i]);
    return out;
  }
}

template <class State, class Then, class Else>
void branch(Symbolic& d, const SymBool& c, State& s, Then&& then_fn, Else&& else_fn) {
  State t = s, e = s;
  d.under(c, [&] { then_fn(t); });
  d.under(d.bnot(c), [&] { else_fn(e); });
  s = merge(d, c, t, e);
}

template <class Fn, class... States>
void when_each(Symbolic& d, const SymBool& c, Fn&& fn, States&... s) {
  auto copies = std::make_tuple(s...);
  d.under(c, [&] { std::apply(fn, copies); });
  std::apply([&](auto&... t) { ((s = merge(d, c, t, s)), ...); }, copies);
}

// ---- fresh symbolic state with variable names "<prefix>.<field>[i]".
template <class T>
void make_fresh(const Symbolic& d, T& out, const std::string& name) {
  if constexpr (is_symbv<T>::value) {
    out = d.template fresh<T::width>(name);
  } else if constexpr (std::is_same_v<T, SymBool>) {
    out = d.fresh_bool(name);
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) {
      make_fresh(d, hana::second(acc)(out), name + "." + hana::to<char const*>(hana::first(acc)));
    });
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) make_fresh(d, out[i], name + "[" + std::to_string(i) + "]");
  }
}

// ---- concrete value -> symbolic constant (for whole-step differential tests and replay).
template <class C, class S>
void bind(const Symbolic& d, const C& c, S& s) {
  if constexpr (is_symbv<S>::value) {
    if constexpr (S::width <= 64)
      s = d.template lit<S::width>(static_cast<std::uint64_t>(c));
    else
      s = S(z3::concat(d.ctx().bv_val(static_cast<std::uint64_t>(c >> 64), 64),
                       d.ctx().bv_val(static_cast<std::uint64_t>(c), 64)));
  } else if constexpr (std::is_same_v<S, SymBool>) {
    s = d.lit_bool(c);
  } else if constexpr (Reflected<S>) {
    zip_fields(c, s, [&](const char*, const auto& cf, auto& sf) { bind(d, cf, sf); });
  } else {
    for (std::size_t i = 0; i < c.size(); ++i) bind(d, c[i], s[i]);
  }
}

// ---- symbolic value -> concrete, under a Z3 model (model completion on).
inline std::uint64_t eval_u64(const z3::model& m, const z3::expr& e) {
  z3::expr v = m.eval(e, true);
  std::uint64_t out = 0;
  if (!v.is_numeral_u64(out)) throw std::runtime_error("eval: not a 64-bit numeral: " + v.to_string());
  return out;
}
template <class S, class C>
void read_back(const z3::model& m, const S& s, C& c) {
  if constexpr (is_symbv<S>::value) {
    if constexpr (S::width <= 64)
      c = static_cast<C>(eval_u64(m, s.e()));
    else
      c = (static_cast<C>(eval_u64(m, s.e().extract(127, 64))) << 64) | eval_u64(m, s.e().extract(63, 0));
  } else if constexpr (std::is_same_v<S, SymBool>) {
    c = m.eval(s.e(), true).is_true();
  } else if constexpr (Reflected<S>) {
    zip_fields(s, c, [&](const char*, const auto& sf, auto& cf) { read_back(m, sf, cf); });
  } else {
    for (std::size_t i = 0; i < s.size(); ++i) read_back(m, s[i], c[i]);
  }
}

}  // namespace kacct
