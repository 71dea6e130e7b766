// Shared test helpers: ISA parameters and the matmul error bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "isa.hpp"

namespace plinth::cpu::test {

/// Runs a test body with the given ISA active, restoring the best one afterwards; skips when the
/// CPU lacks it.
class IsaScope {
 public:
  explicit IsaScope(Isa isa) { set_active_isa(isa); }
  ~IsaScope() { set_active_isa(best_isa()); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;
};

inline bool isa_available(Isa isa) {
  return isa == Isa::Scalar || best_isa() == Isa::Avx2;
}

inline std::vector<Isa> all_isas() {
  return {Isa::Scalar, Isa::Avx2};
}

/// Reference y = Σ_j w[j]·x[j] in double and the largest error a correct f32 kernel may make.
///
/// Derivation: with 8-bit activations (quantize_act), x̂_j = d_b·q_j with d_b = amax_b/127 and
/// |x̂_j − x_j| ≤ d_b/2 (round to nearest; the 1e-4 slack covers d_b and 1/d_b being f32), so
/// |Σ w_j(x̂_j − x_j)| ≤ Σ_b (d_b/2)·Σ_{j∈b}|w_j|. On top, f32 arithmetic adds at most
/// ≈ (cols + 16)·2⁻²⁴·Σ|w_j|·|x̂_j| (one rounding per accumulation step: sgemm's dot over cols,
/// or the per-block scale, FMA and the nb-long sum of the int8 kernels, all ≤ cols + 16 steps).
struct RefDot {
  double value;
  double bound;
};

inline RefDot ref_dot(const float* w, const float* x, int64_t cols, bool quantize_act) {
  double sum = 0.0, abs_sum = 0.0, q_bound = 0.0;
  for (int64_t b0 = 0; b0 < cols; b0 += 32) {
    const int64_t b1 = std::min<int64_t>(b0 + 32, cols);
    double amax = 0.0, wabs = 0.0;
    for (int64_t j = b0; j < b1; ++j) {
      amax = std::max(amax, std::fabs(static_cast<double>(x[j])));
      wabs += std::fabs(static_cast<double>(w[j]));
    }
    const double half_step = quantize_act ? 0.5 * amax / 127.0 * (1.0 + 1e-4) : 0.0;
    q_bound += half_step * wabs;
    for (int64_t j = b0; j < b1; ++j) {
      sum += static_cast<double>(w[j]) * x[j];
      abs_sum +=
          std::fabs(static_cast<double>(w[j])) * (std::fabs(static_cast<double>(x[j])) + half_step);
    }
  }
  const double f32_bound = static_cast<double>(cols + 16) * std::ldexp(1.0, -24) * abs_sum;
  return {sum, q_bound + f32_bound + 1e-30};
}

}  // namespace plinth::cpu::test
