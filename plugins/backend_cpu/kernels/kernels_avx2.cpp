// AVX2 + FMA + F16C kernels. This translation unit alone is compiled with -mavx2 -mfma -mf16c
// (see CMakeLists.txt); it is reached only through avx2_kernels() after the run-time CPU check in
// isa.cpp. The int8 dot products follow llama.cpp's AVX2 scheme: unpack the weight block to 32
// bytes, _mm256_maddubs_epi16 (u8 × s8 → pairs of i16), _mm256_madd_epi16 (→ i32), scale in f32.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
// Not an x86 build: best_isa() is Scalar, so this is never reached.
const KernelTable& avx2_kernels() {
  return scalar_kernels();
}
}  // namespace plinth::cpu::detail
#else

#include <immintrin.h>

#include <cmath>
#include <type_traits>

#include "hsum_rows.hpp"

namespace plinth::cpu::detail {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// Local helpers only: an inline function from a shared header compiled here with AVX2 could be the
// copy the linker keeps for the whole program (ODR), and then crash on CPUs without AVX2.
inline float f16(uint16_t h) {
  return _cvtsh_ss(h);
}
inline float bf16(uint16_t b) {
  return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(b) << 16)));
}

// roundf(v): half away from zero, exactly as the scalar path (trunc + |frac| >= 0.5).
inline __m256 round_half_away(__m256 v) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));
  const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_and_ps(v, sign), _mm256_set1_ps(1.0f));
  return _mm256_add_ps(t, _mm256_and_ps(up, one));
}

void quantize_row_q8a(const float* x, int64_t cols, BlockQ8A* out) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(xb + std::ptrdiff_t{8} * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
    }
    const float d = hmax(amax) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k)
      q[k] = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v[k], vid)));
    const int sum =
        hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    // packs interleave 128-bit lanes; the permute restores element order.
    const __m256i p16a = _mm256_packs_epi32(q[0], q[1]);
    const __m256i p16b = _mm256_packs_epi32(q[2], q[3]);
    __m256i p8 = _mm256_packs_epi16(p16a, p16b);
    p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[b].qs), p8);
    out[b].d = d;
    out[b].s = d * static_cast<float>(sum);
  }
}

// 32 nibbles → 32 bytes 0..15 in ggml order (low nibbles = elements 0..15).
inline __m256i unpack_nibbles(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(raw, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), mask);
  return _mm256_set_m128i(hi, lo);
}

// Σ over 32 pairs of u8 × s8 as 8 floats.
inline __m256 mul_sum_us8(__m256i u, __m256i s) {
  const __m256i p16 = _mm256_maddubs_epi16(u, s);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

inline __m256i load_q(const BlockQ8A& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}

// Q4_0 and Q4_1 share the loop: value = q*d + off, off = -8d (Q4_0) or m (Q4_1), so
// Σ value·x = d·dx·Σ q·xq + off·s.
template <int NX, typename Block, bool kHasMin>
void dot_q4_n(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t xs, float* out) {
  const auto* wb = static_cast<const Block*>(w);
  __m256 acc[NX];
  float off_sum[NX];
  for (int r = 0; r < NX; ++r) {
    acc[r] = _mm256_setzero_ps();
    off_sum[r] = 0.0f;
  }
  for (int64_t b = 0; b < nblocks; ++b) {
    const __m256i q = unpack_nibbles(wb[b].qs);
    const float d = f16(wb[b].d);
    float off;
    if constexpr (kHasMin) {
      off = f16(wb[b].m);
    } else {
      off = -8.0f * d;
    }
    for (int r = 0; r < NX; ++r) {
      const BlockQ8A& xb = x[r * xs + b];
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), mul_sum_us8(q, load_q(xb)), acc[r]);
      off_sum[r] += off * xb.s;
    }
  }
  for (int r = 0; r < NX; ++r) out[r] = hsum(acc[r]) + off_sum[r];
}

template <int NX>
void dot_q8_0_n(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t xs, float* out) {
  const auto* wb = static_cast<const BlockQ8_0*>(w);
  __m256 acc[NX];
  for (int r = 0; r < NX; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nblocks; ++b) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb[b].qs));
    const __m256i aq = _mm256_sign_epi8(q, q);  // |q| as u8 (−128 → 128)
    const float d = f16(wb[b].d);
    for (int r = 0; r < NX; ++r) {
      const BlockQ8A& xb = x[r * xs + b];
      const __m256i sx = _mm256_sign_epi8(load_q(xb), q);  // x·sign(q)
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), mul_sum_us8(aq, sx), acc[r]);
    }
  }
  for (int r = 0; r < NX; ++r) out[r] = hsum(acc[r]);
}

