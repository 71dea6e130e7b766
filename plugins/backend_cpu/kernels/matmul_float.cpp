#include "matmul_float.hpp"

#include <algorithm>
#include <vector>

#include "isa.hpp"
#include "kernel_table.hpp"

namespace plinth::cpu::detail {
namespace {

// Output rows per tile: the tile's weight rows (16 × ≤ 1 KB for the model's shapes) stay in L1
// while the activation rows stream past them in groups of up to kMaxFloatTile (16 and 64 rows
// measured alike).
constexpr int64_t kRowTile = 16;
constexpr int64_t kLanes = 8;
// Activation rows per group: as many (≤ kMaxFloatTile) as fit 24 KiB, so the group stays in the
// 32 KiB L1 while the tile's weight rows pass (576 columns: 8 rows; 1536 columns: 4 rows, which
// measured 1.5x faster than 8 at n = 512).
constexpr int64_t kGroupBytes = 24 << 10;

FloatQuantDotFn dot_for(const FloatQuantKernels& k, WeightType type) {
  switch (type) {
    case WeightType::Q8_0:
      return k.dot_q8_0;
    case WeightType::Q4_0:
      return k.dot_q4_0;
    default:
      return k.dot_q4_1;
  }
}

}  // namespace

int64_t padded_blocks(int64_t nb) {
  return (nb + kLanes - 1) / kLanes * kLanes;
}

const FloatQuantKernels& active_float_kernels() {
  return active_isa() == Isa::Avx2 ? avx2_float_kernels() : scalar_float_kernels();
}

void block_sums(const float* x, int64_t cols, float* out) {
  const int64_t nb = cols / kQuantBlock;
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * kQuantBlock;
    float a[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) a[l] = ((xb[l] + xb[8 + l]) + xb[16 + l]) + xb[24 + l];
    out[b] = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
  }
  for (int64_t b = nb; b < padded_blocks(nb); ++b) out[b] = 0.0f;
}

void matmul_float_quant(const WeightView& w, const float* x, int64_t n, float* y,
                        ThreadPool& pool) {
  const FloatQuantKernels& k = active_float_kernels();
  const FloatQuantDotFn dot = dot_for(k, w.type);
  const int64_t nb = w.cols / kQuantBlock;
  const int64_t nbp = padded_blocks(nb);
  const int64_t wrow = row_bytes(w.type, w.cols);
  const bool has_min = w.type == WeightType::Q4_1;

  // Q4_1: the block sums of each activation row, once per call, shared by all weight rows.
  const float* sx = nullptr;
  if (has_min) {
    thread_local std::vector<float> sx_buf;
    if (static_cast<int64_t>(sx_buf.size()) < n * nbp) sx_buf.resize(static_cast<size_t>(n * nbp));
    float* out = sx_buf.data();
    const auto sums = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) block_sums(x + i * w.cols, w.cols, out + i * nbp);
    };
    if (n >= 64) {
      pool.parallel_for(n, sums);
    } else {
      sums(0, n);
    }
    sx = out;
  }

  const int64_t group =
      std::clamp<int64_t>(kGroupBytes / (w.cols * int64_t{sizeof(float)}), 1, kMaxFloatTile);
  const auto* base = static_cast<const uint8_t*>(w.data);
  pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
    // Q4_1: the tile's minima as f32 [kRowTile, nbp], converted once for all activation rows.
    thread_local std::vector<float> mins_buf;
    if (has_min && static_cast<int64_t>(mins_buf.size()) < kRowTile * nbp) {
      mins_buf.resize(static_cast<size_t>(kRowTile * nbp));
    }
    float tmp[kMaxFloatTile];
    for (int64_t rt = r0; rt < r1; rt += kRowTile) {
      const int64_t re = std::min(rt + kRowTile, r1);
      if (has_min) {
        for (int64_t r = rt; r < re; ++r) {
          float* m = &mins_buf[static_cast<size_t>((r - rt) * nbp)];
          k.q4_1_mins(base + r * wrow, nb, m);
          // The padding must be 0 (the formula's m_b for b >= nb): the buffer is reused across
          // matrices of other widths, whose rows lay out differently.
          std::fill(m + nb, m + nbp, 0.0f);
        }
      }
      for (int64_t i = 0; i < n; i += group) {
        const int nx = static_cast<int>(std::min<int64_t>(group, n - i));
        // One weight row per call: several rows at once (tried for n = 1) read 2-4 interleaved
        // short streams, which measured 1.5-5x slower than one sequential stream.
        for (int64_t r = rt; r < re; ++r) {
          dot(nb, base + r * wrow, has_min ? &mins_buf[(r - rt) * nbp] : nullptr, x + i * w.cols,
              w.cols, has_min ? sx + i * nbp : nullptr, nbp, nx, tmp);
          for (int j = 0; j < nx; ++j) y[(i + j) * w.rows + r] = tmp[j];
        }
      }
    }
  });
}

}  // namespace plinth::cpu::detail
