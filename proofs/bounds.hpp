// Proof assumptions shared by the Z3 jobs: every 64-bit field of a symbolic state (reflected
// structs, arrays, vectors of them) below a limit, so no counter or clock wraps.
#pragma once
#include <z3++.h>

#include <cstdint>
#include <vector>

#include "model/domain/reflect.hpp"
#include "model/domain/symbolic.hpp"

namespace kacct::proofs {

template <class T>
void bound_u64(Symbolic& d, const T& v, std::uint64_t limit, std::vector<z3::expr>& out) {
  namespace hana = boost::hana;
  if constexpr (is_symbv<T>::value) {
    if constexpr (T::width == 64) out.push_back(z3::ule(v.e(), d.ctx().bv_val(limit, 64)));
  } else if constexpr (Reflected<T>) {
    hana::for_each(hana::accessors<T>(), [&](auto acc) { bound_u64(d, hana::second(acc)(v), limit, out); });
  } else if constexpr (requires { v.size(); }) {
    for (const auto& x : v) bound_u64(d, x, limit, out);
  }
}

}  // namespace kacct::proofs
