#include "matmul.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_table.hpp"
#include "matmul_blas.hpp"
#include "matmul_float.hpp"
#include "matmul_int8.hpp"

namespace plinth::cpu {
namespace {

using detail::KernelTable;
using detail::kMaxDotRows;

// Output rows per tile: the tile's weight rows (16 × ≤ 1 KB for the model's shapes) stay in L1
// while all activation rows stream past them in groups of kMaxDotRows.
constexpr int64_t kRowTile = 16;
// From this many activation rows on, dequantize + sgemm beats the int8 kernels (bench_kernels).
constexpr int64_t kBlasMinRows = 64;

// The Simd path's row kernels: the file's blocks of Q8_0 / Q4_0 / Q4_1, and F32 / F16 / BF16 rows.
// Every other type runs the Int8 path (matmul below), so it never reaches these.
bool has_simd_row_kernel(WeightType type) {
  switch (type) {
    case WeightType::kQ8_0:
    case WeightType::kQ4_0:
    case WeightType::kQ4_1:
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
      return true;
    case WeightType::kQ5_0:
    case WeightType::kQ5_1:
    case WeightType::kQ2_K:
    case WeightType::kQ3_K:
    case WeightType::kQ4_K:
    case WeightType::kQ5_K:
    case WeightType::kQ6_K:
    case WeightType::kIQ4_NL:
    case WeightType::kIQ4_XS:
      return false;
  }
  throw std::invalid_argument(std::string("matmul: weight type ") +
                              std::to_string(static_cast<int32_t>(type)) +
                              " is not in the format table");
}

detail::QuantDotFn quant_dot_for(const KernelTable& k, WeightType type) {
  if (type == WeightType::kQ8_0) return k.dot_q8_0;
  if (type == WeightType::kQ4_0) return k.dot_q4_0;
  if (type == WeightType::kQ4_1) return k.dot_q4_1;
  throw std::invalid_argument(std::string("matmul simd: no row kernel for ") +
                              weight_type_name(type));
}

detail::FloatDotFn float_dot_for(const KernelTable& k, WeightType type) {
  if (type == WeightType::kF32) return k.dot_f32;
  if (type == WeightType::kF16) return k.dot_f16;
  if (type == WeightType::kBF16) return k.dot_bf16;
  throw std::invalid_argument(std::string("matmul simd: no row kernel for ") +
                              weight_type_name(type));
}

// Loops a dot kernel over output rows [r0, r1) × all n activation rows.
// dot(row, i, nx, out) computes out[k] = W[row] · x[i + k] for k < nx.
template <typename Dot>
void tile_rows(int64_t r0, int64_t r1, int64_t n, int64_t rows, float* y, Dot dot) {
  float tmp[kMaxDotRows];
  for (int64_t rt = r0; rt < r1; rt += kRowTile) {
    const int64_t re = std::min(rt + kRowTile, r1);
    for (int64_t i = 0; i < n; i += kMaxDotRows) {
      const int nx = static_cast<int>(std::min<int64_t>(kMaxDotRows, n - i));
      for (int64_t r = rt; r < re; ++r) {
        dot(r, i, nx, tmp);
        for (int k = 0; k < nx; ++k) y[(i + k) * rows + r] = tmp[k];
      }
    }
  }
}

void matmul_simd_quant(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  const KernelTable& k = detail::active_kernels();
  const detail::QuantDotFn dot = quant_dot_for(k, w.type);
  const int64_t nb = w.cols / kQuantBlock;
  const int64_t wrow = row_bytes(w.type, w.cols);
  thread_local std::vector<BlockQ8A> xq_buf;
  if (static_cast<int64_t>(xq_buf.size()) < n * nb) xq_buf.resize(static_cast<size_t>(n * nb));
  BlockQ8A* xq = xq_buf.data();
  const auto quantize = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) k.quantize_row_q8a(x + i * w.cols, w.cols, xq + i * nb);
  };
  if (n >= 8) {
    pool.parallel_for(n, quantize);
  } else {
    quantize(0, n);
  }
  const auto* base = static_cast<const uint8_t*>(w.data);
  pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
    tile_rows(r0, r1, n, w.rows, y, [&](int64_t r, int64_t i, int nx, float* out) {
      dot(nb, base + r * wrow, xq + i * nb, nb, nx, out);
    });
  });
}

void matmul_simd_float(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  const detail::FloatDotFn dot = float_dot_for(detail::active_kernels(), w.type);
  const int64_t wrow = row_bytes(w.type, w.cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
    tile_rows(r0, r1, n, w.rows, y, [&](int64_t r, int64_t i, int nx, float* out) {
      dot(w.cols, base + r * wrow, x + i * w.cols, w.cols, nx, out);
    });
  });
}

}  // namespace

const char* matmul_path_name(MatmulPath path) {
  switch (path) {
    case MatmulPath::kAuto:
      return "auto";
    case MatmulPath::kSimd:
      return "simd";
    case MatmulPath::kBlas:
      return "blas";
    case MatmulPath::kFloat:
      return "float";
    case MatmulPath::kInt8:
      return "int8";
  }
  return "unknown";
}

MatmulPath choose_matmul_path(WeightType type, int64_t n) {
  // Measured on the SmolLM2 shapes with bench_kernels (README.md): the int8 kernels win up to
  // n = 32 (1.2-1.6x at n = 32, 10-19x at n = 1), break even at n = 64 and lose to OpenBLAS sgemm
  // from n = 128 (0.6-0.8x at n = 128 and 512). F32/F16/BF16 weights follow the same rule (not in
  // the model; unmeasured). Note: Auto is not batch-invariant, Simd is (see matmul.hpp).
  (void)type;
  return n >= kBlasMinRows ? MatmulPath::kBlas : MatmulPath::kSimd;
}

void matmul(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool,
            MatmulPath path) {
  validate(w);
  if (x == nullptr || y == nullptr) throw std::invalid_argument("matmul: x and y must not be null");
  if (n < 0) throw std::invalid_argument("matmul: n=" + std::to_string(n) + " must be >= 0");
  if (n == 0) return;
  if (path == MatmulPath::kAuto) path = choose_matmul_path(w.type, n);
  if (w.data == nullptr && !(path == MatmulPath::kFloat && w.panels != nullptr) &&
      !(path == MatmulPath::kInt8 && w.int8_panels != nullptr)) {
    throw std::invalid_argument(
        std::string("matmul: a panel-only WeightView (data null) runs only on the path its panel "
                    "copy is for (float with panels, int8 with int8_panels), not on ") +
        matmul_path_name(path));
  }
  if (path == MatmulPath::kBlas) {
    detail::matmul_blas(w, x, n, y, pool);
  } else if (path == MatmulPath::kFloat && is_quantized(w.type)) {
    detail::matmul_float_quant(w, x, n, y, pool);
  } else if ((path == MatmulPath::kInt8 && is_quantized(w.type)) || !has_simd_row_kernel(w.type)) {
    // The Simd row kernels read the file's blocks of Q8_0 / Q4_0 / Q4_1 only; the other quantized
    // types run the Int8 path there too (llama.cpp's activation numerics, like Simd).
    detail::matmul_int8_quant(w, x, n, y, pool);
  } else if (is_quantized(w.type)) {
    matmul_simd_quant(w, x, n, y, pool);
  } else {
    matmul_simd_float(w, x, n, y, pool);
  }
}

}  // namespace plinth::cpu
