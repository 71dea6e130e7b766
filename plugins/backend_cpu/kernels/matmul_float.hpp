// Internal: the Float path of matmul (MatmulPath::Float) for quantized weights — f32 activations,
// weights dequantized in registers, a per-element reduction order fixed independently of n, of the
// tiling and of the thread count (batch-invariant, DESIGN §2).
//
// The exact formula. For output y[i, r], weight row r of nb blocks, block b with f16 scale d_b
// (Q4_1 also minimum m_b) and small integers q_{b,j} (Q8_0: int8; Q4_0: nibble − 8; Q4_1: nibble),
// activation x_j = x[i, 32b + j]; lanes l = 0..7 (an AVX2 register), k = 0..3 (the four 8-element
// quarters of a block). The integers q, d_b and m_b are converted to f32 exactly and d_b is never
// multiplied into q, so no weight is rounded (in particular Q4_1 is NOT rounded as fl(d·q + m)
// the way gguf-py dequantizes): Σ_j (d q_j + m) x_j = d·Σ_j q_j x_j + m·Σ_j x_j.
//
//   S_{b,l}  = Σ_k q_{b,8k+l} · x_{8k+l}        k = 0, 1, 2, 3 in this order (a mul, then FMAs)
//   A_{p,l}  = 0 (p = 0, 1);  for b = 0 .. nb−1, p = b mod 2:  A_{p,l} = A_{p,l} + d_b · S_{b,l}
//   a_l      = A_{0,l} + A_{1,l}
// Q4_1 only, with sx_b = the block sum of x (block_sums: once per activation row, reused by every
// weight row) and m_b, sx_b zero for b ≥ nb:
//   M_l      = 0;  for g = 0, 8, 16, .. < nb:  M_l = M_l + m_{g+l} · sx_{g+l};   a_l = a_l + M_l
//   y        = ((a_0 + a_4) + (a_2 + a_6)) + ((a_1 + a_5) + (a_3 + a_7))
//
// AVX2 evaluates every "a + b·c" above as one fused multiply-add; the scalar kernels round the
// product and the sum separately. Both are batch-invariant; they agree within the f32 error bound
// (README.md), not bit for bit. Error vs exact arithmetic: at most one rounding per step of the
// longest chain (4 in S, nb/2 + 1 in A, 6 in sx, nb/8 in M, 4 in the final sums; the scalar
// kernels add one for each separately rounded product), so to first order
//   |y − y_exact| ≤ (nb + 16)·2⁻²⁴·(Σ_j |d_b q_j x_j| + Σ_b |m_b|·Σ_{j∈b} |x_j|),
// i.e. ≤ 2.0e-6 (576 columns) and ≤ 3.8e-6 (1536 columns) relative to that sum.
#pragma once

#include <cstdint>

#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::detail {

/// sx[padded_blocks(cols/32)] for one activation row x[cols] (cols % 32 == 0): with
/// X_l = ((x[32b+l] + x[32b+8+l]) + x[32b+16+l]) + x[32b+24+l],
/// sx[b] = ((X_0 + X_4) + (X_2 + X_6)) + ((X_1 + X_5) + (X_3 + X_7)); zeros after cols/32.
/// Same bits on every ISA (additions only, fixed order).
void block_sums(const float* x, int64_t cols, float* out);
/// nb rounded up to a multiple of 8.
int64_t padded_blocks(int64_t nb);

/// y[n, w.rows] = x[n, w.cols] · Wᵀ for Q8_0, Q4_0, Q4_1 weights by the formula above. Output
/// rows are split across `pool`; 16 weight rows at a time meet the activation rows in groups of up
/// to 8, so each weight block is unpacked once (per parity pass) per group.
void matmul_float_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool);

}  // namespace plinth::cpu::detail
