// The Float path's panel kernel with AVX-512F (16 lanes = one panel per register), built with
// -mavx512f -mavx2 -mfma and reached only after the run-time CPU check (isa.cpp). Tiles of up to
// 6 activation rows × 2 panels (24 accumulators of 32 ZMM registers), 1-2 rows × 4 panels when
// n <= 2 so a lone decode row still has 8 independent FMA chains.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void run_panels_avx512(const PanelJob& job, int64_t p0, int64_t p1) {
  run_panels_scalar(job, p0, p1);
}
}  // namespace plinth::cpu::detail
#else

// GCC 12 warns -Wmaybe-uninitialized about the _mm512_undefined_*() values that its own
// immintrin.h passes as unused source operands of the AVX-512 built-ins (a false positive of the
// compiler's headers); every value of ours is set before use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "panel_simd.hpp"

namespace plinth::cpu::detail {
namespace {

struct V512 {
  using reg = __m512;
  static constexpr int kLanes = 16, kMaxRows = 6, kWide = 4, kNarrow = 2;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(float f) { return _mm512_set1_ps(f); }
  static reg load_half(const uint8_t* p) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static reg load_f32(const uint8_t* p) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  template <bool kOffset8>
  static void nibbles(const uint8_t* q, reg& lo, reg& hi) {
    const __m512i raw = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    __m512i l = _mm512_and_si512(raw, _mm512_set1_epi32(0x0f));
    __m512i h = _mm512_srli_epi32(raw, 4);
    if constexpr (kOffset8) {
      l = _mm512_sub_epi32(l, _mm512_set1_epi32(8));
      h = _mm512_sub_epi32(h, _mm512_set1_epi32(8));
    }
    lo = _mm512_cvtepi32_ps(l);
    hi = _mm512_cvtepi32_ps(h);
  }
  template <int kOff>
  static void nibbles5(const uint8_t* q, const uint8_t* qhp, int t, reg& lo, reg& hi) {
    const __m512i raw = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m512i qh = _mm512_loadu_si512(qhp);
    const __m512i one = _mm512_set1_epi32(1), sixteen = _mm512_set1_epi32(kOff);
    __m512i l = _mm512_and_si512(raw, _mm512_set1_epi32(0x0f));
    __m512i h = _mm512_srli_epi32(raw, 4);
    l = _mm512_or_si512(
        l, _mm512_slli_epi32(_mm512_and_si512(_mm512_srl_epi32(qh, _mm_cvtsi32_si128(t)), one), 4));
    h = _mm512_or_si512(
        h, _mm512_slli_epi32(_mm512_and_si512(_mm512_srl_epi32(qh, _mm_cvtsi32_si128(t + 16)), one),
                             4));
    lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(l, sixteen));
    hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(h, sixteen));
  }
  static void nibbles_lut(const uint8_t* q, reg& lo, reg& hi) {
    const __m512i raw = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m512 table = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kIq4nlValues.data()))));
    lo = _mm512_permutexvar_ps(_mm512_and_si512(raw, _mm512_set1_epi32(0x0f)), table);
    hi = _mm512_permutexvar_ps(_mm512_srli_epi32(raw, 4), table);
  }
  static reg int8s(const uint8_t* q) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
  }
  using ireg = __m512i;
  static ireg u8s(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static ireg srl(ireg v, int n) { return _mm512_srl_epi32(v, _mm_cvtsi32_si128(n)); }
  static ireg band(ireg v, int m) { return _mm512_and_si512(v, _mm512_set1_epi32(m)); }
  static ireg bor(ireg a, ireg b) { return _mm512_or_si512(a, b); }
  static ireg shl(ireg v, int n) { return _mm512_sll_epi32(v, _mm_cvtsi32_si128(n)); }
  static reg to_f32(ireg u, int o) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(u, _mm512_set1_epi32(o)));
  }
  static void widen16(const uint8_t* p, float* out) { _mm512_storeu_ps(out, load_half(p)); }
};

}  // namespace

void run_panels_avx512(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<panel::Simd<V512> >(job, p0, p1);
}

}  // namespace plinth::cpu::detail

#endif  // x86
