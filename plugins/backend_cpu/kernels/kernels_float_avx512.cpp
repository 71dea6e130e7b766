// The Avx512 table's element-wise float helpers (kernel_table.hpp: silu_mul, exp_sub_sum, scale),
// built with -mavx512f and reached only after the run-time CPU check (isa.cpp). Each output is
// computed by the very operations of the AVX2 versions (kernels_avx2.cpp), 16 lanes at a time
// instead of 8, so the bits are theirs: the same Cephes exp (an element's value does not depend on
// its lane), the same tails (a last group of 8 as one vector, the rest scalar), and exp_sub_sum's
// sum accumulated in AVX2's 8 lanes in AVX2's order (the low half of each 16, then the high half).
// A prefill spends ~5% of its time in silu_mul and ~5% in the softmax with the 8-lane versions.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n) {
  scalar_kernels().silu_mul(gate, up, out, n);
}
float exp_sub_sum_avx512(float* x, float m, int64_t n) {
  return scalar_kernels().exp_sub_sum(x, m, n);
}
void scale_avx512(float* x, float s, int64_t n) {
  scalar_kernels().scale(x, s, n);
}
}  // namespace plinth::cpu::detail
#else

// GCC 12's own AVX-512 headers pass _mm512_undefined_*() values as unused source operands:
// -Wmaybe-uninitialized, and with the sanitizers on -Wuninitialized, about their own code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cmath>

namespace plinth::cpu::detail {
namespace {  // internal linkage: see panel_driver.hpp

constexpr __mmask16 kLow8 = 0x00ff;  // the 8-lane group after the last full 16

// exp8 of kernels_avx2.cpp, 16 lanes: Cephes expf, inputs clamped to [-88.38, 88.38].
__m512 exp16(__m512 x) {
  x = _mm512_min_ps(x, _mm512_set1_ps(88.3762626647949f));
  x = _mm512_max_ps(x, _mm512_set1_ps(-88.3762626647949f));
  const __m512 n = _mm512_roundscale_ps(
      _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f)),
      _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500E-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507E-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073E-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894E-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459E-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201E-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

__m512 silu_times(__m512 g, __m512 u) {
  const __m512 neg = _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(g), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  const __m512 sig = _mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), exp16(neg)));
  return _mm512_mul_ps(sig, u);
}

// AVX2's hsum of 8 lanes: (lo4 + hi4), then + the upper pair, then + lane 1.
float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__m256 low8(__m512 v) {
  return _mm512_castps512_ps256(v);
}
__m256 high8(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

}  // namespace

void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(out + i, silu_times(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
  }
  if (i + 8 <= n) {
    const __m512 g = _mm512_maskz_loadu_ps(kLow8, gate + i);
    _mm512_mask_storeu_ps(out + i, kLow8, silu_times(g, _mm512_maskz_loadu_ps(kLow8, up + i)));
    i += 8;
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

float exp_sub_sum_avx512(float* x, float m, int64_t n) {
  const __m512 vm = _mm512_set1_ps(m);
  __m256 s = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
    _mm512_storeu_ps(x + i, e);
    s = _mm256_add_ps(s, low8(e));
    s = _mm256_add_ps(s, high8(e));
  }
  if (i + 8 <= n) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(kLow8, x + i), vm));
    _mm512_mask_storeu_ps(x + i, kLow8, e);
    s = _mm256_add_ps(s, low8(e));
    i += 8;
  }
  float sum = hsum8(s);
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  return sum;
}

void scale_avx512(float* x, float s, int64_t n) {
  const __m512 vs = _mm512_set1_ps(s);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), vs));
  for (; i < n; ++i) x[i] *= s;
}

}  // namespace plinth::cpu::detail

#endif  // x86
