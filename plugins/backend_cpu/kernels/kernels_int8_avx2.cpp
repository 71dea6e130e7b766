// The Int8 path's panel kernel with plain AVX2 (Haswell .. Zen 3): u8·s8 products by vpmaddubsw
// (adjacent pairs summed into int16) and vpmaddwd by 1 (pairs of those into int32), so a 32-bit
// lane holds the same 4-product sum as one vpdpbusd lane. Built with -mavx2 -mfma -mf16c and
// reached only after the run-time CPU check (isa.cpp). Same bits as the scalar kernel
// (matmul_int8.hpp); the tile is int8_tile_avx256.hpp.
//
// Exactness: vpmaddubsw saturates an int16 pair sum past ±32767, so the operands are chosen to
// keep every pair sum in range (activations qx are in −127..127: quantize_row_q8a rounds
// x·127/amax, never to −128):
//   Q4: nibble u ∈ 0..15 times qx: |pair| ≤ 2·15·127 = 3810, and the 8 pair sums of one lane over
//       a whole block (4 groups × low / high nibbles) stay ≤ 30480, so they add up in int16 and
//       one vpmaddwd per block widens them.
//   Q8_0: the panel holds u = q + 128 (the VNNI operand); u·qx could reach 2·255·127 = 64770, so
//       instead q = u ^ 0x80 is recovered and the sign trick gives |q| (u8, ≤ 128) times
//       sign(qx, q) (s8, |·| ≤ 127): |pair| ≤ 2·128·127 = 32512. That sums Σ q·qx directly, which
//       is P of matmul_int8.hpp (Σ (q + 128)·qx − 128·Σ qx), so no offset is subtracted.
//   K6 / K3 / K2: u = q + kOff ≤ 63 times qx: |pair| ≤ 2·63·127 = 16002, widened per group.
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void run_int8_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1) {
  run_int8_panels_scalar(job, p0, p1);
}
}  // namespace plinth::cpu::detail
#else

#include "int8_tile_avx256.hpp"

namespace plinth::cpu::detail {
namespace {

#define PLINTH_INLINE __attribute__((always_inline)) inline

struct MaddubsDot {
  // IQ4_NL: the signed values k = kvalues_iq4nl[nibble]; |k| (≤ 127) times qx·sign(k) gives pairs
  // ≤ 32258, each widened at once (Σ k·qx directly: no offset).
  template <int MR, int H>
  static PLINTH_INLINE void lut_pairs(__m256i lo, __m256i hi, const __m256i (&xl)[MR],
                                      const __m256i (&xh)[MR], int h, __m256i (&s)[MR][H]) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i table = panel::iq4_table256(false);
    const __m256i kl = _mm256_shuffle_epi8(table, lo);
    const __m256i kh = _mm256_shuffle_epi8(table, hi);
    for (int r = 0; r < MR; ++r) {
      const __m256i pl = _mm256_maddubs_epi16(_mm256_abs_epi8(kl), _mm256_sign_epi8(xl[r], kl));
      const __m256i ph = _mm256_maddubs_epi16(_mm256_abs_epi8(kh), _mm256_sign_epi8(xh[r], kh));
      s[r][h] = _mm256_add_epi32(s[r][h], _mm256_madd_epi16(pl, ones));
      s[r][h] = _mm256_add_epi32(s[r][h], _mm256_madd_epi16(ph, ones));
    }
  }

  // Q5: u ≤ 31, so a group's two pair sums reach 2·2·31·127 = 15748 per int16: widened after
  // every group g (4 groups would pass 32767), t reset.
  template <int MR, int H>
  static PLINTH_INLINE void widen_group(int g, __m256i (&t)[MR][H], __m256i (&s)[MR][H]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int r = 0; r < MR; ++r) {
      for (int h = 0; h < H; ++h) {
        s[r][h] = g == 0 ? _mm256_madd_epi16(t[r][h], ones)
                         : _mm256_add_epi32(s[r][h], _mm256_madd_epi16(t[r][h], ones));
        t[r][h] = _mm256_setzero_si256();
      }
    }
  }

