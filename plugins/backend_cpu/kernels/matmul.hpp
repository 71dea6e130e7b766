// y = x · Wᵀ for every weight format the forward pass meets.
#pragma once

#include <cstdint>

#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu {

/// How matmul computes. Chosen per (type, n) by measurement (bench/kernels, README.md).
enum class MatmulPath {
  kAuto,   ///< the measured fastest for this weight type and number of rows (choose_matmul_path):
           ///< Simd below 64 rows, Blas from 64 rows. NOT batch-invariant: a token's result then
           ///< depends on how many rows share the call.
  kSimd,   ///< batch-invariant: row i of y is bit-identical whatever n, the thread count or the
           ///< other rows are (each row is quantized alone and summed in a fixed order).  ///< own
           ///< kernels: activation rows quantized to 8-bit blocks + int8 dot products (quantized
           ///< weights; llama.cpp's scheme), f32 FMA dot products (float weights)
  kBlas,   ///< weight rows dequantized to f32, then OpenBLAS cblas_sgemm (1 BLAS thread per pool
           ///< participant)
  kFloat,  ///< batch-invariant AND float-accurate: f32 activations × weights dequantized in
           ///< registers (exact small integers, block scale applied per 8-lane partial sum; Q4_1's
           ///< minimum via per-block activation sums), 8-lane FMA accumulators over the blocks in
           ///< order and a fixed horizontal sum, so row i of y is bit-identical whatever n, the
           ///< thread count or the other rows are. Within ~(cols/32 + 16)·2⁻²⁴ relative of the
           ///< exact product (formula: matmul_float.hpp). F32/F16/BF16 weights use the same f32
           ///< kernels as Simd.
  kInt8,  ///< batch-invariant: activations quantized per 32 elements to int8 as Simd does
          ///< (llama.cpp's scheme), weights in a panel copy packed at load, exact int32 block dot
          ///< products (AVX-512 VNNI vpdpbusd where the CPU has it, else portable C++ with the
          ///< same bits) and a fixed f32 sequence per output (matmul_int8.hpp). Simd's accuracy;
          ///< the fastest path for batches on VNNI CPUs. F32/F16/BF16 weights as Simd.
};

const char* matmul_path_name(MatmulPath path);

/// The path `MatmulPath::kAuto` takes for `n` activation rows of weight type `type`.
MatmulPath choose_matmul_path(WeightType type, int64_t n);

/// y[n, w.rows] = x[n, w.cols] · Wᵀ; x and y are f32, row-major, not aliased.
/// With the Float path no operand is rounded before the products (see MatmulPath::kFloat).
/// With the Simd path and a quantized W, each row of x is first quantized per 32 elements to int8
/// with an f32 scale (as ggml's Q8_0/Q8_1), so y carries that rounding (|Δx| ≤ scale/2 per
/// element; see README.md for the error bound). Work is split over the output rows across `pool`.
/// Throws std::invalid_argument for an invalid view, null x/y or n < 0 (n == 0 does nothing).
/// Thread-safe with respect to calls writing different outputs (per-thread scratch buffers).
void matmul(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool,
            MatmulPath path = MatmulPath::kAuto);

}  // namespace plinth::cpu
