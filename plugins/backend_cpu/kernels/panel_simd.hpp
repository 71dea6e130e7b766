// Internal: the panel tile of the vector kernels, written once over a vector-traits class V
// (kernels_panel_avx2.cpp: 8 lanes, kernels_panel_avx512.cpp: 16 lanes). A panel's 16 output rows
// are 16 / V::kLanes vectors; each lane is one output element and runs the scalar formula of
// matmul_float.hpp unchanged (one fused multiply-add per step), so the lane width, the tile shape
// and the neighbouring rows never change a bit of it.
//
// V provides: reg, kLanes, kMaxRows, kWide, kNarrow, zero(), set1(float),
// load_half(const uint8_t*) (kLanes IEEE halves → exact f32), load_f32(const uint8_t*) (kLanes
// f32, unaligned), store(float*, reg), fma(a, b, c) =
// a·b + c rounded once, nibbles<kOffset8>(const uint8_t* q, reg& lo, reg& hi) (kLanes bytes → low /
// high nibbles, minus 8 when kOffset8, as exact f32), nibbles5(q, qh, t, lo, hi) (Q5: the same
// with bit t / t + 16 of kLanes u32 at qh as bit 4, minus 16), nibbles_lut(q, lo, hi) (IQ4_NL:
// kvalues_iq4nl of the nibbles) and int8s(const uint8_t* q) (kLanes
// int8 → exact f32); for the bit-plane kinds an int32 vector type ireg with u8s(const uint8_t*)
// (kLanes bytes zero-extended), srl(ireg, int) (logical shift by a run-time count), band(ireg,
// int), bor(ireg, ireg), shl(ireg, int), to_f32(ireg u, int o) (u − o, exact), and widen16(const
// uint8_t*, float*) (16 IEEE halves → f32, exact: decode_scales).
#pragma once

#include "panel_driver.hpp"

namespace plinth::cpu::detail::panel {
namespace {  // internal linkage: see panel_driver.hpp

template <class V>
struct Simd {
  static constexpr int kMaxRows = V::kMaxRows, kWide = V::kWide, kNarrow = V::kNarrow;
  static constexpr int kPerPanel = static_cast<int>(kPanelRows) / V::kLanes;

  // kLanes scales (or minimums) at p from lane `lane`: IEEE halves widened, or K4's f32.
  template <class F>
  __attribute__((always_inline)) static typename V::reg load_scale(const uint8_t* p, int64_t lane) {
    if constexpr (F::kF32) {
      return V::load_f32(p + 4 * lane);
    } else {
      return V::load_half(p + 2 * lane);
    }
  }

  // The kLanes signed quants q = u − kOff of element 16h + t of a kHalves chunk at `ch`, rows
  // lane .. lane + kLanes − 1 (Float order, panel_layout.hpp; stored_u is the scalar form).
  template <class F>
  __attribute__((always_inline)) static typename V::reg halves_q(const uint8_t* ch, int h, int t,
                                                                 int64_t lane) {
    const int g = t / 4, k = t % 4;
    const auto two = V::band(V::srl(V::u8s(ch + F::kQ2 + 16 * (4 * h + k) + lane), 2 * g), 3);
    typename V::ireg u;
    if constexpr (F::kTwoBit == kSix) {
      const auto nib = V::band(V::srl(V::u8s(ch + F::kQ + 16 * t + lane), 4 * h), 0x0f);
      u = V::bor(nib, V::shl(two, 4));
    } else if constexpr (F::kTwoBit == kThree) {
      const auto bit = V::band(V::srl(V::u8s(ch + F::kQ1 + 16 * k + lane), 4 * h + g), 1);
      u = V::bor(two, V::shl(bit, 2));
    } else {
      u = two;
    }
    return V::to_f32(u, F::kOff);
  }

  // s[r][c] += q_e · x_e for the int8 quants e in [e0, e1) of the block at `blk`.
  template <class F, int MR, int C>
  __attribute__((always_inline)) static void int8_range(const uint8_t* const (&base)[C],
                                                        int64_t blk, const float* xb, int64_t xs,
                                                        int64_t e0, int64_t e1,
                                                        typename V::reg (&s)[MR][C]) {
    using R = typename V::reg;
    for (int64_t e = e0; e < e1; ++e) {
      R q[C];
      for (int c = 0; c < C; ++c) {
        q[c] = V::int8s(base[c] + blk + F::kQ + e * kPanelRows +
                        static_cast<int64_t>(c % kPerPanel) * V::kLanes);
      }
      for (int r = 0; r < MR; ++r) {
        const R xe = V::set1(xb[r * xs + e]);
        for (int c = 0; c < C; ++c) s[r][c] = V::fma(q[c], xe, s[r][c]);
      }
    }
  }

