#include "activation.hpp"

#include <cmath>

namespace plinth::cpu {

void gelu_tanh_mul(const float* gate, const float* up, int64_t count, float* out) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  for (int64_t i = 0; i < count; ++i) {
    const double x = gate[i];
    const double g = 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    out[i] = static_cast<float>(g * static_cast<double>(up[i]));
  }
}

}  // namespace plinth::cpu
