// The Float path's panel kernel in portable C++: the formula of matmul_float.hpp with std::fma,
// one output at a time. Bit-identical to the AVX2 and AVX-512 kernels (every step is one IEEE
// fused multiply-add or an exact conversion); the reference the vector kernels are tested against.
#include <cmath>
#include <cstring>

#include "panel_driver.hpp"

namespace plinth::cpu::detail {
namespace {

struct Scalar {
  static constexpr int kMaxRows = 1, kWide = 1, kNarrow = 1;

  // kHalves (K6, K3, K2): S_h over the 16 elements of half h, then A = fma(D_0, S_0, A),
  // A = fma(D_1, S_1, A) and, with minimums, A = fma(M_0, sx_0, A), A = fma(M_1, sx_1, A)
  // (matmul_float.hpp). `sc`: the chunk's decoded scales (decode_scales).
  template <class F>
  static float halves(const PanelJob& j, const uint8_t* ch, const float* sc, const float* xb,
                      int64_t r, int64_t i, int64_t b, float acc) {
    float s[2] = {0.0f, 0.0f};
    for (int h = 0; h < 2; ++h) {
      for (int e = 16 * h; e < 16 * h + 16; ++e) {
        const int q = panel::stored_u<F, false>(ch, r, e) - F::kOff;
        s[h] = std::fma(static_cast<float>(q), xb[e], s[h]);
      }
    }
    for (int64_t h = 0; h < 2; ++h) acc = std::fma(sc[16 * h + r], s[h], acc);
    if constexpr (F::kMin) {
      for (int64_t h = 0; h < 2; ++h) {
        acc = std::fma(sc[32 + 16 * h + r], j.sx[i * j.sx_stride + 2 * b + h], acc);
      }
    }
    return acc;
  }

  // The quants of row r at pb, as exact small integers (matmul_float.hpp): Q4 nibble t / t + 16.
  template <class F>
  static void nibble_pair(const uint8_t* pb, int64_t t, int64_t r, int& lo, int& hi) {
    const int byte = pb[F::kQ + t * kPanelRows + r];
    lo = byte & 0x0f;
    hi = byte >> 4;
    if constexpr (F::kOffset8) {
      lo -= 8;
      hi -= 8;
    }
    if constexpr (F::kLut) {  // IQ4_NL: the nibble indexes kvalues_iq4nl
      // NOLINTNEXTLINE(bugprone-signed-char-misuse): int8 table entries are numbers
      lo = ggml::kIq4nlValues[static_cast<size_t>(lo)];
      // NOLINTNEXTLINE(bugprone-signed-char-misuse): int8 table entries are numbers
      hi = ggml::kIq4nlValues[static_cast<size_t>(hi)];
    }
    if constexpr (F::kQh) {  // Q5: bit t / t + 16 of the row's high-bit word; − kOff (16 or 0)
      uint32_t qh;
      std::memcpy(&qh, pb + F::kQH + 4 * r, sizeof qh);
      lo = (lo | static_cast<int>(((qh >> t) & 1u) << 4)) - F::kOff;
      hi = (hi | static_cast<int>(((qh >> (t + 16)) & 1u) << 4)) - F::kOff;
    }
  }

  // S of matmul_float.hpp for row r of the panel block at pb.
  template <class F>
  static float block_sum(const uint8_t* pb, const float* xb, int64_t r) {
    float s = 0.0f;
    if constexpr (F::kNibbles) {
      for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
        int lo = 0, hi = 0;
        nibble_pair<F>(pb, t, r, lo, hi);
        s = std::fma(static_cast<float>(lo), xb[t], s);
        s = std::fma(static_cast<float>(hi), xb[t + 16], s);
      }
    } else {
      for (int64_t e = 0; e < kQuantBlock; ++e) {
        const auto q = static_cast<int8_t>(pb[F::kQ + e * kPanelRows + r]);
        s = std::fma(static_cast<float>(q), xb[e], s);
      }
    }
    return s;
  }

  template <class F, int MR, int NV>
  static void tile(const PanelJob& j, int64_t p, int64_t i) {
    static_assert(MR == 1 && NV == 1);
    const uint8_t* w = j.panels + p * j.panel_bytes;
    const float* x = j.x + i * j.nb * kQuantBlock;
    float acc[kPanelRows] = {};
    float sbuf[2 * F::kSStride + 1];  // a super-block's decoded scales
    for (int64_t b = 0; b < j.nb; ++b) {
      const uint8_t* pb = w + panel::chunk_at<F>(b);
      const float* xb = x + b * kQuantBlock;
      const float* sc = nullptr;  // the chunk's decoded scales (super-block kinds)
      if constexpr (F::kSuper) {
        if ((b & 7) == 0)
          panel::decode_scales<F, panel::WidenScalar>(w + panel::super_at<F>(b), sbuf);
        sc = sbuf + (b & 7) * (F::kSStride / 4);
      }
      for (int64_t r = 0; r < kPanelRows; ++r) {
        if constexpr (F::kHalves) {
          acc[r] = halves<F>(j, pb, sc, xb, r, i, b, acc[r]);
          continue;
        }
        const float s = block_sum<F>(pb, xb, r);
        if constexpr (F::kSuper) {
          acc[r] = std::fma(sc[r], s, acc[r]);
          if constexpr (F::kMin) acc[r] = std::fma(sc[16 + r], j.sx[i * j.sx_stride + b], acc[r]);
        } else {
          acc[r] = std::fma(panel::scale_at<F>(pb, 0, r), s, acc[r]);
          if constexpr (F::kMin) {
            acc[r] = std::fma(panel::scale_at<F>(pb, F::kM, r), j.sx[i * j.sx_stride + b], acc[r]);
          }
        }
      }
    }
    panel::store_panel(j, i, p, acc);
  }
};

}  // namespace

void run_panels_scalar(const PanelJob& job, int64_t p0, int64_t p1) {
  panel::run<Scalar>(job, p0, p1);
}

}  // namespace plinth::cpu::detail
