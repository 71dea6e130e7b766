// MatmulPath::kInt8 (matmul_int8.hpp): the scalar, AVX2, AVX-VNNI and AVX-512 VNNI kernels give the
// same bits (also on extreme operands that would saturate vpmaddubsw), rows
// are bit-identical for any batch, offset and thread count (docs/architecture.md,
// 'Batch invariance'), weights packed once equal weights packed per call, and the result equals
// the Simd path's activation quantization applied exactly (float64 over the same int8
// activations). Accuracy against float64 of the unquantized activations, within the int8 bound of
// test_util.hpp, is in test_matmul.cpp (path int8).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "fixture.hpp"
#include "kernel_table.hpp"
#include "matmul.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

// The types whose file blocks the extreme-operand test rewrites by hand.
const WeightType kClassicTypes[] = {WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1};

std::vector<float> normal_rows(int64_t n, int64_t cols, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n * cols));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : x) v = normal(rng);
  return x;
}

// Forces an Int8 kernel (isa.hpp) for one scope, the ISA left at the best one.
class Int8KernelScope {
 public:
  explicit Int8KernelScope(Int8Kernel k) { set_int8_kernel(k); }
  ~Int8KernelScope() { set_int8_kernel(best_int8_kernel()); }
  Int8KernelScope(const Int8KernelScope&) = delete;
  Int8KernelScope& operator=(const Int8KernelScope&) = delete;
};

// The vector Int8 kernels this CPU runs (each is compared with the scalar one).
std::vector<Int8Kernel> vector_kernels() {
  std::vector<Int8Kernel> ks;
  for (Int8Kernel k : {Int8Kernel::kAvx2, Int8Kernel::kAvxVnni, Int8Kernel::kAvx512Vnni}) {
    if (int8_kernel_supported(k)) ks.push_back(k);
  }
  return ks;
}

// y[n, rows] by the Int8 path with kernel k (Scalar also forces the scalar ISA).
std::vector<float> int8_matmul(Int8Kernel k, const WeightView& view, const std::vector<float>& x,
                               int64_t n, ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n * view.rows), NAN);
  Int8KernelScope scope(k);
  EXPECT_EQ(k, int8_kernel());
  matmul(view, x.data(), n, y.data(), pool, MatmulPath::kInt8);
  return y;
}

TEST(MatmulInt8Dispatch, ForcingAKernelAndTheIsaSelectsIt) {
  EXPECT_STREQ("avx-vnni", int8_kernel_name(Int8Kernel::kAvxVnni));
  if (std::getenv("PLINTH_INT8_KERNEL") == nullptr) {
    EXPECT_EQ(best_int8_kernel(), int8_kernel());
  }
  {
    IsaScope scope(Isa::kScalar);
    EXPECT_EQ(Int8Kernel::kScalar, int8_kernel());
  }
  if (isa_available(Isa::kAvx2)) {
    IsaScope scope(Isa::kAvx2);  // no AVX-512 kernel under Isa::kAvx2
    EXPECT_NE(Int8Kernel::kAvx512Vnni, int8_kernel());
    EXPECT_TRUE(int8_kernel_supported(int8_kernel()));
  }
  for (Int8Kernel k : vector_kernels()) {
    Int8KernelScope scope(k);
    EXPECT_EQ(k, int8_kernel()) << int8_kernel_name(k);
  }
  if (!int8_kernel_supported(Int8Kernel::kAvx512Vnni)) {
    EXPECT_THROW(set_int8_kernel(Int8Kernel::kAvx512Vnni), std::invalid_argument);
  }
}

