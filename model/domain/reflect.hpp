// Model state structs are declared once with BOOST_HANA_DEFINE_STRUCT, templated on the domain.
// Everything that walks their fields is written once: here the domain-generic and concrete
// parts (branching, equality, printing and JSON); in symbolic.hpp the parts that need the solver
// (merging branches, fresh symbolic state, binding concrete values, reading a model back). Model
// headers include only this file, so the concrete oracle compiles without Z3.
#pragma once
#include <boost/hana.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <string>

#include "model/domain/concrete.hpp"

namespace kacct {
namespace hana = boost::hana;

template <class S>
concept Reflected = hana::Struct<S>::value;

// ---- branch: concretely one side runs; symbolically both run and the states are merged (the
// Symbolic overloads of branch and when_each are in symbolic.hpp; ADL finds them).
template <class State, class Then, class Else>
KACCT_INLINE inline void branch(Concrete&, bool c, State& s, Then&& then_fn, Else&& else_fn) {
  if (c)
    then_fn(s);
  else
    else_fn(s);
}
template <class D, class State, class Then>
void when(D& d, const boolean<D>& c, State& s, Then&& then_fn) {
  branch(d, c, s, std::forward<Then>(then_fn), [](State&) {});
}
template <class State, class Then>
KACCT_INLINE inline void when(Concrete&, bool c, State& s, Then&& then_fn) {
  if (c) then_fn(s);
}

// when over several states at once: concretely the body runs in place on the states (no
// copies: this is the hot path); symbolically it runs on copies under the condition and each
// state is merged back.
template <class Fn, class... States>
void when_each(Concrete&, bool c, Fn&& fn, States&... s) {
  if (c) fn(s...);
}

// ---- walk two instances of the same template (e.g. S<Concrete> and S<Symbolic>) in step.
template <class A, class B, class F>
void zip_fields(A& a, B& b, F&& f) {
  hana::for_each(hana::zip(hana::accessors<std::remove_const_t<A>>(), hana::accessors<std::remove_const_t<B>>()),
                 [&](auto pair) {
                   auto fa = hana::at_c<0>(pair);
                   auto fb = hana::at_c<1>(pair);
                   f(hana::to<char const*>(hana::first(fa)), hana::second(fa)(a), hana::second(fb)(b));
                 });
}

// ---- field-wise equality in either domain.
template <class D, class T>
boolean<D> equal(D& d, const T& a, const T& b) {
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
template <class T>
nlohmann::ordered_json to_json(const T& v) {
  if constexpr (Reflected<T>) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    hana::for_each(hana::accessors<T>(),
                   [&](auto acc) { j[hana::to<char const*>(hana::first(acc))] = to_json(hana::second(acc)(v)); });
    return j;
  } else if constexpr (std::is_same_v<T, unsigned __int128>) {
    std::string s;
    unsigned __int128 x = v;
    do {
      s.insert(s.begin(), char('0' + int(x % 10)));
      x /= 10;
    } while (x != 0);
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
