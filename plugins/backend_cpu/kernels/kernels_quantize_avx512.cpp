// The Avx512 table's activation quantizer (kernel_table.hpp: quantize_row_q8a), built with
// -mavx512f and reached only after the run-time CPU check (isa.cpp). A block of 32 is two ZMM
// registers instead of four YMM ones; every value is computed by the AVX2 version's operations
// (kernels_avx2.cpp), so the blocks are bit for bit AVX2's: the maximum |x| (exact in any order),
// d = amax / 127, the reciprocal, round-half-away-from-zero by truncation and the |fraction| test,
// and the integer sum; the int8 narrowing saturates like AVX2's packs (values are in -127..127).
#include "kernel_table.hpp"
#include "weight_types.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void quantize_row_q8a_avx512(const float* x, int64_t cols, BlockQ8A* out) {
  scalar_kernels().quantize_row_q8a(x, cols, out);
}
}  // namespace plinth::cpu::detail
#else

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's own AVX-512 headers
#include <immintrin.h>

namespace plinth::cpu::detail {
namespace {  // internal linkage: see panel_driver.hpp

// roundf(v): half away from zero (trunc, then ±1 where |v - trunc| >= 0.5), as AVX2's.
__m512 round_half_away16(__m512 v) {
  const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
  const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512i sign =
      _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  const __m512 one =
      _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_castps_si512(_mm512_set1_ps(1.0f))));
  return _mm512_mask_add_ps(t, up, t, one);
}

}  // namespace

void quantize_row_q8a_avx512(const float* x, int64_t cols, BlockQ8A* out) {
  static_assert(kQuantBlock == 32, "a block is two ZMM registers");
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    const __m512 v0 = _mm512_loadu_ps(xb);
    const __m512 v1 = _mm512_loadu_ps(xb + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m512 vid = _mm512_set1_ps(id);
    const __m512i q0 = _mm512_cvtps_epi32(round_half_away16(_mm512_mul_ps(v0, vid)));
    const __m512i q1 = _mm512_cvtps_epi32(round_half_away16(_mm512_mul_ps(v1, vid)));
    const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].qs), _mm512_cvtsepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].qs + 16), _mm512_cvtsepi32_epi8(q1));
    out[b].d = d;
    out[b].s = d * static_cast<float>(sum);
  }
}

}  // namespace plinth::cpu::detail

#endif  // x86
