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
  // Attention over rows read in place (each row: `dim` contiguous f32):
  // out[j] = dot(q, rows[j], dim), j < count — each exactly the `dot` above.
  void (*dots)(const float* q, const float* const* rows, int64_t count, int64_t dim, float* out);
  // out[e] = Σ_j p[j]·rows[j][e], e < dim, accumulated from 0 in j order exactly as `count` calls
  // of `axpy` would (registers instead of memory in between).
  void (*weighted_sum)(const float* p, const float* const* rows, int64_t count, int64_t dim,
                       float* out);
  // The same for the nh query heads that share one KV head (grouped-query attention), reading each
  // K / V row once for all of them: out[h][j] = dots(q[h], ...)[j] and out[h] = weighted_sum(p[h],
  // ...), bit for bit, h < nh (any nh ≥ 1).
  void (*dots_heads)(const float* const* q, int nh, const float* const* rows, int64_t count,
                     int64_t dim, float* const* out);
  void (*weighted_sum_heads)(const float* const* p, int nh, const float* const* rows, int64_t count,
                             int64_t dim, float* const* out);
  // The same over IEEE half rows (an f16 KV cache read in place): the bits of the two kernels
  // above on the rows converted to f32 (the conversion is exact) when dim % 16 == 0; other dims
  // give the scalar table's bits (paged_attention converts such rows itself instead).
  void (*dots_heads_f16)(const float* const* q, int nh, const uint16_t* const* rows, int64_t count,
                         int64_t dim, float* const* out);
  void (*weighted_sum_heads_f16)(const float* const* p, int nh, const uint16_t* const* rows,
                                 int64_t count, int64_t dim, float* const* out);
};

/// One Float-path multiplication over panel-packed weights (panel_layout.hpp):
/// y[i, r] for all activation rows i < n and the output rows of the panels a run call is given.
/// Every output element follows the one arithmetic sequence of matmul_float.hpp, whatever n, the
/// panel range, the tile shape or the ISA, so the three run functions give the same bits.
struct PanelJob {
  PanelKind kind;         // the panels' kind (weight_types.hpp panel_kind)
  const uint8_t* panels;  // packed_bytes(W) bytes
  int64_t nb;             // blocks per weight row (cols / 32)
  int64_t panel_bytes;    // nb · panel_block_bytes(type)
  int64_t rows;           // output rows of W = row length of y
  const float* x;         // [n, nb · 32]
  const float* sx;        // Q4_1: [n, sx_stride] block sums (block_sums); K2: [n, sx_stride]
                          // sums of 16-element halves (half_sums; entry 2b + h); else unused
  int64_t sx_stride;
  int64_t n;
  float* y;  // [n, rows]
  // Int8 path only (panels in PanelOrder::kInt8; x and sx unused):
  const BlockQ8A* xq = nullptr;   // [n, nb] the activation rows quantized (quantize_row_q8a)
  const int32_t* qsum = nullptr;  // Q4_0 / Q8_0: [n, nb] Σ of each block's 32 int8; else unused
  const int32_t* qoff = nullptr;  // Q4_0 / Q8_0: [n, nb] −o·qsum (o = 8, 128); else unused
  // K6 / K3 / K2 only, [n, 2·nb], entry 2b + h for the 16-element half h of block b:
  const int32_t* qsum16 = nullptr;  // Σ of the half's 16 int8
  const int32_t* qoff16 = nullptr;  // −o·qsum16 (o = 32, 4, 0: the stored quants' offset)
  const float* s16 = nullptr;       // dx_b · float(qsum16), one f32 rounding
};
using PanelRunFn = void (*)(const PanelJob& job, int64_t p0, int64_t p1);  // panels [p0, p1)

/// kernels_panel_scalar.cpp (std::fma, any CPU), kernels_panel_avx2.cpp (AVX2 + FMA),
/// kernels_panel_avx512.cpp (AVX-512F): call the latter two only where the CPU has them.
void run_panels_scalar(const PanelJob& job, int64_t p0, int64_t p1);
void run_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1);
void run_panels_avx512(const PanelJob& job, int64_t p0, int64_t p1);

/// The Int8 path over PanelOrder::kInt8 panels (matmul_int8.hpp), one per Int8Kernel (isa.hpp):
/// kernels_int8_scalar.cpp (any CPU), kernels_int8_avx2.cpp (AVX2 + FMA + F16C),
/// kernels_int8_avxvnni.cpp (also AVX-VNNI) and kernels_int8_vnni.cpp (AVX-512F + BW + VNNI); call
/// each only where int8_kernel_supported() says so. Same bits: every output follows the one
/// formula of matmul_int8.hpp.
void run_int8_panels_scalar(const PanelJob& job, int64_t p0, int64_t p1);
void run_int8_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1);
void run_int8_panels_avxvnni(const PanelJob& job, int64_t p0, int64_t p1);
void run_int8_panels_vnni(const PanelJob& job, int64_t p0, int64_t p1);

const KernelTable& scalar_kernels();
/// Only to be called when the CPU supports AVX2 + FMA + F16C.
const KernelTable& avx2_kernels();
/// The AVX2 table with the attention kernels of kernels_attention_avx512.cpp (same bits); only
/// to be called when the CPU supports AVX-512F as well.
const KernelTable& avx512_kernels();
/// The Avx512 table's dots_heads / weighted_sum_heads (and _f16 forms): the contracts of the
/// KernelTable entries above, the bits of the AVX2 versions (kernels_attention_avx512.cpp).
void dots_heads_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                       int64_t dim, float* const* out);
void weighted_sum_heads_avx512(const float* const* p, int nh, const float* const* rows,
                               int64_t count, int64_t dim, float* const* out);
void dots_heads_f16_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                           int64_t count, int64_t dim, float* const* out);
void weighted_sum_heads_f16_avx512(const float* const* p, int nh, const uint16_t* const* rows,
                                   int64_t count, int64_t dim, float* const* out);
/// dots_heads for nh >= kTiledMinQueries queries in GEMM form (kernels_dots_tiled_avx512.cpp):
/// the contract and the bits of dots_heads, for dim % 16 == 0 and dim <= 256 only; rows f32 or
/// IEEE half. AVX-512F only.
constexpr int kTiledMinQueries = 8;
void dots_heads_tiled_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                             int64_t dim, float* const* out);
void dots_heads_tiled_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                             int64_t count, int64_t dim, float* const* out);
/// The Avx512 table's quantize_row_q8a: the contract and the bits of the AVX2 version
/// (kernels_quantize_avx512.cpp).
void quantize_row_q8a_avx512(const float* x, int64_t cols, BlockQ8A* out);
/// The Avx512 table's silu_mul / exp_sub_sum / scale: the contracts of the KernelTable entries
/// above, the bits of the AVX2 versions (kernels_float_avx512.cpp).
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n);
float exp_sub_sum_avx512(float* x, float m, int64_t n);
void scale_avx512(float* x, float s, int64_t n);
/// The table of active_isa().
const KernelTable& active_kernels();

}  // namespace plinth::cpu::detail
