// matmul against float64 dot products of gguf-dequantized weights (error bound in test_util.hpp),
// on every weight type, both ISAs, 1 and 2 threads, both paths.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "dequantize.hpp"
#include "fixture.hpp"
#include "matmul.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

bool quantized(WeightType t) {
  return block_elems(t) > 1;
}

// Checks y[n, rows] against the reference from wdeq[rows, cols] and x[n, cols].
void expect_close(const std::vector<float>& y, const std::vector<float>& wdeq, const float* x,
                  int64_t n, int64_t rows, int64_t cols, bool quantize_act,
                  const std::string& what) {
  int failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < rows; ++r) {
      const RefDot ref = ref_dot(wdeq.data() + r * cols, x + i * cols, cols, quantize_act);
      const double got = y[static_cast<size_t>(i * rows + r)];
      if (!(std::fabs(got - ref.value) <= ref.bound) && failures++ < 5) {
        ADD_FAILURE() << what << ": y[" << i << ", " << r << "] = " << got << ", reference "
                      << ref.value << ", |diff| " << std::fabs(got - ref.value) << " > bound "
                      << ref.bound;
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

using Param = std::tuple<Isa, int, MatmulPath>;

class MatmulTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!isa_available(std::get<0>(GetParam())))
      GTEST_SKIP() << "CPU lacks " << isa_name(std::get<0>(GetParam()));
  }
  Isa isa() const { return std::get<0>(GetParam()); }
  int threads() const { return std::get<1>(GetParam()); }
  MatmulPath path() const { return std::get<2>(GetParam()); }
  // Whether this call quantizes the activations (the bound then includes that rounding).
  bool quantizes(WeightType t, int64_t n) const {
    const MatmulPath p = path() == MatmulPath::kAuto ? choose_matmul_path(t, n) : path();
    return (p == MatmulPath::kSimd || p == MatmulPath::kInt8) && quantized(t);
  }
};

TEST_P(MatmulTest, FixtureEveryTypeMatchesFloat64Reference) {
  IsaScope scope(isa());
  ThreadPool pool(threads());
  const auto& f = quant_fixture();
  for (WeightType t : kAllTypes) {
    const auto& w = f.weights.at(t);
    const WeightView view{t, w.raw.data(), f.rows, f.cols};
    for (int64_t n : {int64_t{1}, int64_t{3}, f.n}) {
      std::vector<float> y(static_cast<size_t>(n * f.rows), NAN);
      matmul(view, f.x.data(), n, y.data(), pool, path());
      expect_close(y, w.dequant, f.x.data(), n, f.rows, f.cols, quantizes(t, n),
                   std::string(weight_type_name(t)) + " n=" + std::to_string(n));
    }
  }
}

