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

// nh arrays of n floats (queries, probabilities or outputs of nh heads) and their pointer table.
struct PerHead {
  std::vector<std::vector<float>> data;
  std::vector<float*> ptr;
  PerHead(int nh, int64_t n, std::mt19937* rng)  // rng: normal values; null: NaN (outputs)
      : data(static_cast<size_t>(nh), std::vector<float>(static_cast<size_t>(n), NAN)) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& v : data) {
      if (rng != nullptr)
        for (float& x : v) x = normal(*rng);
      ptr.push_back(v.data());
    }
  }
  const float* const* in() const { return ptr.data(); }
  float* const* out() { return ptr.data(); }
  bool same_bits(const PerHead& o) const {
    for (size_t h = 0; h < data.size(); ++h) {
      if (std::memcmp(data[h].data(), o.data[h].data(), data[h].size() * sizeof(float)) != 0)
        return false;
    }
    return true;
  }
};

// `count` row pointers into a pool of 2·count rows of `dim`, in shuffled order (like the slots of
// scattered KV blocks); `slot` gives the order, so that two pools can be addressed alike.
template <class T>
std::vector<const T*> scattered(const std::vector<T>& pool, const std::vector<int64_t>& slot,
                                int64_t count, int64_t dim) {
  std::vector<const T*> rows(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) rows[static_cast<size_t>(j)] = pool.data() + slot[j] * dim;
  return rows;
}

std::vector<int64_t> shuffled_slots(int64_t count, std::mt19937& rng) {
  std::vector<int64_t> slot(static_cast<size_t>(2 * count));
  for (size_t i = 0; i < slot.size(); ++i) slot[i] = static_cast<int64_t>(i);
  std::shuffle(slot.begin(), slot.end(), rng);
  return slot;
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
  for (int64_t dim : {64, 128, 48, 80, 256, 272}) {
    for (int64_t count : {1, 7, 8, 9, 16, 17, 37, 300}) {
      std::vector<float> pool(static_cast<size_t>(2 * count * dim));
      for (float& v : pool) v = normal(rng);
      const auto rows = scattered(pool, shuffled_slots(count, rng), count, dim);
      // 8 and more: the AVX-512 table's tiled form (kTiledMinQueries), 4 queries per pass.
      for (int nh : {1, 3, 4, 5, 8, 9, 10, 11, 48}) {
        PerHead q(nh, dim, &rng), p(nh, count, &rng), s(nh, count, nullptr), o(nh, dim, nullptr);
        k.dots_heads(q.in(), nh, rows.data(), count, dim, s.out());
        k.weighted_sum_heads(p.in(), nh, rows.data(), count, dim, o.out());
        PerHead s1(nh, count, nullptr), o1(nh, dim, nullptr);
        for (int h = 0; h < nh; ++h) {
          k.dots(q.ptr[h], rows.data(), count, dim, s1.ptr[h]);
          k.weighted_sum(p.ptr[h], rows.data(), count, dim, o1.ptr[h]);
        }
        const std::string what = std::string(isa_name(GetParam())) + " dim=" + std::to_string(dim) +
                                 " count=" + std::to_string(count) + " heads=" + std::to_string(nh);
        ASSERT_TRUE(s.same_bits(s1)) << what << ": dots_heads";
        ASSERT_TRUE(o.same_bits(o1)) << what << ": weighted_sum_heads";
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
  for (int64_t dim : {64, 128, 16, 272}) {
    for (int64_t count : {1, 8, 9, 16, 37, 300}) {
      std::vector<uint16_t> pool16(static_cast<size_t>(2 * count * dim));
      for (uint16_t& h : pool16) h = fp32_to_fp16_for_test(normal(rng));
      std::vector<float> pool32(pool16.size());
      for (size_t i = 0; i < pool16.size(); ++i) pool32[i] = fp16_to_fp32(pool16[i]);
      const std::vector<int64_t> slot = shuffled_slots(count, rng);
      const auto rows16 = scattered(pool16, slot, count, dim);
      const auto rows32 = scattered(pool32, slot, count, dim);
      for (int nh : {3, 13}) {  // 13: the tiled form on AVX-512
        PerHead q(nh, dim, &rng), p(nh, count, &rng);
        PerHead s16(nh, count, nullptr), s32(nh, count, nullptr);
        PerHead o16(nh, dim, nullptr), o32(nh, dim, nullptr);
        k.dots_heads_f16(q.in(), nh, rows16.data(), count, dim, s16.out());
        k.dots_heads(q.in(), nh, rows32.data(), count, dim, s32.out());
        k.weighted_sum_heads_f16(p.in(), nh, rows16.data(), count, dim, o16.out());
        k.weighted_sum_heads(p.in(), nh, rows32.data(), count, dim, o32.out());
        const std::string what = std::string(isa_name(GetParam())) + " dim=" + std::to_string(dim) +
                                 " count=" + std::to_string(count) + " heads=" + std::to_string(nh);
        ASSERT_TRUE(s16.same_bits(s32)) << what << ": dots_heads_f16";
        ASSERT_TRUE(o16.same_bits(o32)) << what << ": weighted_sum_heads_f16";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AttentionKernelsTest, ::testing::ValuesIn(all_isas()),
                         [](const auto& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace plinth::cpu::test
