// Whole-step differential, one harness for every mechanism: a model step is one template over
// the value domain, so running it concretely and running it symbolically on the same values
// (bound as Z3 constants) must give the same post-state, field by field, and the same failed
// obligations. The symbolic post-state is folded by Z3's simplifier (every input is a constant,
// so every field must fold to a numeral). A mismatch fails the RapidCheck case naming the
// field, both values and the inputs.
//
//   differential(what, step, val("cpu", c), val("now", now), fixed("ctl", ctl, show_ctl));
//
// `step` is a generic callable (auto& d, auto&... args): it is called once with Concrete and the
// concrete arguments, once with the symbolic domain SD and the bound ones. val(): a domain value
// (any unsigned integer, or a struct/array/vector of them declared over D), bound to constants.
// fixed(): concrete-only data the step reads or changes (control state): each run gets its own
// copy, and the two copies must end equal under `show`. A non-void result is compared too.
//
// SD is Symbolic, or one of the perturbed domains below (tests that the check can fail).
#pragma once
#include <boost/hana.hpp>
#include <rapidcheck.h>

#include <array>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/domain/reflect.hpp"
#include "model/domain/symbolic.hpp"
#include "props/props.hpp"

namespace kacct::props::diff {
namespace hana = boost::hana;

// ---- values ------------------------------------------------------------------------------------

// Realistic values (ns counters), arbitrary ones, and the edges: 0, 1, 2, 32-bit limits, 2^63,
// 2^64-1 and values just below the wrap.
inline rc::Gen<std::uint64_t> gen_u64() {
  return rc::gen::weightedOneOf<std::uint64_t>(
      {{3, rc::gen::inRange<std::uint64_t>(0, 4'000'000'000ull)},
       {2, rc::gen::arbitrary<std::uint64_t>()},
       {2, rc::gen::element<std::uint64_t>(0, 1, 2, 0xffffffffull, 1ull << 32, (1ull << 32) + 1, 1ull << 62, 1ull << 63,
                                           ~0ull, ~0ull - 1)},
       {1, rc::gen::map(rc::gen::inRange<std::uint64_t>(0, 1'000'000'000ull),
                        [](std::uint64_t k) { return std::uint64_t(~0ull - k); })}});
}
template <class T>
constexpr unsigned width_of = sizeof(T) * 8;
// One unsigned value of type T: the 64-bit generator truncated, or an edge of T's own width.
template <class T>
rc::Gen<T> gen_uint() {
  if constexpr (std::is_same_v<T, unsigned __int128>) {
    return rc::gen::map(rc::gen::pair(gen_u64(), gen_u64()),
                        [](std::pair<std::uint64_t, std::uint64_t> p) { return (T(p.first) << 64) | p.second; });
  } else {
    constexpr T max = T(~T(0));
    return rc::gen::weightedOneOf<T>(
        {{4, rc::gen::cast<T>(gen_u64())},
         {1, rc::gen::element<T>(T(0), T(1), T(2), max, T(max - 1), T(T(1) << (width_of<T> - 1)))}});
  }
}
// Fill every unsigned leaf of a domain value (reflected structs, arrays, vectors as sized).
template <class T>
void fill(T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v = *rc::gen::arbitrary<bool>();
  } else if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, unsigned __int128>) {
    v = *gen_uint<T>();
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) { fill(hana::second(acc)(v)); });
  } else {
    for (auto& x : v) fill(x);
  }
}
template <class T>
T arbitrary(T v = {}) {
  fill(v);
  return v;
}

// ---- the symbolic counterpart of a concrete type -------------------------------------------------

template <class T, class SD>
struct sym_of;  // undefined: not a domain value
template <class SD>
struct sym_of<std::uint8_t, SD> {
  using type = SymBV<8>;
};
template <class SD>
struct sym_of<std::uint16_t, SD> {
  using type = SymBV<16>;
};
template <class SD>
struct sym_of<std::uint32_t, SD> {
  using type = SymBV<32>;
};
template <class SD>
struct sym_of<std::uint64_t, SD> {
  using type = SymBV<64>;
};
template <class SD>
struct sym_of<unsigned __int128, SD> {
  using type = SymBV<128>;
};
template <class SD>
struct sym_of<bool, SD> {
  using type = SymBool;
};
template <template <class> class T, class SD>
struct sym_of<T<Concrete>, SD> {
  using type = T<SD>;
};
template <template <class, unsigned> class T, unsigned W, class SD>
struct sym_of<T<Concrete, W>, SD> {
  using type = T<SD, W>;
};
template <class T, std::size_t N, class SD>
struct sym_of<std::array<T, N>, SD> {
  using type = std::array<typename sym_of<T, SD>::type, N>;
};
template <class T, class SD>
struct sym_of<std::vector<T>, SD> {
  using type = std::vector<typename sym_of<T, SD>::type>;
};
template <class T, class SD>
using sym_t = typename sym_of<T, SD>::type;

