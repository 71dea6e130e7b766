// The Int8 path's panel kernel with AVX-512 VNNI (vpdpbusd: 16 lanes × 4 u8·s8 products summed
// into int32 per instruction), built with -mavx512f -mavx512bw -mavx512vnni and reached only after
// the run-time CPU check (isa.cpp). One ZMM = one panel (lane r = output row r). Tiles of up to
// 5 activation rows × 2 panels (10 int32 block sums + 10 f32 accumulators + 4 weight vectors), 1-2
// rows × 4 panels when n <= 5. Same bits as kernels_int8_scalar.cpp (matmul_int8.hpp).
#include "kernel_table.hpp"

#if !(defined(__x86_64__) || defined(__i386__))
namespace plinth::cpu::detail {
void run_int8_panels_vnni(const PanelJob& job, int64_t p0, int64_t p1) {
  run_int8_panels_scalar(job, p0, p1);
}
}  // namespace plinth::cpu::detail
#else

// GCC 12 warns -Wmaybe-uninitialized about the _mm512_undefined_*() values that its own
// immintrin.h passes as unused source operands of the AVX-512 built-ins (a false positive of the
// compiler's headers); every value of ours is set before use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "panel_driver.hpp"

namespace plinth::cpu::detail {
namespace {

// The 16 IEEE halves at p (a panel block's d or m) as f32, exactly.
__m512 load_half16(const uint8_t* p) {
  return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// kvalues_iq4nl + 128 as 16 unsigned bytes (vpdpbusd's unsigned operand).
__m128i iq4_table_u8() {
  return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kIq4nlValues.data())),
                       _mm_set1_epi8(static_cast<char>(0x80)));
}

// Q5: each lane's 4 bits (0..15) → 0x10 in byte k where bit k is set (panel_driver.hpp kSpread4).
__m512i spread5(__m512i bits4) {
  const __m512i spread =
      _mm512_mullo_epi32(bits4, _mm512_set1_epi32(static_cast<int>(panel::kSpread4)));
  return _mm512_slli_epi32(_mm512_and_si512(spread, _mm512_set1_epi32(0x01010101)), 4);
}

// The 16 scales (or minimums) at p: IEEE halves widened, or K4's f32.
template <class F>
__m512 load_scale16(const uint8_t* p) {
  if constexpr (F::kF32) {
    return _mm512_loadu_ps(p);
  } else {
    return load_half16(p);
  }
}

// The 4 activation bytes qx[k .. k+3] in every lane (the signed operand of vpdpbusd).
// (No standard-library call in this TU: see panel_driver.hpp.)
__m512i bcast4(const int8_t* qx) {
  return _mm512_broadcastd_epi32(_mm_loadu_si32(qx));
}

// acc + u·x by vpdpbusd, through inline assembly: GCC 12's _mm512_dpbusd_epi32 copies the
// accumulator into a fresh register around every instruction (extra vector moves on the two
// ports that also run vpdpbusd).
__m512i dpbusd(__m512i acc, __m512i u, __m512i x) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(x));
  return acc;
}

// A block sum's starting value: zero (the vpxord idiom, which needs no execution port) or the
// int32 at p in every lane (a load only; volatile so that each accumulator gets its own load
// rather than a register copy of one).
__m512i zero_i32() {
  __m512i z;
  asm("vpxord %0, %0, %0" : "=v"(z));
  return z;
}
__m512i bcast_i32(const int32_t* p) {
  __m512i v;
  asm volatile("vpbroadcastd %1, %0" : "=v"(v) : "m"(*p));
  return v;
}

// 16 IEEE halves → f32 (decode_scales).
struct Widen512 {
  static void widen16(const uint8_t* p, float* out) { _mm512_storeu_ps(out, load_half16(p)); }
};

