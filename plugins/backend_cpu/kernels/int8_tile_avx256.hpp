// Internal: the Int8 path's 256-bit panel tile (matmul_int8.hpp), shared by the AVX-VNNI and the
// AVX2 kernels. One panel (16 output rows) is two YMM halves of 8 int32 / f32 lanes (lane = output
// row); `D` supplies the exact int32 block dot P of each half (VEX vpdpbusd, or vpmaddubsw +
// vpmaddwd), and the f32 part below is the fixed sequence of matmul_int8.hpp, so every kernel gives
// the scalar kernel's bits. Include only from a TU built with AVX2 + FMA + F16C (+ AVX-VNNI for D =
// the VNNI dot); like panel_driver.hpp, everything has internal linkage and calls no library
// function.
//
// D provides:
//   template <class F, int MR, int H>
//   static void block(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq,
//                     int64_t b, const int32_t* const* qsum, __m256i (&s)[MR][H]);
//     s[r][h] = P of weight block b (at half[h] + blk) against activation row r's block b,
//     including the −o·Σqx term of matmul_int8.hpp for Q4_0 / Q8_0 (qsum[r][b] = Σqx).
//   template <class F, int MR, int H>
//   static void part(const uint8_t* const* half, int64_t blk, const BlockQ8A* const* xq,
//                    int64_t b, int part, const int32_t* const* qoff16, __m256i (&s)[MR][H]);
//     kHalves: s[r][h] = P_part, over the quants of the 16-element half `part` (groups 4part ..
//     4part+3, u = q + kOff from the bit planes: u_group256), qoff16[r][2b + part] = −kOff·Σqx
//     of that half.
#pragma once

#include <immintrin.h>

#include "panel_driver.hpp"

namespace plinth::cpu::detail::panel {
namespace {

// The 4 activation bytes qx[0 .. 3] in every 32-bit lane (the signed operand of the dots).
inline __m256i bcast4_256(const int8_t* qx) {
  int32_t v;
  __builtin_memcpy(&v, qx, sizeof v);
  return _mm256_set1_epi32(v);
}

// The 8 IEEE halves at p (a half panel's d or m) as f32, exactly (F16C).
inline __m256 load_half8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// kvalues_iq4nl as 16 bytes in both 128-bit lanes, signed (`plus128` false) or + 128 (unsigned).
inline __m256i iq4_table256(bool plus128) {
  __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kIq4nlValues.data()));
  if (plus128) t = _mm_xor_si128(t, _mm_set1_epi8(static_cast<char>(0x80)));
  return _mm256_broadcastsi128_si256(t);
}

// 16 IEEE halves → f32 (decode_scales), F16C.
struct Widen256 {
  static void widen16(const uint8_t* p, float* out) {
    _mm256_storeu_ps(out, load_half8(p));
    _mm256_storeu_ps(out + 8, load_half8(p + 16));
  }
};

// The unsigned quants u (q + kOff) of group g (elements 4g .. 4g+3, a 32-bit lane per row) of
// the half panel at `ch` (a kHalves chunk + 32·(h % 2): its 8 rows of every 64-byte group), from
// the bit planes (panel_layout.hpp); the 16-bit shifts move bits across bytes, the byte masks
// keep each byte's own.
template <class F>
inline __m256i u_group256(const uint8_t* ch, int g) {
  const int v = g / 4, s = g % 4;
  const auto load = [](const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  };
  const __m256i two = _mm256_and_si256(
      _mm256_srl_epi16(load(ch + F::kQ2 + std::ptrdiff_t{64} * v), _mm_cvtsi32_si128(2 * s)),
      _mm256_set1_epi8(3));
  if constexpr (F::kTwoBit == kSix) {
    const __m256i raw = load(ch + F::kQ + std::ptrdiff_t{64} * s);
    const __m256i nib =
        _mm256_and_si256(v == 0 ? raw : _mm256_srli_epi16(raw, 4), _mm256_set1_epi8(0x0f));
    return _mm256_or_si256(nib, _mm256_slli_epi16(two, 4));
  } else if constexpr (F::kTwoBit == kThree) {
    const __m256i bit = _mm256_and_si256(
        _mm256_srl_epi16(load(ch + F::kQ1), _mm_cvtsi32_si128(4 * v + s)), _mm256_set1_epi8(1));
    return _mm256_or_si256(two, _mm256_slli_epi16(bit, 2));
  } else {
    return two;
  }
}

