#include "matmul_float.hpp"

#include <stdexcept>
#include <vector>

#include "isa.hpp"
#include "kernel_table.hpp"
#include "panel_layout.hpp"

namespace plinth::cpu::detail {
namespace {

constexpr int64_t kLanes = 8;

PanelRunFn active_panel_kernel() {
  switch (active_isa()) {
    case Isa::kAvx512:
      return run_panels_avx512;
    case Isa::kAvx2:
      return run_panels_avx2;
    case Isa::kScalar:
      break;
  }
  return run_panels_scalar;
}

}  // namespace

int64_t padded_blocks(int64_t nb) {
  return (nb + kLanes - 1) / kLanes * kLanes;
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

void half_sums(const float* x, int64_t cols, float* out) {
  const int64_t nh = cols / (kQuantBlock / 2);
  for (int64_t h = 0; h < nh; ++h) {
    const float* xh = x + h * (kQuantBlock / 2);
    float a[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) a[l] = xh[l] + xh[8 + l];
    out[h] = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
  }
  for (int64_t h = nh; h < 2 * padded_blocks(nh / 2); ++h) out[h] = 0.0f;
}

void run_panels_parallel(const PanelJob& job, PanelRunFn run, ThreadPool& pool) {
  const int64_t panels = panel_count(job.rows);
  const int64_t group = panels >= int64_t{16} * pool.size() ? 4 : 2;
  const int64_t groups = (panels + group - 1) / group;
  pool.parallel_for(groups, [&](int64_t g0, int64_t g1) {
    run(job, g0 * group, g1 * group < panels ? g1 * group : panels);
  });
}

void pack_weights(const WeightView& w, uint8_t* out, ThreadPool& pool, PanelOrder order) {
  pool.parallel_for(panel_count(w.rows),
                    [&](int64_t p0, int64_t p1) { pack_panels(w, p0, p1, out, order); });
}

bool can_stack(const std::vector<WeightView>& parts) {
  if (parts.empty()) return false;
  const WeightView& first = parts.front();
  for (const WeightView& v : parts) {
    if (!is_quantized(v.type) || v.type != first.type || v.cols != first.cols || v.rows <= 0 ||
        v.rows % kPanelRows != 0) {
      return false;
    }
  }
  return true;
}

int64_t stacked_bytes(const std::vector<WeightView>& parts) {
  int64_t bytes = 0;
  for (const WeightView& v : parts) bytes += packed_bytes(v);
  return bytes;
}

WeightView pack_stacked(const std::vector<WeightView>& parts, uint8_t* out, ThreadPool& pool,
                        PanelOrder order) {
  if (!can_stack(parts)) {
    throw std::invalid_argument(
        "pack_stacked: the parts must share one quantized type and input width and each hold a "
        "multiple of 16 rows");
  }
  WeightView stacked{parts.front().type, nullptr, 0, parts.front().cols};
  for (const WeightView& v : parts) {
    pack_weights(v, out + packed_bytes(stacked), pool, order);  // after the rows so far
    stacked.rows += v.rows;
  }
  (order == PanelOrder::kFloat ? stacked.panels : stacked.int8_panels) = out;
  return stacked;
}

void matmul_float_quant(const WeightView& w, const float* x, int64_t n, float* y,
                        ThreadPool& pool) {
  const int64_t nb = w.cols / kQuantBlock;
  const uint8_t* panels = w.panels;
  if (panels == nullptr) {  // packed per call (see WeightView::panels)
    thread_local std::vector<uint8_t> packed;
    packed.resize(static_cast<size_t>(packed_bytes(w)));
    pack_weights(w, packed.data(), pool);
    panels = packed.data();
  }
  // Q4_1 (and the other kinds with minimums per 32): the block sums of each activation row, once
  // per call, shared by all weight rows; K2 (minimums per 16): the sums of each 16-element half.
  const PanelKind kind = panel_kind(w.type);
  const bool halves = panel_halves(kind);
  const int64_t nbp = padded_blocks(nb) * (halves ? 2 : 1);
  const float* sx = nullptr;
  if (kind == PanelKind::kQ4_1 || kind == PanelKind::kQ5_1 || kind == PanelKind::kK4 ||
      kind == PanelKind::kK5 || kind == PanelKind::kK2) {
    thread_local std::vector<float> sx_buf;
    if (static_cast<int64_t>(sx_buf.size()) < n * nbp) sx_buf.resize(static_cast<size_t>(n * nbp));
    float* out = sx_buf.data();
    const auto sums = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (halves) {
          half_sums(x + i * w.cols, w.cols, out + i * nbp);
        } else {
          block_sums(x + i * w.cols, w.cols, out + i * nbp);
        }
      }
    };
    if (n >= 64) {
      pool.parallel_for(n, sums);
    } else {
      sums(0, n);
    }
    sx = out;
  }
  const PanelJob job{kind, panels, nb, nb * panel_block_bytes(kind), w.rows, x, sx, nbp, n, y};
  run_panels_parallel(job, active_panel_kernel(), pool);
}

}  // namespace plinth::cpu::detail
