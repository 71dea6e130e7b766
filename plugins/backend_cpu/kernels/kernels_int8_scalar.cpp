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
  static int32_t block_dot(const PanelJob& j, const uint8_t* w, int64_t i, int64_t r, int64_t b) {
    const uint8_t* q = w + b * F::kBytes + F::kQ;
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
            const int hb = w[b * F::kBytes + F::kQH + g * 16 + r];
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

  // S16: P_h of matmul_int8.hpp over the 16 elements of half h (groups 4h .. 4h+3), exact.
  template <class F>
  static int32_t half_dot(const PanelJob& j, const uint8_t* w, int64_t i, int64_t r, int64_t b,
                          int64_t h) {
    const uint8_t* q = w + b * F::kBytes + F::kQ;
    const int8_t* qx = j.xq[i * j.nb + b].qs;
    int32_t dot = 0;
    for (int64_t g = 4 * h; g < 4 * h + 4; ++g) {
      for (int64_t k = 0; k < 4; ++k) dot += q[at(g, r, k)] * qx[4 * g + k];
    }
    return dot + j.qoff16[(i * j.nb + b) * 2 + h];
  }

  // S16: A = fma(D_0 ⊗ dx, P_0, A), A = fma(D_1 ⊗ dx, P_1, A), A = fma(M_0, s_0, A),
  // A = fma(M_1, s_1, A) (matmul_int8.hpp).
  template <class F>
  static float halves(const PanelJob& j, const uint8_t* w, int64_t i, int64_t r, int64_t b,
                      float acc) {
    const uint8_t* pb = w + b * F::kBytes;
    const float dx = j.xq[i * j.nb + b].d;
    for (int64_t h = 0; h < 2; ++h) {
      const float dd = panel::f32_at(pb + 64 * h + 4 * r) * dx;
      acc = std::fma(dd, static_cast<float>(half_dot<F>(j, w, i, r, b, h)), acc);
    }
    for (int64_t h = 0; h < 2; ++h) {
      acc =
          std::fma(panel::f32_at(pb + F::kM + 64 * h + 4 * r), j.s16[(i * j.nb + b) * 2 + h], acc);
    }
    return acc;
  }

  template <class F, int MR, int NV>
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    static_assert(MR == 1 && NV == 1);
    const uint8_t* w = j.panels + p * j.panel_bytes;
    float out[kPanelRows];
    for (int64_t r = 0; r < kPanelRows; ++r) {
      float acc = 0.0f;
      for (int64_t b = 0; b < j.nb; ++b) {
        if constexpr (F::kHalves) {
          acc = halves<F>(j, w, i, r, b, acc);
        } else {
          acc = block<F>(j, w, i, r, b, acc);
        }
      }
      out[r] = acc;
    }
    panel::store_panel(j, i, p, out);
  }

  // A = fma(d ⊗ dx, float(P), A), then Q4_1's A = fma(m, sx, A) (matmul_int8.hpp).
  template <class F>
  static float block(const PanelJob& j, const uint8_t* w, int64_t i, int64_t r, int64_t b,
                     float acc) {
    const BlockQ8A* xq = j.xq + i * j.nb;
    const int32_t dot = block_dot<F>(j, w, i, r, b);
    const uint8_t* pb = w + b * F::kBytes;
    const float dd = panel::scale_at<F>(pb, 0, r) * xq[b].d;
    acc = std::fma(dd, static_cast<float>(dot), acc);
    if constexpr (F::kMin) acc = std::fma(panel::scale_at<F>(pb, F::kM, r), xq[b].s, acc);
    return acc;
  }
};

}  // namespace

void run_int8_panels_scalar(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<Scalar>(job, p0, p1);
}

}  // namespace plinth::cpu::detail
