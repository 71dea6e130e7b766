// Attention kernels with AVX-512F for grouped-query heads (kernel_table.hpp: dots_heads,
// weighted_sum_heads), built with -mavx512f -mavx2 -mfma and reached only through the Avx512 table
// after the run-time CPU check (isa.cpp). The same bits as the AVX2 versions (kernels_avx2.cpp):
//  - dots: one ZMM accumulator per (row, head) holds AVX2's two 8-lane sums a0 (lanes 0-7) and a1
//    (lanes 8-15), built by the same FMAs in the same order; s = a0 + a1, then hsum's tree for 8
//    rows at once, exactly as the AVX2 kernel does;
//  - weighted sum: per element the FMA chain from 0 over the rows in order (lane width does not
//    enter).
// Fewer instructions per row than AVX2: dots stage the K rows of 8 keys once (f16 converted once)
// for every query of the call, so a prefill chunk's queries share each conversion and each query
// vector load serves 8 keys; a V row of 64 is 4 loads, not 8, and 4 heads × 64 columns of
// accumulators fit the 32 registers, so each V row is read once. The rows 16 ahead are
// prefetched: a KV block boundary is a jump the hardware prefetchers do not foresee.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void dots_heads_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                       int64_t dim, float* const* out) {
  scalar_kernels().dots_heads(q, nh, rows, count, dim, out);
}
void weighted_sum_heads_avx512(const float* const* p, int nh, const float* const* rows,
                               int64_t count, int64_t dim, float* const* out) {
  scalar_kernels().weighted_sum_heads(p, nh, rows, count, dim, out);
}
void dots_heads_f16_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                           int64_t count, int64_t dim, float* const* out) {
  scalar_kernels().dots_heads_f16(q, nh, rows, count, dim, out);
}
void weighted_sum_heads_f16_avx512(const float* const* p, int nh, const uint16_t* const* rows,
                                   int64_t count, int64_t dim, float* const* out) {
  scalar_kernels().weighted_sum_heads_f16(p, nh, rows, count, dim, out);
}
}  // namespace plinth::cpu::detail
#else

// GCC 12 warns -Wmaybe-uninitialized about the _mm512_undefined_*() values that its own
// immintrin.h passes as unused source operands of the AVX-512 built-ins (a false positive of the
// compiler's headers); every value of ours is set before use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "avx512_rows.hpp"
#include "hsum_rows.hpp"

namespace plinth::cpu::detail {
namespace {  // internal linkage, and no standard-library call: see panel_driver.hpp

template <int NV, class T>
void weighted_slice(const float* const* p, int hn, const T* const* rows, int64_t count, int64_t e0,
                    float* const* out) {
  constexpr int kMaxHeads = 4;
  __m512 acc[kMaxHeads][NV];
  for (int h = 0; h < kMaxHeads; ++h)
    for (int v = 0; v < NV; ++v) acc[h][v] = _mm512_setzero_ps();
  for (int64_t j = 0; j < count; ++j) {
    if (j + kPrefetchRows < count) prefetch_row(rows[j + kPrefetchRows] + e0, 16 * NV);
    __m512 x[NV];
    for (int v = 0; v < NV; ++v) x[v] = load16(rows[j] + e0 + 16 * v);
    for (int h = 0; h < hn; ++h) {
      const __m512 vp = _mm512_set1_ps(p[h][j]);
      for (int v = 0; v < NV; ++v) acc[h][v] = _mm512_fmadd_ps(vp, x[v], acc[h][v]);
    }
  }
  for (int h = 0; h < hn; ++h)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(out[h] + e0 + std::ptrdiff_t{16} * v, acc[h][v]);
}

// The K rows of one group of 8 keys as f32: f32 rows in place, IEEE half rows converted (exactly)
// once into `stage` ([8, dim]) for every head of the call. A group short of 8 rows (the last)
// repeats its first row in the unused places; their dots are computed and dropped.
template <class T>
__attribute__((always_inline)) inline void stage_group(const T* const* rows, int64_t j0, int rn,
                                                       int64_t count, int64_t dim, float* stage,
                                                       const float* (&kr)[8]) {
  for (int r = 0; r < rn; ++r) {
    if (j0 + r + kPrefetchRows < count) prefetch_row(rows[j0 + r + kPrefetchRows], dim);
    if constexpr (sizeof(T) == sizeof(float)) {
      kr[r] = reinterpret_cast<const float*>(rows[j0 + r]);
    } else {
      float* dst = stage + r * dim;
      for (int64_t i = 0; i < dim; i += 16) _mm512_storeu_ps(dst + i, load16(rows[j0 + r] + i));
      kr[r] = dst;
    }
  }
  for (int r = rn; r < 8; ++r) kr[r] = kr[0];
}

// out[h][j0 .. j0 + rn) for one head: per key row r, AVX2's two 8-lane sums a0 (lanes 0-7) and
// a1 (lanes 8-15) in one ZMM, built by the same FMAs in the same order (from 0, i ascending);
// s = a0 + a1, then hsum's tree for the 8 rows at once. The query's 16 lanes are loaded once per
// step of i for all 8 rows.
__attribute__((always_inline)) inline void head_group(const float* a, const float* const (&kr)[8],
                                                      int64_t dim, int rn, float* out) {
  __m512 acc[8];
  for (int r = 0; r < 8; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < dim; i += 16) {
    const __m512 qa = _mm512_loadu_ps(a + i);
    for (int r = 0; r < 8; ++r) acc[r] = _mm512_fmadd_ps(qa, _mm512_loadu_ps(kr[r] + i), acc[r]);
  }
  __m256 sv[8];
  for (int r = 0; r < 8; ++r) {
    const __m256 a0 = _mm512_castps512_ps256(acc[r]);
    const __m256 a1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r]), 1));
    sv[r] = _mm256_add_ps(a0, a1);
  }
  const __m256 s = hsum_rows8(sv);
  if (rn == 8) {
    _mm256_storeu_ps(out, s);
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, s);
  for (int r = 0; r < rn; ++r) out[r] = tmp[r];
}