// The unsigned quants u (q + kOff) of group g (elements 4g .. 4g+3 of every row, one
// 32-bit lane per row) of a kHalves chunk at `ch`, from its bit planes (panel_layout.hpp): the
// 16-bit shifts move bits across bytes, but the byte masks keep only each byte's own.
template <class F>
__m512i u_group(const uint8_t* ch, int g) {
  const int v = g / 4, s = g % 4;
  const __m512i two = _mm512_and_si512(
      _mm512_srl_epi16(_mm512_loadu_si512(ch + F::kQ2 + 64 * v), _mm_cvtsi32_si128(2 * s)),
      _mm512_set1_epi8(3));
  if constexpr (F::kTwoBit == panel::kSix) {
    const __m512i raw = _mm512_loadu_si512(ch + F::kQ + 64 * s);
    const __m512i nib =
        _mm512_and_si512(v == 0 ? raw : _mm512_srli_epi16(raw, 4), _mm512_set1_epi8(0x0f));
    return _mm512_or_si512(nib, _mm512_slli_epi16(two, 4));
  } else if constexpr (F::kTwoBit == panel::kThree) {
    const __m512i bit = _mm512_and_si512(
        _mm512_srl_epi16(_mm512_loadu_si512(ch + F::kQ1), _mm_cvtsi32_si128(4 * v + s)),
        _mm512_set1_epi8(1));
    return _mm512_or_si512(two, _mm512_slli_epi16(bit, 2));
  } else {
    return two;
  }
}

#define PLINTH_INLINE __attribute__((always_inline)) inline

struct Vnni {
  // Up to 5 rows (a verification of 4 draft tokens) in tiles of <= 2 rows × 4 panels: on Zen 4
  // that measured 5-19% faster at n = 3 and 4 than 3-5 rows × 2 panels, n = 5 within noise.
  static constexpr int kMaxRows = 5, kWide = 4, kNarrow = 2, kWideUpTo = 5;

  // The operands of one tile: NV panels from p, MR activation rows from i. The stages below are
  // forced inline, so the tile compiles to one loop nest with every array in registers.
  template <int MR, int NV>
  struct Operands {
    const uint8_t* base[NV];    // panel v's first block
    const BlockQ8A* xq[MR];     // row r's quantized blocks
    const int32_t* qoff[MR];    // row r's −o·Σqx per block (Q4_0 / Q8_0)
    const int32_t* qoff16[MR];  // kHalves: row r's −kOff·Σqx per 16-element half (2 per block)
    const float* s16[MR];       // kHalves: row r's dx·Σqx per half
  };

  template <class F, int MR, int NV>
  static PLINTH_INLINE Operands<MR, NV> operands(const PanelJob& j, int64_t p, int64_t i) {
    Operands<MR, NV> o;
    for (int v = 0; v < NV; ++v) o.base[v] = j.panels + (p + v) * j.panel_bytes;
    for (int r = 0; r < MR; ++r) {
      o.xq[r] = j.xq + (i + r) * j.nb;
      o.qoff[r] = j.qoff != nullptr ? j.qoff + (i + r) * j.nb : nullptr;
      o.qoff16[r] = j.qoff16 != nullptr ? j.qoff16 + (i + r) * 2 * j.nb : nullptr;
      o.s16[r] = j.s16 != nullptr ? j.s16 + (i + r) * 2 * j.nb : nullptr;
    }
    return o;
  }

