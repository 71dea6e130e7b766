#include "matmul_int8.hpp"

#include <vector>

#include "isa.hpp"
#include "kernel_table.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"

namespace plinth::cpu::detail {

void matmul_int8_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  const int64_t nb = w.cols / kQuantBlock;
  const uint8_t* panels = w.int8_panels;
  if (panels == nullptr) {  // packed per call (see WeightView::int8_panels)
    thread_local std::vector<uint8_t> packed;
    packed.resize(static_cast<size_t>(packed_bytes(w)));
    pack_weights(w, packed.data(), pool, PanelOrder::kInt8);
    panels = packed.data();
  }
  const KernelTable& k = active_kernels();
  const PanelKind kind = panel_kind(w.type);
  thread_local std::vector<BlockQ8A> xq_buf;
  thread_local std::vector<int32_t> qsum_buf, qoff_buf;
  thread_local std::vector<float> s16_buf;
  if (static_cast<int64_t>(xq_buf.size()) < n * nb) xq_buf.resize(static_cast<size_t>(n * nb));
  // Q4_0 / Q8_0 subtract o·Σqx per block; S16 −128·Σqx per 16-element half and adds M·dx·Σqx.
  const bool offset = kind == PanelKind::kQ4_0 || kind == PanelKind::kQ8_0 ||
                      kind == PanelKind::kQ5 || kind == PanelKind::kIQ4 || kind == PanelKind::kIQ4X;
  const bool halves = kind == PanelKind::kS16;
  const int64_t per_row = halves ? 2 * nb : nb;
  if ((offset || halves) && static_cast<int64_t>(qsum_buf.size()) < n * per_row) {
    qsum_buf.resize(static_cast<size_t>(n * per_row));
    qoff_buf.resize(static_cast<size_t>(n * per_row));
  }
  if (halves && static_cast<int64_t>(s16_buf.size()) < n * per_row) {
    s16_buf.resize(static_cast<size_t>(n * per_row));
  }
  const int32_t o = kind == PanelKind::kQ4_0 ? 8 : kind == PanelKind::kQ5 ? 16 : 128;
  BlockQ8A* xq = xq_buf.data();
  int32_t* qsum = qsum_buf.data();
  int32_t* qoff = qoff_buf.data();
  float* s16 = s16_buf.data();
  const auto quantize = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      k.quantize_row_q8a(x + i * w.cols, w.cols, xq + i * nb);
      if (!offset && !halves) continue;
      for (int64_t blk = i * nb; blk < (i + 1) * nb; ++blk) {
        const int parts = halves ? 2 : 1;
        for (int t = 0; t < parts; ++t) {
          int32_t sum = 0;
          for (int j = t * 32 / parts; j < (t + 1) * 32 / parts; ++j) sum += xq[blk].qs[j];
          const int64_t at = blk * parts + t;
          qsum[at] = sum;
          qoff[at] = -o * sum;
          if (halves) s16[at] = xq[blk].d * static_cast<float>(sum);
        }
      }
    }
  };
  if (n >= 8) {
    pool.parallel_for(n, quantize);
  } else {
    quantize(0, n);
  }
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
               xq,
               offset ? qsum : nullptr,
               offset ? qoff : nullptr,
               halves ? qsum : nullptr,
               halves ? qoff : nullptr,
               halves ? s16 : nullptr};
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