template <template <int> class K>
void dispatch_nx(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t xs, int nx,
                 float* out) {
  switch (nx) {
    case 1:
      K<1>::run(nblocks, w, x, xs, out);
      return;
    case 2:
      K<2>::run(nblocks, w, x, xs, out);
      return;
    case 3:
      K<3>::run(nblocks, w, x, xs, out);
      return;
    default:
      K<4>::run(nblocks, w, x, xs, out);
      return;
  }
}
template <int NX>
struct Q4_0K {
  static void run(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, float* out) {
    dot_q4_n<NX, BlockQ4_0, false>(nb, w, x, xs, out);
  }
};
template <int NX>
struct Q4_1K {
  static void run(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, float* out) {
    dot_q4_n<NX, BlockQ4_1, true>(nb, w, x, xs, out);
  }
};
template <int NX>
struct Q8_0K {
  static void run(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, float* out) {
    dot_q8_0_n<NX>(nb, w, x, xs, out);
  }
};

void dot_q4_0(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, int nx, float* out) {
  dispatch_nx<Q4_0K>(nb, w, x, xs, nx, out);
}
void dot_q4_1(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, int nx, float* out) {
  dispatch_nx<Q4_1K>(nb, w, x, xs, nx, out);
}
void dot_q8_0(int64_t nb, const void* w, const BlockQ8A* x, int64_t xs, int nx, float* out) {
  dispatch_nx<Q8_0K>(nb, w, x, xs, nx, out);
}

// Float weights: 8 columns per step, converted to f32 in registers.
template <typename Load, typename Scalar>
void float_dot(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out,
               Load load, Scalar scalar) {
  for (int r = 0; r < nx; ++r) {
    const float* xr = x + r * xs;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= cols; j += 16) {
      a0 = _mm256_fmadd_ps(load(w, j), _mm256_loadu_ps(xr + j), a0);
      a1 = _mm256_fmadd_ps(load(w, j + 8), _mm256_loadu_ps(xr + j + 8), a1);
    }
    for (; j + 8 <= cols; j += 8) a0 = _mm256_fmadd_ps(load(w, j), _mm256_loadu_ps(xr + j), a0);
    float acc = hsum(_mm256_add_ps(a0, a1));
    for (; j < cols; ++j) acc += scalar(w, j) * xr[j];
    out[r] = acc;
  }
}

void dot_f32(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(
      cols, w, x, xs, nx, out,
      [](const void* p, int64_t j) { return _mm256_loadu_ps(static_cast<const float*>(p) + j); },
      [](const void* p, int64_t j) { return static_cast<const float*>(p)[j]; });
}
void dot_f16(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(
      cols, w, x, xs, nx, out,
      [](const void* p, int64_t j) {
        return _mm256_cvtph_ps(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + j)));
      },
      [](const void* p, int64_t j) { return f16(static_cast<const uint16_t*>(p)[j]); });
}
void dot_bf16(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(
      cols, w, x, xs, nx, out,
      [](const void* p, int64_t j) {
        const __m256i v = _mm256_cvtepu16_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + j)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      },
      [](const void* p, int64_t j) { return bf16(static_cast<const uint16_t*>(p)[j]); });
}

