// MatmulPath::kFloat: accuracy against float64 dot products of gguf-dequantized weights with the
// error bound derived in matmul_float.hpp, batch invariance (bit-identical rows for any n, offset
// and thread count), and the same bits from the scalar, AVX2 and AVX-512 kernels and from
// pre-packed panels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "fixture.hpp"
#include "matmul.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"
#include "plinth/ggml_format.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

constexpr double kU = 1.0 / (1 << 24);  // f32 unit roundoff

// The reference y = Σ_j w_j·x_j in float64 over the gguf-dequantized row `wdeq`, and the bound of
// matmul_float.hpp for the Float path's arithmetic on the raw row:
//   quantized:  (2·nb + 40)·u·(Σ_j |d_b q_j x_j| + Σ_b |m_b|·Σ_{j∈b}|x_j|) + u·Σ_j |w_j x_j|
//               (the last term: gguf-py rounds Q4_1 weights to fl(d·q + m); the kernel does not)
//   F32/F16/BF16 (the f32 FMA dot kernels): (cols/8 + 16)·u·Σ_j |w_j x_j|
RefDot float_ref(WeightType t, const uint8_t* raw, const float* wdeq, const float* x,
                 int64_t cols) {
  double sum = 0.0, abs_wx = 0.0;
  for (int64_t j = 0; j < cols; ++j) {
    sum += static_cast<double>(wdeq[j]) * x[j];
    abs_wx += std::fabs(static_cast<double>(wdeq[j]) * x[j]);
  }
  if (block_elems(t) == 1) {
    return {sum, (static_cast<double>(cols) / 8 + 16) * kU * abs_wx + 1e-30};
  }
  // Every quantized type through the SDK's split_block: value = D·q (+ M) per 16 elements. The
  // K6 / K3 / K2 panels take up to 4 roundings per block in A (D_0, D_1, M_0, M_1), the others 2.
  const ggml::Format& f = ggml::format(static_cast<int32_t>(t));
  const int64_t nb = cols / 32;
  double terms = 0.0;
  int8_t q[256];
  float d16[16], m16[16];
  for (int64_t blk = 0; blk < cols / f.block_elems; ++blk) {
    ggml::split_block(f, raw + blk * f.block_bytes, q, d16, m16);
    for (uint32_t j = 0; j < f.block_elems; ++j) {
      const double xj = std::fabs(static_cast<double>(x[blk * f.block_elems + j]));
      terms += std::fabs(static_cast<double>(d16[j / 16]) * q[j]) * xj +
               std::fabs(static_cast<double>(m16[j / 16])) * xj;
    }
  }
  const int64_t per_block = detail::panel_halves(panel_kind(t)) ? 4 : 2;
  return {sum, static_cast<double>(per_block * nb + 40) * kU * terms + kU * abs_wx + 1e-30};
}

// Checks the Float path's y[n, rows] for raw weights; returns the largest |y − ref| / Σ|w x|.
double expect_float_close(WeightType t, const std::vector<uint8_t>& raw,
                          const std::vector<float>& wdeq, const float* x, const float* y, int64_t n,
                          int64_t rows, int64_t cols, const std::string& what) {
  int failures = 0;
  double worst = 0.0;
  const int64_t rb = row_bytes(t, cols);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xi = x + i * cols;
      const RefDot ref = float_ref(t, raw.data() + r * rb, wdeq.data() + r * cols, xi, cols);
      const double got = y[i * rows + r];
      const double err = std::fabs(got - ref.value);
      double scale = 0.0;
      for (int64_t j = 0; j < cols; ++j) scale += std::fabs(double(wdeq[r * cols + j]) * xi[j]);
      worst = std::max(worst, err / (scale + 1e-30));
      if (!(err <= ref.bound) && failures++ < 5) {
        ADD_FAILURE() << what << ": y[" << i << ", " << r << "] = " << got << ", reference "
                      << ref.value << ", |diff| " << err << " > bound " << ref.bound;
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
  return worst;
}

std::vector<float> normal_rows(int64_t n, int64_t cols, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n * cols));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : x) v = normal(rng);
  return x;
}

using Param = std::tuple<Isa, int>;

class MatmulFloatTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!isa_available(std::get<0>(GetParam())))
      GTEST_SKIP() << "CPU lacks " << isa_name(std::get<0>(GetParam()));
  }
  Isa isa() const { return std::get<0>(GetParam()); }
  int threads() const { return std::get<1>(GetParam()); }
};