  // Q4: int16 pair sums of the whole block (≤ 30480: exact), widened to int32 once.
  template <class F, int MR, int H>
  static PLINTH_INLINE void nibble_block(const uint8_t* const* half, int64_t blk,
                                         const BlockQ8A* const* xq, int64_t b,
                                         __m256i (&s)[MR][H]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256i t[MR][H];
    for (int r = 0; r < MR; ++r) {
      for (int h = 0; h < H; ++h) {
        t[r][h] = _mm256_setzero_si256();
        s[r][h] = _mm256_setzero_si256();  // IQ4_NL adds into s directly
      }
    }
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
        if constexpr (F::kLut) {
          lut_pairs<MR, H>(lo, hi, xl, xh, h, s);
          continue;
        }
        for (int r = 0; r < MR; ++r) {
          t[r][h] = _mm256_add_epi16(t[r][h], _mm256_maddubs_epi16(lo, xl[r]));
          t[r][h] = _mm256_add_epi16(t[r][h], _mm256_maddubs_epi16(hi, xh[r]));
        }
      }
      if constexpr (F::kQh) widen_group<MR, H>(g, t, s);
    }
    if constexpr (!F::kQh && !F::kLut) widen_group<MR, H>(0, t, s);  // Q4: once per block
  }

  // Q8_0: Σ q·qx directly (no −128·Σqx): |q| as the unsigned operand, qx·sign(q) as the signed.
  template <class F, int MR, int H>
  static PLINTH_INLINE void byte_block(const uint8_t* const* half, int64_t blk,
                                       const BlockQ8A* const* xq, int64_t b, __m256i (&s)[MR][H]) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int r = 0; r < MR; ++r)
      for (int h = 0; h < H; ++h) s[r][h] = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) {
      __m256i xg[MR];
      for (int r = 0; r < MR; ++r) xg[r] = panel::bcast4_256(xq[r][b].qs + std::ptrdiff_t{4} * g);
      for (int h = 0; h < H; ++h) {
        const __m256i u =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(half[h] + blk + F::kQ + 64 * g));
        const __m256i q = _mm256_xor_si256(u, bias);  // the signed weight, −128..127
        const __m256i aq = _mm256_abs_epi8(q);        // |q| as u8 (|−128| = 128)
        for (int r = 0; r < MR; ++r) {
          const __m256i sx = _mm256_sign_epi8(xg[r], q);  // qx·sign(q), in −127..127
          s[r][h] =
              _mm256_add_epi32(s[r][h], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, sx), ones));
        }
      }
    }
  }

  // kHalves: P over the half `part`, from −kOff·Σqx of that half: u (≤ 63) times qx, pairs
  // ≤ 2·63·127 = 16002, widened per group.
  template <class F, int MR, int H>
  static void part(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq, int64_t b,
                   int part, const int32_t* const* qoff16, __m256i (&s)[MR][H]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int r = 0; r < MR; ++r) {
      const __m256i off = _mm256_set1_epi32(qoff16[r][2 * b + part]);
      for (int h = 0; h < H; ++h) s[r][h] = off;
    }
    for (int g = 4 * part; g < 4 * part + 4; ++g) {
      __m256i xg[MR];
      for (int r = 0; r < MR; ++r) xg[r] = panel::bcast4_256(xq[r][b].qs + std::ptrdiff_t{4} * g);
      for (int h = 0; h < H; ++h) {
        const __m256i u = panel::u_group256<F>(half[h] + blk, g);
        for (int r = 0; r < MR; ++r) {
          s[r][h] =
              _mm256_add_epi32(s[r][h], _mm256_madd_epi16(_mm256_maddubs_epi16(u, xg[r]), ones));
        }
      }
    }
  }

  template <class F, int MR, int H>
  static void block(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq, int64_t b,
                    const int32_t* const* qsum, __m256i (&s)[MR][H]) {
    if constexpr (F::kNibbles) {
      nibble_block<F>(half, blk, xq, b, s);
      if constexpr (F::kOff != 0 && !F::kLut) {  // Q4_0: −8·Σqx; Q5: −16·Σqx
        for (int r = 0; r < MR; ++r) {
          const __m256i off = _mm256_set1_epi32(F::kOff * qsum[r][b]);
          for (int h = 0; h < H; ++h) s[r][h] = _mm256_sub_epi32(s[r][h], off);
        }
      }
    } else {
      (void)qsum;
      byte_block<F>(half, blk, xq, b, s);
    }
  }
};

#undef PLINTH_INLINE

}  // namespace

void run_int8_panels_avx2(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<panel::Avx256Tile<MaddubsDot> >(job, p0, p1);
}

}  // namespace plinth::cpu::detail

#endif  // x86
