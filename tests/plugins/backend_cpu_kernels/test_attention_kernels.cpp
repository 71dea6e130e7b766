// The grouped-query attention kernels dots_heads / weighted_sum_heads (kernel_table.hpp): for
// every head, the same bits as the single-head dots / weighted_sum (so fusing the heads of a KV
// group changes no logit), for row counts around the 8-row reduction groups, head counts around
// the kernels' head chunks, and head sizes with and without the 16-column fast path; rows are
// scattered in memory as the paged KV cache's are. The single-head kernels follow dot and axpy
// (tested against float64 in test_float_ops.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_table.hpp"
#include "test_util.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::test {
namespace {

// Some IEEE half near f (the bits of a float rounded toward zero to 10 mantissa bits; normal
// range only, which N(0, 1) samples stay in): the tests need half values, not a rounding rule.
uint16_t fp32_to_fp16_for_test(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // tiny: ±0
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | ((x >> 13) & 0x3ffu));
}

class AttentionKernelsTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_available(GetParam())) GTEST_SKIP() << "CPU lacks " << isa_name(GetParam());
  }
};

TEST_P(AttentionKernelsTest, HeadsKernelsEqualTheSingleHeadKernelsBitForBit) {
  IsaScope scope(GetParam());
  const detail::KernelTable& k = detail::active_kernels();
  std::mt19937 rng(53);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t dim : {64, 128, 48, 80}) {
    for (int64_t count : {1, 7, 8, 9, 37, 300}) {
      // Rows in a pool twice as large, in shuffled order (like slots of scattered KV blocks).
      std::vector<float> pool(static_cast<size_t>(2 * count * dim));
      for (float& v : pool) v = normal(rng);
      std::vector<int64_t> slot(static_cast<size_t>(2 * count));
      for (size_t i = 0; i < slot.size(); ++i) slot[i] = static_cast<int64_t>(i);
      std::shuffle(slot.begin(), slot.end(), rng);
      std::vector<const float*> rows(static_cast<size_t>(count));
      for (int64_t j = 0; j < count; ++j)
        rows[static_cast<size_t>(j)] = pool.data() + slot[j] * dim;
      for (int nh : {1, 3, 4, 5, 8, 9}) {
        const std::string what = std::string(isa_name(GetParam())) + " dim=" + std::to_string(dim) +
                                 " count=" + std::to_string(count) + " heads=" + std::to_string(nh);
        std::vector<std::vector<float>> q(static_cast<size_t>(nh), std::vector<float>(dim));
        std::vector<std::vector<float>> p(static_cast<size_t>(nh), std::vector<float>(count));
        for (auto& v : q)
          for (float& x : v) x = normal(rng);
        for (auto& v : p)
          for (float& x : v) x = normal(rng);
        std::vector<const float*> qp, pp;
        for (auto& v : q) qp.push_back(v.data());
        for (auto& v : p) pp.push_back(v.data());
        std::vector<std::vector<float>> s(static_cast<size_t>(nh), std::vector<float>(count, NAN));
        std::vector<std::vector<float>> o(static_cast<size_t>(nh), std::vector<float>(dim, NAN));
        std::vector<float*> sp, op;
        for (auto& v : s) sp.push_back(v.data());
        for (auto& v : o) op.push_back(v.data());
        k.dots_heads(qp.data(), nh, rows.data(), count, dim, sp.data());
        k.weighted_sum_heads(pp.data(), nh, rows.data(), count, dim, op.data());
        for (int h = 0; h < nh; ++h) {
          std::vector<float> s1(static_cast<size_t>(count)), o1(static_cast<size_t>(dim));
          k.dots(qp[h], rows.data(), count, dim, s1.data());
          k.weighted_sum(pp[h], rows.data(), count, dim, o1.data());
          ASSERT_EQ(0, std::memcmp(s1.data(), sp[h], s1.size() * sizeof(float)))
              << what << ": dots_heads, head " << h;
          ASSERT_EQ(0, std::memcmp(o1.data(), op[h], o1.size() * sizeof(float)))
              << what << ": weighted_sum_heads, head " << h;
        }
      }
    }
  }
}

// An F16 KV cache read in place: the f16 kernels give the bits of the f32 kernels on the rows
// converted to f32 (exact), for head sizes that are multiples of 16 (the only ones attention
// passes them; it widens other rows itself).
TEST_P(AttentionKernelsTest, HalfRowKernelsEqualTheF32KernelsOnConvertedRows) {
  IsaScope scope(GetParam());
  const detail::KernelTable& k = detail::active_kernels();
  std::mt19937 rng(59);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t dim : {64, 128, 16}) {
    for (int64_t count : {1, 8, 9, 37, 300}) {
      std::vector<uint16_t> pool16(static_cast<size_t>(2 * count * dim));
      for (uint16_t& h : pool16) h = fp32_to_fp16_for_test(normal(rng));
      std::vector<float> pool32(pool16.size());
      for (size_t i = 0; i < pool16.size(); ++i) pool32[i] = fp16_to_fp32(pool16[i]);
      std::vector<int64_t> slot(static_cast<size_t>(2 * count));
      for (size_t i = 0; i < slot.size(); ++i) slot[i] = static_cast<int64_t>(i);
      std::shuffle(slot.begin(), slot.end(), rng);
      std::vector<const uint16_t*> rows16(static_cast<size_t>(count));
      std::vector<const float*> rows32(static_cast<size_t>(count));
      for (int64_t j = 0; j < count; ++j) {
        rows16[static_cast<size_t>(j)] = pool16.data() + slot[j] * dim;
        rows32[static_cast<size_t>(j)] = pool32.data() + slot[j] * dim;
      }
      const int nh = 3;
      std::vector<std::vector<float>> q(nh, std::vector<float>(dim)),
          p(nh, std::vector<float>(count));
      for (auto& v : q)
        for (float& x : v) x = normal(rng);
      for (auto& v : p)
        for (float& x : v) x = normal(rng);
      std::vector<const float*> qp, pp;
      for (auto& v : q) qp.push_back(v.data());
      for (auto& v : p) pp.push_back(v.data());
      std::vector<std::vector<float>> s16(nh, std::vector<float>(count)), s32 = s16;
      std::vector<std::vector<float>> o16(nh, std::vector<float>(dim)), o32 = o16;
      std::vector<float*> s16p, s32p, o16p, o32p;
      for (int h = 0; h < nh; ++h) {
        s16p.push_back(s16[h].data());
        s32p.push_back(s32[h].data());
        o16p.push_back(o16[h].data());
        o32p.push_back(o32[h].data());
      }
      k.dots_heads_f16(qp.data(), nh, rows16.data(), count, dim, s16p.data());
      k.dots_heads(qp.data(), nh, rows32.data(), count, dim, s32p.data());
      k.weighted_sum_heads_f16(pp.data(), nh, rows16.data(), count, dim, o16p.data());
      k.weighted_sum_heads(pp.data(), nh, rows32.data(), count, dim, o32p.data());
      for (int h = 0; h < nh; ++h) {
        ASSERT_EQ(0, std::memcmp(s16[h].data(), s32[h].data(), s16[h].size() * sizeof(float)))
            << isa_name(GetParam()) << " dim=" << dim << " count=" << count << " head " << h;
        ASSERT_EQ(0, std::memcmp(o16[h].data(), o32[h].data(), o16[h].size() * sizeof(float)))
            << isa_name(GetParam()) << " dim=" << dim << " count=" << count << " head " << h;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AttentionKernelsTest, ::testing::ValuesIn(all_isas()),
                         [](const auto& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace plinth::cpu::test
