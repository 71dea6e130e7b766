// Device memory plan of backend_cuda: the activation buffers sized for the largest batch, the
// bf16 weights, and the KV pool carved from what is left (docs/architecture.md: the backend owns
// the KV memory; the kv_cache plugin sizes the pool from get_memory_info). Pure C++, bytes.
#pragma once

#include <cstdint>

#include "plinth/model.h"

namespace plinth::cuda {

/// Bytes of each activation buffer of one forward pass over up to T = max_num_tokens new tokens
/// and S = max_num_seqs sequences, with L = logits_rows = min(S, T). Element types: f32 (4
/// bytes) for the residual stream and every kernel output, bf16 (2 bytes) for the GEMM input
/// operand, int32 (4 bytes) for ids and indices. Shapes (hidden = H, q_dim = n_heads * head_dim,
/// kv_dim = n_kv_heads * head_dim, ffn = F, vocab = V):
struct ActivationPlan {
  uint64_t residual = 0;     ///< [T, H] f32: the residual stream x
  uint64_t hidden = 0;       ///< [T, H] f32: RMSNorm output / projection output added into x
  uint64_t gemm_input = 0;   ///< [T, max(H, q_dim, F)] bf16: A operand of the next GEMM
  uint64_t q = 0;            ///< [T, q_dim] f32
  uint64_t k = 0;            ///< [T, kv_dim] f32 (written to the bf16 KV cache after RoPE)
  uint64_t v = 0;            ///< [T, kv_dim] f32
  uint64_t attn_out = 0;     ///< [T, q_dim] f32: attention output before the o projection
  uint64_t ffn_gate = 0;     ///< [T, F] f32 (SwiGLU result written in place)
  uint64_t ffn_up = 0;       ///< [T, F] f32
  uint64_t logits = 0;       ///< [L, V] f32: rows gathered at logits_indices
  uint64_t argmax_ids = 0;   ///< [L] int32: device greedy ids (ABI 1.3 argmax_ids)
  uint64_t batch_meta = 0;   ///< int32 inputs: token_ids, positions, slot_mapping [T] each;
                             ///< query_start [S + 1]; seq_lens [S]; logits_indices [L]
  uint32_t logits_rows = 0;  ///< L: most logits rows one forward may ask for
  uint64_t total = 0;        ///< sum of the byte fields above; the block tables are not in it
                             ///< (their width needs the block size: block_table_bytes)
};

/// The activation buffers for `config` (hidden_size, n_heads, n_kv_heads, head_dim, ffn_size,
/// vocab_size are read) and the backend's max_num_tokens / max_num_seqs. Throws
/// std::invalid_argument naming the field when one of them is 0 or a size overflows uint64.
ActivationPlan plan_activations(const plinth_model_config& config, uint32_t max_num_tokens,
                                uint32_t max_num_seqs);

/// Bytes of the block tables [max_num_seqs, ceil(context_length / block_size)] int32. Throws
/// std::invalid_argument when block_size is 0.
uint64_t block_table_bytes(uint32_t max_num_seqs, uint32_t context_length, uint32_t block_size);

/// Bytes of the model's weights on the device, every tensor in bf16 (2 bytes per element, norms
/// included): token_embd [V, H]; per layer attn_norm [H], attn_q [q_dim, H], attn_k and attn_v
/// [kv_dim, H], attn_output [H, q_dim], ffn_norm [H], ffn_gate and ffn_up [F, H], ffn_down
/// [H, F]; output_norm [H]; output [V, H] unless config.tied_embeddings (then the LM head is
/// token_embd, counted once). Throws std::invalid_argument on an overflow.
uint64_t weight_bytes_bf16(const plinth_model_config& config);

/// K and V of one token over all layers in the bf16 cache, bytes:
/// 2 (K and V) * n_layers * n_kv_heads * head_dim * 2 (bf16) — plinth_kv_layout.bytes_per_token.
uint64_t kv_bytes_per_token_bf16(const plinth_model_config& config);

/// The KV pool: as many whole blocks as fit in floor(free_bytes * memory_fraction).
struct KvPoolPlan {
  uint64_t num_blocks = 0;  ///< blocks of bytes_per_block each, >= 1
  uint64_t bytes = 0;       ///< num_blocks * bytes_per_block
};

/// Sizes the KV pool from the device's free memory (bytes, measured after the weights and the
/// activation buffers are allocated), the config's memory_fraction in (0, 1] and the bytes of
/// one block (bytes_per_token * block_size). Throws std::invalid_argument for a fraction outside
/// (0, 1] or bytes_per_block == 0, and std::runtime_error "too little device memory: X MiB free
/// ... needed; ..." (MiB with one decimal) naming the fixes when not even one block fits.
KvPoolPlan plan_kv_pool(uint64_t free_bytes, double memory_fraction, uint64_t bytes_per_block);

}  // namespace plinth::cuda
