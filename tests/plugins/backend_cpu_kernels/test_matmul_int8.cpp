// MatmulPath::Int8 (matmul_int8.hpp): the scalar and AVX-512 VNNI kernels give the same bits, rows
// are bit-identical for any batch, offset and thread count (docs/architecture.md,
// 'Batch invariance'), weights packed once equal weights packed per call, and the result equals
// the Simd path's activation quantization applied exactly (float64 over the same int8
// activations). Accuracy against float64 of the unquantized activations, within the int8 bound of
// test_util.hpp, is in test_matmul.cpp (path int8).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "kernel_table.hpp"
#include "matmul.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

const WeightType kQuantTypes[] = {WeightType::Q8_0, WeightType::Q4_0, WeightType::Q4_1};

std::vector<float> normal_rows(int64_t n, int64_t cols, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n * cols));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : x) v = normal(rng);
  return x;
}

// Isa::Avx512 runs the VNNI kernel only where the CPU has VNNI; say which one a test compared.
std::string vector_kernel() {
  return cpu_has_avx512_vnni() ? "vnni" : "scalar (CPU lacks AVX-512 VNNI)";
}

// The scalar and the VNNI kernel: same bits for every tile shape (n = 1, 2: wide tiles; 3, 5: one
// tile; 7, 9, 11: two or three near-equal tiles of at most 5 rows), a partial last panel (61 and
// 600 rows) and both panel groupings of run_panels_parallel (61 rows: groups of 2 panels; 600
// rows, 38 panels: groups of 4), at the model's two row lengths.
TEST(MatmulInt8IsaAgreement, ScalarAndVnniGiveTheSameBits) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "CPU lacks AVX-512";
  ThreadPool pool(2);
  std::mt19937 rng(31);
  for (int64_t rows : {61, 600}) {
    for (int64_t cols : {576, 1536}) {
      for (WeightType t : kQuantTypes) {
        const auto raw = random_weights(t, rows, cols, rng);
        const WeightView view{t, raw.data(), rows, cols};
        for (int64_t n : {1, 2, 3, 5, 7, 9, 11}) {
          const auto x = normal_rows(n, cols, rng);
          std::vector<float> ref(static_cast<size_t>(n * rows), NAN), y(ref.size(), NAN);
          {
            IsaScope scope(Isa::Scalar);
            matmul(view, x.data(), n, ref.data(), pool, MatmulPath::Int8);
          }
          {
            IsaScope scope(Isa::Avx512);
            matmul(view, x.data(), n, y.data(), pool, MatmulPath::Int8);
          }
          ASSERT_EQ(0, std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)))
              << vector_kernel() << " vs scalar, " << weight_type_name(t) << " rows=" << rows
              << " cols=" << cols << " n=" << n;
        }
      }
    }
  }
}

// docs/architecture.md, 'Batch invariance': a row's result is bit-identical alone or in any batch,
// at any position, on 1 or 2 threads, on every ISA.
TEST(MatmulInt8BatchInvariance, RowsAreBitIdenticalForEveryBatchAndThreadCount) {
  std::mt19937 rng(37);
  const int64_t rows = 37, cols = 576, total = 512;
  ThreadPool one(1), two(2);
  const auto x = normal_rows(total, cols, rng);
  for (Isa isa : all_isas()) {
    if (!isa_available(isa)) continue;
    IsaScope scope(isa);
    for (WeightType t : kQuantTypes) {
      const auto raw = random_weights(t, rows, cols, rng);
      const WeightView view{t, raw.data(), rows, cols};
      std::vector<float> ref(static_cast<size_t>(total * rows));
      matmul(view, x.data(), total, ref.data(), two, MatmulPath::Int8);
      for (int64_t n : {1, 3, 5, 9, 16, 65, 512}) {
        for (ThreadPool* pool : {&one, &two}) {
          const int64_t off = (n * 7 + 1) % (total - n + 1);
          std::vector<float> y(static_cast<size_t>(n * rows));
          matmul(view, x.data() + off * cols, n, y.data(), *pool, MatmulPath::Int8);
          ASSERT_EQ(0, std::memcmp(y.data(), ref.data() + off * rows, y.size() * sizeof(float)))
              << isa_name(isa) << " " << weight_type_name(t) << " n=" << n << " offset " << off
              << " threads " << pool->size();
        }
      }
    }
  }
}

