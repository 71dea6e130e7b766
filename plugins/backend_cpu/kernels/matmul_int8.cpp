#include "matmul_int8.hpp"

#include <vector>

#include "isa.hpp"
#include "kernel_table.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"

namespace plinth::cpu::detail {
namespace {

// Per block of an activation row (nb blocks), split into `parts` (1, or 2 halves of 16): the sum
// of the int8 values, −o times it and, when s16 is set, dx · that sum (one f32 rounding).
void block_sums_q8(const BlockQ8A* xq, int64_t nb, int parts, int32_t o, int32_t* qsum,
                   int32_t* qoff, float* s16) {
  const int len = kQuantBlock / parts;
  for (int64_t blk = 0; blk < nb; ++blk) {
    for (int t = 0; t < parts; ++t) {
      int32_t sum = 0;
      for (int j = t * len; j < (t + 1) * len; ++j) sum += xq[blk].qs[j];
      const int64_t at = blk * parts + t;
      qsum[at] = sum;
      qoff[at] = -o * sum;
      if (s16 != nullptr) s16[at] = xq[blk].d * static_cast<float>(sum);
    }
  }
}

// The activation rows quantized (quantize_row_q8a) and the per-block sums the panel kind needs
// (thread-local buffers, valid until the thread's next call).
struct ActivationQ8 {
  BlockQ8A* xq;
  int32_t* qsum;
  int32_t* qoff;
  float* s16;
  bool offset;  // Q4_0 / Q8_0 / Q5 / IQ4 / IQ4X: −o·Σqx per block
  bool halves;  // K6 / K3 / K2: −o·Σqx and dx·Σqx per 16-element half
};

ActivationQ8 quantize_activations(const WeightView& w, const float* x, int64_t n, PanelKind kind,
                                  ThreadPool& pool) {
  const int64_t nb = w.cols / kQuantBlock;
  const KernelTable& k = active_kernels();
  thread_local std::vector<BlockQ8A> xq_buf;
  thread_local std::vector<int32_t> qsum_buf, qoff_buf;
  thread_local std::vector<float> s16_buf;
  ActivationQ8 q{};
  q.offset = kind == PanelKind::kQ4_0 || kind == PanelKind::kQ8_0 || kind == PanelKind::kQ5 ||
             kind == PanelKind::kIQ4 || kind == PanelKind::kIQ4X;
  q.halves = panel_halves(kind);
  const int64_t per_row = q.halves ? 2 * nb : nb;
  const auto fit = [](auto& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) v.resize(static_cast<size_t>(size));
  };
  fit(xq_buf, n * nb);
  if (q.offset || q.halves) {
    fit(qsum_buf, n * per_row);
    fit(qoff_buf, n * per_row);
  }
  if (q.halves) fit(s16_buf, n * per_row);
  q.xq = xq_buf.data();
  q.qsum = qsum_buf.data();
  q.qoff = qoff_buf.data();
  q.s16 = s16_buf.data();
  // −o·Σqx: the offset of the stored quants (Q4_0 8, Q5 16, K6 32, K3 4, K2 0; else 128).
  int32_t o = 128;
  switch (kind) {
    case PanelKind::kQ4_0:
      o = 8;
      break;
    case PanelKind::kQ5:
      o = 16;
      break;
    case PanelKind::kK6:
      o = 32;
      break;
    case PanelKind::kK3:
      o = 4;
      break;
    case PanelKind::kK2:
      o = 0;
      break;
    case PanelKind::kQ8_0:
    case PanelKind::kIQ4:
    case PanelKind::kIQ4X:
    case PanelKind::kQ4_1:
    case PanelKind::kQ5_1:
    case PanelKind::kK4:
    case PanelKind::kK5:
      break;
  }
  const auto quantize = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      k.quantize_row_q8a(x + i * w.cols, w.cols, q.xq + i * nb);
      if (!q.offset && !q.halves) continue;
      block_sums_q8(q.xq + i * nb, nb, q.halves ? 2 : 1, o, q.qsum + i * per_row,
                    q.qoff + i * per_row, q.halves ? q.s16 + i * per_row : nullptr);
    }
  };
  if (n >= 8) {
    pool.parallel_for(n, quantize);
  } else {
    quantize(0, n);
  }
  return q;
}

}  // namespace

void matmul_int8_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  const int64_t nb = w.cols / kQuantBlock;
  const uint8_t* panels = w.int8_panels;
  if (panels == nullptr) {  // packed per call (see WeightView::int8_panels)
    thread_local std::vector<uint8_t> packed;
    packed.resize(static_cast<size_t>(packed_bytes(w)));
    pack_weights(w, packed.data(), pool, PanelOrder::kInt8);
    panels = packed.data();
  }
  const PanelKind kind = panel_kind(w.type);
  const ActivationQ8 q = quantize_activations(w, x, n, kind, pool);
  PanelJob job{kind,
               panels,
               nb,
               nb * panel_block_bytes(kind),
               w.rows,
               nullptr,
               nullptr,
               0,
               n,
               y,
               q.xq,
               q.offset ? q.qsum : nullptr,
               q.offset ? q.qoff : nullptr,
               q.halves ? q.qsum : nullptr,
               q.halves ? q.qoff : nullptr,
               q.halves ? q.s16 : nullptr};
  PanelRunFn run = run_int8_panels_scalar;
  switch (int8_kernel()) {
    case Int8Kernel::kAvx512Vnni:
      run = run_int8_panels_vnni;
      break;
    case Int8Kernel::kAvxVnni:
      run = run_int8_panels_avxvnni;
      break;
    case Int8Kernel::kAvx2:
      run = run_int8_panels_avx2;
      break;
    case Int8Kernel::kScalar:
      break;
  }
  run_panels_parallel(job, run, pool);
}

}  // namespace plinth::cpu::detail
