// BlockTables under >= 20k random operations (allocate / free / fork / truncate / attach /
// ref / unref, valid and invalid). After every operation the test checks, from its own model of
// what it asked for: sum of ref counts == references held by tables + external refs the test holds;
// free + used == total; no referenced block is free; every table's capacity >= its tokens; and the
// tables' own from-scratch check. At the end, freeing everything returns every block.
#include <gtest/gtest.h>

#include <plinth/plugin.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "block_tables.hpp"

using plinth::kv_paged::BlockTables;

namespace {

struct Model {
  std::map<plinth_seq_id, uint32_t> tokens;  // what the test asked each sequence to hold
  std::vector<int32_t> external;             // blocks the test holds a ref_blocks reference on
};

void check(const BlockTables& m, const Model& model, uint32_t num_blocks) {
  m.check_invariants();
  uint64_t table_refs = 0;
  for (const auto& [seq, tokens] : model.tokens) {
    auto t = m.block_table(seq);
    ASSERT_EQ(m.num_tokens(seq), tokens) << "seq " << seq;
    ASSERT_GE(uint64_t{t.size()} * m.block_size(), tokens) << "seq " << seq;
    table_refs += t.size();
    for (int32_t b : t) ASSERT_GT(m.ref_count(b), 0u) << "block " << b << " of seq " << seq;
  }
  for (int32_t b : model.external) ASSERT_GT(m.ref_count(b), 0u);
  uint64_t sum_refs = 0;
  uint32_t free_blocks = 0;
  for (uint32_t b = 0; b < num_blocks; ++b) {
    uint32_t rc = m.ref_count(static_cast<int32_t>(b));
    sum_refs += rc;
    if (rc == 0) ++free_blocks;
  }
  ASSERT_EQ(sum_refs, table_refs + model.external.size());
  ASSERT_EQ(free_blocks, m.num_free_blocks());
  ASSERT_EQ(m.num_free_blocks() + m.num_used_blocks(), num_blocks);
  ASSERT_EQ(m.num_seqs(), model.tokens.size());
}

void run(uint32_t block_size, uint32_t num_blocks, uint32_t seed, int steps) {
  BlockTables m(block_size, num_blocks);
  Model model;
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng); };
  plinth_seq_id next_seq = 1;
  auto random_seq = [&]() -> plinth_seq_id {
    if (model.tokens.empty() || pick(10) == 0) return 1000000000u + pick(1000);  // likely unknown
    auto it = model.tokens.begin();
    std::advance(it, pick(static_cast<uint32_t>(model.tokens.size())));
    return it->first;
  };
  const uint32_t max_len = block_size * num_blocks / 3 + 2;
  std::array<plinth_block_copy, 1> copies{};
  int counts[8] = {};
  for (int step = 0; step < steps; ++step) {
    // Keep the number of live sequences bounded (fork/attach add them) so the O(blocks + table
    // entries) checks stay cheap under the sanitizers.
    uint32_t op = model.tokens.size() > 24 && pick(2) == 0 ? 2u : pick(8);
    ++counts[op];
    try {
      switch (op) {
        case 0:
        case 1: {  // allocate (grow) an existing or a new sequence
          plinth_seq_id s = pick(4) == 0 ? next_seq++ : random_seq();
          uint32_t cur = model.tokens.count(s) ? model.tokens[s] : 0;
          uint32_t n = cur + pick(block_size * 3 + 1);
          if (n > max_len) n = max_len;
          uint32_t need = m.blocks_needed(s, n);
          uint32_t free_before = m.num_free_blocks();
          try {
            uint32_t nc = m.allocate(s, n, copies);
            model.tokens[s] = std::max(cur, n);
            ASSERT_EQ(free_before - m.num_free_blocks(), need)
                << "allocate took a different number of blocks than blocks_needed said";
            if (nc == 1) {
              ASSERT_EQ(m.ref_count(copies[0].dst), 1u);
            }
          } catch (const plinth::sdk::Error& e) {
            ASSERT_EQ(e.status(), PLINTH_ERR_NO_CAPACITY);
            ASSERT_GT(need, free_before);
            ASSERT_EQ(m.num_free_blocks(), free_before);
          }
          break;
        }
        case 2: {  // free (known or unknown: idempotent)
          plinth_seq_id s = random_seq();
          m.free_seq(s);
          model.tokens.erase(s);
          break;
        }
        case 3: {  // fork
          if (model.tokens.empty()) break;
          plinth_seq_id p = random_seq();
          plinth_seq_id c = next_seq++;
          if (!model.tokens.count(p)) {
            ASSERT_THROW(m.fork(p, c), plinth::sdk::Error);
            break;
          }
          m.fork(p, c);
          model.tokens[c] = model.tokens.at(p);
          break;
        }
        case 4: {  // truncate (sometimes past the end: must throw)
          plinth_seq_id s = random_seq();
          if (!model.tokens.count(s)) {
            ASSERT_THROW(m.truncate(s, 0), plinth::sdk::Error);
            break;
          }
          uint32_t cur = model.tokens[s];
          uint32_t n = pick(cur + 3);
          if (n > cur) {
            ASSERT_THROW(m.truncate(s, n), std::invalid_argument);
          } else {
            m.truncate(s, n);
            model.tokens[s] = n;
          }
          break;
        }
        case 5: {  // attach a prefix of a live table (a prefix-cache hit)
          if (model.tokens.empty()) break;
          plinth_seq_id from = random_seq();
          if (!model.tokens.count(from)) break;
          auto t = m.block_table(from);
          uint32_t nb = pick(static_cast<uint32_t>(t.size()) + 1);
          uint32_t tokens = std::min(nb * block_size, model.tokens[from]);
          if (nb > 0 && pick(2) == 0 && tokens > (nb - 1) * block_size + 1) --tokens;
          std::vector<int32_t> blocks(t.begin(), t.begin() + m.blocks_for(tokens));
          plinth_seq_id s = next_seq++;
          m.attach(s, blocks, tokens);
          model.tokens[s] = tokens;
          break;
        }
        case 6: {  // ref blocks of a live table, or a free block (must throw)
          if (!model.tokens.empty() && pick(5) != 0) {
            plinth_seq_id s = random_seq();
            if (!model.tokens.count(s)) break;
            auto t = m.block_table(s);
            std::vector<int32_t> blocks(t.begin(), t.end());
            m.ref_blocks(blocks);
            model.external.insert(model.external.end(), blocks.begin(), blocks.end());
          } else if (m.num_free_blocks() > 0) {
            int32_t b = -1;
            for (uint32_t i = 0; i < num_blocks && b < 0; ++i) {
              if (m.ref_count(static_cast<int32_t>(i)) == 0) b = static_cast<int32_t>(i);
            }
            const int32_t one[] = {b};
            ASSERT_THROW(m.ref_blocks(one), std::invalid_argument);
          }
          break;
        }
        case 7: {  // unref external refs; sometimes one too many (must throw, change nothing)
          if (model.external.empty()) {
            if (m.num_used_blocks() > 0) {
              for (uint32_t i = 0; i < num_blocks; ++i) {
                const int32_t one[] = {static_cast<int32_t>(i)};
                ASSERT_THROW(m.unref_blocks(one), std::invalid_argument);  // no external ref
              }
            }
            break;
          }
          uint32_t k = 1 + pick(static_cast<uint32_t>(std::min<size_t>(model.external.size(), 4)));
          std::shuffle(model.external.begin(), model.external.end(), rng);
          std::vector<int32_t> drop(model.external.end() - k, model.external.end());
          if (pick(6) == 0) {
            auto ext = static_cast<size_t>(
                std::count(model.external.begin(), model.external.end(), drop[0]));
            std::vector<int32_t> too_many(ext + 1, drop[0]);
            ASSERT_THROW(m.unref_blocks(too_many), std::invalid_argument);
          }
          m.unref_blocks(drop);
          model.external.resize(model.external.size() - k);
          break;
        }
      }
    } catch (const plinth::sdk::Error& e) {
      FAIL() << "step " << step << " op " << op << ": " << e.what();
    }
    check(m, model, num_blocks);
    if (testing::Test::HasFatalFailure()) {
      FAIL() << "invariant broken at step " << step << " (op " << op << ", seed " << seed << ")";
    }
  }
  for (int c : counts) EXPECT_GT(c, steps / 20);
  for (const auto& [s, t] : model.tokens) m.free_seq(s);
  m.unref_blocks(model.external);
  EXPECT_EQ(m.num_free_blocks(), num_blocks);
  EXPECT_EQ(m.num_used_blocks(), 0u);
  EXPECT_EQ(m.num_seqs(), 0u);
  m.check_invariants();
}

}  // namespace

TEST(KvCacheInvariants, RandomOperationsBlockSize4) {
  run(4, 64, 1, 20000);
}
TEST(KvCacheInvariants, RandomOperationsBlockSize16) {
  run(16, 32, 2, 12000);
}
TEST(KvCacheInvariants, RandomOperationsBlockSize1) {
  run(1, 48, 3, 6000);
}
