// Internal: row loads and prefetches of the AVX-512 attention kernels
// (kernels_attention_avx512.cpp, kernels_dots_tiled_avx512.cpp). Included only by translation units
// built with -mavx512f -mf16c on x86; internal linkage on purpose, as panel_driver.hpp explains.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace plinth::cpu::detail {
namespace {

// Rows this far ahead are prefetched: a KV block boundary is a jump the hardware prefetchers do
// not foresee.
constexpr int64_t kPrefetchRows = 16;

// The largest head_dim the dots kernels stage on the stack (their K-row buffers); the callers
// (dots_heads_avx512 / dots_heads_f16_avx512) fall back to the AVX2 or scalar kernels above it.
constexpr int64_t kMaxStageDim = 256;

template <class T>
void prefetch_row(const T* row, int64_t dim) {
  const char* p = reinterpret_cast<const char*>(row);
  for (int64_t b = 0; b < dim * static_cast<int64_t>(sizeof(T)); b += 64) {
    _mm_prefetch(p + b, _MM_HINT_T0);
  }
}

// 16 row elements as f32: loaded (float rows) or converted exactly (IEEE half rows).
inline __m512 load16(const float* p) {
  return _mm512_loadu_ps(p);
}
inline __m512 load16(const uint16_t* p) {
  return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

}  // namespace
}  // namespace plinth::cpu::detail
