// Shared test helpers: ISA parameters and the matmul error bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa.hpp"
#include "weight_types.hpp"

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
  return static_cast<int>(isa) <= static_cast<int>(best_isa());
}

inline std::vector<Isa> all_isas() {
  return {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
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

/// Random weights of `type` [rows, cols]: random bytes with f16 scales replaced by sane values
/// ±2^-10..2^-3 (random bytes could be inf/NaN); F32/F16/BF16 elements likewise bounded.
inline std::vector<uint8_t> random_weights(WeightType t, int64_t rows, int64_t cols,
                                           std::mt19937& rng) {
  std::vector<uint8_t> raw(static_cast<size_t>(rows * row_bytes(t, cols)));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : raw) b = static_cast<uint8_t>(byte(rng));
  // Replace the f16 scales by sane positive/negative values 2^-10..2^-3 (random bytes could be
  // inf/NaN); F16/BF16/F32 elements likewise get bounded values.
  std::uniform_int_distribution<int> exp16(5, 12), mant(0, 1023), sign(0, 1);
  const auto f16 = [&](bool allow_negative) {
    return static_cast<uint16_t>(((allow_negative && sign(rng)) ? 0x8000 : 0) | (exp16(rng) << 10) |
                                 mant(rng));
  };
  const int64_t nblk = rows * cols / block_elems(t);
  for (int64_t b = 0; b < nblk; ++b) {
    uint8_t* p = raw.data() + b * block_bytes(t);
    uint16_t h;
    switch (t) {
      case WeightType::kQ8_0:
      case WeightType::kQ4_0:
        h = f16(false);
        std::memcpy(p, &h, 2);
        break;
      case WeightType::kQ4_1:
        h = f16(false);
        std::memcpy(p, &h, 2);
        h = f16(true);
        std::memcpy(p + 2, &h, 2);
        break;
      case WeightType::kF16:
        h = f16(true);
        std::memcpy(p, &h, 2);
        break;
      // The other block types: a positive scale d and, where there is one, a signed min field
      // (offsets: ggml-common.h).
      case WeightType::kQ5_0:
      case WeightType::kIQ4_NL:
      case WeightType::kIQ4_XS:
      case WeightType::kQ5_1:
      case WeightType::kQ4_K:
      case WeightType::kQ5_K:
      case WeightType::kQ2_K:
      case WeightType::kQ3_K:
      case WeightType::kQ6_K: {
        const int d_at = t == WeightType::kQ2_K   ? 80
                         : t == WeightType::kQ3_K ? 108
                         : t == WeightType::kQ6_K ? 208
                                                  : 0;
        const int m_at =
            t == WeightType::kQ2_K                                                         ? 82
            : (t == WeightType::kQ5_1 || t == WeightType::kQ4_K || t == WeightType::kQ5_K) ? 2
                                                                                           : -1;
        h = f16(false);
        std::memcpy(p + d_at, &h, 2);
        if (m_at >= 0) {
          h = f16(true);
          std::memcpy(p + m_at, &h, 2);
        }
        break;
      }
      case WeightType::kBF16:
        h = static_cast<uint16_t>((sign(rng) ? 0x8000 : 0) | ((exp16(rng) + 112) << 7) |
                                  (mant(rng) & 0x7f));
        std::memcpy(p, &h, 2);
        break;
      case WeightType::kF32: {
        const float v = std::uniform_real_distribution<float>(-0.1f, 0.1f)(rng);
        std::memcpy(p, &v, 4);
        break;
      }
    }
  }
  return raw;
}

}  // namespace plinth::cpu::test