TEST_P(MatmulFloatTest, FixtureEveryTypeWithinDerivedBound) {
  IsaScope scope(isa());
  ThreadPool pool(threads());
  const auto& f = quant_fixture();
  for (WeightType t : kAllTypes) {
    const auto& w = f.weights.at(t);
    const WeightView view{t, w.raw.data(), f.rows, f.cols};
    for (int64_t n : {int64_t{1}, int64_t{3}, f.n}) {
      std::vector<float> y(static_cast<size_t>(n * f.rows), NAN);
      matmul(view, f.x.data(), n, y.data(), pool, MatmulPath::kFloat);
      const std::string what = std::string(weight_type_name(t)) + " n=" + std::to_string(n);
      const double worst =
          expect_float_close(t, w.raw, w.dequant, f.x.data(), y.data(), n, f.rows, f.cols, what);
      EXPECT_LT(worst, 1e-5) << what << ": relative error vs float64 of the gguf weights";
    }
  }
}

// The model's row lengths: 576 (18 blocks, not a multiple of 8) and 1536 (48 blocks).
TEST_P(MatmulFloatTest, ModelShapedRandomWeights) {
  IsaScope scope(isa());
  ThreadPool pool(threads());
  std::mt19937 rng(5);
  for (int64_t cols0 : {576, 1536}) {
    const int64_t rows = 67;
    for (WeightType t : kAllTypes) {
      const int64_t cols = fit_cols(t, cols0);  // 768 for the 256-element types
      const auto raw = random_weights(t, rows, cols, rng);
      std::vector<float> wdeq(static_cast<size_t>(rows * cols));
      dequantize(t, raw.data(), 0, rows * cols, wdeq.data());
      const WeightView view{t, raw.data(), rows, cols};
      for (int64_t n : {1, 6, 17}) {
        const auto x = normal_rows(n, cols, rng);
        std::vector<float> y(static_cast<size_t>(n * rows), NAN);
        matmul(view, x.data(), n, y.data(), pool, MatmulPath::kFloat);
        const std::string what = std::string(weight_type_name(t)) +
                                 " cols=" + std::to_string(cols) + " n=" + std::to_string(n);
        const double worst =
            expect_float_close(t, raw, wdeq, x.data(), y.data(), n, rows, cols, what);
        EXPECT_LT(worst, 1e-5) << what;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, MatmulFloatTest,
                         ::testing::Combine(::testing::ValuesIn(all_isas()),
                                            ::testing::Values(1, 2)),
                         [](const auto& p) {
                           return std::string(isa_name(std::get<0>(p.param))) + "_t" +
                                  std::to_string(std::get<1>(p.param));
                         });

// docs/architecture.md, 'Batch invariance': a row's result is bit-identical alone, in any batch at
// any position, on 1 or 2 threads. 37 output rows: a partial last panel; n = 1, 3, 65 are not
// multiples of the 6-row tiles, and n <= 2 takes the wide tiles.
TEST(MatmulFloatBatchInvariance, RowsAreBitIdenticalForEveryBatchAndThreadCount) {
  std::mt19937 rng(17);
  const int64_t rows = 37, total = 512;
  ThreadPool one(1), two(2);
  // 576 and 1536 columns: the two block counts of the model (18 and 48 blocks per row).
  for (int64_t cols0 : {576, 1536}) {
    const auto x = normal_rows(total, fit_cols(WeightType::kQ4_K, cols0), rng);
    for (Isa isa : all_isas()) {
      if (!isa_available(isa)) continue;
      IsaScope scope(isa);
      for (WeightType t : kAllTypes) {
        // F32/F16/BF16 run the Simd path's float kernels (no activation groups): one length will
        // do.
        if (cols0 != 576 && block_elems(t) == 1) continue;
        const int64_t cols = fit_cols(t, cols0);
        const auto raw = random_weights(t, rows, cols, rng);
        const WeightView view{t, raw.data(), rows, cols};
        std::vector<float> ref(static_cast<size_t>(total * rows));
        matmul(view, x.data(), total, ref.data(), two, MatmulPath::kFloat);
        for (int64_t n : {1, 3, 5, 7, 16, 65, 512}) {
          for (ThreadPool* pool : {&one, &two}) {
            // Rows [off, off + n): moves a row to another position within its activation group.
            const int64_t off = (n * 7 + 1) % (total - n + 1);
            std::vector<float> y(static_cast<size_t>(n * rows));
            matmul(view, x.data() + off * cols, n, y.data(), *pool, MatmulPath::kFloat);
            ASSERT_EQ(0, std::memcmp(y.data(), ref.data() + off * rows, y.size() * sizeof(float)))
                << isa_name(isa) << " " << weight_type_name(t) << " cols=" << cols << " n=" << n
                << " offset " << off << " threads " << pool->size();
          }
        }
      }
    }
  }
}

// matmul_float.hpp: every step is one fused multiply-add, so the scalar (std::fma), AVX2 and
// AVX-512 kernels give the same bits, for every tile shape (n = 1, 2 take the wide tiles; 5 one
// tile; 7 and 13 two or three near-equal tiles), for row counts that leave a partial last panel
// (61, 600) and for both panel groupings of run_panels_parallel (2 panels at 61 rows, 4 at 600).
TEST(MatmulFloatIsaAgreement, EveryIsaGivesTheSameBits) {
  ThreadPool pool(2);
  std::mt19937 rng(23);
  const int64_t cols = 1536;
  for (int64_t rows : {61, 600})
    for (WeightType t : kQuantTypes) {
      const auto raw = random_weights(t, rows, cols, rng);
      const WeightView view{t, raw.data(), rows, cols};
      for (int64_t n : {1, 2, 5, 7, 13}) {
        const auto x = normal_rows(n, cols, rng);
        std::vector<float> ref(static_cast<size_t>(n * rows));
        {
          IsaScope scope(Isa::kScalar);
          matmul(view, x.data(), n, ref.data(), pool, MatmulPath::kFloat);
        }
        for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
          if (!isa_available(isa)) continue;
          IsaScope scope(isa);
          std::vector<float> y(ref.size(), NAN);
          matmul(view, x.data(), n, y.data(), pool, MatmulPath::kFloat);
          ASSERT_EQ(0, std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)))
              << isa_name(isa) << " vs scalar, " << weight_type_name(t) << " rows=" << rows
              << " n=" << n;
        }
      }
    }
}

