// Causal multi-head attention over the paged KV cache (PagedAttention, Kwon et al., SOSP 2023)
// with grouped-query heads (Ainslie et al. 2023, GQA).
#pragma once

#include <cstdint>

#include "kv_storage.hpp"
#include "plinth/backend.h"
#include "thread_pool.hpp"

namespace plinth::cpu {

struct AttentionShape {
  int64_t n_heads;     // query heads
  int64_t n_kv_heads;  // query head h reads KV head h / (n_heads / n_kv_heads)
  int64_t head_dim;
  float scale = 0.0f;  // multiplies q·k; 0 means 1 / sqrt(head_dim)
  int64_t window = 0;  // sliding window: the query at p sees p - window < j <= p; 0: all j <= p
};

/// For every new token t of every sequence s of the (validated) batch, at position p:
/// out[t, h, :] = Σ_{j0 ≤ j ≤ p} softmax_j(scale · q[t, h, :] · K_s[j, g, :]) · V_s[j, g, :],
/// j0 = max(0, p - window + 1) with a window (masking: exact whatever is still cached), else 0,
/// g = h / (n_heads / n_kv_heads), where K_s[j] / V_s[j] are read from `layer` of `kv` at slot
/// block_tables[s][j / bs] * bs + j % bs (so K/V of this step's tokens must already be written).
/// q, out: [num_tokens, n_heads * head_dim] f32. Scores and softmax in f32. Work is split over
/// (sequence, KV head, chunk of query tokens) items, longest first, claimed by the pool's
/// participants. Each output depends only on its own query and positions 0..p (not on the rest
/// of the batch), so the result is bit-identical however the tokens are batched.
void paged_attention(const plinth_batch& b, const PagedKvStorage& kv, int64_t layer,
                     const AttentionShape& shape, const float* q, float* out, ThreadPool& pool);

}  // namespace plinth::cpu
