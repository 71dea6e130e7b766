// dequantize and the activation quantizer against gguf-py (tests/fixtures/quant).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "dequantize.hpp"
#include "fixture.hpp"
#include "kernel_table.hpp"
#include "test_util.hpp"

namespace plinth::cpu::test {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

class DequantizeTest : public ::testing::TestWithParam<WeightType> {};

TEST_P(DequantizeTest, WholeMatrixIsBitExactWithGguf) {
  const auto& f = quant_fixture();
  const auto& w = f.weights.at(GetParam());
  std::vector<float> out(static_cast<size_t>(f.rows * f.cols), -1.0f);
  dequantize(GetParam(), w.raw.data(), 0, f.rows * f.cols, out.data());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(bits(out[i]), bits(w.dequant[i])) << weight_type_name(GetParam()) << " element " << i
                                                << ": " << out[i] << " vs gguf " << w.dequant[i];
  }
}

TEST_P(DequantizeTest, RowAndBlockRangesMatchTheWholeMatrix) {
  const auto& f = quant_fixture();
  const auto& w = f.weights.at(GetParam());
  // One embedding row (row 5) and a range that starts mid-row (block 3 of row 2, 64 elements;
  // the second super-block of row 2 for the 256-element types).
  const bool super = block_elems(GetParam()) == 256;
  for (auto [first, count] :
       {std::pair<int64_t, int64_t>{5 * f.cols, f.cols},
        std::pair<int64_t, int64_t>{2 * f.cols + (super ? 256 : 96), super ? 256 : 64}}) {
    std::vector<float> out(static_cast<size_t>(count));
    dequantize(GetParam(), w.raw.data(), first, count, out.data());
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(bits(out[static_cast<size_t>(i)]), bits(w.dequant[static_cast<size_t>(first + i)]))
          << "first=" << first << " i=" << i;
    }
  }
}

TEST_P(DequantizeTest, RejectsMisalignedRangesAndNulls) {
  float out[64];
  const auto& w = quant_fixture().weights.at(GetParam());
  EXPECT_THROW(dequantize(GetParam(), nullptr, 0, 32, out), std::invalid_argument);
  EXPECT_THROW(dequantize(GetParam(), w.raw.data(), -32, 32, out), std::invalid_argument);
  if (block_elems(GetParam()) > 1) {
    EXPECT_THROW(dequantize(GetParam(), w.raw.data(), 16, 32, out), std::invalid_argument);
    EXPECT_THROW(dequantize(GetParam(), w.raw.data(), 0, 33, out), std::invalid_argument);
  }
  if (block_elems(GetParam()) == 256) {  // a 32-element range inside a super-block
    EXPECT_THROW(dequantize(GetParam(), w.raw.data(), 32, 32, out), std::invalid_argument);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DequantizeTest, ::testing::ValuesIn(kAllTypes),
                         [](const auto& p) { return std::string(weight_type_name(p.param)); });

class ActivationQuantTest : public ::testing::TestWithParam<Isa> {};

// The activation quantizer must reproduce gguf's Q8_0 quantization: same int8 values (including
// round-half-away-from-zero ties) and the same scale up to its f16 storage in gguf.
TEST_P(ActivationQuantTest, MatchesGgufQ8_0) {
  if (!isa_available(GetParam())) GTEST_SKIP() << "CPU lacks " << isa_name(GetParam());
  const auto& f = quant_fixture();
  IsaScope scope(GetParam());
  const detail::KernelTable& k = detail::active_kernels();  // the ISA's own table
  const int64_t nb = f.cols / kQuantBlock;
  ASSERT_EQ(static_cast<int64_t>(f.x_q8_0.size()), f.n * nb * 34);
  std::vector<BlockQ8A> q(static_cast<size_t>(nb));
  for (int64_t i = 0; i < f.n; ++i) {
    k.quantize_row_q8a(f.x.data() + i * f.cols, f.cols, q.data());
    for (int64_t b = 0; b < nb; ++b) {
      BlockQ8_0 ref;
      std::memcpy(&ref, f.x_q8_0.data() + (i * nb + b) * 34, sizeof ref);
      int sum = 0;
      for (int j = 0; j < kQuantBlock; ++j) {
        ASSERT_EQ(q[b].qs[j], ref.qs[j]) << "row " << i << " block " << b << " elem " << j;
        sum += q[b].qs[j];
      }
      const float ref_d = fp16_to_fp32(ref.d);
      // gguf stores d as f16: our f32 d must round to it (half an f16 ulp, 2^-25 when subnormal).
      EXPECT_NEAR(q[b].d, ref_d, std::max(std::fabs(ref_d) * 0x1p-11, 0x1p-25))
          << "row " << i << " block " << b;
      EXPECT_FLOAT_EQ(q[b].s, q[b].d * static_cast<float>(sum));
    }
  }
}

// The AVX-512 quantizer promises the AVX2 version's bits (kernels_quantize_avx512.cpp): random
// rows with exact ties (v · id = n + 0.5 after the block's scale), ±0, a zero block and blocks
// whose maximum sits in either half.
TEST(ActivationQuantAvx512, GivesTheAvx2Blocks) {
  if (!isa_available(Isa::kAvx512)) GTEST_SKIP() << "CPU lacks avx512";
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int64_t cols = 64 * kQuantBlock;
  std::vector<float> x(static_cast<size_t>(cols));
  for (float& v : x) v = normal(rng);
  for (int64_t j = 0; j < kQuantBlock; ++j) x[static_cast<size_t>(j)] = 0.0f;  // block 0: zero
  // block 1: max 127 so id = 1, halves are ties; signed zeros among them.
  for (int64_t j = 0; j < kQuantBlock; ++j) {
    x[static_cast<size_t>(kQuantBlock + j)] = static_cast<float>(j - 16) + 0.5f;
  }
  x[kQuantBlock] = 127.0f;
  x[kQuantBlock + 1] = -0.0f;
  x[3 * kQuantBlock + 31] = -40.0f;  // a maximum in the high half
  std::vector<BlockQ8A> q2(static_cast<size_t>(cols / kQuantBlock));
  std::vector<BlockQ8A> q5(q2.size());
  detail::avx2_kernels().quantize_row_q8a(x.data(), cols, q2.data());
  detail::avx512_kernels().quantize_row_q8a(x.data(), cols, q5.data());
  for (size_t b = 0; b < q2.size(); ++b) {
    ASSERT_EQ(std::memcmp(&q2[b], &q5[b], sizeof(BlockQ8A)), 0) << "block " << b;
  }
  EXPECT_EQ(q5[1].qs[20], 5);   // 4.5 rounds away from zero
  EXPECT_EQ(q5[1].qs[11], -5);  // -4.5 too
}

INSTANTIATE_TEST_SUITE_P(Isas, ActivationQuantTest, ::testing::ValuesIn(all_isas()),
                         [](const auto& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace plinth::cpu::test