// exp(x) for 8 floats: Cephes expf (range reduction by ln 2 split in two, degree-5 polynomial);
// relative error ~2 ulp over [-88.37, 88.37]; inputs are clamped to that range.
inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
  const __m256 n = _mm256_floor_ps(
      _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201E-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

float dot(const float* a, const float* b, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8)
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
  float acc = hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

void axpy(float a, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += a * x[i];
}

void dots(const float* q, const float* const* rows, int64_t count, int64_t dim, float* out) {
  for (int64_t j = 0; j < count; ++j) out[j] = dot(q, rows[j], dim);
}

// Per element the sequence of axpy from o = 0, j ascending: o = fma(p_j, x_j, o) for the elements
// in whole 8-lane groups, o = o + p_j·x_j (two roundings, as axpy's tail) for the last dim % 8. 64
// columns at a time stay in 8 registers across all rows.
void weighted_sum(const float* p, const float* const* rows, int64_t count, int64_t dim,
                  float* out) {
  int64_t e0 = 0;
  for (; e0 + 64 <= dim; e0 += 64) {
    __m256 acc[8];
    for (auto& a : acc) a = _mm256_setzero_ps();
    for (int64_t j = 0; j < count; ++j) {
      const __m256 vp = _mm256_set1_ps(p[j]);
      const float* x = rows[j] + e0;
      for (int k = 0; k < 8; ++k)
        acc[k] = _mm256_fmadd_ps(vp, _mm256_loadu_ps(x + std::ptrdiff_t{8} * k), acc[k]);
    }
    for (int k = 0; k < 8; ++k) _mm256_storeu_ps(out + e0 + std::ptrdiff_t{8} * k, acc[k]);
  }
  if (e0 < dim) {
    for (int64_t e = e0; e < dim; ++e) out[e] = 0.0f;
    for (int64_t j = 0; j < count; ++j) axpy(p[j], rows[j] + e0, out + e0, dim - e0);
  }
}

// 8 row elements as f32: loaded (float rows) or converted exactly (IEEE half rows, F16C).
inline __m256 load8(const float* p) {
  return _mm256_loadu_ps(p);
}
inline __m256 load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Per row j and head h, the arithmetic of dot(q[h], rows[j], dim) — lane sums a0 (elements
// 16i..16i+7) and a1 (16i+8..16i+15) by FMA, s = a0 + a1, then hsum's tree s[k] + s[k+4],
// + [k+2], + [k+1] — with the last step done for 8 rows at once: the 8 rows' s vectors are
// transposed through the same pairwise additions (IEEE addition is commutative, so the bits are
// hsum's). The K row is read from memory by the first head and from L1 by the others. T = float
// or uint16_t (IEEE half, converted exactly). dim % 16 != 0 falls back to dot per (row, head).
// Row r of an 8-row group: the two lane sums of key row k with heads [h0, h0 + hn), added.
template <class T, int kMaxHeads>
__attribute__((always_inline)) inline void row_dots(const float* const* q, int h0, int hn,
                                                    const T* k, int64_t dim,
                                                    __m256 (&sv)[kMaxHeads][8], int r) {
  for (int h = 0; h < hn; ++h) {
    const float* a = q[h0 + h];
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < dim; i += 16) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load8(k + i), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), load8(k + i + 8), a1);
    }
    sv[h][r] = _mm256_add_ps(a0, a1);
  }
}

// out[h0 + h][j0 .. j0 + rn) for key rows j0 .. j0 + rn (rn <= 8): one 8-row group.
template <class T, int kMaxHeads>
__attribute__((always_inline)) inline void dots_group(const float* const* q, int h0, int hn,
                                                      const T* const* rows, int64_t j0, int rn,
                                                      int64_t dim, float* const* out) {
  __m256 sv[kMaxHeads][8];
  for (int r = 0; r < 8; ++r) {
    if (r >= rn) {
      for (int h = 0; h < hn; ++h) sv[h][r] = _mm256_setzero_ps();
      continue;
    }
    row_dots<T, kMaxHeads>(q, h0, hn, rows[j0 + r], dim, sv, r);
  }
  for (int h = 0; h < hn; ++h) {
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, hsum_rows8(sv[h]));
    for (int r = 0; r < rn; ++r) out[h0 + h][j0 + r] = tmp[r];
  }
}

template <class T>
void dots_heads_t(const float* const* q, int nh, const T* const* rows, int64_t count, int64_t dim,
                  float* const* out) {
  if (dim % 16 != 0) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      scalar_kernels().dots_heads_f16(q, nh, rows, count, dim, out);  // see kernel_table.hpp
    } else {
      for (int h = 0; h < nh; ++h) dots(q[h], rows, count, dim, out[h]);
    }
    return;
  }
  constexpr int kMaxHeads = 8;
  for (int h0 = 0; h0 < nh; h0 += kMaxHeads) {
    const int hn = nh - h0 < kMaxHeads ? nh - h0 : kMaxHeads;
    for (int64_t j0 = 0; j0 < count; j0 += 8) {
      const int rn = count - j0 < 8 ? static_cast<int>(count - j0) : 8;
      dots_group<T, kMaxHeads>(q, h0, hn, rows, j0, rn, dim, out);
    }
  }
}

