// Internal: the per-ISA kernel entry points. One table per instruction-set family, each filled in
// its own translation unit (kernels_scalar.cpp, kernels_avx2.cpp built with -mavx2 -mfma -mf16c),
// so no AVX2 instruction is reachable on a CPU that lacks it.
#pragma once

#include <cstdint>

#include "isa.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::detail {

/// Largest number of activation rows one quantized dot call handles (weights unpacked once).
inline constexpr int kMaxDotRows = 4;

/// out[i] = dot(weight row, activation row i), i < nx (1..kMaxDotRows). `w` is one weight row of
/// `nblocks` blocks; `x` is activation row 0, row i starts at x + i * x_stride (in blocks).
using QuantDotFn = void (*)(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t x_stride,
                            int nx, float* out);
/// out[i] = dot(weight row of `cols` elements, x + i * x_stride), i < nx (1..kMaxDotRows).
using FloatDotFn = void (*)(int64_t cols, const void* w, const float* x, int64_t x_stride, int nx,
                            float* out);

struct KernelTable {
  /// x[cols] (cols % 32 == 0) → cols/32 blocks, bit-identical to gguf Q8_0 quantize for qs and d
  /// (d kept in f32).
  void (*quantize_row_q8a)(const float* x, int64_t cols, BlockQ8A* out);
  QuantDotFn dot_q8_0;
  QuantDotFn dot_q4_0;
  QuantDotFn dot_q4_1;
  FloatDotFn dot_f32;
  FloatDotFn dot_f16;
  FloatDotFn dot_bf16;
  // Float helpers for the forward pass.
  float (*dot)(const float* a, const float* b, int64_t n);
  void (*axpy)(float a, const float* x, float* y, int64_t n);                         // y += a * x
  float (*sum_squares)(const float* x, int64_t n);                                    // Σ x²
  void (*scale_mul)(const float* x, float s, const float* w, float* out, int64_t n);  // x*s*w
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n);
  float (*max)(const float* x, int64_t n);
  float (*exp_sub_sum)(float* x, float m, int64_t n);  // x = exp(x - m); returns Σ
  void (*scale)(float* x, float s, int64_t n);         // x *= s
};

/// Float path (MatmulPath::Float): f32 activations × quantized weights, dequantized in registers.
/// out[i] = W · x_i for activation rows i < nx (1..kMaxFloatTile): W is one weight row of
/// `nblocks` blocks (unpacked once for all nx rows); activation row i starts at x + i * x_stride
/// floats. Q4_1 only (else unused): `mins` = the row's block minima as f32 and sx + i * sx_stride
/// = row i's block sums (block_sums), both padded with zeros to a multiple of 8 blocks.
/// Every output element follows the same arithmetic sequence whatever nx and the other rows are
/// (matmul_float.hpp states the formula), which makes the Float path batch-invariant.
using FloatQuantDotFn = void (*)(int64_t nblocks, const uint8_t* w, const float* mins,
                                 const float* x, int64_t x_stride, const float* sx,
                                 int64_t sx_stride, int nx, float* out);

/// Largest nx of one FloatQuantDotFn call (nx accumulators + one unpacked block must fit the 16
/// YMM registers; 8 rows measured ~10% faster than 4 at n = 512).
inline constexpr int kMaxFloatTile = 8;

struct FloatQuantKernels {
  FloatQuantDotFn dot_q8_0;
  FloatQuantDotFn dot_q4_0;
  FloatQuantDotFn dot_q4_1;
  /// out[b] = f32 minimum m of block b of a Q4_1 row of `nblocks` blocks (exact).
  void (*q4_1_mins)(const uint8_t* w, int64_t nblocks, float* out);
};

/// kernels_float_scalar.cpp / kernels_float_avx2.cpp (the latter only with AVX2 + FMA + F16C).
const FloatQuantKernels& scalar_float_kernels();
const FloatQuantKernels& avx2_float_kernels();
/// The table of active_isa().
const FloatQuantKernels& active_float_kernels();

const KernelTable& scalar_kernels();
/// Only to be called when the CPU supports AVX2 + FMA + F16C.
const KernelTable& avx2_kernels();
/// The table of active_isa().
const KernelTable& active_kernels();

}  // namespace plinth::cpu::detail