// Q5: ORs bit 4 of each quant byte of group g of half panel h into lo / hi from the [g][r]
// high-bit bytes (rows 8(h % 2) .. +7 at the panel + kQH + 16g + 8(h % 2); half = the panel +
// 32(h % 2)): each lane's 4 bits spread to its 4 bytes by a carry-free multiply (kSpread4).
template <class F>
inline void add_high_bits(const uint8_t* half, int h, int64_t blk, int g, __m256i& lo,
                          __m256i& hi) {
  const uint8_t* p = half - std::ptrdiff_t{24} * (h % 2) + blk + F::kQH + std::ptrdiff_t{16} * g;
  const __m256i hb = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i spread = _mm256_set1_epi32(static_cast<int>(kSpread4));
  const __m256i ones = _mm256_set1_epi32(0x01010101);
  const __m256i l = _mm256_mullo_epi32(_mm256_and_si256(hb, _mm256_set1_epi32(0x0f)), spread);
  const __m256i u = _mm256_mullo_epi32(_mm256_srli_epi32(hb, 4), spread);
  lo = _mm256_or_si256(lo, _mm256_slli_epi32(_mm256_and_si256(l, ones), 4));
  hi = _mm256_or_si256(hi, _mm256_slli_epi32(_mm256_and_si256(u, ones), 4));
}

// The 8 scales (or minimums) of half panel h at `off` into the block: IEEE halves at
// half16 + off (half16 = the panel + 16·(h % 2)), or K4's f32 at the panel + 32·(h % 2) + off.
template <class F>
inline __m256 load_scale8(const uint8_t* half16, int h, int64_t off) {
  if constexpr (F::kF32) {
    return _mm256_loadu_ps(
        reinterpret_cast<const float*>(half16 + std::ptrdiff_t{16} * (h % 2) + off));
  } else {
    return load_half8(half16 + off);
  }
}

template <class D>
struct Avx256Tile {
  // Up to 2 activation rows × 1 panel (4 int32 block sums + 4 f32 accumulators), 1–2 rows ×
  // 2 panels when n <= 2 (decode: 4 independent dot chains): 16 YMM registers, no AVX-512.
  static constexpr int kMaxRows = 2, kWide = 2, kNarrow = 1;

