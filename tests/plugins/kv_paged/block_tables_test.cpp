// BlockTables: every operation and error of the kv_cache interface.
#include <gtest/gtest.h>

#include <plinth/plugin.hpp>

#include <array>
#include <stdexcept>
#include <vector>

#include "block_tables.hpp"

using plinth::kv_paged::BlockTables;
using plinth::sdk::Error;

namespace {

std::vector<int32_t> table(const BlockTables& m, plinth_seq_id s) {
  auto t = m.block_table(s);
  return {t.begin(), t.end()};
}

plinth_status status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.status();
  } catch (const std::invalid_argument&) {
    return PLINTH_ERR_INVALID_ARGUMENT;
  }
  return PLINTH_OK;
}

}  // namespace

TEST(BlockTables, RejectsBadBlockSize) {
  EXPECT_THROW(BlockTables(3, 8), std::invalid_argument);
  EXPECT_THROW(BlockTables(0, 8), std::invalid_argument);
  EXPECT_THROW(BlockTables(512, 8), std::invalid_argument);
  EXPECT_NO_THROW(BlockTables(256, 8));
  EXPECT_NO_THROW(BlockTables(1, 8));
}

TEST(BlockTables, AllocateGrowsByBlocks) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  EXPECT_EQ(m.blocks_needed(1, 5), 2u);
  EXPECT_EQ(m.allocate(1, 5, c), 0u);
  EXPECT_EQ(table(m, 1).size(), 2u);
  EXPECT_EQ(m.num_tokens(1), 5u);
  EXPECT_EQ(m.blocks_needed(1, 8), 0u);
  EXPECT_EQ(m.blocks_needed(1, 9), 1u);
  m.allocate(1, 8, c);
  EXPECT_EQ(table(m, 1).size(), 2u);
  m.allocate(1, 9, c);
  EXPECT_EQ(table(m, 1).size(), 3u);
  m.allocate(1, 3, c);  // never shrinks
  EXPECT_EQ(m.num_tokens(1), 9u);
  auto s = m.stats();
  EXPECT_EQ(s.num_used_blocks, 3u);
  EXPECT_EQ(s.num_free_blocks, 5u);
  EXPECT_EQ(s.num_allocated_slots, 12u);
  EXPECT_EQ(s.num_used_slots, 9u);
  m.check_invariants();
}

TEST(BlockTables, AllocateAllOrNothingOnNoCapacity) {
  BlockTables m(4, 3);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 8, c);
  EXPECT_EQ(status_of([&] { m.allocate(2, 8, c); }), PLINTH_ERR_NO_CAPACITY);
  EXPECT_FALSE(m.contains(2));  // a failed first allocation creates nothing
  EXPECT_EQ(status_of([&] { m.allocate(1, 13, c); }), PLINTH_ERR_NO_CAPACITY);
  EXPECT_EQ(m.num_tokens(1), 8u);
  EXPECT_EQ(m.num_free_blocks(), 1u);
  m.check_invariants();
}

TEST(BlockTables, FreeIsIdempotentAndReturnsBlocks) {
  BlockTables m(4, 4);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(7, 16, c);
  EXPECT_EQ(m.num_free_blocks(), 0u);
  m.free_seq(7);
  m.free_seq(7);
  m.free_seq(12345);
  EXPECT_EQ(m.num_free_blocks(), 4u);
  EXPECT_EQ(status_of([&] { m.block_table(7); }), PLINTH_ERR_NOT_FOUND);
  m.check_invariants();
}

TEST(BlockTables, TruncateReleasesBlocksAndValidates) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 10, c);
  m.truncate(1, 5);
  EXPECT_EQ(table(m, 1).size(), 2u);
  EXPECT_EQ(m.stats().num_used_slots, 5u);
  m.truncate(1, 0);
  EXPECT_TRUE(table(m, 1).empty());
  EXPECT_EQ(m.num_free_blocks(), 8u);
  EXPECT_EQ(status_of([&] { m.truncate(1, 1); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of([&] { m.truncate(99, 0); }), PLINTH_ERR_NOT_FOUND);
  m.check_invariants();
}

TEST(BlockTables, ForkSharesAndCopyOnWriteOfPartialLastBlock) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 6, c);  // blocks [0, 1], block 1 holds 2 of 4
  m.fork(1, 2);
  EXPECT_EQ(table(m, 2), table(m, 1));
  EXPECT_EQ(m.ref_count(table(m, 1)[0]), 2u);
  EXPECT_EQ(m.stats().num_used_blocks, 2u);
  EXPECT_EQ(m.blocks_needed(2, 7), 1u);  // the copy of the shared last block
  int32_t shared_last = table(m, 1)[1];
  ASSERT_EQ(m.allocate(2, 7, c), 1u);
  EXPECT_EQ(c[0].src, shared_last);
  EXPECT_EQ(c[0].dst, table(m, 2)[1]);
  EXPECT_NE(c[0].dst, shared_last);
  EXPECT_EQ(table(m, 2)[0], table(m, 1)[0]);  // the full first block stays shared
  EXPECT_EQ(m.ref_count(shared_last), 1u);
  // The parent now holds its last block alone: writing it needs no copy.
  EXPECT_EQ(m.allocate(1, 8, c), 0u);
  m.check_invariants();
  m.free_seq(1);
  m.free_seq(2);
  EXPECT_EQ(m.num_free_blocks(), 8u);
}

