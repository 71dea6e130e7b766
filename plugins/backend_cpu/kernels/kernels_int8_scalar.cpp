// The Int8 path's panel kernel in portable C++: the formula of matmul_int8.hpp, one output at a
// time (int32 block dots, then std::fma). Bit-identical to the VNNI kernel; the reference it is
// tested against, and the kernel of CPUs without AVX-512 VNNI.
#include <cmath>

#include "panel_driver.hpp"

namespace plinth::cpu::detail {
namespace {

// Byte k of group g of row r inside a panel block's quants (PanelOrder::kInt8).
int64_t at(int64_t g, int64_t r, int64_t k) {
  return g * 64 + r * 4 + k;
}

struct Scalar {
  static constexpr int kMaxRows = 1, kWide = 1, kNarrow = 1;

  // P of matmul_int8.hpp for output row r of the panel at w and block b of activation row i.
  template <class F>
  static int32_t block_dot(const PanelJob& j, const uint8_t* pb, int64_t i, int64_t r, int64_t b) {
    const uint8_t* q = pb + F::kQ;
    const int8_t* qx = j.xq[i * j.nb + b].qs;
    int32_t dot = 0;
    if constexpr (F::kNibbles) {
      for (int64_t g = 0; g < 4; ++g) {
        for (int64_t k = 0; k < 4; ++k) {
          const int byte = q[at(g, r, k)];
          int lo = byte & 0x0f, hi = byte >> 4;
          if constexpr (F::kLut) {  // IQ4_NL: u = kvalues_iq4nl[nibble] + 128 (F::kOff)
            lo = ggml::kIq4nlValues[static_cast<size_t>(lo)] + 128;
            hi = ggml::kIq4nlValues[static_cast<size_t>(hi)] + 128;
          }
          if constexpr (F::kQh) {  // Q5: bits k and 4 + k of the [g][r] high-bit byte
            const int hb = pb[F::kQH + g * 16 + r];
            lo |= ((hb >> k) & 1) << 4;
            hi |= ((hb >> (4 + k)) & 1) << 4;
          }
          dot += lo * qx[4 * g + k] + hi * qx[16 + 4 * g + k];
        }
      }
      if constexpr (F::kOff != 0) dot -= F::kOff * j.qsum[i * j.nb + b];
    } else {
      for (int64_t g = 0; g < 8; ++g) {
        for (int64_t k = 0; k < 4; ++k) dot += q[at(g, r, k)] * qx[4 * g + k];
      }
      dot -= 128 * j.qsum[i * j.nb + b];
    }
    return dot;
  }

  // kHalves: P_h of matmul_int8.hpp over the 16 elements of half h (u = q + kOff from the bit
  // planes), exact, from −kOff·Σqx_h.
  template <class F>
  static int32_t half_dot(const PanelJob& j, const uint8_t* ch, int64_t i, int64_t r, int64_t b,
                          int h) {
    const int8_t* qx = j.xq[i * j.nb + b].qs;
    int32_t dot = 0;
    for (int e = 16 * h; e < 16 * h + 16; ++e) dot += panel::stored_u<F, true>(ch, r, e) * qx[e];
    return dot + j.qoff16[(i * j.nb + b) * 2 + h];
  }

  // kHalves: A = fma(D_0 ⊗ dx, P_0, A), A = fma(D_1 ⊗ dx, P_1, A), then with minimums
  // A = fma(M_0, s_0, A), A = fma(M_1, s_1, A) (matmul_int8.hpp). `sc`: the chunk's decoded scales.
  template <class F>
  static float halves(const PanelJob& j, const uint8_t* ch, const float* sc, int64_t i, int64_t r,
                      int64_t b, float acc) {
    const float dx = j.xq[i * j.nb + b].d;
    for (int h = 0; h < 2; ++h) {
      const float dd = sc[int64_t{16} * h + r] * dx;
      acc = std::fma(dd, static_cast<float>(half_dot<F>(j, ch, i, r, b, h)), acc);
    }
    if constexpr (F::kMin) {
      for (int64_t h = 0; h < 2; ++h)
        acc = std::fma(sc[32 + 16 * h + r], j.s16[(i * j.nb + b) * 2 + h], acc);
    }
    return acc;
  }

  template <class F, int MR, int NV>
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    static_assert(MR == 1 && NV == 1);
    const uint8_t* w = j.panels + p * j.panel_bytes;
    float acc[kPanelRows] = {};
    float sbuf[2 * F::kSStride + 1];  // a super-block's decoded scales
    for (int64_t b = 0; b < j.nb; ++b) {
      const uint8_t* pb = w + panel::chunk_at<F>(b);
      const float* sc = nullptr;
      if constexpr (F::kSuper) {
        if ((b & 7) == 0)
          panel::decode_scales<F, panel::WidenScalar>(w + panel::super_at<F>(b), sbuf);
        sc = sbuf + (b & 7) * (F::kSStride / 4);
      }
      for (int64_t r = 0; r < kPanelRows; ++r) {
        if constexpr (F::kHalves) {
          acc[r] = halves<F>(j, pb, sc, i, r, b, acc[r]);
        } else {
          acc[r] = block<F>(j, pb, sc, i, r, b, acc[r]);
        }
      }
    }
    panel::store_panel(j, i, p, acc);
  }

  // A = fma(d ⊗ dx, float(P), A), then Q4_1's A = fma(m, sx, A) (matmul_int8.hpp); the scales
  // from the block (f16) or, for a super-block kind, the decoded `sc`.
  template <class F>
  static float block(const PanelJob& j, const uint8_t* pb, const float* sc, int64_t i, int64_t r,
                     int64_t b, float acc) {
    const BlockQ8A* xq = j.xq + i * j.nb;
    const int32_t dot = block_dot<F>(j, pb, i, r, b);
    float d = 0.0f, m = 0.0f;
    if constexpr (F::kSuper) {
      d = sc[r];
      if constexpr (F::kMin) m = sc[16 + r];
    } else {
      d = panel::scale_at<F>(pb, 0, r);
      if constexpr (F::kMin) m = panel::scale_at<F>(pb, F::kM, r);
    }
    acc = std::fma(d * xq[b].d, static_cast<float>(dot), acc);
    if constexpr (F::kMin) acc = std::fma(m, xq[b].s, acc);
    return acc;
  }
};

}  // namespace

void run_int8_panels_scalar(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<Scalar>(job, p0, p1);
}

}  // namespace plinth::cpu::detail
