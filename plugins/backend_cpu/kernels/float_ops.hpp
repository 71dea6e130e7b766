// Vectorized f32 helpers of the forward pass (norms, MLP activation, attention). Each dispatches
// at run time to the AVX2 or the scalar kernels (isa.hpp). All are thread-safe and allocate
// nothing.
#pragma once

#include <cstdint>

namespace plinth::cpu {

/// RMSNorm (Zhang & Sennrich 2019, as LLaMA): out[i, :] = x[i, :] / sqrt(mean(x[i, :]²) + eps)
/// * weight[:], for x[n, d], weight[d], out[n, d]. out may equal x (in place).
void rmsnorm(const float* x, const float* weight, int64_t n, int64_t d, float eps, float* out);

/// SwiGLU activation: out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g), i < count.
/// out may equal gate or up.
void silu_mul(const float* gate, const float* up, int64_t count, float* out);

/// Numerically stable softmax of x[count] in place (subtracts the max; -inf entries become 0).
/// count must be > 0.
void softmax(float* x, int64_t count);

/// Σ a[i]·b[i], i < count.
float dot(const float* a, const float* b, int64_t count);

/// y[i] += a·x[i], i < count.
void axpy(float a, const float* x, float* y, int64_t count);

/// x[i] *= s, i < count.
void scale(float* x, float s, int64_t count);

}  // namespace plinth::cpu
