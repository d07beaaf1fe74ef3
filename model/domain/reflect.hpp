// Model state structs are declared once with BOOST_HANA_DEFINE_STRUCT, templated on the domain.
// Everything that walks their fields is written here once: branch merging, fresh symbolic
// state, binding concrete values into the symbolic domain, reading a Z3 model back, equality,
// printing and JSON.
#pragma once
#include <boost/hana.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <string>

#include "model/domain/concrete.hpp"
#include "model/domain/symbolic.hpp"

namespace kacct {
namespace hana = boost::hana;

template <class S>
concept Reflected = hana::Struct<S>::value;

// ---- branch: concretely one side runs; symbolically both run and the states are merged.
template <class T> T merge(Symbolic& d, const SymBool& c, const T& a, const T& b) {
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
void branch(Concrete&, bool c, State& s, Then&& then_fn, Else&& else_fn) {
  if (c) then_fn(s);
  else else_fn(s);
}
template <class State, class Then, class Else>
void branch(Symbolic& d, const SymBool& c, State& s, Then&& then_fn, Else&& else_fn) {
  State t = s, e = s;
  d.under(c, [&] { then_fn(t); });
  d.under(d.bnot(c), [&] { else_fn(e); });
  s = merge(d, c, t, e);
}
template <class D, class State, class Then>
void when(D& d, const boolean<D>& c, State& s, Then&& then_fn) {
  branch(d, c, s, std::forward<Then>(then_fn), [](State&) {});
}

// when over several states at once: concretely the body runs in place on the states (no
// copies: this is the hot path); symbolically it runs on copies under the condition and each
// state is merged back.
template <class Fn, class... States> void when_each(Concrete&, bool c, Fn&& fn, States&... s) {
  if (c) fn(s...);
}
template <class Fn, class... States> void when_each(Symbolic& d, const SymBool& c, Fn&& fn, States&... s) {
  auto copies = std::make_tuple(s...);
  d.under(c, [&] { std::apply(fn, copies); });
  std::apply([&](auto&... t) { ((s = merge(d, c, t, s)), ...); }, copies);
}

// ---- walk two instances of the same template (e.g. S<Concrete> and S<Symbolic>) in step.
template <class A, class B, class F> void zip_fields(A& a, B& b, F&& f) {
  hana::for_each(hana::zip(hana::accessors<std::remove_const_t<A>>(),
                           hana::accessors<std::remove_const_t<B>>()),
                 [&](auto pair) {
                   auto fa = hana::at_c<0>(pair);
                   auto fb = hana::at_c<1>(pair);
                   f(hana::to<char const*>(hana::first(fa)), hana::second(fa)(a),
                     hana::second(fb)(b));
                 });
}

// ---- fresh symbolic state with variable names "<prefix>.<field>[i]".
template <class T> void make_fresh(const Symbolic& d, T& out, const std::string& name) {
  if constexpr (is_symbv<T>::value) {
    out = d.template fresh<T::width>(name);
  } else if constexpr (std::is_same_v<T, SymBool>) {
    out = d.fresh_bool(name);
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) {
      make_fresh(d, hana::second(acc)(out), name + "." + hana::to<char const*>(hana::first(acc)));
    });
  } else {
    for (std::size_t i = 0; i < out.size(); ++i)
      make_fresh(d, out[i], name + "[" + std::to_string(i) + "]");
  }
}

// ---- concrete value -> symbolic constant (for whole-step differential tests and replay).
template <class C, class S> void bind(const Symbolic& d, const C& c, S& s) {
  if constexpr (is_symbv<S>::value) {
    if constexpr (S::width <= 64) s = d.template lit<S::width>(static_cast<std::uint64_t>(c));
    else s = S(z3::concat(d.ctx().bv_val(static_cast<std::uint64_t>(c >> 64), 64),
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
template <class S, class C> void read_back(const z3::model& m, const S& s, C& c) {
  if constexpr (is_symbv<S>::value) {
    if constexpr (S::width <= 64) c = static_cast<C>(eval_u64(m, s.e()));
    else c = (static_cast<C>(eval_u64(m, s.e().extract(127, 64))) << 64) | eval_u64(m, s.e().extract(63, 0));
  } else if constexpr (std::is_same_v<S, SymBool>) {
    c = m.eval(s.e(), true).is_true();
  } else if constexpr (Reflected<S>) {
    zip_fields(s, c, [&](const char*, const auto& sf, auto& cf) { read_back(m, sf, cf); });
  } else {
    for (std::size_t i = 0; i < s.size(); ++i) read_back(m, s[i], c[i]);
  }
}

// ---- field-wise equality in either domain.
template <class D, class T> boolean<D> equal(D& d, const T& a, const T& b) {
  if constexpr (Reflected<T>) {
    boolean<D> r = d.lit_bool(true);
    hana::for_each(hana::accessors<T>(), [&](auto acc) {
      auto get = hana::second(acc);
      r = d.band(r, equal(d, get(a), get(b)));
    });
    return r;
  } else if constexpr (requires { a.size(); }) {
    boolean<D> r = d.lit_bool(true);
    for (std::size_t i = 0; i < a.size(); ++i) r = d.band(r, equal(d, a[i], b[i]));
    return r;
  } else {
    return d.eq(a, b);
  }
}

// ---- JSON of concrete state (field order as declared; u128 as a decimal string).
template <class T> nlohmann::ordered_json to_json(const T& v) {
  if constexpr (Reflected<T>) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    hana::for_each(hana::accessors<T>(), [&](auto acc) {
      j[hana::to<char const*>(hana::first(acc))] = to_json(hana::second(acc)(v));
    });
    return j;
  } else if constexpr (std::is_same_v<T, unsigned __int128>) {
    std::string s;
    unsigned __int128 x = v;
    do { s.insert(s.begin(), char('0' + int(x % 10))); x /= 10; } while (x != 0);
    return s;
  } else if constexpr (requires { v.size(); }) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& x : v) j.push_back(to_json(x));
    return j;
  } else {
    return v;
  }
}

}  // namespace kacct