// Per head h and element e, the sequence of weighted_sum(p[h], rows, count, dim, out[h]): from 0,
// o = fma(p_j, x_j, o) for j ascending. 16 columns of up to 4 heads at a time (8 accumulators),
// so each V row's cache line is loaded once for all heads. dim % 16 != 0 falls back per head.
template <class T>
void weighted_sum_heads_t(const float* const* p, int nh, const T* const* rows, int64_t count,
                          int64_t dim, float* const* out) {
  if (dim % 16 != 0) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      scalar_kernels().weighted_sum_heads_f16(p, nh, rows, count, dim, out);
    } else {
      for (int h = 0; h < nh; ++h) weighted_sum(p[h], rows, count, dim, out[h]);
    }
    return;
  }
  constexpr int kMaxHeads = 4;
  for (int h0 = 0; h0 < nh; h0 += kMaxHeads) {
    const int hn = nh - h0 < kMaxHeads ? nh - h0 : kMaxHeads;
    for (int64_t e0 = 0; e0 < dim; e0 += 16) {
      __m256 acc[kMaxHeads][2];
      for (int h = 0; h < kMaxHeads; ++h) acc[h][0] = acc[h][1] = _mm256_setzero_ps();
      for (int64_t j = 0; j < count; ++j) {
        const __m256 x0 = load8(rows[j] + e0);
        const __m256 x1 = load8(rows[j] + e0 + 8);
        for (int h = 0; h < hn; ++h) {
          const __m256 vp = _mm256_set1_ps(p[h0 + h][j]);
          acc[h][0] = _mm256_fmadd_ps(vp, x0, acc[h][0]);
          acc[h][1] = _mm256_fmadd_ps(vp, x1, acc[h][1]);
        }
      }
      for (int h = 0; h < hn; ++h) {
        _mm256_storeu_ps(out[h0 + h] + e0, acc[h][0]);
        _mm256_storeu_ps(out[h0 + h] + e0 + 8, acc[h][1]);
      }
    }
  }
}

void dots_heads(const float* const* q, int nh, const float* const* rows, int64_t count, int64_t dim,
                float* const* out) {
  dots_heads_t(q, nh, rows, count, dim, out);
}
void weighted_sum_heads(const float* const* p, int nh, const float* const* rows, int64_t count,
                        int64_t dim, float* const* out) {
  weighted_sum_heads_t(p, nh, rows, count, dim, out);
}
void dots_heads_f16(const float* const* q, int nh, const uint16_t* const* rows, int64_t count,
                    int64_t dim, float* const* out) {
  dots_heads_t(q, nh, rows, count, dim, out);
}
void weighted_sum_heads_f16(const float* const* p, int nh, const uint16_t* const* rows,
                            int64_t count, int64_t dim, float* const* out) {
  weighted_sum_heads_t(p, nh, rows, count, dim, out);
}

float sum_squares(const float* x, int64_t n) {
  return dot(x, x, n);
}

void scale_mul(const float* x, float s, const float* w, float* out, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(
        out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
  }
  for (; i < n; ++i) out[i] = x[i] * s * w[i];
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 sig = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, sign))));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(sig, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

float max(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
  float r = hmax(m);
  for (; i < n; ++i) r = std::fmax(r, x[i]);
  return r;
}

float exp_sub_sum(float* x, float m, int64_t n) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 s = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
    _mm256_storeu_ps(x + i, e);
    s = _mm256_add_ps(s, e);
  }
  float sum = hsum(s);
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  return sum;
}

void scale(float* x, float s, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
  for (; i < n; ++i) x[i] *= s;
}

}  // namespace

const KernelTable& avx2_kernels() {
  static const KernelTable table{quantize_row_q8a,
                                 dot_q8_0,
                                 dot_q4_0,
                                 dot_q4_1,
                                 dot_f32,
                                 dot_f16,
                                 dot_bf16,
                                 dot,
                                 axpy,
                                 sum_squares,
                                 scale_mul,
                                 silu_mul,
                                 max,
                                 exp_sub_sum,
                                 scale,
                                 dots,
                                 weighted_sum,
                                 dots_heads,
                                 weighted_sum_heads,
                                 dots_heads_f16,
                                 weighted_sum_heads_f16};
  return table;
}

}  // namespace plinth::cpu::detail

#endif  // x86