// Every vector kernel gives the scalar kernel's bits for every tile shape (n = 1 .. 6 covers
// every tile of up to 5 rows and one more; 7, 9, 11: two or three near-equal tiles), a partial
// last panel (61 and 600 rows) and both panel groupings of run_panels_parallel (61 rows: groups
// of 2 panels; 600 rows, 38 panels: groups of 4), at odd block counts (1, 3, 5 blocks of 32) and
// the model's two row lengths.
TEST(MatmulInt8KernelAgreement, EveryKernelGivesTheScalarBits) {
  const auto kernels = vector_kernels();
  if (kernels.empty()) GTEST_SKIP() << "CPU has no vector Int8 kernel (no AVX2)";
  ThreadPool pool(2);
  std::mt19937 rng(31);
  for (int64_t rows : {61, 600}) {
    for (int64_t cols : {32, 96, 160, 576, 1536}) {
      if (rows == 600 && cols < 576) continue;
      for (WeightType t : kQuantTypes) {
        if (block_elems(t) > cols && cols != 32) continue;  // 256-element types: 256, 768, 1536
        const int64_t tc = fit_cols(t, cols);
        const auto raw = random_weights(t, rows, tc, rng);
        const WeightView view{t, raw.data(), rows, tc};
        for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 9, 11}) {
          const auto x = normal_rows(n, tc, rng);
          const auto ref = int8_matmul(Int8Kernel::kScalar, view, x, n, pool);
          for (Int8Kernel k : kernels) {
            const auto y = int8_matmul(k, view, x, n, pool);
            ASSERT_EQ(0, std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)))
                << int8_kernel_name(k) << " vs scalar, " << weight_type_name(t) << " rows=" << rows
                << " cols=" << cols << " n=" << n;
          }
        }
      }
    }
  }
}

// Extreme operands, where vpmaddubsw would saturate with the wrong operand choice (Q8_0 stored as
// q + 128 = 255 times qx = 127 gives an int16 pair sum of 64770): weights all +127, all −128,
// alternating, or random among the extremes (Q4: nibbles 0 / 15), against activations that all
// quantize to ±127 (equal magnitudes: all +, all −, alternating, random signs). Every kernel
// equals the scalar one bit for bit, and the scalar one equals float64 over the same int8 values.
TEST(MatmulInt8KernelAgreement, ExtremeValuesGiveTheScalarBits) {
  ThreadPool pool(2);
  std::mt19937 rng(53);
  std::uniform_int_distribution<int> coin(0, 1);
  const int64_t rows = 40, cols = 256, nb = cols / 32, n = 6;
  for (WeightType t : kClassicTypes) {
    auto raw = random_weights(t, rows, cols, rng);  // sane f16 scales; quants replaced below
    const int64_t bb = block_bytes(t);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* blk = raw.data() + (r * nb + b) * bb;
        const int64_t off = t == WeightType::kQ8_0 ? 2 : (t == WeightType::kQ4_1 ? 4 : 2);
        const int64_t nq = t == WeightType::kQ8_0 ? 32 : 16;
        const uint8_t hi = t == WeightType::kQ8_0 ? 0x7f : 0xff;  // +127 / nibbles 15, 15
        const uint8_t lo = t == WeightType::kQ8_0 ? 0x80 : 0x00;  // −128 / nibbles 0, 0
        for (int64_t q = 0; q < nq; ++q) {
          const int mode = static_cast<int>(r % 4);
          const bool high = mode == 0 || (mode == 2 && q % 2 == 0) || (mode == 3 && coin(rng));
          uint8_t v = high ? hi : lo;
          if (t != WeightType::kQ8_0 && mode == 3)
            v = static_cast<uint8_t>(coin(rng) ? 0xf0 : 0x0f);
          blk[off + q] = v;
        }
      }
    }
    std::vector<float> x(static_cast<size_t>(n * cols));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < cols; ++c) {
        const int mode = static_cast<int>(i % 4);
        const bool neg = mode == 1 || (mode == 2 && c % 2 == 1) || (mode == 3 && coin(rng));
        x[i * cols + c] = neg ? -0.75f : 0.75f;
      }
    }
    const WeightView view{t, raw.data(), rows, cols};
    const auto ref = int8_matmul(Int8Kernel::kScalar, view, x, n, pool);
    for (Int8Kernel k : vector_kernels()) {
      const auto y = int8_matmul(k, view, x, n, pool);
      ASSERT_EQ(0, std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)))
          << int8_kernel_name(k) << " vs scalar, " << weight_type_name(t);
    }
    // The oracle itself: every activation is ±127·d_x exactly, so float64 over the dequantized
    // weights gives y within the f32 roundings of the formula.
    std::vector<BlockQ8A> xq(static_cast<size_t>(n * nb));
    std::vector<float> wdeq(static_cast<size_t>(rows * cols));
    dequantize(t, raw.data(), 0, rows * cols, wdeq.data());
    for (int64_t i = 0; i < n; ++i) {
      detail::scalar_kernels().quantize_row_q8a(x.data() + i * cols, cols, xq.data() + i * nb);
      for (int64_t j = 0; j < cols; ++j) {
        ASSERT_EQ(127, std::abs(xq[static_cast<size_t>(i * nb + j / 32)].qs[j % 32]));
      }
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) {
          const BlockQ8A& blk = xq[static_cast<size_t>(i * nb + j / 32)];
          const double xhat = static_cast<double>(blk.d) * blk.qs[j % 32];
          sum += wdeq[r * cols + j] * xhat;
          abs_sum += std::fabs(wdeq[r * cols + j] * xhat);
        }
        ASSERT_LE(std::fabs(ref[i * rows + r] - sum),
                  8.0 * nb * std::ldexp(1.0, -24) * abs_sum + 1e-30)
            << weight_type_name(t) << " y[" << i << ", " << r << "]";
      }
    }
  }
}

