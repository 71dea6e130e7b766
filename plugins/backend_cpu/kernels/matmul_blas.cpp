#include "matmul_blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "dequantize.hpp"

namespace plinth::cpu::detail {

void matmul_blas(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  // We thread over output rows ourselves; OpenBLAS threads would oversubscribe the cores.
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
  const int64_t chunk = std::max<int64_t>(16, (int64_t{1} << 18) / w.cols);
  pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<float> wf;
    for (int64_t c0 = r0; c0 < r1; c0 += chunk) {
      const int64_t c1 = std::min(c0 + chunk, r1);
      const float* wp;
      if (w.type == WeightType::kF32) {
        wp = static_cast<const float*>(w.data) + c0 * w.cols;
      } else {
        wf.resize(static_cast<size_t>((c1 - c0) * w.cols));
        dequantize_rows(w, c0, c1, wf.data());
        wp = wf.data();
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(n),
                  static_cast<blasint>(c1 - c0), static_cast<blasint>(w.cols), 1.0f, x,
                  static_cast<blasint>(w.cols), wp, static_cast<blasint>(w.cols), 0.0f, y + c0,
                  static_cast<blasint>(w.rows));
    }
  });
}

}  // namespace plinth::cpu::detail
