// Gated-FFN activations of backend_cpu beyond the kernels' SiLU (kernels/float_ops.hpp).
#pragma once

#include <cstdint>

namespace plinth::cpu {

/// out[i] = gelu_tanh(gate[i]) * up[i], i < count, with gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi)
/// (x + 0.044715 x^3))) (Hendrycks & Gimpel 2016; Gemma's "gelu_pytorch_tanh"), evaluated in
/// double and rounded once (llama.cpp's CPU path reads an f16 table instead; this is the exact
/// value). out may equal gate or up. Thread-safe, allocates nothing.
void gelu_tanh_mul(const float* gate, const float* up, int64_t count, float* out);

}  // namespace plinth::cpu
