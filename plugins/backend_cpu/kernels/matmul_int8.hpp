// Internal: the Int8 path of matmul (MatmulPath::kInt8) for quantized weights — activations
// quantized per 32 elements to int8 (llama.cpp's Q8 scheme, quantize_row_q8a), exact integer block
// dot products over panel-packed weights (PanelOrder::kInt8, panel_layout.hpp), and a per-element
// float sequence fixed independently of n, of the tiling, of the thread count and of the ISA
// (batch-invariant, docs/architecture.md, 'Batch invariance').
//
// The exact formula. For output y[i, r], weight row r of nb blocks, block b with f16 scale d_b
// (Q4_1 also minimum m_b) converted to f32, and the activation row's block b quantized to
// qx_{b,j} (int8), with f32 scale dx_b and sx_b = dx_b·Σ_j qx_{b,j} (BlockQ8A::d, ::s):
//
//   A = 0
//   for b = 0 .. nb−1:
//     P = Σ_j u_{b,j}·qx_{b,j} − o·Σ_j qx_{b,j}        exact in int32
//         Q4_1: u = nibble, o = 0;  Q4_0: u = nibble, o = 8;  Q8_0: u = q + 128, o = 128
//     A = fma(d_b ⊗ dx_b, float(P), A)                 ⊗: one rounded f32 product; float(P) exact
//     Q4_1: A = fma(m_b, sx_b, A)
//   y = A
// The super-block kinds with a scale per 32: K4, K5 run Q4_1's / Q5_1's sequence, IQ4X IQ4's,
// with the f32 D = d·sc (and M = −(dmin·m)) of each 32-element sub-block, decoded exactly from the
// panel's scale codes, for d_b (and m_b).
//
// K6, K3, K2 (f32 D_{b,h}, M_{b,h} per 16-element half h, decoded likewise; quants stored as
// u = q + o, o = 32, 4, 0):
//     P_h = Σ_{j∈h} u_{b,j}·qx_{b,j} − o·Σ_{j∈h} qx_{b,j}          exact in int32   (h = 0, 1)
//     A = fma(D_{b,0} ⊗ dx_b, float(P_0), A);  A = fma(D_{b,1} ⊗ dx_b, float(P_1), A)
//     K2 only:  A = fma(M_{b,0}, s_{b,0}, A);  A = fma(M_{b,1}, s_{b,1}, A)
//               s_{b,h} = dx_b ⊗ Σ_{j∈h} qx_{b,j}
//
// |P| ≤ 32·255·127 < 2²⁴, so float(P) is exact, and the integer part has no order: the scalar
// kernel (int32 loops, std::fma), the AVX2 one (vpmaddubsw + vpmaddwd, operands chosen so that no
// int16 sum saturates: kernels_int8_avx2.cpp), the AVX-VNNI one (256-bit vpdpbusd) and the AVX-512
// VNNI one (vpdpbusd) give the same bits (isa.hpp's int8_kernel() picks one per CPU).
// Error: the activation rounding of the Simd path (|Δx| ≤ dx_b/2 per element; its bound in
// README.md holds unchanged) plus ≤ 3 f32 roundings per block in A.
#pragma once

#include <cstdint>

#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::detail {

/// y[n, w.rows] = x[n, w.cols] · Wᵀ for every quantized type by the formula above. Reads
/// w.int8_panels, or packs per call when it is null. Panels (16 output rows) are split across
/// `pool`; the AVX-512 VNNI tile holds up to 5 activation rows × 2 panels (2 × 4 when n ≤ 2), the
/// 256-bit ones 2 × 1 (1–2 × 2 when n ≤ 2).
void matmul_int8_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool);

}  // namespace plinth::cpu::detail