// docs/architecture.md, 'Batch invariance': a row's result is bit-identical alone or in any batch,
// at any position, on 1 or 2 threads, on every ISA and with every Int8 kernel.
TEST(MatmulInt8BatchInvariance, RowsAreBitIdenticalForEveryBatchAndThreadCount) {
  std::mt19937 rng(37);
  const int64_t rows = 37, cols0 = 576, total = 512;
  ThreadPool one(1), two(2);
  const auto x = normal_rows(total, fit_cols(WeightType::kQ4_K, cols0), rng);
  std::vector<Int8Kernel> kernels = vector_kernels();
  kernels.insert(kernels.begin(), Int8Kernel::kScalar);
  for (Isa isa : all_isas()) {
    if (!isa_available(isa)) continue;
    IsaScope scope(isa);
    for (Int8Kernel k : kernels) {
      // The ISA limits the kernel (isa.hpp): none under Scalar, no AVX-512 one under Avx2.
      if ((isa == Isa::kScalar && k != Int8Kernel::kScalar) ||
          (isa == Isa::kAvx2 && k == Int8Kernel::kAvx512Vnni)) {
        continue;
      }
      Int8KernelScope kscope(k);
      for (WeightType t : kQuantTypes) {
        const int64_t cols = fit_cols(t, cols0);
        const auto raw = random_weights(t, rows, cols, rng);
        const WeightView view{t, raw.data(), rows, cols};
        std::vector<float> ref(static_cast<size_t>(total * rows));
        matmul(view, x.data(), total, ref.data(), two, MatmulPath::kInt8);
        for (int64_t n : {1, 3, 5, 9, 16, 65, 512}) {
          for (ThreadPool* pool : {&one, &two}) {
            const int64_t off = (n * 7 + 1) % (total - n + 1);
            std::vector<float> y(static_cast<size_t>(n * rows));
            matmul(view, x.data() + off * cols, n, y.data(), *pool, MatmulPath::kInt8);
            ASSERT_EQ(0, std::memcmp(y.data(), ref.data() + off * rows, y.size() * sizeof(float)))
                << isa_name(isa) << " " << int8_kernel_name(int8_kernel()) << " "
                << weight_type_name(t) << " n=" << n << " offset " << off << " threads "
                << pool->size();
          }
        }
      }
    }
  }
}

// Weights packed once in the Int8 order (how backend_cpu runs) give the bits of per-call packing.
TEST(MatmulInt8Panels, PrePackedWeightsGiveTheSameBits) {
  ThreadPool pool(2);
  std::mt19937 rng(41);
  const int64_t rows = 45, n = 9;
  const auto x = normal_rows(n, 768, rng);
  for (WeightType t : kQuantTypes) {
    const int64_t cols = fit_cols(t, 576);
    const auto raw = random_weights(t, rows, cols, rng);
    WeightView view{t, raw.data(), rows, cols};
    std::vector<float> a(static_cast<size_t>(n * rows)), b(a.size(), NAN);
    matmul(view, x.data(), n, a.data(), pool, MatmulPath::kInt8);
    std::vector<uint8_t> packed(static_cast<size_t>(detail::packed_bytes(view)));
    detail::pack_weights(view, packed.data(), pool, detail::PanelOrder::kInt8);
    view.int8_panels = packed.data();
    matmul(view, x.data(), n, b.data(), pool, MatmulPath::kInt8);
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << weight_type_name(t);
  }
}

