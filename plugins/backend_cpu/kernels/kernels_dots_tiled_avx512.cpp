// The attention scores of many queries against the same keys (a prefill chunk's queries × the
// heads of a KV group, or a verify window's), in GEMM form: the K rows of 16 keys are staged once
// transposed ([dim, 16] f32, one key per ZMM lane), and each query element is broadcast against
// them, so one FMA advances 16 keys and no horizontal reduction or shuffle remains per query.
// Built with -mavx512f -mavx2 -mfma -mf16c, reached only through dots_heads_avx512 /
// dots_heads_f16_avx512 (kernels_attention_avx512.cpp) after the run-time CPU check.
//
// The same bits as the AVX2 dots (kernels_avx2.cpp), which the row kernel reproduces: a dot there
// is 16 lane sums P_l (l = 0..15), each the FMA chain from 0 over the elements i ≡ l (mod 16) in
// ascending order; then s_k = P_k + P_{k+8}, t_k = s_k + s_{k+4}, u_k = t_k + t_{k+2},
// dot = u_0 + u_1 (hsum_rows.hpp). Here lane j of a register holds key j, the chains are the same
// FMAs in the same order, and the tree is the same additions done lane-wise (IEEE addition and
// multiplication are commutative, so the operand order of each changes no bit).
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void dots_heads_tiled_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                             int64_t dim, float* const* out) {
  scalar_kernels().dots_heads(q, nh, rows, count, dim, out);
}
void dots_heads_tiled_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                             int64_t count, int64_t dim, float* const* out) {
  scalar_kernels().dots_heads_f16(q, nh, rows, count, dim, out);
}
}  // namespace plinth::cpu::detail
#else

// GCC 12's -Wmaybe-uninitialized false positive on its own AVX-512 headers (see
// kernels_attention_avx512.cpp); with the sanitizers on, the same _mm512_undefined_ps() source
// operand of _mm512_unpacklo_ps / unpackhi_ps is reported as -Wuninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "avx512_rows.hpp"

namespace plinth::cpu::detail {
namespace {  // internal linkage, and no standard-library call: see panel_driver.hpp

constexpr int kTileKeys = 16;    // keys per tile: one ZMM lane each
constexpr int kTileQueries = 4;  // queries per pass over a tile: 16 chains + 8 partial sums

// r[j] = row j of a 16 × 16 block → r[c] = column c (unpack 32-bit pairs, 64-bit pairs, then two
// rounds of 128-bit lane shuffles).
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // Per 128-bit lane k of group g (rows 4g .. 4g+3): r[4g + m] holds element 4k + m of the rows.
  for (int g = 0; g < 4; ++g) {
    const int b = 4 * g;
    r[b] = _mm512_shuffle_ps(t[b], t[b + 2], 0x44);
    r[b + 1] = _mm512_shuffle_ps(t[b], t[b + 2], 0xee);
    r[b + 2] = _mm512_shuffle_ps(t[b + 1], t[b + 3], 0x44);
    r[b + 3] = _mm512_shuffle_ps(t[b + 1], t[b + 3], 0xee);
  }
  // t[m] / t[m + 4]: elements m, m + 8 / m + 4, m + 12 of rows 0-7; t[m + 8] / t[m + 12]: of
  // rows 8-15 (lanes: [rows 0-3, rows 0-3, rows 4-7, rows 4-7]).
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm512_shuffle_f32x4(r[m], r[m + 4], 0x88);
    t[m + 4] = _mm512_shuffle_f32x4(r[m], r[m + 4], 0xdd);
    t[m + 8] = _mm512_shuffle_f32x4(r[m + 8], r[m + 12], 0x88);
    t[m + 12] = _mm512_shuffle_f32x4(r[m + 8], r[m + 12], 0xdd);
  }
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm512_shuffle_f32x4(t[m], t[m + 8], 0x88);
    r[m + 8] = _mm512_shuffle_f32x4(t[m], t[m + 8], 0xdd);
    r[m + 4] = _mm512_shuffle_f32x4(t[m + 4], t[m + 12], 0x88);
    r[m + 12] = _mm512_shuffle_f32x4(t[m + 4], t[m + 12], 0xdd);
  }
}

