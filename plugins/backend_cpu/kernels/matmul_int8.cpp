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
  thread_local std::vector<BlockQ8A> xq_buf;
  thread_local std::vector<int32_t> qsum_buf, qoff_buf;
  if (static_cast<int64_t>(xq_buf.size()) < n * nb) xq_buf.resize(static_cast<size_t>(n * nb));
  const bool offset = w.type != WeightType::kQ4_1;  // Q4_0 / Q8_0 subtract o·Σqx
  if (offset && static_cast<int64_t>(qsum_buf.size()) < n * nb) {
    qsum_buf.resize(static_cast<size_t>(n * nb));
    qoff_buf.resize(static_cast<size_t>(n * nb));
  }
  const int32_t o = w.type == WeightType::kQ8_0 ? 128 : 8;
  BlockQ8A* xq = xq_buf.data();
  int32_t* qsum = qsum_buf.data();
  int32_t* qoff = qoff_buf.data();
  const auto quantize = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      k.quantize_row_q8a(x + i * w.cols, w.cols, xq + i * nb);
      if (!offset) continue;
      for (int64_t blk = i * nb; blk < (i + 1) * nb; ++blk) {
        int32_t s = 0;
        for (const int8_t q : xq[blk].qs) s += q;
        qsum[blk] = s;
        qoff[blk] = -o * s;
      }
    }
  };
  if (n >= 8) {
    pool.parallel_for(n, quantize);
  } else {
    quantize(0, n);
  }
  PanelJob job{w.type,
               panels,
               nb,
               nb * panel_block_bytes(w.type),
               w.rows,
               nullptr,
               nullptr,
               0,
               n,
               y,
               xq,
               offset ? qsum : nullptr,
               offset ? qoff : nullptr};
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