  // kHalves (matmul_int8.hpp): D_0 ⊗ dx · P_0, D_1 ⊗ dx · P_1, then with minimums M_0·s_0,
  // M_1·s_1 for block b. Half panel h's 8 f32 D of part t at sc[h] + 64t (sc[h]: the decoded
  // scales of its panel + 32·(h % 2) bytes), M at kM past it.
  template <class F, int MR, int H>
  static void halves(const uint8_t* const (&half)[H], const uint8_t* const (&sc)[H], int64_t blk,
                     const BlockQ8A* const (&xq)[MR], int64_t b, const int32_t* const (&qoff16)[MR],
                     const float* const (&s16)[MR], __m256 (&acc)[MR][H]) {
    for (int t = 0; t < 2; ++t) {
      __m256i s[MR][H];
      D::template part<F, MR, H>(half, blk, xq, b, t, qoff16, s);
      for (int h = 0; h < H; ++h) {
        const __m256 d =
            _mm256_loadu_ps(reinterpret_cast<const float*>(sc[h] + std::ptrdiff_t{64} * t));
        for (int r = 0; r < MR; ++r) {
          const __m256 dd = _mm256_mul_ps(d, _mm256_set1_ps(xq[r][b].d));
          acc[r][h] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(s[r][h]), acc[r][h]);
        }
      }
    }
    if constexpr (F::kMin) {
      for (int t = 0; t < 2; ++t) {
        for (int h = 0; h < H; ++h) {
          const __m256 m = _mm256_loadu_ps(
              reinterpret_cast<const float*>(sc[h] + F::kM + std::ptrdiff_t{64} * t));
          for (int r = 0; r < MR; ++r) {
            acc[r][h] = _mm256_fmadd_ps(m, _mm256_set1_ps(s16[r][2 * b + t]), acc[r][h]);
          }
        }
      }
    }
  }

  // Super-block kinds: decodes the NV panels' scales into sbuf when block b starts a super-block,
  // and points half panel h's sc[h] (f32 D at +0, M at +kM) and sc16[h] (load_scale8's base) at
  // block b's chunk in it.
  template <class F, int NV>
  static void super_scales(const PanelJob& j, int64_t p, int64_t b,
                           float (&sbuf)[NV][2 * F::kSStride + 1], const uint8_t* (&sc)[2 * NV],
                           const uint8_t* (&sc16)[2 * NV]) {
    if ((b & 7) == 0) {
      for (int v = 0; v < NV; ++v) {
        decode_scales<F, Widen256>(j.panels + (p + v) * j.panel_bytes + super_at<F>(b), sbuf[v]);
      }
    }
    for (int h = 0; h < 2 * NV; ++h) {
      const auto* buf = reinterpret_cast<const uint8_t*>(sbuf[h / 2] + (b & 7) * (F::kSStride / 4));
      sc[h] = buf + std::ptrdiff_t{32} * (h % 2);
      sc16[h] = buf + std::ptrdiff_t{16} * (h % 2);
    }
  }

  // The hot micro-kernel (as panel_simd.hpp's): its unrolled constexpr loops count as branches,
  // and splitting them further would cost the registers the tile keeps live.
  template <class F, int MR, int NV>
  // NOLINTNEXTLINE(readability-function-cognitive-complexity)
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    constexpr int H = 2 * NV;  // half panels: rows 0-7 and 8-15 of each panel
    // Half h of a panel block: group g's quants at half[h] + kQ + 64g (32h into the block), its
    // 8 f16 d at scales[h] (16h into the block), m at scales[h] + kM.
    const uint8_t* half[H];
    const uint8_t* scales[H];
    for (int h = 0; h < H; ++h) {
      const uint8_t* panel = j.panels + (p + h / 2) * j.panel_bytes;
      half[h] = panel + std::ptrdiff_t{32} * (h % 2);
      scales[h] = panel + std::ptrdiff_t{16} * (h % 2);
    }
    const BlockQ8A* xq[MR];
    const int32_t* qsum[MR];
    const int32_t* qoff16[MR];
    const float* s16[MR];
    for (int r = 0; r < MR; ++r) {
      xq[r] = j.xq + (i + r) * j.nb;
      qsum[r] = j.qsum != nullptr ? j.qsum + (i + r) * j.nb : nullptr;
      qoff16[r] = j.qoff16 != nullptr ? j.qoff16 + (i + r) * 2 * j.nb : nullptr;
      s16[r] = j.s16 != nullptr ? j.s16 + (i + r) * 2 * j.nb : nullptr;
    }
    __m256 acc[MR][H];
    for (int r = 0; r < MR; ++r)
      for (int h = 0; h < H; ++h) acc[r][h] = _mm256_setzero_ps();
    // Super-block kinds: the NV panels' scales of the current super-block, decoded when it starts.
    alignas(32) float sbuf[NV][2 * F::kSStride + 1];
    for (int64_t b = 0; b < j.nb; ++b) {
      const int64_t blk = chunk_at<F>(b);
      // Half panel h's scales: the f16 d at scales[h] + blk (32-element kinds), or its 8 f32 in
      // the decoded buffer, sc[h] (super-block kinds; load_scale8 reads sc16[h] + 16·(h % 2)).
      const uint8_t* sc[H] = {};
      const uint8_t* sc16[H] = {};
      int64_t off = blk;
      for (int h = 0; h < H; ++h) sc16[h] = scales[h];
      if constexpr (F::kSuper) {
        off = 0;
        super_scales<F, NV>(j, p, b, sbuf, sc, sc16);
      }
      if constexpr (F::kHalves) {
        halves<F, MR, H>(half, sc, blk, xq, b, qoff16, s16, acc);
        continue;
      }
      __m256i s[MR][H];
      D::template block<F, MR, H>(half, blk, xq, b, qsum, s);
      for (int h = 0; h < H; ++h) {
        const __m256 d = load_scale8<F>(sc16[h], h, off);
        for (int r = 0; r < MR; ++r) {
          const __m256 dd = _mm256_mul_ps(d, _mm256_set1_ps(xq[r][b].d));
          acc[r][h] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(s[r][h]), acc[r][h]);
        }
        if constexpr (F::kMin) {
          const __m256 m = load_scale8<F>(sc16[h], h, off + F::kM);
          for (int r = 0; r < MR; ++r) {
            acc[r][h] = _mm256_fmadd_ps(m, _mm256_set1_ps(xq[r][b].s), acc[r][h]);
          }
        }
      }
    }
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) {
        float out[kPanelRows];
        _mm256_storeu_ps(out, acc[r][2 * v]);
        _mm256_storeu_ps(out + 8, acc[r][2 * v + 1]);
        store_panel(j, i + r, p + v, out);
      }
    }
  }
};

}  // namespace
}  // namespace plinth::cpu::detail::panel