template <class C, class S>
void bind_value(const Symbolic& d, const C& c, S& s) {
  if constexpr (is_symbv<S>::value || std::is_same_v<S, SymBool>) {
    bind(d, c, s);
  } else if constexpr (Reflected<S>) {
    zip_fields(c, s, [&](const char*, const auto& cf, auto& sf) { bind_value(d, cf, sf); });
  } else {
    if constexpr (requires { s.resize(0); }) s.resize(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) bind_value(d, c[i], s[i]);
  }
}

// ---- arguments -----------------------------------------------------------------------------------

template <class T>
struct Val {
  std::string name;
  T value;
};
template <class T>
struct Fixed {
  std::string name;
  T value;
  std::function<std::string(const T&)> show;
};
template <class T>
Val<T> val(std::string name, T v) {
  return {std::move(name), std::move(v)};
}
template <class T, class Show>
Fixed<T> fixed(std::string name, T v, Show show) {
  return {std::move(name), std::move(v), std::function<std::string(const T&)>(std::move(show))};
}

template <class T>
const T& concrete_of(const Val<T>& a) {
  return a.value;
}
template <class T>
const T& concrete_of(const Fixed<T>& a) {
  return a.value;
}
template <class SD, class T>
sym_t<T, SD> symbolic_of(const Symbolic& d, const Val<T>& a) {
  sym_t<T, SD> s;
  bind_value(d, a.value, s);
  return s;
}
template <class SD, class T>
T symbolic_of(const Symbolic&, const Fixed<T>& a) {
  return a.value;
}
template <class T>
std::string describe(const Val<T>& a) {
  return a.name + "=" + to_json(a.value).dump();
}
template <class T>
std::string describe(const Fixed<T>& a) {
  return a.name + "=" + a.show(a.value);
}

// ---- comparison ----------------------------------------------------------------------------------

template <class T>
std::string decimal(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, unsigned __int128>)
    return to_json(v).template get<std::string>();
  else
    return std::to_string(v);
}
// A symbolic leaf still to fold, and what the concrete run computed for it.
struct Leaf {
  std::string field;
  std::string concrete;
  z3::expr sym;
};
struct Mismatch {
  std::string field, concrete, symbolic;
};
template <class C, class S>
void leaves(const std::string& path, const C& c, const S& s, std::vector<Leaf>& out) {
  if constexpr (is_symbv<S>::value || std::is_same_v<S, SymBool>) {
    out.push_back({path, decimal(c), s.e()});
  } else if constexpr (Reflected<S>) {
    zip_fields(c, s, [&](const char* n, const auto& cf, const auto& sf) { leaves(path + "." + n, cf, sf, out); });
  } else {
    for (std::size_t i = 0; i < c.size() && i < s.size(); ++i)
      leaves(path + "[" + std::to_string(i) + "]", c[i], s[i], out);
  }
}
template <class T, class S>
void compare_arg(const Val<T>& a, const T& c, const S& s, std::vector<Leaf>& out, std::vector<Mismatch>&) {
  leaves(a.name, c, s, out);
}
template <class T>
void compare_arg(const Fixed<T>& a, const T& c, const T& s, std::vector<Leaf>&, std::vector<Mismatch>& bad) {
  const std::string x = a.show(c), y = a.show(s);
  if (x != y) bad.push_back({a.name, x, y});
}

// Fold every leaf with one simplify call (Z3 shares work only within a call): the leaves are
// the arguments of one uninterpreted application.
inline std::vector<z3::expr> fold(z3::context& ctx, const std::vector<Leaf>& ls) {
  std::vector<z3::expr> out;
  if (ls.empty()) return out;
  z3::sort_vector dom(ctx);
  z3::expr_vector args(ctx);
  for (const auto& l : ls) {
    dom.push_back(l.sym.get_sort());
    args.push_back(l.sym);
  }
  const z3::expr folded = ctx.function("kacct.fold", dom, ctx.bool_sort())(args).simplify();
  for (unsigned i = 0; i < folded.num_args(); ++i) out.push_back(folded.arg(i));
  return out;
}
inline std::string numeral(const z3::expr& e) {
  if (e.is_true()) return "true";
  if (e.is_false()) return "false";
  if (e.is_numeral()) return Z3_get_numeral_string(e.ctx(), e);
  return "(does not fold: " + e.to_string().substr(0, 200) + ")";
}

// ---- the check -----------------------------------------------------------------------------------

// One Z3 context for every check of the process, never destroyed: creating one costs more than
// most steps, and destroying one that folded large terms (cputime_adjust's Loop32) takes
// seconds; the process exit frees it at once.
inline z3::context& context() {
  static z3::context* ctx = new z3::context;
  return *ctx;
}