TEST_P(MatmulTest, ModelShapedRandomWeights) {
  IsaScope scope(isa());
  ThreadPool pool(threads());
  std::mt19937 rng(42);
  const int64_t rows = 193;
  for (WeightType t : kAllTypes) {
    const int64_t cols = fit_cols(t, 576);
    const auto raw = random_weights(t, rows, cols, rng);
    std::vector<float> wdeq(static_cast<size_t>(rows * cols));
    dequantize(t, raw.data(), 0, rows * cols, wdeq.data());
    const WeightView view{t, raw.data(), rows, cols};
    for (int64_t n : {1, 5, 17}) {
      std::vector<float> x(static_cast<size_t>(n * cols));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (auto& v : x) v = normal(rng);
      std::vector<float> y(static_cast<size_t>(n * rows), NAN);
      matmul(view, x.data(), n, y.data(), pool, path());
      expect_close(y, wdeq, x.data(), n, rows, cols, quantizes(t, n),
                   std::string(weight_type_name(t)) + " n=" + std::to_string(n));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, MatmulTest,
    ::testing::Combine(::testing::ValuesIn(all_isas()), ::testing::Values(1, 2),
                       ::testing::Values(MatmulPath::kSimd, MatmulPath::kBlas, MatmulPath::kAuto,
                                         MatmulPath::kFloat, MatmulPath::kInt8)),
    [](const auto& p) {
      return std::string(isa_name(std::get<0>(p.param))) + "_t" +
             std::to_string(std::get<1>(p.param)) + "_" + matmul_path_name(std::get<2>(p.param));
    });

// Same quantized activations on both ISAs: results differ only by f32 summation order.
TEST(MatmulIsaAgreement, ScalarAndAvx2GiveTheSameInt8Result) {
  if (!isa_available(Isa::kAvx2)) GTEST_SKIP() << "CPU lacks AVX2";
  ThreadPool pool(2);
  std::mt19937 rng(7);
  const int64_t rows = 61, cols = 576, n = 6;
  std::vector<float> x(static_cast<size_t>(n * cols));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : x) v = normal(rng);
  for (WeightType t : {WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1}) {
    const auto raw = random_weights(t, rows, cols, rng);
    std::vector<float> wdeq(static_cast<size_t>(rows * cols));
    dequantize(t, raw.data(), 0, rows * cols, wdeq.data());
    const WeightView view{t, raw.data(), rows, cols};
    std::vector<float> ys(static_cast<size_t>(n * rows)), ya(ys.size());
    {
      IsaScope scope(Isa::kScalar);
      matmul(view, x.data(), n, ys.data(), pool, MatmulPath::kSimd);
    }
    matmul(view, x.data(), n, ya.data(), pool, MatmulPath::kSimd);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t r = 0; r < rows; ++r) {
        const auto k = static_cast<size_t>(i * rows + r);
        const double tol = ref_dot(wdeq.data() + r * cols, x.data() + i * cols, cols, false).bound;
        ASSERT_NEAR(ys[k], ya[k], tol) << weight_type_name(t) << " [" << i << ", " << r << "]";
      }
    }
  }
}

// docs/architecture.md, 'Batch invariance': temperature-0 output must not depend on batching. The
// Simd path guarantees that a row's result is bit-identical alone, in a batch, and with any thread
// count.
TEST(MatmulBatchInvariance, SimdRowsDoNotDependOnTheBatch) {
  std::mt19937 rng(11);
  const int64_t rows = 77, n = 9;
  std::vector<float> x(static_cast<size_t>(n * 768));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : x) v = normal(rng);
  for (Isa isa : all_isas()) {
    if (!isa_available(isa)) continue;
    IsaScope scope(isa);
    for (WeightType t : kAllTypes) {
      const int64_t cols = fit_cols(t, 576);
      const auto raw = random_weights(t, rows, cols, rng);
      const WeightView view{t, raw.data(), rows, cols};
      ThreadPool one(1), two(2);
      std::vector<float> batch(static_cast<size_t>(n * rows));
      matmul(view, x.data(), n, batch.data(), two, MatmulPath::kSimd);
      for (int64_t i = 0; i < n; ++i) {
        std::vector<float> alone(static_cast<size_t>(rows));
        matmul(view, x.data() + i * cols, 1, alone.data(), i % 2 ? one : two, MatmulPath::kSimd);
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_EQ(alone[static_cast<size_t>(r)], batch[static_cast<size_t>(i * rows + r)])
              << isa_name(isa) << " " << weight_type_name(t) << " row " << i << " out " << r;
        }
      }
    }
  }
}

TEST(MatmulErrors, BadArgumentsThrowNamedErrors) {
  ThreadPool pool(1);
  const auto& f = quant_fixture();
  const auto& w = f.weights.at(WeightType::kQ4_1);
  float y[64];
  const WeightView ok{WeightType::kQ4_1, w.raw.data(), f.rows, f.cols};
  EXPECT_THROW(matmul(ok, nullptr, 1, y, pool), std::invalid_argument);
  EXPECT_THROW(matmul(ok, f.x.data(), -1, y, pool), std::invalid_argument);
  EXPECT_THROW(matmul({WeightType::kQ4_1, nullptr, 4, 32}, f.x.data(), 1, y, pool),
               std::invalid_argument);
  try {
    matmul({WeightType::kQ4_1, w.raw.data(), 4, 48}, f.x.data(), 1, y, pool);
    FAIL() << "cols=48 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cols=48"), std::string::npos) << e.what();
  }
  matmul(ok, f.x.data(), 0, y, pool);  // n == 0: nothing to do
}

}  // namespace
}  // namespace plinth::cpu::test