// Weights packed once (how backend_cpu runs) give the bits of weights packed per call.
TEST(MatmulFloatPanels, PrePackedWeightsGiveTheSameBits) {
  ThreadPool pool(2);
  std::mt19937 rng(29);
  const int64_t rows = 45, n = 9;
  const auto x = normal_rows(n, 768, rng);
  for (WeightType t : kQuantTypes) {
    const int64_t cols = fit_cols(t, 576);
    const auto raw = random_weights(t, rows, cols, rng);
    WeightView view{t, raw.data(), rows, cols};
    std::vector<float> a(static_cast<size_t>(n * rows)), b(a.size(), NAN);
    matmul(view, x.data(), n, a.data(), pool, MatmulPath::kFloat);
    std::vector<uint8_t> packed(static_cast<size_t>(detail::packed_bytes(view)));
    detail::pack_weights(view, packed.data(), pool);
    view.panels = packed.data();
    matmul(view, x.data(), n, b.data(), pool, MatmulPath::kFloat);
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << weight_type_name(t);
  }
}

// Panels hold the file's bytes: a packed matrix is exactly as large as the file's blocks of its
// rows padded to a multiple of 16 (both orders), for every quantized type, and two packings of the
// same bytes are the same bytes (no uninitialised padding).
TEST(MatmulFloatPanels, PanelsAreTheFilesSize) {
  ThreadPool pool(2);
  std::mt19937 rng(41);
  for (WeightType t : kQuantTypes) {
    for (int64_t rows : {16, 45}) {
      const int64_t cols = fit_cols(t, 1536);
      const auto raw = random_weights(t, rows, cols, rng);
      const WeightView view{t, raw.data(), rows, cols};
      const int64_t padded_rows = detail::panel_count(rows) * detail::kPanelRows;
      EXPECT_EQ(detail::packed_bytes(view), padded_rows * row_bytes(t, cols))
          << weight_type_name(t) << " rows=" << rows;
      for (detail::PanelOrder order : {detail::PanelOrder::kFloat, detail::PanelOrder::kInt8}) {
        std::vector<uint8_t> a(static_cast<size_t>(detail::packed_bytes(view)), 0x55);
        std::vector<uint8_t> b(a.size(), 0xaa);
        detail::pack_weights(view, a.data(), pool, order);
        detail::pack_weights(view, b.data(), pool, order);
        EXPECT_EQ(a, b) << weight_type_name(t) << ": a byte of the panels was left unwritten";
      }
    }
  }
}

// The point of the Float path: much closer to the float reference than the int8 Simd path.
TEST(MatmulFloatAccuracy, ErrorIsFarBelowTheInt8Path) {
  ThreadPool pool(1);
  const auto& f = quant_fixture();
  const auto& w = f.weights.at(WeightType::kQ4_1);
  const WeightView view{WeightType::kQ4_1, w.raw.data(), f.rows, f.cols};
  std::vector<float> yf(static_cast<size_t>(f.n * f.rows)), ys(yf.size());
  matmul(view, f.x.data(), f.n, yf.data(), pool, MatmulPath::kFloat);
  matmul(view, f.x.data(), f.n, ys.data(), pool, MatmulPath::kSimd);
  double ef = 0.0, es = 0.0;
  for (int64_t i = 0; i < f.n; ++i) {
    for (int64_t r = 0; r < f.rows; ++r) {
      const double ref =
          ref_dot(w.dequant.data() + r * f.cols, f.x.data() + i * f.cols, f.cols, false).value;
      ef = std::max(ef, std::fabs(yf[i * f.rows + r] - ref));
      es = std::max(es, std::fabs(ys[i * f.rows + r] - ref));
    }
  }
  EXPECT_LT(ef * 100, es) << "float path max error " << ef << ", int8 path " << es;
}

}  // namespace
}  // namespace plinth::cpu::test
