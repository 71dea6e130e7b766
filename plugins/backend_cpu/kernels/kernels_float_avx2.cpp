// AVX2 + FMA + F16C kernels of the Float path (f32 activations × quantized weights), built with
// -mavx2 -mfma -mf16c like kernels_avx2.cpp and reached only after the run-time CPU check. The
// arithmetic of every output element is the formula in matmul_float.hpp, whatever the tile size:
// each activation row owns its accumulators, and the tile only decides how many rows share one
// unpacked weight block.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
const FloatQuantKernels& avx2_float_kernels() {
  return scalar_float_kernels();
}
}  // namespace plinth::cpu::detail
#else

#include <immintrin.h>

namespace plinth::cpu::detail {
namespace {

// y = ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)), the order matmul_float.hpp states.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Local copy (ODR: see kernels_avx2.cpp).
inline float f16(uint16_t h) {
  return _cvtsh_ss(h);
}

// One weight block unpacked: q as four exact f32 vectors (elements 8k..8k+7 in q[k]) and the
// scale d. Q4_1's minima enter separately (see dot_tile).
struct Unpacked {
  __m256 q[4];
  float d;
};

struct Q8_0Unpack {
  static constexpr bool kHasMin = false;
  static Unpacked load(const uint8_t* row, int64_t b) {
    const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
    Unpacked u;
    for (int k = 0; k < 4; ++k) {
      const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk->qs + 8 * k));
      u.q[k] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(raw));
    }
    u.d = f16(blk->d);
    return u;
  }
};

// Nibbles: byte j holds element j (low) and j + 16 (high), so bytes 0..7 give quarters 0 and 2,
// bytes 8..15 quarters 1 and 3.
template <typename Block, bool kMin>
struct Q4Unpack {
  static constexpr bool kHasMin = kMin;
  static Unpacked load(const uint8_t* row, int64_t b) {
    const auto* blk = reinterpret_cast<const Block*>(row) + b;
    const __m256i lo_bytes =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk->qs)));
    const __m256i hi_bytes =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk->qs + 8)));
    const __m256i mask = _mm256_set1_epi32(0x0f);
    __m256i q[4] = {_mm256_and_si256(lo_bytes, mask), _mm256_and_si256(hi_bytes, mask),
                    _mm256_srli_epi32(lo_bytes, 4), _mm256_srli_epi32(hi_bytes, 4)};
    Unpacked u;
    for (int k = 0; k < 4; ++k) {
      if constexpr (!kMin) q[k] = _mm256_sub_epi32(q[k], _mm256_set1_epi32(8));
      u.q[k] = _mm256_cvtepi32_ps(q[k]);
    }
    u.d = f16(blk->d);
    return u;
  }
};

// Two accumulators per activation row (even and odd blocks) halve the loop-carried FMA chain, so
// a lone row (decode, n = 1) is not bound by FMA latency (measured: one accumulator made n = 1
// 1.5-1.8x slower than Simd instead of 1.3-1.4x). Each chain is the same sequence whether the two
// are interleaved (nx = 1) or run one after the other (nx > 1), so the bits do not depend on nx.
// Q4_1: the minima term Σ_b m_b·sx_b is a dot over blocks, 8 blocks per FMA (mins and sx padded
// with zeros to a multiple of 8).
template <typename U, int NX>
void dot_tile(int64_t nblocks, const uint8_t* w, const float* mins, const float* x,
              int64_t x_stride, const float* sx, int64_t sx_stride, float* out) {
  const auto step = [&](int64_t b, __m256* acc) {
    const Unpacked u = U::load(w, b);
    const __m256 vd = _mm256_set1_ps(u.d);
    for (int i = 0; i < NX; ++i) {
      const float* xb = x + i * x_stride + b * kQuantBlock;
      __m256 s = _mm256_mul_ps(u.q[0], _mm256_loadu_ps(xb));
      s = _mm256_fmadd_ps(u.q[1], _mm256_loadu_ps(xb + 8), s);
      s = _mm256_fmadd_ps(u.q[2], _mm256_loadu_ps(xb + 16), s);
      s = _mm256_fmadd_ps(u.q[3], _mm256_loadu_ps(xb + 24), s);
      acc[i] = _mm256_fmadd_ps(vd, s, acc[i]);
    }
  };
  __m256 acc[2][NX];
  if constexpr (NX == 1) {
    // Both chains interleaved: a lone row needs the instruction-level parallelism.
    acc[0][0] = acc[1][0] = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nblocks; b += 2) {
      step(b, acc[0]);
      step(b + 1, acc[1]);
    }
    if (b < nblocks) step(b, acc[0]);
  } else {
    // The same two chains one after the other (even blocks, then odd): NX accumulators live at a
    // time, so up to 8 activation rows share each unpacked block within 16 YMM registers.
    for (int p = 0; p < 2; ++p) {
      __m256 a[NX];
      for (int i = 0; i < NX; ++i) a[i] = _mm256_setzero_ps();
      for (int64_t b = p; b < nblocks; b += 2) step(b, a);
      for (int i = 0; i < NX; ++i) acc[p][i] = a[i];
    }
  }
  for (int i = 0; i < NX; ++i) {
    __m256 a = _mm256_add_ps(acc[0][i], acc[1][i]);
    if constexpr (U::kHasMin) {
      __m256 macc = _mm256_setzero_ps();
      for (int64_t g = 0; g < nblocks; g += 8) {
        macc = _mm256_fmadd_ps(_mm256_loadu_ps(mins + g), _mm256_loadu_ps(sx + i * sx_stride + g),
                               macc);
      }
      a = _mm256_add_ps(a, macc);
    }
    out[i] = hsum(a);
  }
}

template <typename U>
void dot(int64_t nblocks, const uint8_t* w, const float* mins, const float* x, int64_t x_stride,
         const float* sx, int64_t sx_stride, int nx, float* out) {
  switch (nx) {
    case 1:
      return dot_tile<U, 1>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 2:
      return dot_tile<U, 2>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 3:
      return dot_tile<U, 3>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 4:
      return dot_tile<U, 4>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 5:
      return dot_tile<U, 5>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 6:
      return dot_tile<U, 6>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    case 7:
      return dot_tile<U, 7>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
    default:
      return dot_tile<U, 8>(nblocks, w, mins, x, x_stride, sx, sx_stride, out);
  }
}

void q4_1_mins(const uint8_t* w, int64_t nblocks, float* out) {
  const auto* blk = reinterpret_cast<const BlockQ4_1*>(w);
  for (int64_t b = 0; b < nblocks; ++b) out[b] = f16(blk[b].m);
}

}  // namespace

const FloatQuantKernels& avx2_float_kernels() {
  static const FloatQuantKernels table{dot<Q8_0Unpack>, dot<Q4Unpack<BlockQ4_0, false> >,
                                       dot<Q4Unpack<BlockQ4_1, true> >, q4_1_mins};
  return table;
}

}  // namespace plinth::cpu::detail

#endif  // x86
