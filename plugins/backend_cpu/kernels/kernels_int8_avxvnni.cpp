// The Int8 path's panel kernel with AVX-VNNI (the VEX-encoded 256-bit vpdpbusd of Alder Lake,
// Zen 5 and later: 8 lanes × 4 u8·s8 products summed into int32 per instruction), built with
// -mavx2 -mfma -mf16c -mavxvnni and reached only after the run-time CPU check (isa.cpp). The
// operands are those of the AVX-512 VNNI kernel (Q4 nibbles or Q8_0's q + 128 unsigned, int8
// activations signed), so P is exact in int32 and the bits are the scalar kernel's
// (matmul_int8.hpp); the tile is int8_tile_avx256.hpp.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void run_int8_panels_avxvnni(const PanelJob& job, int64_t p0, int64_t p1) {
  run_int8_panels_scalar(job, p0, p1);
}
}  // namespace plinth::cpu::detail
#else

#include "int8_tile_avx256.hpp"

namespace plinth::cpu::detail {
namespace {

#define PLINTH_INLINE __attribute__((always_inline)) inline

struct VnniDot {
  // Q4: each quant byte holds element k (low nibble) and k + 16 (high nibble).
  template <class F, int MR, int H>
  static PLINTH_INLINE void nibble_sums(const uint8_t* const* half, int64_t blk,
                                        const BlockQ8A* const* xq, int64_t b, __m256i (&s)[MR][H]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int g = 0; g < 4; ++g) {
      __m256i xl[MR], xh[MR];
      for (int r = 0; r < MR; ++r) {
        xl[r] = panel::bcast4_256(xq[r][b].qs + std::ptrdiff_t{4} * g);
        xh[r] = panel::bcast4_256(xq[r][b].qs + 16 + std::ptrdiff_t{4} * g);
      }
      for (int h = 0; h < H; ++h) {
        const __m256i raw =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(half[h] + blk + F::kQ + 64 * g));
        __m256i lo = _mm256_and_si256(raw, low4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
        if constexpr (F::kQh) panel::add_high_bits<F>(half[h], h, blk, g, lo, hi);
        if constexpr (F::kLut) {  // IQ4_NL: u = kvalues_iq4nl[nibble] + 128
          const __m256i table = panel::iq4_table256(true);
          lo = _mm256_shuffle_epi8(table, lo);
          hi = _mm256_shuffle_epi8(table, hi);
        }
        for (int r = 0; r < MR; ++r) {
          s[r][h] = _mm256_dpbusd_avx_epi32(s[r][h], lo, xl[r]);
          s[r][h] = _mm256_dpbusd_avx_epi32(s[r][h], hi, xh[r]);
        }
      }
    }
  }

  // Q8_0: the quants stored as q + 128 (u8).
  template <class F, int MR, int H>
  static PLINTH_INLINE void byte_sums(const uint8_t* const* half, int64_t blk,
                                      const BlockQ8A* const* xq, int64_t b, __m256i (&s)[MR][H]) {
    for (int g = 0; g < 8; ++g) {
      __m256i xg[MR];
      for (int r = 0; r < MR; ++r) xg[r] = panel::bcast4_256(xq[r][b].qs + std::ptrdiff_t{4} * g);
      for (int h = 0; h < H; ++h) {
        const __m256i q =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(half[h] + blk + F::kQ + 64 * g));
        for (int r = 0; r < MR; ++r) s[r][h] = _mm256_dpbusd_avx_epi32(s[r][h], q, xg[r]);
      }
    }
  }

  // kHalves: the half `part`'s 4 groups of u = q + kOff (the bit planes decoded by
  // u_group256), from −kOff·Σqx of that half.
  template <class F, int MR, int H>
  static void part(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq, int64_t b,
                   int part, const int32_t* const* qoff16, __m256i (&s)[MR][H]) {
    for (int r = 0; r < MR; ++r) {
      const __m256i off = _mm256_set1_epi32(qoff16[r][2 * b + part]);
      for (int h = 0; h < H; ++h) s[r][h] = off;
    }
    for (int g = 4 * part; g < 4 * part + 4; ++g) {
      __m256i xg[MR];
      for (int r = 0; r < MR; ++r) xg[r] = panel::bcast4_256(xq[r][b].qs + std::ptrdiff_t{4} * g);
      for (int h = 0; h < H; ++h) {
        const __m256i q = panel::u_group256<F>(half[h] + blk, g);
        for (int r = 0; r < MR; ++r) s[r][h] = _mm256_dpbusd_avx_epi32(s[r][h], q, xg[r]);
      }
    }
  }

  template <class F, int MR, int H>
  static void block(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq, int64_t b,
                    const int32_t* const* qsum, __m256i (&s)[MR][H]) {
    for (int r = 0; r < MR; ++r)
      for (int h = 0; h < H; ++h) s[r][h] = _mm256_setzero_si256();
    if constexpr (F::kNibbles) {
      nibble_sums<F>(half, blk, xq, b, s);
    } else {
      byte_sums<F>(half, blk, xq, b, s);
    }
    if constexpr (F::kOff != 0) {  // Q4_0: −8·Σqx; Q5: −16·Σqx; Q8_0: −128·Σqx
      constexpr int32_t o = F::kOff;
      for (int r = 0; r < MR; ++r) {
        const __m256i off = _mm256_set1_epi32(o * qsum[r][b]);
        for (int h = 0; h < H; ++h) s[r][h] = _mm256_sub_epi32(s[r][h], off);
      }
    }
  }
};

#undef PLINTH_INLINE

}  // namespace

void run_int8_panels_avxvnni(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<panel::Avx256Tile<VnniDot> >(job, p0, p1);
}

}  // namespace plinth::cpu::detail

#endif  // x86
