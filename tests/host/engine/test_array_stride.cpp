// StridedArray and the per-minor strides: an older reader indexing at its own stride sees every
// field it knows, a wider stride pads with zeros, and bad strides or minors are refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/array_stride.hpp"

namespace plinth {
namespace {

std::vector<plinth_sched_result> three_results() {
  return {{1, 16, 17, 0}, {2, 31, 32, 1}, {0xFFFFFFFFFFull, 0, 1, 0}};
}

TEST(ArrayStride, StridesFollowAbiVersions) {
  EXPECT_EQ(sched_result_stride(0), PLINTH_ABI_1_0_SIZEOF_SCHED_RESULT);
  EXPECT_EQ(sched_result_stride(1), PLINTH_ABI_1_1_SIZEOF_SCHED_RESULT);
  EXPECT_EQ(sched_result_stride(2), PLINTH_ABI_1_2_SIZEOF_SCHED_RESULT);
  EXPECT_EQ(sched_result_stride(PLINTH_ABI_MINOR), sizeof(plinth_sched_result));
  EXPECT_EQ(spec_verify_stride(0), PLINTH_ABI_1_0_SIZEOF_SPEC_VERIFY);
  EXPECT_EQ(spec_verify_stride(1), PLINTH_ABI_1_1_SIZEOF_SPEC_VERIFY);
  EXPECT_EQ(spec_verify_stride(2), PLINTH_ABI_1_2_SIZEOF_SPEC_VERIFY);
  EXPECT_EQ(spec_verify_stride(PLINTH_ABI_MINOR), sizeof(plinth_spec_verify));
}

TEST(ArrayStride, NewerMinorIsRefused) {
  EXPECT_THROW(sched_result_stride(PLINTH_ABI_MINOR + 1), std::invalid_argument);
  EXPECT_THROW(spec_verify_stride(PLINTH_ABI_MINOR + 1), std::invalid_argument);
}

TEST(ArrayStride, CurrentStrideIsTheArrayItself) {
  const std::vector<plinth_sched_result> r = three_results();
  const StridedArray<plinth_sched_result> a(r, sched_result_stride(PLINTH_ABI_MINOR));
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a.stride(), sizeof(plinth_sched_result));
  ASSERT_EQ(a.bytes().size(), 3 * sizeof(plinth_sched_result));
  EXPECT_EQ(std::memcmp(a.bytes().data(), r.data(), a.bytes().size()), 0);
  EXPECT_EQ(a.data()[2].seq, 0xFFFFFFFFFFull);
  EXPECT_EQ(a.data()[1].finished, 1u);
}

TEST(ArrayStride, WiderStridePadsWithZeros) {
  const std::vector<plinth_sched_result> r = three_results();
  const size_t stride = sizeof(plinth_sched_result) + 16;  // as if a newer minor added 16 bytes
  const StridedArray<plinth_sched_result> a(r, stride);
  ASSERT_EQ(a.bytes().size(), 3 * stride);
  for (size_t i = 0; i < r.size(); ++i) {
    const std::byte* item = a.bytes().data() + i * stride;
    EXPECT_EQ(std::memcmp(item, &r[i], sizeof(plinth_sched_result)), 0) << i;
    for (size_t b = sizeof(plinth_sched_result); b < stride; ++b) {
      EXPECT_EQ(item[b], std::byte{0}) << i << " byte " << b;
    }
  }
}

// The layout an older reader knows: the first fields of a grown struct.
struct OldItem {
  uint64_t id;
  uint32_t count;
  uint32_t flags;
};
struct GrownItem {
  uint64_t id;
  uint32_t count;
  uint32_t flags;
  uint64_t added;  // past OldItem: an older reader never sees it
};

TEST(ArrayStride, OlderReaderIndexesAtItsStride) {
  const std::vector<GrownItem> items = {{7, 1, 2, 99}, {8, 3, 4, 98}, {9, 5, 6, 97}};
  const StridedArray<GrownItem> a(items, sizeof(OldItem));
  ASSERT_EQ(a.bytes().size(), 3 * sizeof(OldItem));
  const auto* old = reinterpret_cast<const OldItem*>(a.bytes().data());
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(old[i].id, items[i].id);
    EXPECT_EQ(old[i].count, items[i].count);
    EXPECT_EQ(old[i].flags, items[i].flags);
  }
}

TEST(ArrayStride, EmptyArrayHasNoData) {
  const std::vector<plinth_sched_result> none;
  const StridedArray<plinth_sched_result> a(none, sched_result_stride(PLINTH_ABI_MINOR));
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
}

TEST(ArrayStride, BadStridesAreRefused) {
  const std::vector<plinth_sched_result> r = three_results();
  using Array = StridedArray<plinth_sched_result>;
  EXPECT_THROW(Array(r, 0), std::invalid_argument);
  EXPECT_THROW(Array(r, sizeof(plinth_sched_result) + 4), std::invalid_argument);  // misaligned
}

}  // namespace
}  // namespace plinth
