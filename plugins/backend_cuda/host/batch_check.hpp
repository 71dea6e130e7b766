// Validation of a plinth_batch before backend_cuda copies it to the device: backend_cpu's checks
// (plugins/backend_cpu/batch_check.cpp, compiled into this library unchanged) plus the limits of
// the CUDA backend's fixed-size device buffers (memory_plan.hpp). Pure C++.
#pragma once

#include <cstdint>

#include "plinth/backend.h"

namespace plinth::cuda {

/// What a batch is checked against.
struct BatchLimits {
  int64_t vocab = 0;            ///< token ids in [0, vocab)
  int64_t context = 0;          ///< seq_lens[i] <= context (the model's context_length)
  int64_t num_blocks = 0;       ///< block ids in [0, num_blocks) (allocate_kv)
  int64_t block_size = 0;       ///< must equal batch.block_size (allocate_kv)
  uint32_t max_num_tokens = 0;  ///< num_tokens <= this (config max_num_tokens: activation rows)
  uint32_t max_num_seqs = 0;    ///< num_seqs <= this (config max_num_seqs)
  uint32_t logits_rows = 0;     ///< num_logits <= this (ActivationPlan::logits_rows)
};

/// Checks `b` for the CUDA backend: struct_size covers at least the ABI 1.0 fields (argmax_only
/// of ABI 1.3 is optional: wants_argmax_only), num_tokens / num_seqs / num_logits within the
/// device buffers (messages name the config key to raise), then every check of
/// plinth::cpu::validate_batch (batch_check.hpp of backend_cpu: query_start, seq_lens,
/// positions, block tables, slot_mapping, token ids, logits_indices). Throws
/// std::invalid_argument("forward: batch.<field> ... ") on the first violation. Reads only host
/// memory the batch names; thread-safe.
void validate_batch(const plinth_batch& b, const BatchLimits& limits);

/// batch.argmax_only when the caller's struct has the field (ABI >= 1.3), else false (an older
/// host always needs logits).
bool wants_argmax_only(const plinth_batch& b);

}  // namespace plinth::cuda