// Projections packed end to end (pack_stacked: how backend_cpu fuses q/k/v and gate/up) give, in
// one matmul, each part's own bits, on both panel paths, for every tile shape; the panel-only
// view refuses the other paths, and parts that cannot stack are refused.
TEST(MatmulStackedPanels, OneMatmulGivesEachPartsBits) {
  ThreadPool pool(2);
  std::mt19937 rng(47);
  for (WeightType t : kQuantTypes) {
    const int64_t cols = fit_cols(t, 160);
    std::vector<std::vector<uint8_t>> raws;
    std::vector<WeightView> parts;
    for (int64_t rows : {48, 16, 32}) {
      raws.push_back(random_weights(t, rows, cols, rng));
      parts.push_back(WeightView{t, raws.back().data(), rows, cols});
    }
    ASSERT_TRUE(detail::can_stack(parts));
    for (MatmulPath path : {MatmulPath::kInt8, MatmulPath::kFloat}) {
      const auto order =
          path == MatmulPath::kInt8 ? detail::PanelOrder::kInt8 : detail::PanelOrder::kFloat;
      std::vector<uint8_t> buf(static_cast<size_t>(detail::stacked_bytes(parts)));
      const WeightView stacked = detail::pack_stacked(parts, buf.data(), pool, order);
      ASSERT_EQ(96, stacked.rows);
      EXPECT_EQ(nullptr, stacked.data);
      for (int64_t n : {1, 2, 3, 5, 7}) {
        const auto x = normal_rows(n, cols, rng);
        std::vector<float> y(static_cast<size_t>(n * stacked.rows), NAN);
        matmul(stacked, x.data(), n, y.data(), pool, path);
        int64_t first = 0;
        for (const WeightView& part : parts) {
          std::vector<float> own(static_cast<size_t>(n * part.rows), NAN);
          matmul(part, x.data(), n, own.data(), pool, path);
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(0, std::memcmp(y.data() + i * stacked.rows + first,
                                     own.data() + i * part.rows, part.rows * sizeof(float)))
                << weight_type_name(t) << " " << matmul_path_name(path) << " n=" << n
                << " part at row " << first << " token " << i;
          }
          first += part.rows;
        }
      }
      const MatmulPath other = path == MatmulPath::kInt8 ? MatmulPath::kFloat : MatmulPath::kInt8;
      std::vector<float> x(static_cast<size_t>(cols), 1.0f), y(static_cast<size_t>(96));
      for (MatmulPath p : {other, MatmulPath::kSimd, MatmulPath::kBlas, MatmulPath::kAuto}) {
        EXPECT_THROW(matmul(stacked, x.data(), 1, y.data(), pool, p), std::invalid_argument)
            << matmul_path_name(p);
      }
    }
  }
  const auto q8 = random_weights(WeightType::kQ8_0, 16, 64, rng);
  const auto q4 = random_weights(WeightType::kQ4_1, 16, 64, rng);
  const auto q4_wide = random_weights(WeightType::kQ4_1, 16, 96, rng);
  const auto q4_odd = random_weights(WeightType::kQ4_1, 24, 64, rng);
  const WeightView a{WeightType::kQ8_0, q8.data(), 16, 64};
  const WeightView b{WeightType::kQ4_1, q4.data(), 16, 64};
  EXPECT_FALSE(detail::can_stack({}));
  EXPECT_FALSE(detail::can_stack({a, b}));  // types differ
  EXPECT_FALSE(detail::can_stack({b, WeightView{WeightType::kQ4_1, q4_wide.data(), 16, 96}}));
  EXPECT_FALSE(detail::can_stack({b, WeightView{WeightType::kQ4_1, q4_odd.data(), 24, 64}}));
  std::vector<uint8_t> buf(static_cast<size_t>(detail::stacked_bytes({a, b})));
  EXPECT_THROW(detail::pack_stacked({a, b}, buf.data(), pool, detail::PanelOrder::kInt8),
               std::invalid_argument);
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
      matmul(view, x.data(), n, y.data(), pool, MatmulPath::kInt8);
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
