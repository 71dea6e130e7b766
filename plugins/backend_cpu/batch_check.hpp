// Validation of a plinth_batch before backend_cpu touches any memory it names.
#pragma once

#include <cstdint>

#include "plinth/backend.h"

namespace plinth::cpu {

/// What a batch is checked against.
struct BatchLimits {
  int64_t vocab = 0;             // token ids in [0, vocab)
  int64_t context = 0;           // seq_lens[i] <= context (positions < context)
  int64_t num_blocks = 0;        // block ids in [0, num_blocks)
  int64_t block_size = 0;        // must equal batch.block_size
  int64_t max_batch_tokens = 0;  // num_tokens <= max_batch_tokens (scratch size)
};

/// Checks every field of `b` (backend.h's contract): struct_size; non-NULL arrays; query_start
/// starts at 0, never decreases and ends at num_tokens; seq_lens[i] >= new tokens of i and <=
/// context and <= max_blocks_per_seq * block_size; positions of sequence i are exactly
/// seq_lens[i] - n_i .. seq_lens[i] - 1; the block table entries covering seq_lens[i] lie in
/// [0, num_blocks); slot_mapping[t] == block_tables[i][pos / bs] * bs + pos % bs; token ids in
/// [0, vocab); logits_indices strictly ascending and < num_tokens. Throws
/// std::invalid_argument("forward: batch.<field>[i] = ... : why") on the first violation.
void validate_batch(const plinth_batch& b, const BatchLimits& limits);

}  // namespace plinth::cpu