  // Q4: the 4 groups of 64 quant bytes per panel; each byte holds element k (low nibble) and
  // k + 16 (high nibble), so one load feeds two vpdpbusd.
  template <class F, int MR, int NV>
  static PLINTH_INLINE void nibble_sums(const Operands<MR, NV>& o, int64_t b, int64_t blk,
                                        __m512i (&s)[MR][NV]) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int g = 0; g < 4; ++g) {
      __m512i lo[NV], hi[NV];
      for (int v = 0; v < NV; ++v) {
        const __m512i raw = _mm512_loadu_si512(o.base[v] + blk + F::kQ + 64 * g);
        lo[v] = _mm512_and_si512(raw, low4);
        hi[v] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
        if constexpr (F::kLut) {  // IQ4_NL: u = kvalues_iq4nl[nibble] + 128 by a byte shuffle
          const __m512i table = _mm512_broadcast_i32x4(iq4_table_u8());
          lo[v] = _mm512_shuffle_epi8(table, lo[v]);
          hi[v] = _mm512_shuffle_epi8(table, hi[v]);
        }
        if constexpr (F::kQh) {  // Q5: the [g][r] high-bit bytes spread to bit 4 of each byte
          const __m512i hb = _mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(o.base[v] + blk + F::kQH + 16 * g)));
          lo[v] = _mm512_or_si512(lo[v], spread5(_mm512_and_si512(hb, _mm512_set1_epi32(0x0f))));
          hi[v] = _mm512_or_si512(hi[v], spread5(_mm512_srli_epi32(hb, 4)));
        }
      }
      for (int r = 0; r < MR; ++r) {
        const __m512i xl = bcast4(o.xq[r][b].qs + 4 * g);
        const __m512i xh = bcast4(o.xq[r][b].qs + 16 + 4 * g);
        for (int v = 0; v < NV; ++v) {
          s[r][v] = dpbusd(s[r][v], lo[v], xl);
          s[r][v] = dpbusd(s[r][v], hi[v], xh);
        }
      }
    }
  }

  // Q8_0: the 8 groups of 64 quant bytes (q + 128) per panel.
  template <class F, int MR, int NV>
  static PLINTH_INLINE void byte_sums(const Operands<MR, NV>& o, int64_t b, int64_t blk,
                                      __m512i (&s)[MR][NV]) {
    for (int g = 0; g < 8; ++g) {
      __m512i q[NV];
      for (int v = 0; v < NV; ++v) q[v] = _mm512_loadu_si512(o.base[v] + blk + F::kQ + 64 * g);
      for (int r = 0; r < MR; ++r) {
        const __m512i xg = bcast4(o.xq[r][b].qs + 4 * g);
        for (int v = 0; v < NV; ++v) s[r][v] = dpbusd(s[r][v], q[v], xg);
      }
    }
  }

  // P of matmul_int8.hpp for block b, starting from −o·Σqx (exact int32; the order is free).
  template <class F, int MR, int NV>
  static PLINTH_INLINE void block_sums(const Operands<MR, NV>& o, int64_t b, int64_t blk,
                                       __m512i (&s)[MR][NV]) {
    constexpr bool kOffset = F::kOff != 0;  // Q4_0: −8·Σqx; Q5: −16·Σqx; Q8_0: −128·Σqx
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) s[r][v] = kOffset ? bcast_i32(o.qoff[r] + b) : zero_i32();
    if constexpr (F::kNibbles) {
      nibble_sums<F>(o, b, blk, s);
    } else {
      byte_sums<F>(o, b, blk, s);
    }
  }

  // A = fma(d ⊗ dx, float(P), A), then Q4_1's A = fma(m, sx, A) (matmul_int8.hpp).
  template <class F, int MR, int NV>
  static PLINTH_INLINE void scale_add(const Operands<MR, NV>& o, int64_t b,
                                      const uint8_t* const (&sp)[NV], const __m512i (&s)[MR][NV],
                                      __m512 (&acc)[MR][NV]) {
    for (int v = 0; v < NV; ++v) {
      const __m512 d = load_scale16<F>(sp[v]);
      for (int r = 0; r < MR; ++r) {
        const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(o.xq[r][b].d));
        acc[r][v] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(s[r][v]), acc[r][v]);
      }
      if constexpr (F::kMin) {
        const __m512 m = load_scale16<F>(sp[v] + F::kM);
        for (int r = 0; r < MR; ++r) {
          acc[r][v] = _mm512_fmadd_ps(m, _mm512_set1_ps(o.xq[r][b].s), acc[r][v]);
        }
      }
    }
  }

  // kHalves: P_h over the 16-element half h (groups 4h .. 4h+3, u = q + kOff from the bit
  // planes), from −kOff·Σqx_h, then A = fma(D_h ⊗ dx, float(P_h), A) for h = 0, 1 and, with
  // minimums, A = fma(M_h, s_h, A) for h = 0, 1. sp[v]: panel v's decoded scales of the chunk.
  template <class F, int MR, int NV>
  static PLINTH_INLINE void halves(const Operands<MR, NV>& o, int64_t b, int64_t blk,
                                   const uint8_t* const (&sp)[NV], __m512 (&acc)[MR][NV]) {
    for (int h = 0; h < 2; ++h) {
      __m512i s[MR][NV];
      for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v) s[r][v] = bcast_i32(o.qoff16[r] + 2 * b + h);
      for (int g = 4 * h; g < 4 * h + 4; ++g) {
        __m512i q[NV];
        for (int v = 0; v < NV; ++v) q[v] = u_group<F>(o.base[v] + blk, g);
        for (int r = 0; r < MR; ++r) {
          const __m512i xg = bcast4(o.xq[r][b].qs + 4 * g);
          for (int v = 0; v < NV; ++v) s[r][v] = dpbusd(s[r][v], q[v], xg);
        }
      }
      for (int v = 0; v < NV; ++v) {
        const __m512 d = _mm512_loadu_ps(sp[v] + 64 * h);
        for (int r = 0; r < MR; ++r) {
          const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(o.xq[r][b].d));
          acc[r][v] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(s[r][v]), acc[r][v]);
        }
      }
    }
    if constexpr (F::kMin) min_halves<F>(o, b, sp, acc);
  }

  // K2: A = fma(M_h, s_h, A) for h = 0, 1.
  template <class F, int MR, int NV>
  static PLINTH_INLINE void min_halves(const Operands<MR, NV>& o, int64_t b,
                                       const uint8_t* const (&sp)[NV], __m512 (&acc)[MR][NV]) {
    for (int h = 0; h < 2; ++h) {
      for (int v = 0; v < NV; ++v) {
        const __m512 m = _mm512_loadu_ps(sp[v] + F::kM + 64 * h);
        for (int r = 0; r < MR; ++r) {
          acc[r][v] = _mm512_fmadd_ps(m, _mm512_set1_ps(o.s16[r][2 * b + h]), acc[r][v]);
        }
      }
    }
  }

  template <class F, int MR, int NV>
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    const Operands<MR, NV> o = operands<F, MR, NV>(j, p, i);
    __m512 acc[MR][NV];
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    // Super-block kinds: the NV panels' scales of the current super-block, decoded when it starts.
    alignas(64) float sbuf[NV][2 * F::kSStride + 1];
    for (int64_t b = 0; b < j.nb; ++b) {
      const int64_t blk = panel::chunk_at<F>(b);
      const uint8_t* sp[NV];
      for (int v = 0; v < NV; ++v) sp[v] = o.base[v] + blk;
      if constexpr (F::kSuper) {
        if ((b & 7) == 0) {
          for (int v = 0; v < NV; ++v) {
            panel::decode_scales<F, Widen512>(o.base[v] + panel::super_at<F>(b), sbuf[v]);
          }
        }
        for (int v = 0; v < NV; ++v) {
          sp[v] = reinterpret_cast<const uint8_t*>(sbuf[v] + (b & 7) * (F::kSStride / 4));
        }
      }
      if constexpr (F::kHalves) {
        halves<F>(o, b, blk, sp, acc);
      } else {
        __m512i s[MR][NV];
        block_sums<F>(o, b, blk, s);
        scale_add<F>(o, b, sp, s, acc);
      }
    }
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) {
        float out[kPanelRows];
        _mm512_storeu_ps(out, acc[r][v]);
        panel::store_panel(j, i + r, p + v, out);
      }
    }
  }
};
#undef PLINTH_INLINE

}  // namespace

void run_int8_panels_vnni(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<Vnni>(job, p0, p1);
}

}  // namespace plinth::cpu::detail

#endif  // x86