// Weights packed once in the Int8 order (how backend_cpu runs) give the bits of per-call packing.
TEST(MatmulInt8Panels, PrePackedWeightsGiveTheSameBits) {
  ThreadPool pool(2);
  std::mt19937 rng(41);
  const int64_t rows = 45, cols = 576, n = 9;
  const auto x = normal_rows(n, cols, rng);
  for (WeightType t : kQuantTypes) {
    const auto raw = random_weights(t, rows, cols, rng);
    WeightView view{t, raw.data(), rows, cols};
    std::vector<float> a(static_cast<size_t>(n * rows)), b(a.size(), NAN);
    matmul(view, x.data(), n, a.data(), pool, MatmulPath::Int8);
    std::vector<uint8_t> packed(static_cast<size_t>(detail::packed_bytes(view)));
    detail::pack_weights(view, packed.data(), pool, detail::PanelOrder::Int8);
    view.int8_panels = packed.data();
    matmul(view, x.data(), n, b.data(), pool, MatmulPath::Int8);
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << weight_type_name(t);
  }
}

// Only the activations are rounded: y equals Σ w_j·(dx_b·qx_j) in float64 over the gguf-dequantized
// weights and the same int8 activations, within a few f32 roundings per block (≤ 3 per block in A,
// plus gguf-py's own fl(d·q + m) for Q4_1 weights): 8·nb·2⁻²⁴·Σ|w_j x̂_j|.
TEST(MatmulInt8Exactness, OnlyTheActivationsAreRounded) {
  ThreadPool pool(2);
  std::mt19937 rng(43);
  const int64_t rows = 29, cols = 1536, n = 3, nb = cols / 32;
  const auto x = normal_rows(n, cols, rng);
  std::vector<BlockQ8A> xq(static_cast<size_t>(n * nb));
  for (int64_t i = 0; i < n; ++i) {
    detail::scalar_kernels().quantize_row_q8a(x.data() + i * cols, cols, xq.data() + i * nb);
  }
  for (Isa isa : all_isas()) {
    if (!isa_available(isa)) continue;
    IsaScope scope(isa);
    for (WeightType t : kQuantTypes) {
      const auto raw = random_weights(t, rows, cols, rng);
      std::vector<float> wdeq(static_cast<size_t>(rows * cols));
      dequantize(t, raw.data(), 0, rows * cols, wdeq.data());
      const WeightView view{t, raw.data(), rows, cols};
      std::vector<float> y(static_cast<size_t>(n * rows), NAN);
      matmul(view, x.data(), n, y.data(), pool, MatmulPath::Int8);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < rows; ++r) {
          double sum = 0.0, abs_sum = 0.0;
          for (int64_t j = 0; j < cols; ++j) {
            const BlockQ8A& blk = xq[static_cast<size_t>(i * nb + j / 32)];
            const double xhat = static_cast<double>(blk.d) * blk.qs[j % 32];
            sum += wdeq[r * cols + j] * xhat;
            abs_sum += std::fabs(wdeq[r * cols + j] * xhat);
          }
          const double bound = 8.0 * nb * std::ldexp(1.0, -24) * abs_sum + 1e-30;
          ASSERT_LE(std::fabs(y[i * rows + r] - sum), bound)
              << isa_name(isa) << " " << weight_type_name(t) << " y[" << i << ", " << r << "]";
        }
      }
    }
  }
}

}  // namespace
}  // namespace plinth::cpu::test