// Keys in groups of 8, staged once (stage_group) and then dotted with every head of the call:
// a prefill chunk's queries × the group's heads share each conversion and each K cache line.
template <class T>
void dots_heads_t(const float* const* q, int nh, const T* const* rows, int64_t count, int64_t dim,
                  float* const* out) {
  alignas(64) float stage[8 * kMaxStageDim];
  for (int64_t j0 = 0; j0 < count; j0 += 8) {
    const int rn = count - j0 < 8 ? static_cast<int>(count - j0) : 8;
    const float* kr[8];
    stage_group(rows, j0, rn, count, dim, stage, kr);
    for (int h = 0; h < nh; ++h) head_group(q[h], kr, dim, rn, out[h] + j0);
  }
}

template <class T>
void weighted_sum_heads_t(const float* const* p, int nh, const T* const* rows, int64_t count,
                          int64_t dim, float* const* out) {
  constexpr int kMaxHeads = 4;
  for (int h0 = 0; h0 < nh; h0 += kMaxHeads) {
    const int hn = nh - h0 < kMaxHeads ? nh - h0 : kMaxHeads;
    for (int64_t e0 = 0; e0 < dim; e0 += 64) {
      switch ((dim - e0) / 16 < 4 ? (dim - e0) / 16 : 4) {
        case 1:
          weighted_slice<1>(p + h0, hn, rows, count, e0, out + h0);
          break;
        case 2:
          weighted_slice<2>(p + h0, hn, rows, count, e0, out + h0);
          break;
        case 3:
          weighted_slice<3>(p + h0, hn, rows, count, e0, out + h0);
          break;
        default:
          weighted_slice<4>(p + h0, hn, rows, count, e0, out + h0);
          break;
      }
    }
  }
}

}  // namespace

// dim % 16 != 0: the AVX2 kernels (f32; same bits) or the scalar ones (f16; see kernel_table.hpp).
void dots_heads_avx512(const float* const* q, int nh, const float* const* rows, int64_t count,
                       int64_t dim, float* const* out) {
  if (dim % 16 != 0 || dim > kMaxStageDim) {
    return avx2_kernels().dots_heads(q, nh, rows, count, dim, out);
  }
  if (nh >= kTiledMinQueries) return dots_heads_tiled_avx512(q, nh, rows, count, dim, out);
  dots_heads_t(q, nh, rows, count, dim, out);
}
void weighted_sum_heads_avx512(const float* const* p, int nh, const float* const* rows,
                               int64_t count, int64_t dim, float* const* out) {
  if (dim % 16 != 0) return avx2_kernels().weighted_sum_heads(p, nh, rows, count, dim, out);
  weighted_sum_heads_t(p, nh, rows, count, dim, out);
}
void dots_heads_f16_avx512(const float* const* q, int nh, const uint16_t* const* rows,
                           int64_t count, int64_t dim, float* const* out) {
  if (dim % 16 != 0) return scalar_kernels().dots_heads_f16(q, nh, rows, count, dim, out);
  if (dim > kMaxStageDim) return avx2_kernels().dots_heads_f16(q, nh, rows, count, dim, out);
  if (nh >= kTiledMinQueries) return dots_heads_tiled_avx512(q, nh, rows, count, dim, out);
  dots_heads_t(q, nh, rows, count, dim, out);
}
void weighted_sum_heads_f16_avx512(const float* const* p, int nh, const uint16_t* const* rows,
                                   int64_t count, int64_t dim, float* const* out) {
  if (dim % 16 != 0) return scalar_kernels().weighted_sum_heads_f16(p, nh, rows, count, dim, out);
  weighted_sum_heads_t(p, nh, rows, count, dim, out);
}

}  // namespace plinth::cpu::detail

#endif  // x86
