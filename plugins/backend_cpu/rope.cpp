#include "rope.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace plinth::cpu {

Rope::Rope(int64_t head_dim, int64_t rope_dims, double theta, bool neox, double scale,
           const std::vector<float>& factors)
    : head_dim_(head_dim), rope_dims_(rope_dims), neox_(neox) {
  if (rope_dims < 2 || rope_dims > head_dim || rope_dims % 2 != 0 ||
      (!factors.empty() && static_cast<int64_t>(factors.size()) != rope_dims / 2)) {
    throw std::invalid_argument("Rope: rope_dims=" + std::to_string(rope_dims) +
                                " must be even, in [2, head_dim=" + std::to_string(head_dim) +
                                "], with rope_dims / 2 factors or none");
  }
  const int64_t half = rope_dims / 2;
  inv_freq_.resize(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    double f =
        scale * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims));
    if (!factors.empty()) f /= static_cast<double>(factors[static_cast<size_t>(i)]);
    inv_freq_[static_cast<size_t>(i)] = f;
  }
}

void Rope::tables(const int32_t* positions, int64_t n, float* table) const {
  const int64_t half = rope_dims_ / 2;
  for (int64_t t = 0; t < n; ++t) {
    float* row = table + t * rope_dims_;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(positions[t]) * inv_freq_[static_cast<size_t>(i)];
      row[2 * i] = static_cast<float>(std::cos(angle));
      row[2 * i + 1] = static_cast<float>(std::sin(angle));
    }
  }
}

void Rope::apply(float* x, int64_t n_heads, const float* cos_sin) const {
  const int64_t half = rope_dims_ / 2;
  // In NeoX mode pair i is (i, i + half); in normal mode (2i, 2i + 1).
  const int64_t stride = neox_ ? 1 : 2;
  const int64_t other = neox_ ? half : 1;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim_;
    for (int64_t i = 0; i < half; ++i) {
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      float& a = v[i * stride];
      float& b = v[i * stride + other];
      const float a0 = a, b0 = b;
      a = a0 * c - b0 * s;
      b = a0 * s + b0 * c;
    }
  }
}

}  // namespace plinth::cpu
