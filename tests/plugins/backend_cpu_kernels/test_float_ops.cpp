// f32 helpers against float64 references, on both ISAs and lengths that exercise the tails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "float_ops.hpp"
#include "kernel_table.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

class FloatOpsTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_available(GetParam())) GTEST_SKIP() << "CPU lacks " << isa_name(GetParam());
  }
  std::vector<float> random(int64_t n, float sd) {
    std::normal_distribution<float> d(0.0f, sd);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& e : v) e = d(rng_);
    return v;
  }
  std::mt19937 rng_{3};
};

constexpr int64_t kLengths[] = {1, 7, 8, 17, 64, 577};

TEST_P(FloatOpsTest, RmsNormMatchesDouble) {
  IsaScope scope(GetParam());
  const int64_t n = 3, d = 576;
  auto x = random(n * d, 2.0f);
  const auto w = random(d, 1.0f);
  std::vector<float> out(x.size());
  rmsnorm(x.data(), w.data(), n, d, 1e-5f, out.data());
  for (int64_t i = 0; i < n; ++i) {
    double ss = 0.0;
    for (int64_t j = 0; j < d; ++j) ss += double(x[i * d + j]) * x[i * d + j];
    const double inv = 1.0 / std::sqrt(ss / d + 1e-5);
    for (int64_t j = 0; j < d; ++j) {
      const double ref = x[i * d + j] * inv * w[j];
      ASSERT_NEAR(out[i * d + j], ref, 1e-5 * std::fabs(ref) + 1e-7) << i << "," << j;
    }
  }
  rmsnorm(x.data(), w.data(), n, d, 1e-5f, x.data());  // in place gives the same
  EXPECT_EQ(x, out);
  EXPECT_THROW(rmsnorm(x.data(), w.data(), 1, 0, 1e-5f, out.data()), std::invalid_argument);
}

TEST_P(FloatOpsTest, SiluMulMatchesDouble) {
  IsaScope scope(GetParam());
  for (int64_t n : kLengths) {
    auto g = random(n, 4.0f);
    g[0] = -100.0f;  // saturated: silu → -0
    if (n > 1) g[1] = 100.0f;
    const auto u = random(n, 1.0f);
    std::vector<float> out(static_cast<size_t>(n));
    silu_mul(g.data(), u.data(), n, out.data());
    for (int64_t i = 0; i < n; ++i) {
      const double ref = g[i] / (1.0 + std::exp(-double(g[i]))) * u[i];
      ASSERT_NEAR(out[i], ref, 2e-6 * std::fabs(ref) + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(FloatOpsTest, SoftmaxMatchesDouble) {
  IsaScope scope(GetParam());
  for (int64_t n : kLengths) {
    auto x = random(n, 5.0f);
    x[0] += 1000.0f;                                            // large logits must not overflow
    if (n > 2) x[2] = -std::numeric_limits<float>::infinity();  // masked position
    const auto in = x;
    softmax(x.data(), n);
    double m = -INFINITY, sum = 0.0;
    for (float v : in) m = std::max(m, double(v));
    for (float v : in) sum += std::exp(double(v) - m);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = std::exp(double(in[i]) - m) / sum;
      ASSERT_NEAR(x[i], ref, 2e-6 * ref + 1e-37) << "n=" << n << " i=" << i;
    }
  }
  float one = 3.0f;
  EXPECT_THROW(softmax(&one, 0), std::invalid_argument);
}

TEST_P(FloatOpsTest, DotAxpyScaleMatchDouble) {
  IsaScope scope(GetParam());
  for (int64_t n : kLengths) {
    const auto a = random(n, 1.0f);
    const auto b = random(n, 1.0f);
    double ref = 0.0, mag = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(a[i]) * b[i];
      mag += std::fabs(double(a[i]) * b[i]);
    }
    EXPECT_NEAR(dot(a.data(), b.data(), n), ref, (n + 4) * 0x1p-24 * mag) << "n=" << n;
    auto y = b;
    axpy(0.75f, a.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(y[i], b[i] + 0.75 * a[i], 2e-7 * (std::fabs(b[i]) + std::fabs(a[i])));
    }
    const auto before = y;
    scale(y.data(), -2.0f, n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], -2.0f * before[i]);  // exact: power of two
  }
}

// The AVX-512 element-wise helpers promise the AVX2 versions' bits (kernels_float_avx512.cpp):
// every length from 1 to 70 (full 16s, the 8-lane group, the scalar tail), saturated and masked
// inputs included.
TEST(FloatOpsAvx512, SiluMulExpSubSumAndScaleGiveTheAvx2Bits) {
  if (!isa_available(Isa::kAvx512)) GTEST_SKIP() << "CPU lacks avx512";
  const detail::KernelTable& a2 = detail::avx2_kernels();
  const detail::KernelTable& a5 = detail::avx512_kernels();
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 6.0f);
  const auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  };
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> g(static_cast<size_t>(n)), u(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      g[i] = d(rng);
      u[i] = d(rng);
    }
    g[0] = -100.0f;
    if (n > 3) g[3] = 95.0f;
    std::vector<float> o2(g.size()), o5(g.size());
    a2.silu_mul(g.data(), u.data(), o2.data(), n);
    a5.silu_mul(g.data(), u.data(), o5.data(), n);
    ASSERT_TRUE(same(o2, o5)) << "silu_mul n=" << n;

    std::vector<float> x2 = g, x5 = g;
    if (n > 5) x2[5] = x5[5] = -std::numeric_limits<float>::infinity();
    const float m = a2.max(x2.data(), n);
    const float s2 = a2.exp_sub_sum(x2.data(), m, n);
    const float s5 = a5.exp_sub_sum(x5.data(), m, n);
    ASSERT_TRUE(same(x2, x5)) << "exp_sub_sum values n=" << n;
    ASSERT_EQ(std::memcmp(&s2, &s5, sizeof s2), 0) << "exp_sub_sum sum n=" << n;
    a2.scale(x2.data(), 1.0f / s2, n);
    a5.scale(x5.data(), 1.0f / s5, n);
    ASSERT_TRUE(same(x2, x5)) << "scale n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, FloatOpsTest, ::testing::ValuesIn(all_isas()),
                         [](const auto& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace plinth::cpu::test