template <class SD = Symbolic, class Step, class... Args>
void differential(const std::string& what, Step&& step, const Args&... args) {
  static_assert(std::is_base_of_v<Symbolic, SD>);
  std::string inputs;
  ((inputs += "\n  " + describe(args)), ...);
  auto cargs = std::make_tuple(concrete_of(args)...);
  Concrete k;
  z3::context& ctx = context();
  SD s(ctx);
  auto sargs = std::make_tuple(symbolic_of<SD>(s, args)...);
  auto run = [&](auto& d, auto& t) -> decltype(auto) {
    return std::apply([&](auto&... a) -> decltype(auto) { return step(d, a...); }, t);
  };
  std::vector<Leaf> ls;
  std::vector<Mismatch> bad;
  using R = decltype(run(k, cargs));
  if constexpr (std::is_void_v<R>) {
    run(k, cargs);
    run(s, sargs);
  } else {
    const auto cr = run(k, cargs);
    const auto sr = run(s, sargs);
    leaves("result", cr, sr, ls);
  }
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (compare_arg(args, std::get<I>(cargs), std::get<I>(sargs), ls, bad), ...);
  }
  (std::index_sequence_for<Args...>{});
  const std::size_t nfields = ls.size();
  for (const auto& o : s.obligations) ls.push_back({"obligation " + o.site, "", o.violated});
  const auto folded = fold(ctx, ls);
  for (std::size_t i = 0; i < nfields; ++i) {
    const std::string got = numeral(folded[i]);
    if (got != ls[i].concrete) bad.push_back({ls[i].field, ls[i].concrete, got});
  }
  // Obligations: the sites the concrete run failed, in order, against the symbolic obligations
  // that fold to "violated" (the untaken paths' fold to false under their path condition).
  std::string con, sym;
  for (auto site : k.failed) con += (con.empty() ? "" : ",") + std::string(site);
  for (std::size_t i = nfields; i < ls.size(); ++i) {
    const std::string v = numeral(folded[i]);
    if (v == "false") continue;
    sym += (sym.empty() ? "" : ",") + (v == "true" ? ls[i].field.substr(11) : ls[i].field + " " + v);
  }
  if (con != sym) bad.push_back({"failed obligations", "[" + con + "]", "[" + sym + "]"});
  if (bad.empty()) return;
  std::string msg = what + ": the domains disagree";
  for (std::size_t i = 0; i < bad.size() && i < 8; ++i)
    msg += "\n  field " + bad[i].field + ": concrete " + bad[i].concrete + ", symbolic " + bad[i].symbolic;
  if (bad.size() > 8) msg += "\n  ... " + std::to_string(bad.size() - 8) + " more";
  msg += "\ninputs:" + inputs;
  RC_FAIL(msg);
}

// ---- perturbed symbolic domains (test-only) ------------------------------------------------------
// Each differs from Symbolic in one operation; a differential that passes on them checks nothing.

// x - y saturates at 0 instead of wrapping (a plausible drift: C's unsigned wrap mistaken for
// a clamp).
struct SaturatingSub : Symbolic {
  using Symbolic::Symbolic;
  template <SymUInt T>
  T sub(const T& a, const T& b) const {
    return T(z3::ite(z3::ult(a.e(), b.e()), ctx().bv_val(0, T::width), a.e() - b.e()));
  }
};
// Division, shifts and d.require() record no obligation.
struct NoObligations : Symbolic {
  using Symbolic::Symbolic;
  void require(const SymBool&, std::string_view) {}
  template <SymUInt T>
  T udiv(const T& a, const T& b, std::string_view) {
    return T(z3::udiv(a.e(), b.e()));
  }
  template <SymUInt T>
  T urem(const T& a, const T& b, std::string_view) {
    return T(z3::urem(a.e(), b.e()));
  }
  template <SymUInt T>
  T shl(const T& a, const T& n, std::string_view) {
    return T(z3::shl(a.e(), n.e()));
  }
  template <SymUInt T>
  T lshr(const T& a, const T& n, std::string_view) {
    return T(z3::lshr(a.e(), n.e()));
  }
  SymBV<64> mul_u64_u64_div_u64(const SymBV<64>& a, const SymBV<64>& b, const SymBV<64>& c, std::string_view) {
    z3::expr q = z3::udiv(z3::zext(a.e(), 64) * z3::zext(b.e(), 64), z3::zext(c.e(), 64));
    return SymBV<64>(q.extract(63, 0));
  }
};

// The property must fail within `cases` cases (fixed seed, no shrinking) with a message that
// contains `needle`: the mutant is caught.
template <class Testable>
void expect_caught(Testable&& testable, int cases, const std::string& needle) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata meta;
  meta.id = std::string(info->test_suite_name()) + "/" + info->name();
  meta.description = info->name();
  auto params = rc::detail::configuration().testParams;
  params.seed = 20261201;
  params.maxSuccess = cases;
  params.disableShrinking = true;
  // A listener of its own: the expected failure is not reported as one to reproduce.
  struct Quiet : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } quiet;
  const auto result =
      rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(testable)), meta, params, quiet);
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  ASSERT_TRUE(result.template is<rc::detail::FailureResult>())
      << "the perturbed domain went unnoticed in " << cases << " cases:\n"
      << ss.str();
  EXPECT_NE(ss.str().find(needle), std::string::npos) << ss.str();
}

}  // namespace kacct::props::diff
