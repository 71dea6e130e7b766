// cuda_graph's batch rules: the capture size a batch takes, which batches run eagerly and why,
// and the padded batch (dummy rows: token 0, position 0, seq_len 1, slot -1, table row -1; real
// rows and every other field unchanged), checked field by field against hand-written values.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "graph_config.hpp"
#include "padded_batch.hpp"

namespace plinth::cuda_graph {
namespace {

using V = std::vector<int32_t>;

/// A flat batch over vectors the test owns (arrays as backend.h lays them out).
struct Flat {
  V tokens, positions, query_start, seq_lens, tables, slots, logits;
  uint32_t width = 0, block_size = 4;
  plinth_batch b{};
  const plinth_batch& batch() {
    b = plinth_batch{};
    b.struct_size = sizeof(plinth_batch);
    b.num_tokens = static_cast<uint32_t>(tokens.size());
    b.num_seqs = static_cast<uint32_t>(seq_lens.size());
    b.token_ids = tokens.data();
    b.positions = positions.data();
    b.query_start = query_start.data();
    b.seq_lens = seq_lens.data();
    b.block_tables = tables.data();
    b.max_blocks_per_seq = width;
    b.block_size = block_size;
    b.slot_mapping = slots.data();
    b.num_logits = static_cast<uint32_t>(logits.size());
    b.logits_indices = logits.data();
    return b;
  }
};

// Three decode sequences (block size 4): lengths 5, 2, 7 over tables 2 blocks wide.
Flat three_decodes() {
  Flat f;
  f.tokens = {11, 12, 13};
  f.positions = {4, 1, 6};
  f.query_start = {0, 1, 2, 3};
  f.seq_lens = {5, 2, 7};
  f.width = 2;
  f.tables = {3, 7, 1, -1, 4, 9};
  f.slots = {7 * 4 + 0, 1 * 4 + 1, 9 * 4 + 2};
  f.logits = {0, 1, 2};
  return f;
}

TEST(CudaGraphBatch, CaptureSizeIsTheSmallestThatFits) {
  const std::vector<uint32_t> sizes = default_capture_sizes(64);
  EXPECT_EQ(choose_capture_size(sizes, 1), 1u);
  EXPECT_EQ(choose_capture_size(sizes, 3), 4u);
  EXPECT_EQ(choose_capture_size(sizes, 13), 16u);
  EXPECT_EQ(choose_capture_size(sizes, 16), 16u);
  EXPECT_EQ(choose_capture_size(sizes, 30), 32u);
  EXPECT_EQ(choose_capture_size(sizes, 31), 32u);
  EXPECT_EQ(choose_capture_size(sizes, 32), 32u);
  EXPECT_EQ(choose_capture_size(sizes, 57), 64u);
  EXPECT_EQ(choose_capture_size(sizes, 64), 64u);
  EXPECT_FALSE(choose_capture_size(sizes, 65));
  EXPECT_FALSE(choose_capture_size(sizes, 0));
  const std::vector<uint32_t> odd = {3, 10};
  EXPECT_EQ(choose_capture_size(odd, 1), 3u);
  EXPECT_EQ(choose_capture_size(odd, 4), 10u);
  EXPECT_FALSE(choose_capture_size(odd, 11));
}

TEST(CudaGraphBatch, DecodeBatchesCanRunOthersFallBackWithAReason) {
  const std::vector<uint32_t> sizes = {1, 2, 4};
  const StaticShape shape{4, 2, 4};
  Flat f = three_decodes();
  EXPECT_EQ(eager_reason(f.batch(), sizes, shape), "");
  EXPECT_EQ(eager_reason(f.batch(), sizes, StaticShape{4, 3, 0}), "") << "narrower table fits";

  Flat wide = three_decodes();
  EXPECT_NE(eager_reason(wide.batch(), sizes, StaticShape{4, 1, 4}).find("wider than the captured"),
            std::string::npos);
  Flat bs = three_decodes();
  bs.block_size = 8;
  EXPECT_NE(eager_reason(bs.batch(), sizes, shape).find("block size 8"), std::string::npos);

  // A prefill chunk (sequence 1 brings 3 tokens) mixed with decodes.
  Flat mixed;
  mixed.tokens = {11, 5, 6, 7, 13};
  mixed.positions = {4, 0, 1, 2, 6};
  mixed.query_start = {0, 1, 4, 5};
  mixed.seq_lens = {5, 3, 7};
  mixed.width = 2;
  mixed.tables = {3, 7, 1, -1, 4, 9};
  mixed.slots = {28, 4, 5, 6, 38};
  mixed.logits = {0, 3, 4};
  EXPECT_NE(eager_reason(mixed.batch(), sizes, shape).find("not decode-only"), std::string::npos);

  // One token per sequence but query_start not 0,1,2,... cannot happen with num_tokens ==
  // num_seqs unless a sequence has none: sequence 1 empty, sequence 2 two tokens.
  Flat skewed = three_decodes();
  skewed.query_start = {0, 1, 1, 3};
  EXPECT_NE(eager_reason(skewed.batch(), sizes, shape).find("does not have one new token"),
            std::string::npos);

  // A sequence whose logits are not wanted (a one-token prefill chunk mid-prompt).
  Flat partial = three_decodes();
  partial.logits = {0, 2};
  EXPECT_NE(eager_reason(partial.batch(), sizes, shape).find("logits wanted for 2 of 3"),
            std::string::npos);

  Flat many;
  for (int32_t i = 0; i < 5; ++i) {
    many.tokens.push_back(i);
    many.positions.push_back(0);
    many.query_start.push_back(i);
    many.seq_lens.push_back(1);
    many.tables.push_back(i);
    many.slots.push_back(i * 4);
    many.logits.push_back(i);
  }
  many.query_start.push_back(5);
  many.width = 1;
  EXPECT_NE(eager_reason(many.batch(), sizes, shape).find("above the largest capture size 4"),
            std::string::npos);

  Flat empty;
  empty.query_start = {0};
  EXPECT_EQ(eager_reason(empty.batch(), sizes, shape), "empty batch");
}

TEST(CudaGraphBatch, PaddedBatchKeepsRealRowsAndAddsDummyRows) {
  Flat f = three_decodes();
  plinth_batch real = f.batch();
#if PLINTH_ABI_MINOR >= 3
  real.argmax_only = 1;
#endif
  PaddedBatch padded;
  const plinth_batch& p = padded.build(real, 4, 3);  // one dummy row, tables widened 2 -> 3
  EXPECT_EQ(p.struct_size, sizeof(plinth_batch));
  EXPECT_EQ(p.num_tokens, 4u);
  EXPECT_EQ(p.num_seqs, 4u);
  EXPECT_EQ(p.max_blocks_per_seq, 3u);
  EXPECT_EQ(p.block_size, 4u);
  EXPECT_EQ(p.num_logits, 3u) << "only the real rows are sampled";
#if PLINTH_ABI_MINOR >= 3
  EXPECT_EQ(p.argmax_only, 1u) << "fields the padding does not touch travel unchanged";
#endif
  EXPECT_EQ(V(p.token_ids, p.token_ids + 4), (V{11, 12, 13, 0}));
  EXPECT_EQ(V(p.positions, p.positions + 4), (V{4, 1, 6, 0}));
  EXPECT_EQ(V(p.query_start, p.query_start + 5), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(V(p.seq_lens, p.seq_lens + 4), (V{5, 2, 7, 1}));
  EXPECT_EQ(V(p.slot_mapping, p.slot_mapping + 4), (V{28, 5, 38, -1}));
  EXPECT_EQ(V(p.block_tables, p.block_tables + 12), (V{3, 7, -1, 1, -1, -1, 4, 9, -1, -1, -1, -1}));
  EXPECT_EQ(V(p.logits_indices, p.logits_indices + 4), (V{0, 1, 2, 3}));
  // The padded batch owns its arrays: the caller's are not aliased.
  EXPECT_NE(p.token_ids, real.token_ids);

  // Rebuilt for another batch: nothing of the first remains.
  Flat one;
  one.tokens = {42};
  one.positions = {0};
  one.query_start = {0, 1};
  one.seq_lens = {1};
  one.width = 1;
  one.tables = {6};
  one.slots = {24};
  one.logits = {0};
  const plinth_batch& q = padded.build(one.batch(), 2, 3);
  EXPECT_EQ(V(q.token_ids, q.token_ids + 2), (V{42, 0}));
  EXPECT_EQ(V(q.block_tables, q.block_tables + 6), (V{6, -1, -1, -1, -1, -1}));
  EXPECT_EQ(V(q.slot_mapping, q.slot_mapping + 2), (V{24, -1}));
  EXPECT_EQ(q.num_logits, 1u);
#if PLINTH_ABI_MINOR >= 3
  EXPECT_EQ(q.argmax_only, 0u);
#endif
}

TEST(CudaGraphBatch, AnOlderCallersStructIsCopiedOnlyAsFarAsItsSize) {
  Flat f = three_decodes();
  plinth_batch real = f.batch();
  // As a 1.0 host writes it: struct_size ends at logits_indices.
  real.struct_size =
      static_cast<uint32_t>(offsetof(plinth_batch, logits_indices) + sizeof(const int32_t*));
  PaddedBatch padded;
  const plinth_batch& p = padded.build(real, 4, 2);
  EXPECT_EQ(p.struct_size, real.struct_size);
  EXPECT_EQ(p.num_logits, 3u);
  EXPECT_EQ(p.num_seqs, 4u);
}

TEST(CudaGraphBatch, DummyOnlyBatchForEagerCapture) {
  PaddedBatch padded;
  const plinth_batch& p = padded.build_dummy(2, 3, 16);
  EXPECT_EQ(p.num_tokens, 2u);
  EXPECT_EQ(p.num_seqs, 2u);
  EXPECT_EQ(p.num_logits, 0u);
  EXPECT_EQ(p.block_size, 16u);
  EXPECT_EQ(p.max_blocks_per_seq, 3u);
  EXPECT_EQ(V(p.token_ids, p.token_ids + 2), (V{0, 0}));
  EXPECT_EQ(V(p.seq_lens, p.seq_lens + 2), (V{1, 1}));
  EXPECT_EQ(V(p.slot_mapping, p.slot_mapping + 2), (V{-1, -1}));
  EXPECT_EQ(V(p.block_tables, p.block_tables + 6), (V(6, -1)));
  EXPECT_EQ(V(p.query_start, p.query_start + 3), (V{0, 1, 2}));
}

TEST(CudaGraphBatch, PaddingRefusesWhatDoesNotFit) {
  Flat f = three_decodes();
  PaddedBatch padded;
  EXPECT_THROW(padded.build(f.batch(), 2, 2), std::invalid_argument) << "3 rows into size 2";
  EXPECT_THROW(padded.build(f.batch(), 4, 1), std::invalid_argument) << "2-wide table into 1";
}

}  // namespace
}  // namespace plinth::cuda_graph
