#include "float_ops.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernel_table.hpp"

namespace plinth::cpu {

void rmsnorm(const float* x, const float* weight, int64_t n, int64_t d, float eps, float* out) {
  if (d <= 0 || n < 0) {
    throw std::invalid_argument("rmsnorm: n=" + std::to_string(n) + ", d=" + std::to_string(d) +
                                " must be n >= 0, d > 0");
  }
  const auto& k = detail::active_kernels();
  for (int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * d;
    const float mean = k.sum_squares(xi, d) / static_cast<float>(d);
    k.scale_mul(xi, 1.0f / std::sqrt(mean + eps), weight, out + i * d, d);
  }
}

void silu_mul(const float* gate, const float* up, int64_t count, float* out) {
  detail::active_kernels().silu_mul(gate, up, out, count);
}

void softmax(float* x, int64_t count) {
  if (count <= 0) throw std::invalid_argument("softmax: count must be > 0");
  const auto& k = detail::active_kernels();
  const float m = k.max(x, count);
  const float sum = k.exp_sub_sum(x, m, count);
  k.scale(x, 1.0f / sum, count);
}

float dot(const float* a, const float* b, int64_t count) {
  return detail::active_kernels().dot(a, b, count);
}

void axpy(float a, const float* x, float* y, int64_t count) {
  detail::active_kernels().axpy(a, x, y, count);
}

void scale(float* x, float s, int64_t count) {
  detail::active_kernels().scale(x, s, count);
}

}  // namespace plinth::cpu