// kt[i * 16 + j] = element i of key j0 + j, as f32 (IEEE half converted exactly); keys past
// `rn` repeat key j0 (their scores are computed and dropped). The next tile's rows are
// prefetched.
template <class T>
void stage_tile(const T* const* rows, int64_t j0, int rn, int64_t count, int64_t dim, float* kt) {
  for (int j = 0; j < kTileKeys; ++j) {
    if (j0 + kTileKeys + j < count) prefetch_row(rows[j0 + kTileKeys + j], dim);
  }
  for (int64_t i = 0; i < dim; i += 16) {
    __m512 r[16];
    for (int j = 0; j < kTileKeys; ++j) r[j] = load16(rows[j0 + (j < rn ? j : 0)] + i);
    transpose16(r);
    for (int c = 0; c < 16; ++c) _mm512_store_ps(kt + (i + c) * kTileKeys, r[c]);
  }
}

// t_k of Q queries against one staged tile: the chains P_k, P_{k+8}, P_{k+4}, P_{k+12}, then
// s_k = P_k + P_{k+8}, s_{k+4} = P_{k+4} + P_{k+12}, t_k = s_k + s_{k+4}.
template <int Q>
__attribute__((always_inline)) inline void tile_t(const float* const* q, const float* kt,
                                                  int64_t dim, int k, __m512 (&t)[Q]) {
  const int lane[4] = {k, k + 8, k + 4, k + 12};
  __m512 p[Q][4];
  for (int h = 0; h < Q; ++h)
    for (int c = 0; c < 4; ++c) p[h][c] = _mm512_setzero_ps();
  for (int64_t i = 0; i < dim; i += 16) {
    for (int c = 0; c < 4; ++c) {
      const int64_t e = i + lane[c];
      const __m512 kv = _mm512_load_ps(kt + e * kTileKeys);
      for (int h = 0; h < Q; ++h) p[h][c] = _mm512_fmadd_ps(_mm512_set1_ps(q[h][e]), kv, p[h][c]);
    }
  }
  for (int h = 0; h < Q; ++h) {
    t[h] = _mm512_add_ps(_mm512_add_ps(p[h][0], p[h][1]), _mm512_add_ps(p[h][2], p[h][3]));
  }
}

// The scores of Q queries against one staged tile, out[h][j0 + j] for j < rn:
// u_0 = t_0 + t_2, u_1 = t_1 + t_3, dot = u_0 + u_1.
template <int Q>
void tile_dots(const float* const* q, const float* kt, int64_t dim, int rn, int64_t j0,
               float* const* out) {
  __m512 u0[Q], u1[Q], t[Q];
  tile_t<Q>(q, kt, dim, 0, u0);
  tile_t<Q>(q, kt, dim, 1, u1);
  tile_t<Q>(q, kt, dim, 2, t);
  for (int h = 0; h < Q; ++h) u0[h] = _mm512_add_ps(u0[h], t[h]);
  tile_t<Q>(q, kt, dim, 3, t);
  for (int h = 0; h < Q; ++h) u1[h] = _mm512_add_ps(u1[h], t[h]);
  const __mmask16 keep =
      rn == kTileKeys ? __mmask16{0xffff} : static_cast<__mmask16>((1u << rn) - 1u);
  for (int h = 0; h < Q; ++h) {
    _mm512_mask_storeu_ps(out[h] + j0, keep, _mm512_add_ps(u0[h], u1[h]));
  }
}

template <class T>
void dots_tiled(const float* const* q, int nh, const T* const* rows, int64_t count, int64_t dim,
                float* const* out) {
  alignas(64) float kt[kMaxStageDim * kTileKeys];
  for (int64_t j0 = 0; j0 < count; j0 += kTileKeys) {
    const int rn = count - j0 < kTileKeys ? static_cast<int>(count - j0) : kTileKeys;
    stage_tile(rows, j0, rn, count, dim, kt);
    int h = 0;
    for (; h + kTileQueries <= nh; h += kTileQueries) tile_dots<4>(q + h, kt, dim, rn, j0, out + h);
    switch (nh - h) {
      case 3:
        tile_dots<3>(q + h, kt, dim, rn, j0, out + h);
        break;
      case 2:
        tile_dots<2>(q + h, kt, dim, rn, j0, out + h);
        break;
      case 1:
        tile_dots<1>(q + h, kt, dim, rn, j0, out + h);
        break;
      default:
        break;
    }
  }
}

}  // namespace

void dots_heads_tiled_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                             int64_t dim, float* const* out) {
  dots_tiled(q, nh, rows, count, dim, out);
}
void dots_heads_tiled_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                             int64_t count, int64_t dim, float* const* out) {
  dots_tiled(q, nh, rows, count, dim, out);
}

}  // namespace plinth::cpu::detail

#endif  // x86
