// The Float path's panel kernel with AVX2 + FMA (8 lanes: two registers per panel), built with
// -mavx2 -mfma and reached only after the run-time CPU check (isa.cpp). Tiles of up to 2
// activation rows × 1 panel: 8 accumulators and 4 unpacked vectors within the 16 YMM registers.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void run_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1) {
  run_panels_scalar(job, p0, p1);
}
}  // namespace plinth::cpu::detail
#else

#include <immintrin.h>

#include "panel_simd.hpp"

namespace plinth::cpu::detail {
namespace {

struct V256 {
  using reg = __m256;
  static constexpr int kLanes = 8, kMaxRows = 2, kWide = 1, kNarrow = 1;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float f) { return _mm256_set1_ps(f); }
  static reg load_half(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static reg load_f32(const uint8_t* p) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  template <bool kOffset8>
  static void nibbles(const uint8_t* q, reg& lo, reg& hi) {
    const __m256i raw = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
    __m256i l = _mm256_and_si256(raw, _mm256_set1_epi32(0x0f));
    __m256i h = _mm256_srli_epi32(raw, 4);
    if constexpr (kOffset8) {
      l = _mm256_sub_epi32(l, _mm256_set1_epi32(8));
      h = _mm256_sub_epi32(h, _mm256_set1_epi32(8));
    }
    lo = _mm256_cvtepi32_ps(l);
    hi = _mm256_cvtepi32_ps(h);
  }
  template <int kOff>
  static void nibbles5(const uint8_t* q, const uint8_t* qhp, int t, reg& lo, reg& hi) {
    const __m256i raw = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
    const __m256i one = _mm256_set1_epi32(1), sixteen = _mm256_set1_epi32(kOff);
    __m256i l = _mm256_and_si256(raw, _mm256_set1_epi32(0x0f));
    __m256i h = _mm256_srli_epi32(raw, 4);
    l = _mm256_or_si256(
        l, _mm256_slli_epi32(_mm256_and_si256(_mm256_srl_epi32(qh, _mm_cvtsi32_si128(t)), one), 4));
    h = _mm256_or_si256(
        h, _mm256_slli_epi32(_mm256_and_si256(_mm256_srl_epi32(qh, _mm_cvtsi32_si128(t + 16)), one),
                             4));
    lo = _mm256_cvtepi32_ps(_mm256_sub_epi32(l, sixteen));
    hi = _mm256_cvtepi32_ps(_mm256_sub_epi32(h, sixteen));
  }
  static void nibbles_lut(const uint8_t* q, reg& lo, reg& hi) {
    const __m256i raw = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
    const auto* kv = ggml::kIq4nlValues.data();
    const __m256 t0 = _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kv))));
    const __m256 t1 = _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kv + 8))));
    const auto look = [&](__m256i idx) {  // entries 0..7 from t0, 8..15 from t1
      const __m256 a = _mm256_permutevar8x32_ps(t0, idx);
      const __m256 b = _mm256_permutevar8x32_ps(t1, idx);
      const __m256i high = _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7));
      return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(high));
    };
    lo = look(_mm256_and_si256(raw, _mm256_set1_epi32(0x0f)));
    hi = look(_mm256_srli_epi32(raw, 4));
  }
  static reg int8s(const uint8_t* q) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
  }
  using ireg = __m256i;
  static ireg u8s(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static ireg srl(ireg v, int n) { return _mm256_srl_epi32(v, _mm_cvtsi32_si128(n)); }
  static ireg band(ireg v, int m) { return _mm256_and_si256(v, _mm256_set1_epi32(m)); }
  static ireg bor(ireg a, ireg b) { return _mm256_or_si256(a, b); }
  static ireg shl(ireg v, int n) { return _mm256_sll_epi32(v, _mm_cvtsi32_si128(n)); }
  static reg to_f32(ireg u, int o) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(u, _mm256_set1_epi32(o)));
  }
  static void widen16(const uint8_t* p, float* out) {
    _mm256_storeu_ps(out, load_half(p));
    _mm256_storeu_ps(out + 8, load_half(p + 16));
  }
};

}  // namespace

void run_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<panel::Simd<V256> >(job, p0, p1);
}

}  // namespace plinth::cpu::detail

#endif  // x86
