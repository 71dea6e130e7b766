// BlockPool: free list, ref counts, all-or-nothing allocation, double-free detection.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "block_pool.hpp"

using plinth::kv_paged::BlockPool;

TEST(BlockPool, RejectsZeroBlocks) {
  EXPECT_THROW(BlockPool(0), std::invalid_argument);
}

TEST(BlockPool, AllocateHandsOutAscendingIdsThenLifo) {
  BlockPool pool(4);
  std::vector<int32_t> got;
  ASSERT_TRUE(pool.allocate(2, got));
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(pool.num_free(), 2u);
  EXPECT_EQ(pool.num_used(), 2u);
  EXPECT_TRUE(pool.unref(0));
  std::vector<int32_t> again;
  ASSERT_TRUE(pool.allocate(1, again));
  EXPECT_EQ(again[0], 0);  // the block freed last comes back first (LIFO)
}

TEST(BlockPool, AllocateIsAllOrNothing) {
  BlockPool pool(3);
  std::vector<int32_t> got;
  EXPECT_FALSE(pool.allocate(4, got));
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(pool.num_free(), 3u);
  EXPECT_TRUE(pool.allocate(3, got));
  EXPECT_FALSE(pool.allocate(1, got));
  EXPECT_EQ(got.size(), 3u);
}

TEST(BlockPool, RefUnrefCounts) {
  BlockPool pool(2);
  std::vector<int32_t> got;
  ASSERT_TRUE(pool.allocate(1, got));
  pool.ref(got[0]);
  EXPECT_EQ(pool.ref_count(got[0]), 2u);
  EXPECT_FALSE(pool.unref(got[0]));
  EXPECT_TRUE(pool.unref(got[0]));
  EXPECT_TRUE(pool.is_free(got[0]));
}

TEST(BlockPool, DoubleFreeIsDetectedAndChangesNothing) {
  BlockPool pool(2);
  std::vector<int32_t> got;
  ASSERT_TRUE(pool.allocate(1, got));
  EXPECT_TRUE(pool.unref(got[0]));
  EXPECT_THROW(pool.unref(got[0]), std::invalid_argument);
  EXPECT_EQ(pool.num_free(), 2u);
  EXPECT_EQ(pool.free_list().size(), 2u);
}

TEST(BlockPool, RefOfFreeOrOutOfRangeBlockThrows) {
  BlockPool pool(2);
  EXPECT_THROW(pool.ref(0), std::invalid_argument);
  EXPECT_THROW(pool.ref(2), std::invalid_argument);
  EXPECT_THROW(pool.ref(-1), std::invalid_argument);
  EXPECT_THROW(pool.unref(5), std::invalid_argument);
}

TEST(BlockPool, CheckUnrefCountsDuplicates) {
  BlockPool pool(2);
  std::vector<int32_t> got;
  ASSERT_TRUE(pool.allocate(1, got));
  const int32_t once[] = {0};
  const int32_t twice[] = {0, 0};
  EXPECT_NO_THROW(pool.check_unref(once));
  EXPECT_THROW(pool.check_unref(twice), std::invalid_argument);
  pool.ref(0);
  EXPECT_NO_THROW(pool.check_unref(twice));
}
