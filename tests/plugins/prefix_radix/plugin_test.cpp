// PrefixRadixPlugin over a real kv_paged pool: wiring refusals, the block size taken from the
// kv_cache, a prompt cached by one sequence and attached by the next, metrics, the cap, and
// destruction giving every block back to the pool.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "prefix_radix_plugin.hpp"

using plinth::prefix_radix::PrefixRadixPlugin;
using plinth::test::FakeHost;
using plinth::test::iota_tokens;
using plinth::test::KvPool;
using plinth::test::prefix_args;

namespace {

std::vector<int32_t> table_of(KvPool& pool, plinth_seq_id seq) {
  auto t = pool.kv->block_table(seq);
  return {t.begin(), t.end()};
}

// Gives `seq` room for `tokens` tokens, as a scheduler would.
void allocate(KvPool& pool, plinth_seq_id seq, uint32_t tokens) {
  std::array<plinth_block_copy, 1> copies{};
  pool.kv->allocate(seq, tokens, copies);
}

}  // namespace

TEST(PrefixRadixPlugin, RefusesWithoutKvCache) {
  FakeHost host;
  plinth_create_args args = prefix_args(host, {}, "{}");
  try {
    PrefixRadixPlugin p(args);
    FAIL() << "created without a kv_cache";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no kv_cache is wired"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("list a kv_cache plugin"), std::string::npos);
  }
  KvPool pool(16, 8);
  plinth_kv_cache_vtable partial = *plinth::test::kv_paged_table();
  partial.ref_blocks = nullptr;
  args.kv_cache = {&partial, pool.ref().instance};
  EXPECT_THROW(PrefixRadixPlugin{args}, std::invalid_argument);
  args = prefix_args(host, pool.ref(), R"({"salt": 1})");
  EXPECT_THROW(PrefixRadixPlugin{args}, std::invalid_argument);
}

TEST(PrefixRadixPlugin, CachedPromptIsAttachedByTheNextSequence) {
  KvPool pool(8, 32);
  FakeHost host;
  plinth_create_args args = prefix_args(host, pool.ref(), R"({"salt": "m"})");
  auto cache = std::make_unique<PrefixRadixPlugin>(args);
  EXPECT_EQ(cache->tree().block_size(), 8u);

  const auto prompt = iota_tokens(30);  // 3 full blocks + 6 tokens
  allocate(pool, 1, 30);
  const auto t1 = table_of(pool, 1);
  cache->insert(prompt, "", t1);
  pool.kv->free_seq(1);
  EXPECT_EQ(pool.tables().num_used_blocks(), 3u);  // the cache keeps the full blocks alive
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pool.tables().external_refs(t1[i]), 1u);

  auto m = cache->match(prompt, "");
  ASSERT_EQ(m.num_tokens, 24u);
  ASSERT_EQ(m.num_blocks, 3u);
  EXPECT_NE(m.handle, 0u);
  EXPECT_EQ(std::vector<int32_t>(m.blocks, m.blocks + 3),
            std::vector<int32_t>(t1.begin(), t1.begin() + 3));
  pool.kv->attach(2, std::span<const int32_t>(m.blocks, m.num_blocks), m.num_tokens);
  allocate(pool, 2, 30);
  EXPECT_EQ(pool.tables().ref_count(t1[0]), 2u);
  EXPECT_EQ(cache->match(prompt, "other").num_tokens, 0u);  // another key salt

  auto s = cache->stats();
  EXPECT_EQ(s.struct_size, sizeof(plinth_prefix_stats));
  EXPECT_EQ(s.num_queried_tokens, 60u);
  EXPECT_EQ(s.num_hit_tokens, 24u);
  EXPECT_EQ(s.num_cached_blocks, 3u);
  EXPECT_EQ(s.num_evictable_blocks, 0u);
  EXPECT_EQ(s.num_inserted_blocks, 3u);
  EXPECT_EQ(host.values["plinth_prefix_radix_match_tokens_total"], 60.0);
  EXPECT_EQ(host.values["plinth_prefix_radix_match_hit_tokens_total"], 24.0);
  EXPECT_EQ(host.values["plinth_prefix_cache_cached_blocks"], 3.0);

  EXPECT_EQ(cache->evict(5), 0u);  // locked
  cache->release(m.handle);
  EXPECT_EQ(cache->evict(1), 1u);
  EXPECT_EQ(host.values["plinth_prefix_cache_evicted_blocks_total"], 1.0);
  EXPECT_EQ(host.values["plinth_prefix_cache_cached_blocks"], 2.0);
  EXPECT_EQ(pool.tables().ref_count(t1[2]), 1u);  // seq 2 still holds it
  pool.tables().check_invariants();

  cache.reset();  // destroy: the cache gives back its references
  pool.kv->free_seq(2);
  EXPECT_EQ(pool.tables().num_free_blocks(), 32u);
  pool.tables().check_invariants();
}

TEST(PrefixRadixPlugin, CapKeepsCachedBlocksWithinLimit) {
  KvPool pool(4, 32);
  FakeHost host;
  plinth_create_args args = prefix_args(host, pool.ref(), R"({"max_cached_blocks": 3})");
  PrefixRadixPlugin cache(args);
  for (int32_t s = 1; s <= 4; ++s) {
    allocate(pool, s, 8);
    cache.insert(iota_tokens(8, 100 * s), "", table_of(pool, s));
    pool.kv->free_seq(s);
    EXPECT_LE(cache.stats().num_cached_blocks, 3u);
    cache.tree().check_invariants();
  }
  EXPECT_EQ(cache.stats().num_cached_blocks, 3u);
  EXPECT_EQ(cache.stats().num_evicted_blocks, 5u);  // 8 inserted, 3 kept
  EXPECT_EQ(pool.tables().num_used_blocks(), 3u);
  EXPECT_EQ(host.values["plinth_prefix_cache_evicted_blocks_total"], 5.0);
  // The most recent prompt survives whole.
  EXPECT_EQ(cache.match(iota_tokens(8, 400), "").num_tokens, 8u);
}
