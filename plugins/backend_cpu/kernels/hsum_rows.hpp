// Internal: hsum's reduction tree (kernels_avx2.cpp) for 8 rows at once. Included by the AVX2 and
// the AVX-512 translation units only (x86, built with -mavx2 or more); internal linkage on
// purpose, as panel_driver.hpp explains.
#pragma once

#include <immintrin.h>

namespace plinth::cpu::detail {
namespace {

// v[r] = the 8-lane partial sums s_r of row r; returns [v_0 .. v_7] with, per row, hsum's
// additions: t[k] = s[k] + s[k+4], u[k] = t[k] + t[k+2], v = u[0] + u[1] (IEEE addition is
// commutative, so pairing the rows through shuffles changes no bit).
inline __m256 hsum_rows8(const __m256* v) {
  // t_r: [t_r | t_r+1] per pair of rows.
  __m256 t[4];
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm256_add_ps(
        _mm256_permute2f128_ps(v[std::ptrdiff_t{2} * m], v[std::ptrdiff_t{2} * m + 1], 0x20),
        _mm256_permute2f128_ps(v[std::ptrdiff_t{2} * m], v[std::ptrdiff_t{2} * m + 1], 0x31));
  }
  // u_r[k], k = 0, 1: lanes [u0 u0 u2 u2 | u1 u1 u3 u3], and rows 4-7 in u1.
  const __m256 u0 =
      _mm256_add_ps(_mm256_shuffle_ps(t[0], t[1], 0x44), _mm256_shuffle_ps(t[0], t[1], 0xee));
  const __m256 u1 =
      _mm256_add_ps(_mm256_shuffle_ps(t[2], t[3], 0x44), _mm256_shuffle_ps(t[2], t[3], 0xee));
  // v_r: lanes [v0 v2 v4 v6 | v1 v3 v5 v7], then in row order.
  const __m256 w = _mm256_add_ps(_mm256_shuffle_ps(u0, u1, 0x88), _mm256_shuffle_ps(u0, u1, 0xdd));
  return _mm256_permutevar8x32_ps(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace
}  // namespace plinth::cpu::detail