TEST(BlockTables, NoCopyWhenSharedLastBlockIsFull) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 8, c);
  m.fork(1, 2);
  EXPECT_EQ(m.blocks_needed(2, 9), 1u);
  EXPECT_EQ(m.allocate(2, 9, c), 0u);
  m.check_invariants();
}

TEST(BlockTables, CopyNeededButNoRoomForCopiesIsInvalid) {
  BlockTables m(4, 8);
  m.allocate(1, 2, {});
  m.fork(1, 2);
  EXPECT_EQ(status_of([&] { m.allocate(2, 3, {}); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m.num_tokens(2), 2u);
  m.check_invariants();
}

TEST(BlockTables, ForkErrors) {
  BlockTables m(4, 8);
  m.allocate(1, 2, {});
  EXPECT_EQ(status_of([&] { m.fork(5, 6); }), PLINTH_ERR_NOT_FOUND);
  EXPECT_EQ(status_of([&] { m.fork(1, 1); }), PLINTH_ERR_INVALID_ARGUMENT);
  m.allocate(2, 2, {});
  EXPECT_EQ(status_of([&] { m.fork(1, 2); }), PLINTH_ERR_INVALID_ARGUMENT);
}

TEST(BlockTables, TruncateIntoSharedBlockThenWriteCopies) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 8, c);
  m.fork(1, 2);
  m.truncate(2, 6);  // block 1 shared, now partial for seq 2
  EXPECT_EQ(m.blocks_needed(2, 7), 1u);
  EXPECT_EQ(m.allocate(2, 7, c), 1u);
  EXPECT_EQ(m.num_tokens(1), 8u);
  m.check_invariants();
}

TEST(BlockTables, AttachAndExternalRefs) {
  BlockTables m(4, 8);
  std::array<plinth_block_copy, 1> c{};
  m.allocate(1, 8, c);
  std::vector<int32_t> prefix = table(m, 1);
  m.ref_blocks(prefix);  // a prefix cache keeps them
  m.free_seq(1);
  EXPECT_EQ(m.num_used_blocks(), 2u);
  EXPECT_EQ(m.stats().num_allocated_slots, 0u);  // no sequence holds them
  m.attach(2, prefix, 8);
  EXPECT_EQ(table(m, 2), prefix);
  EXPECT_EQ(m.ref_count(prefix[0]), 2u);
  EXPECT_EQ(m.external_refs(prefix[0]), 1u);
  EXPECT_EQ(m.blocks_needed(2, 9), 1u);
  m.allocate(2, 9, c);
  m.check_invariants();
  m.free_seq(2);
  EXPECT_EQ(m.num_used_blocks(), 2u);
  m.unref_blocks(prefix);
  EXPECT_EQ(m.num_free_blocks(), 8u);
  m.check_invariants();
}

TEST(BlockTables, AttachErrors) {
  BlockTables m(4, 8);
  m.allocate(1, 8, {});
  std::vector<int32_t> t = table(m, 1);
  EXPECT_EQ(status_of([&] { m.attach(1, t, 8); }), PLINTH_ERR_INVALID_ARGUMENT);  // exists
  EXPECT_EQ(status_of([&] { m.attach(2, t, 3); }), PLINTH_ERR_INVALID_ARGUMENT);  // count
  std::vector<int32_t> dup = {t[0], t[0]};
  EXPECT_EQ(status_of([&] { m.attach(2, dup, 8); }), PLINTH_ERR_INVALID_ARGUMENT);  // duplicate
  std::vector<int32_t> free_block = {t[0], 7};
  EXPECT_EQ(status_of([&] { m.attach(2, free_block, 8); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(m.contains(2));
  EXPECT_EQ(m.ref_count(t[0]), 1u);
  m.check_invariants();
}

TEST(BlockTables, UnrefErrorsChangeNothing) {
  BlockTables m(4, 8);
  m.allocate(1, 8, {});
  std::vector<int32_t> t = table(m, 1);
  // Held only by a table: unref_blocks must not free it from under the sequence.
  EXPECT_EQ(status_of([&] { m.unref_blocks(t); }), PLINTH_ERR_INVALID_ARGUMENT);
  m.ref_blocks(t);
  std::vector<int32_t> twice = {t[0], t[0]};
  EXPECT_EQ(status_of([&] { m.unref_blocks(twice); }), PLINTH_ERR_INVALID_ARGUMENT);
  std::vector<int32_t> free_one = {7};
  EXPECT_EQ(status_of([&] { m.unref_blocks(free_one); }),
            PLINTH_ERR_INVALID_ARGUMENT);  // double free
  std::vector<int32_t> bad = {t[0], 100};
  EXPECT_EQ(status_of([&] { m.unref_blocks(bad); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of([&] { m.ref_blocks(free_one); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m.ref_count(t[0]), 2u);
  m.unref_blocks(t);
  EXPECT_EQ(status_of([&] { m.unref_blocks(t); }), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m.ref_count(t[0]), 1u);
  m.check_invariants();
}

TEST(BlockTables, WasteCountsUnfilledSlots) {
  BlockTables m(16, 8);
  m.allocate(1, 17, {});  // 2 blocks, 32 slots, 17 tokens
  auto s = m.stats();
  EXPECT_EQ(s.num_allocated_slots, 32u);
  EXPECT_EQ(s.num_used_slots, 17u);
  m.fork(1, 2);  // shared blocks count once
  s = m.stats();
  EXPECT_EQ(s.num_allocated_slots, 32u);
  EXPECT_EQ(s.num_used_slots, 17u);
}
