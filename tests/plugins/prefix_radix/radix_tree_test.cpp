// RadixTree alone, over a counting BlockRefs: granularity, splits, sharing, namespaces, locks,
// LRU order, eviction counts, reference accounting, the cap, destruction.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "radix_tree.hpp"

using plinth::prefix_radix::RadixTree;
using plinth::test::CountingRefs;
using plinth::test::iota_tokens;

namespace {

std::vector<int32_t> to_vec(std::span<const int32_t> s) {
  return {s.begin(), s.end()};
}

class RadixTreeTest : public testing::Test {
 protected:
  CountingRefs refs;
  RadixTree tree{4, refs};
};

}  // namespace

TEST_F(RadixTreeTest, MatchOnEmpty) {
  auto m = tree.match(iota_tokens(12), "");
  EXPECT_EQ(m.num_tokens, 0u);
  EXPECT_TRUE(m.blocks.empty());
  EXPECT_EQ(m.handle, 0u);
  EXPECT_EQ(tree.stats().num_queried_tokens, 12u);
  EXPECT_EQ(tree.stats().num_hit_tokens, 0u);
  EXPECT_EQ(tree.num_handles(), 0u);
  tree.release(0);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, FullBlockGranularity) {
  // 10 tokens = 2 full blocks + 2 tokens; the third (partial) block is not cached.
  EXPECT_EQ(tree.insert(iota_tokens(10), "", std::vector<int32_t>{5, 6, 7}), 2u);
  EXPECT_EQ(refs.held(5), 1);
  EXPECT_EQ(refs.held(6), 1);
  EXPECT_EQ(refs.held(7), 0);
  EXPECT_EQ(tree.num_cached_blocks(), 2u);
  auto m = tree.match(iota_tokens(10), "");
  EXPECT_EQ(m.num_tokens, 8u);
  EXPECT_EQ(to_vec(m.blocks), (std::vector<int32_t>{5, 6}));
  auto m7 = tree.match(iota_tokens(7), "");  // 1 full block of the query
  EXPECT_EQ(m7.num_tokens, 4u);
  EXPECT_EQ(to_vec(m7.blocks), (std::vector<int32_t>{5}));
  EXPECT_EQ(tree.match(iota_tokens(3), "").handle, 0u);  // no full block queried
  EXPECT_EQ(tree.stats().num_hit_tokens, 12u);
  tree.check_invariants();
  // Too few block ids for the full blocks: refused, nothing changed.
  EXPECT_THROW(tree.insert(iota_tokens(12, 100), "", std::vector<int32_t>{1, 2}),
               std::invalid_argument);
  EXPECT_EQ(tree.num_cached_blocks(), 2u);
  // Fewer than block_size tokens: nothing to cache.
  EXPECT_EQ(tree.insert(iota_tokens(3, 100), "", std::vector<int32_t>{}), 0u);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, PartialMatchSplitsNode) {
  ASSERT_EQ(tree.insert(iota_tokens(12), "", std::vector<int32_t>{0, 1, 2}), 3u);
  EXPECT_EQ(tree.num_nodes(), 1u);
  auto m = tree.match(iota_tokens(8), "");  // ends inside the 3-block edge
  EXPECT_EQ(m.num_tokens, 8u);
  EXPECT_EQ(tree.num_nodes(), 2u);
  EXPECT_EQ(tree.num_evictable_blocks(), 1u);  // only the matched part is locked
  tree.check_invariants();
  EXPECT_EQ(tree.evict(3), 1u);  // the unlocked lower part, block 2
  EXPECT_EQ(refs.unref_log, (std::vector<int32_t>{2}));
  tree.check_invariants();
  tree.release(m.handle);
  EXPECT_EQ(tree.num_evictable_blocks(), 2u);
  EXPECT_EQ(tree.evict(3), 2u);
  EXPECT_EQ(refs.total(), 0);
  EXPECT_EQ(tree.num_nodes(), 0u);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, DifferByOneTokenInBlockTwoSharesOnlyBlockOne) {
  auto a = iota_tokens(12);
  auto b = a;
  b[5] = 99;  // block 2 (tokens 4..7) differs
  ASSERT_EQ(tree.insert(a, "", std::vector<int32_t>{0, 1, 2}), 3u);
  ASSERT_EQ(tree.insert(b, "", std::vector<int32_t>{3, 4, 5}), 2u);
  EXPECT_EQ(refs.held(3), 0);  // the caller's copy of the shared block is not taken
  EXPECT_EQ(refs.held(4), 1);
  EXPECT_EQ(tree.num_cached_blocks(), 5u);
  EXPECT_EQ(tree.num_nodes(), 3u);  // shared block 0, then two branches
  EXPECT_EQ(to_vec(tree.match(a, "").blocks), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(to_vec(tree.match(b, "").blocks), (std::vector<int32_t>{0, 4, 5}));
  auto c = a;
  c[4] = 98;
  EXPECT_EQ(to_vec(tree.match(c, "").blocks), (std::vector<int32_t>{0}));
  tree.check_invariants();
}

TEST_F(RadixTreeTest, SaltsIsolate) {
  auto t = iota_tokens(8);
  ASSERT_EQ(tree.insert(t, "a", std::vector<int32_t>{0, 1}), 2u);
  EXPECT_EQ(tree.match(t, "b").num_tokens, 0u);
  EXPECT_EQ(tree.match(t, "").num_tokens, 0u);
  const std::string with_nul("a\0", 2);  // byte-exact: "a" and "a\0" differ
  EXPECT_EQ(tree.match(t, with_nul).num_tokens, 0u);
  EXPECT_EQ(tree.match(t, "a").num_tokens, 8u);
  // The same tokens in another namespace get their own blocks, never the cached ones.
  EXPECT_THROW(tree.insert(t, "b", std::vector<int32_t>{0, 1}), std::invalid_argument);
  EXPECT_EQ(tree.insert(t, "b", std::vector<int32_t>{2, 3}), 2u);
  EXPECT_EQ(to_vec(tree.match(t, "b").blocks), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(to_vec(tree.match(t, "a").blocks), (std::vector<int32_t>{0, 1}));
  tree.check_invariants();
}

TEST_F(RadixTreeTest, LockPreventsEviction) {
  ASSERT_EQ(tree.insert(iota_tokens(8), "", std::vector<int32_t>{0, 1}), 2u);
  auto m1 = tree.match(iota_tokens(8), "");
  auto m2 = tree.match(iota_tokens(8), "");
  EXPECT_NE(m1.handle, m2.handle);
  EXPECT_EQ(tree.num_evictable_blocks(), 0u);
  EXPECT_EQ(tree.evict(10), 0u);
  tree.release(m1.handle);
  tree.release(m1.handle);  // released already: no-op
  tree.release(12345);      // unknown: no-op
  EXPECT_EQ(tree.evict(10), 0u);
  tree.check_invariants();
  tree.release(m2.handle);
  EXPECT_EQ(tree.evict(10), 2u);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, LruOrderTailFirstParentBecomesLeaf) {
  auto p1 = iota_tokens(8, 0), p2 = iota_tokens(8, 100), p3 = iota_tokens(8, 200);
  tree.insert(p1, "", std::vector<int32_t>{10, 11});
  tree.insert(p2, "", std::vector<int32_t>{20, 21});
  tree.insert(p3, "", std::vector<int32_t>{30, 31});
  tree.release(tree.match(p1, "").handle);  // p1 is now the most recent
  EXPECT_EQ(tree.evict(3), 3u);
  EXPECT_EQ(refs.unref_log, (std::vector<int32_t>{20, 21, 31}));  // p2 whole, then p3's tail
  EXPECT_EQ(tree.match(p1, "").num_tokens, 8u);
  EXPECT_EQ(tree.match(p3, "").num_tokens, 4u);
  tree.check_invariants();

  // A branch below a shared block: the branch leaves go first, the shared parent last.
  CountingRefs r2;
  RadixTree t2(4, r2);
  auto a = iota_tokens(8), b = iota_tokens(8);
  b[4] = 77;
  t2.insert(a, "", std::vector<int32_t>{1, 2});
  t2.insert(b, "", std::vector<int32_t>{1, 3});
  t2.release(t2.match(a, "").handle);  // order: b's leaf, then a's leaf, then block 1
  EXPECT_EQ(t2.evict(3), 3u);
  EXPECT_EQ(r2.unref_log, (std::vector<int32_t>{3, 2, 1}));
  t2.check_invariants();
}

TEST_F(RadixTreeTest, EvictExactCount) {
  tree.insert(iota_tokens(12), "", std::vector<int32_t>{0, 1, 2});
  tree.insert(iota_tokens(8, 50), "", std::vector<int32_t>{3, 4});
  EXPECT_EQ(tree.evict(0), 0u);
  EXPECT_EQ(tree.evict(3), 3u);
  EXPECT_EQ(tree.num_cached_blocks(), 2u);
  EXPECT_EQ(tree.evict(10), 2u);
  EXPECT_EQ(tree.evict(10), 0u);
  EXPECT_EQ(tree.stats().num_evicted_blocks, 5u);
  EXPECT_EQ(tree.stats().num_inserted_blocks, 5u);
  EXPECT_EQ(refs.total(), 0);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, InsertOfCachedPrefixTakesNoNewRefs) {
  auto t = iota_tokens(8);
  ASSERT_EQ(tree.insert(t, "", std::vector<int32_t>{0, 1}), 2u);
  const int calls = refs.ref_calls;
  EXPECT_EQ(tree.insert(t, "", std::vector<int32_t>{7, 8}), 0u);
  EXPECT_EQ(tree.insert(iota_tokens(6), "", std::vector<int32_t>{7, 8}), 0u);  // ends mid-edge
  EXPECT_EQ(refs.ref_calls, calls);
  EXPECT_EQ(refs.held(7) + refs.held(8), 0);
  // Extending it takes only the new block.
  EXPECT_EQ(tree.insert(iota_tokens(12), "", std::vector<int32_t>{7, 8, 9}), 1u);
  EXPECT_EQ(refs.held(9), 1);
  EXPECT_EQ(refs.held(7) + refs.held(8), 0);
  EXPECT_EQ(to_vec(tree.match(iota_tokens(12), "").blocks), (std::vector<int32_t>{0, 1, 9}));
  tree.check_invariants();
}

TEST_F(RadixTreeTest, InsertRefusesConflictingBlocksAndChangesNothing) {
  tree.insert(iota_tokens(8), "", std::vector<int32_t>{0, 1});
  const auto before = tree.stats();
  // Block 1 holds another prefix already.
  EXPECT_THROW(tree.insert(iota_tokens(8, 40), "", std::vector<int32_t>{2, 1}),
               std::invalid_argument);
  EXPECT_THROW(tree.insert(iota_tokens(8, 40), "", std::vector<int32_t>{3, 3}),
               std::invalid_argument);
  EXPECT_THROW(tree.insert(iota_tokens(8, 40), "", std::vector<int32_t>{-1, 3}),
               std::invalid_argument);
  EXPECT_EQ(tree.stats().num_cached_blocks, before.num_cached_blocks);
  EXPECT_EQ(tree.stats().num_inserted_blocks, before.num_inserted_blocks);
  EXPECT_EQ(refs.total(), 2);
  // A failing ref (the kv_cache refuses) caches nothing either.
  refs.fail_ref = true;
  EXPECT_THROW(tree.insert(iota_tokens(8, 40), "", std::vector<int32_t>{2, 3}), std::runtime_error);
  refs.fail_ref = false;
  EXPECT_EQ(tree.num_cached_blocks(), 2u);
  tree.check_invariants();
}

TEST_F(RadixTreeTest, MatchedBlocksStayValidUntilRelease) {
  tree.insert(iota_tokens(12), "", std::vector<int32_t>{0, 1, 2});
  auto m = tree.match(iota_tokens(12), "");
  const int32_t* data = m.blocks.data();
  // A split below and a branch: the handle's storage is unaffected.
  auto other = iota_tokens(12);
  other[9] = 55;
  tree.insert(other, "", std::vector<int32_t>{0, 1, 3});
  tree.release(tree.match(iota_tokens(4), "").handle);
  EXPECT_EQ(m.blocks.data(), data);
  EXPECT_EQ(to_vec(m.blocks), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(tree.evict(10), 1u);  // only the other branch's block 3 is unlocked
  tree.check_invariants();
  tree.release(m.handle);
  tree.check_invariants();
}

TEST(RadixTreeCap, InsertEvictsToStayWithinCap) {
  CountingRefs refs;
  RadixTree tree(4, refs, 4);
  tree.insert(iota_tokens(12, 0), "", std::vector<int32_t>{0, 1, 2});
  EXPECT_EQ(tree.insert(iota_tokens(12, 100), "", std::vector<int32_t>{3, 4, 5}), 3u);
  EXPECT_EQ(tree.num_cached_blocks(), 4u);
  EXPECT_EQ(refs.unref_log, (std::vector<int32_t>{1, 2}));  // the LRU leaf's tail
  tree.check_invariants();
  // Extending a path never evicts the path itself: only what fits is cached.
  auto m = tree.match(iota_tokens(4, 0), "");
  EXPECT_EQ(tree.insert(iota_tokens(20, 100), "", std::vector<int32_t>{3, 4, 5, 6, 7}), 0u);
  tree.release(m.handle);
  EXPECT_EQ(tree.insert(iota_tokens(20, 100), "", std::vector<int32_t>{3, 4, 5, 6, 7}), 1u);
  EXPECT_EQ(refs.held(6), 1);
  EXPECT_EQ(refs.held(7), 0);
  EXPECT_EQ(refs.held(0), 0);
  EXPECT_EQ(to_vec(tree.match(iota_tokens(20, 100), "").blocks),
            (std::vector<int32_t>{3, 4, 5, 6}));
  tree.check_invariants();
}

TEST(RadixTreeLifetime, DestroyGivesBackEveryBlock) {
  CountingRefs refs;
  {
    RadixTree tree(1, refs);
    // A chain built one block per insert (a conversation cached turn by turn): one node per
    // block, deep enough that a recursive teardown would be a risk at real sizes.
    std::vector<int32_t> tokens, blocks;
    for (int32_t i = 0; i < 2000; ++i) {
      tokens.push_back(i % 7);
      blocks.push_back(i);
      ASSERT_EQ(tree.insert(tokens, "", blocks), 1u);
    }
    EXPECT_EQ(tree.num_nodes(), 2000u);
    auto m = tree.match(tokens, "");  // outstanding at destruction
    EXPECT_EQ(m.num_tokens, 2000u);
    tree.check_invariants();
    EXPECT_EQ(refs.total(), 2000);
  }
  EXPECT_EQ(refs.total(), 0);
}

TEST(RadixTreeLifetime, RejectsZeroBlockSize) {
  CountingRefs refs;
  EXPECT_THROW(RadixTree(0, refs), std::invalid_argument);
}