  // The hot micro-kernel: its unrolled constexpr loops count as branches, and splitting them
  // would cost the registers the tile keeps live.
  template <class F, int MR, int NV>
  // NOLINTNEXTLINE(readability-function-cognitive-complexity)
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    using R = typename V::reg;
    constexpr int C = NV * kPerPanel;  // vectors across the tile's output rows
    const int64_t xs = j.nb * kQuantBlock;
    const float* x = j.x + i * xs;
    // Vector c covers lanes [k·kLanes, (k+1)·kLanes) of panel p + v (c = v·kPerPanel + k).
    const uint8_t* base[C];
    for (int c = 0; c < C; ++c) {
      base[c] = j.panels + (p + c / kPerPanel) * j.panel_bytes;
    }
    const auto lane_off = [](int c) { return static_cast<int64_t>(c % kPerPanel) * V::kLanes; };
    R acc[MR][C];
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < C; ++c) acc[r][c] = V::zero();
    // Super-block kinds: the scales of the NV panels' current super-block, decoded when it starts.
    alignas(64) float sbuf[NV][2 * F::kSStride + 1];
    for (int64_t b = 0; b < j.nb; ++b) {
      R s[MR][C];
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < C; ++c) s[r][c] = V::zero();
      const float* xb = x + b * kQuantBlock;
      const int64_t blk = chunk_at<F>(b);
      // Where vector c's scales (and minimums) of this block are: the panel block, or the buffer.
      const uint8_t* sp[C];
      for (int c = 0; c < C; ++c) sp[c] = base[c] + blk;
      if constexpr (F::kSuper) {
        if ((b & 7) == 0) {
          for (int v = 0; v < NV; ++v) {
            decode_scales<F, V>(base[v * kPerPanel] + super_at<F>(b), sbuf[v]);
          }
        }
        for (int c = 0; c < C; ++c) {
          sp[c] =
              reinterpret_cast<const uint8_t*>(sbuf[c / kPerPanel] + (b & 7) * (F::kSStride / 4));
        }
      }
      if constexpr (F::kNibbles) {
        for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
          R lo[C], hi[C];
          for (int c = 0; c < C; ++c) {
            if constexpr (F::kLut) {
              V::nibbles_lut(base[c] + blk + F::kQ + t * kPanelRows + lane_off(c), lo[c], hi[c]);
            } else if constexpr (F::kQh) {
              V::template nibbles5<F::kOff>(base[c] + blk + F::kQ + t * kPanelRows + lane_off(c),
                                            base[c] + blk + F::kQH + 4 * lane_off(c),
                                            static_cast<int>(t), lo[c], hi[c]);
            } else {
              V::template nibbles<F::kOffset8>(base[c] + blk + F::kQ + t * kPanelRows + lane_off(c),
                                               lo[c], hi[c]);
            }
          }
          for (int r = 0; r < MR; ++r) {
            const R xl = V::set1(xb[r * xs + t]);
            const R xh = V::set1(xb[r * xs + t + 16]);
            for (int c = 0; c < C; ++c) {
              s[r][c] = V::fma(lo[c], xl, s[r][c]);
              s[r][c] = V::fma(hi[c], xh, s[r][c]);
            }
          }
        }
      } else if constexpr (F::kHalves) {
        // K6 / K3 / K2: S_0, S_1 over the two 16-element halves, then D_0·S_0, D_1·S_1 and, with
        // minimums, M_0·sx_0, M_1·sx_1 (the scalar kernel's order).
        for (int h = 0; h < 2; ++h) {
          if (h == 1) {
            for (int r = 0; r < MR; ++r)
              for (int c = 0; c < C; ++c) s[r][c] = V::zero();
          }
          for (int t = 0; t < 16; ++t) {
            R q[C];
            for (int c = 0; c < C; ++c) q[c] = halves_q<F>(base[c] + blk, h, t, lane_off(c));
            for (int r = 0; r < MR; ++r) {
              const R xe = V::set1(xb[r * xs + int64_t{16} * h + t]);
              for (int c = 0; c < C; ++c) s[r][c] = V::fma(q[c], xe, s[r][c]);
            }
          }
          for (int c = 0; c < C; ++c) {
            const R d = V::load_f32(sp[c] + int64_t{64} * h + 4 * lane_off(c));
            for (int r = 0; r < MR; ++r) acc[r][c] = V::fma(d, s[r][c], acc[r][c]);
          }
        }
        if constexpr (F::kMin) {
          for (int h = 0; h < 2; ++h) {
            for (int c = 0; c < C; ++c) {
              const R m = V::load_f32(sp[c] + F::kM + int64_t{64} * h + 4 * lane_off(c));
              for (int r = 0; r < MR; ++r) {
                acc[r][c] = V::fma(m, V::set1(j.sx[(i + r) * j.sx_stride + 2 * b + h]), acc[r][c]);
              }
            }
          }
        }
        continue;
      } else {
        int8_range<F, MR, C>(base, blk, xb, xs, 0, kQuantBlock, s);
      }
      for (int c = 0; c < C; ++c) {
        const R d = load_scale<F>(sp[c], lane_off(c));
        for (int r = 0; r < MR; ++r) acc[r][c] = V::fma(d, s[r][c], acc[r][c]);
      }
      if constexpr (F::kMin) {
        for (int c = 0; c < C; ++c) {
          const R m = load_scale<F>(sp[c] + F::kM, lane_off(c));
          for (int r = 0; r < MR; ++r) {
            acc[r][c] = V::fma(m, V::set1(j.sx[(i + r) * j.sx_stride + b]), acc[r][c]);
          }
        }
      }
    }
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) {
        float out[kPanelRows];
        for (int k = 0; k < kPerPanel; ++k)
          V::store(out + k * V::kLanes, acc[r][v * kPerPanel + k]);
        store_panel(j, i + r, p + v, out);
      }
    }
  }
};

}  // namespace
}  // namespace plinth::cpu::detail::panel
