#include "warm_up.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "llama_forward.hpp"

namespace plinth::cpu {
namespace {

// One sequence in block 0: tokens at positions [first, first + count), seq_len first + count,
// logits for the last token only.
void run_in_block0(LlamaForward& forward, int32_t first, int32_t count) {
  std::vector<int32_t> tokens(static_cast<size_t>(count)), positions(tokens.size()),
      slots(tokens.size());
  for (int32_t i = 0; i < count; ++i) {
    tokens[static_cast<size_t>(i)] = i % static_cast<int32_t>(forward.shape().vocab);
    positions[static_cast<size_t>(i)] = first + i;
    slots[static_cast<size_t>(i)] = first + i;  // block 0: slot = position
  }
  const int32_t query_start[2] = {0, count};
  const int32_t seq_len = first + count;
  const int32_t block_table = 0;
  const int32_t logits_index = count - 1;
  plinth_batch b{};
  b.struct_size = sizeof(b);
  b.num_tokens = static_cast<uint32_t>(count);
  b.num_seqs = 1;
  b.token_ids = tokens.data();
  b.positions = positions.data();
  b.query_start = query_start;
  b.seq_lens = &seq_len;
  b.block_tables = &block_table;
  b.max_blocks_per_seq = 1;
  b.block_size = forward.kv().block_size();
  b.slot_mapping = slots.data();
  b.num_logits = 1;
  b.logits_indices = &logits_index;
  forward.forward(b);
}

}  // namespace

void warm_up(LlamaForward& forward) {
  if (!forward.kv().allocated() || forward.kv().block_size() < 2) return;
  const int32_t prefill = static_cast<int32_t>(
      std::min<int64_t>({int64_t{forward.kv().block_size()} - 1, 8,
                         forward.options().max_batch_tokens, forward.shape().context - 1}));
  if (prefill < 1) return;
  run_in_block0(forward, 0, prefill);
  run_in_block0(forward, prefill, 1);
}

}  // namespace plinth::cpu
