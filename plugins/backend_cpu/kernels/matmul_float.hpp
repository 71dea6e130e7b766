// Internal: the Float path of matmul (MatmulPath::kFloat) for quantized weights — f32 activations,
// weights dequantized in registers, a per-element reduction order fixed independently of n, of the
// tiling and of the thread count (batch-invariant, docs/architecture.md, 'Batch invariance').
//
// The exact formula. For output y[i, r], weight row r of nb blocks, block b with f16 scale d_b
// (Q4_1 also minimum m_b) and small integers q_{b,j} (Q8_0: int8; Q4_0: nibble − 8; Q4_1: nibble),
// activation x_j = x[i, 32b + j]. The integers q, d_b and m_b are converted to f32 exactly and d_b
// is never multiplied into q, so no weight is rounded (in particular Q4_1 is NOT rounded as
// fl(d·q + m) the way gguf-py dequantizes): Σ_j (d q_j + m) x_j = d·Σ_j q_j x_j + m·Σ_j x_j.
// Every step below is one IEEE fused multiply-add fma(a, b, c) = a·b + c rounded once:
//
//   A = 0
//   for b = 0 .. nb−1:
//     S = 0
//     Q4:   for t = 0 .. 15:  S = fma(q_{b,t}, x_{32b+t}, S);  S = fma(q_{b,t+16}, x_{32b+t+16}, S)
//     Q8_0: for j = 0 .. 31:  S = fma(q_{b,j}, x_{32b+j}, S)
//     A = fma(d_b, S, A)
//     Q4_1: A = fma(m_b, sx_b, A)      sx_b = block_sums (below): the block sum of x, fixed order
//   y = A
// The super-block kinds with a scale per 32 run the Q4_1 (K4, K5: with minimums) or the Q4_0 /
// IQ4 sequence (IQ4X) with the f32 D = d·sc and M = −(dmin·m) of each 32-element sub-block, which
// the kernels decode from the panel's scale codes (exact products) in place of the f16 d and m.
//
// The kinds with a scale per 16-element half h (K6, K3, K2: f32 D_{b,h}, M_{b,h} decoded likewise,
// q = u − o the signed integers of the file's blocks, plinth/ggml_format.hpp split_block):
//     S_h = 0;  for j = 16h .. 16h+15:  S_h = fma(q_{b,j}, x_{32b+j}, S_h)        (h = 0, 1)
//     A = fma(D_{b,0}, S_0, A);  A = fma(D_{b,1}, S_1, A)
//     K2 only:  A = fma(M_{b,0}, sx_{b,0}, A);  A = fma(M_{b,1}, sx_{b,1}, A)   sx: half_sums
// The bound below holds with 4 roundings per block in A and the weights' D·q + M in place of
// d·q + m.
//
// Nothing in it depends on n, the other rows, the thread split, the kernels' tiling or the ISA:
// a vector lane holds one output element and runs the sequence unchanged, so the scalar (std::fma),
// AVX2 and AVX-512 kernels give the same bits, and the path is batch-invariant
// (docs/architecture.md, 'Batch invariance').
// Error vs exact arithmetic, to first order, with u = 2⁻²⁴: S carries ≤ 32 roundings of partial
// sums of its block, A ≤ 2 per block (≤ 2nb in all), sx ≤ 6, so
//   |y − y_exact| ≤ (2·nb + 40)·u·(Σ_j |d_b q_j x_j| + Σ_b |m_b|·Σ_{j∈b} |x_j|),
// i.e. ≤ 4.6e-6 (576 columns) and ≤ 8.1e-6 (1536 columns) relative to that sum (a worst case; the
// measured errors are two orders below, README.md).
//
// Weights are read in the panel layout (panel_layout.hpp): packed once at model load by
// backend_cpu (LlamaForward), or per call when a WeightView carries no panels.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_table.hpp"
#include "panel_layout.hpp"
#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::detail {

/// sx[padded_blocks(cols/32)] for one activation row x[cols] (cols % 32 == 0): with
/// X_l = ((x[32b+l] + x[32b+8+l]) + x[32b+16+l]) + x[32b+24+l],
/// sx[b] = ((X_0 + X_4) + (X_2 + X_6)) + ((X_1 + X_5) + (X_3 + X_7)); zeros after cols/32.
/// Same bits on every ISA (additions only, fixed order).
void block_sums(const float* x, int64_t cols, float* out);
/// sx[2·padded_blocks(cols/32)] for one activation row: the sums of its 16-element halves, with
/// X_l = x[16h+l] + x[16h+8+l], sx[h] = ((X_0 + X_4) + (X_2 + X_6)) + ((X_1 + X_5) + (X_3 + X_7));
/// zeros after cols/16. The K2 panels' minimum terms. Same bits on every ISA.
void half_sums(const float* x, int64_t cols, float* out);
/// nb rounded up to a multiple of 8.
int64_t padded_blocks(int64_t nb);

/// y[n, w.rows] = x[n, w.cols] · Wᵀ for every quantized type by the formula above. Panels
/// (16 output rows) are split across `pool`; a kernel tile holds up to 6 activation rows × 2
/// panels (AVX-512), so each unpacked weight vector serves up to 6 rows.
void matmul_float_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool);

/// Runs `run` over every panel of `job` on `pool`, in groups of whole tiles: 4 panels (the kernels'
/// wide tile for small n, two narrow tiles otherwise) when that still gives each participant at
/// least 4 groups, else 2 (one narrow tile). A chunk boundary inside a tile would force the
/// thin 1- or 2-chain tiles, latency-bound at batch-1 decode. The grouping decides only which
/// participant computes which panels, never how, so results do not depend on it.
void run_panels_parallel(const PanelJob& job, PanelRunFn run, ThreadPool& pool);

/// Packs the quantized matrix `w` into out[packed_bytes(w)] (panel_layout.hpp) in `order` (the
/// Float path's or the Int8 path's), split over `pool`.
void pack_weights(const WeightView& w, uint8_t* out, ThreadPool& pool,
                  PanelOrder order = PanelOrder::kFloat);

/// True when `parts` can be packed as one stacked matrix by pack_stacked: at least one part, all
/// of one quantized type (Q8_0 / Q4_0 / Q4_1) and one input width, each with a whole number of
/// panels of rows (rows % kPanelRows == 0), so that no panel straddles two parts.
bool can_stack(const std::vector<WeightView>& parts);

/// Bytes pack_stacked writes: Σ packed_bytes(part).
int64_t stacked_bytes(const std::vector<WeightView>& parts);

/// Packs `parts` end to end into out[stacked_bytes(parts)] in `order`; those bytes are then the
/// panels of the matrix whose rows are the parts' rows in order (part 0's first). Returns that
/// matrix as a panel-only view (data null, rows = Σ rows; `panels` or `int8_panels` = out per
/// `order`; matmul runs it only on that path), so one matmul computes what one call per part
/// would, each output bit-identical (every output row is computed alone). `out` is not owned.
/// Throws std::invalid_argument when !can_stack(parts).
WeightView pack_stacked(const std::vector<WeightView>& parts, uint8_t* out, ThreadPool& pool,
                        PanelOrder order);

}  // namespace plinth::cpu::detail
