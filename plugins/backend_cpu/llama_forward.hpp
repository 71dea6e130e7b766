// The forward pass of backend_cpu over a flat variable-length batch (docs/architecture.md,
// 'One engine step'): one generic decoder block driven by the model's description
// (sdk::ModelSpec: the features of plinth_arch_desc), never by an architecture name.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kv_storage.hpp"
#include "llama_weights.hpp"
#include "matmul.hpp"
#include "plinth/backend.h"
#include "rope.hpp"
#include "thread_pool.hpp"

namespace plinth::cpu {

struct ForwardOptions {
  int threads = 1;                   // thread pool participants, caller included
  KvDtype kv_dtype = KvDtype::kF32;  // element type of the cached K/V
  int64_t max_batch_tokens = 2048;   // largest num_tokens of one forward (scratch rows)
  // How the kernels multiply (the plugin's config default "auto" resolves to Int8 or Float:
  // matmul_choice.hpp). Float (the default here) keeps activations in f32 and dequantizes
  // panel-packed weights in registers: batch-invariant (a row's result never depends on the other
  // rows; docs/architecture.md, 'Batch invariance': temperature-0 output must not depend on
  // batching) and f32-accurate. Simd quantizes activations to int8 per 32 elements (llama.cpp's
  // scheme), also batch-invariant. Blas dequantizes weights to f32 and runs sgemm (f32-accurate;
  // slow for few rows). Auto lets the kernels pick per row count (the logits then depend on how a
  // prompt was chunked).
  MatmulPath matmul = MatmulPath::kFloat;
};

/// Runs a decoder-only model (every architecture the host describes) whose weights stay in the
/// host's mapping. Owns the thread pool, the paged
/// KV cache and the activation scratch ([max_batch_tokens, *] f32, allocated once). Not
/// thread-safe: one forward at a time (the host's engine thread).
class LlamaForward {
 public:
  /// Binds the weights (see bind_llama_weights for the errors) and allocates the scratch.
  /// Throws std::invalid_argument for threads < 1 or max_batch_tokens < 1.
  LlamaForward(const plinth_model_desc& model, const ForwardOptions& options);

  const LlamaShape& shape() const { return w_.shape; }
  const ForwardOptions& options() const { return opt_; }
  PagedKvStorage& kv() { return kv_; }
  const PagedKvStorage& kv() const { return kv_; }

  /// Validates `b` (validate_batch; INVALID_ARGUMENT naming the field, also when allocate_kv was
  /// not called), embeds the tokens (× embed_scale), runs every layer — RMSNorm (unless
  /// no_pre_norms) → Q/K/V (+ bias) → q/k RMSNorm per head or over all heads → RoPE (the layer's
  /// base and scale; partial; frequency factors) → K/V stored at slot_mapping → paged causal
  /// attention (attn_scale; the layer's sliding window) → output projection (→ RMSNorm)
  /// (× residual_scale) + residual → RMSNorm (unless no_pre_norms) → SiLU or GELU-tanh gated FFN
  /// → down projection (→ RMSNorm) (× residual_scale) + residual, each optional step per the
  /// spec's features — then the
  /// final norm, the LM head for logits_indices only, and the logit scale / softcap.
  /// Returns logits[num_logits, vocab] f32, valid until the next forward, forward_early_exit or
  /// destruction.
  const float* forward(const plinth_batch& b);

  /// The model cut after its first `exit_layer` layers (extension plinth.early_exit/1): the same
  /// validation, embedding and layers as forward for layers [0, exit_layer) only — K/V written
  /// at slot_mapping in those layers, deeper layers' slots untouched — then the final norm and
  /// the LM head on the hidden state after layer exit_layer - 1, for logits_indices only (that
  /// layer runs its output projection and FFN for those rows only, as forward's last layer).
  /// The K/V of those layers are bit-identical to what a forward of the same batch writes (and,
  /// with a batch-invariant matmul path, the hidden states of the logits rows). Cost: exit_layer /
  /// n_layers of a forward's layers plus the full LM head. Returns logits[num_logits, vocab] f32,
  /// valid until the next forward or forward_early_exit. Throws std::invalid_argument naming
  /// exit_layer and the valid range when exit_layer is outside [1, n_layers), and everything
  /// forward throws.
  const float* forward_early_exit(const plinth_batch& b, int64_t exit_layer);

 private:
  // forward over layers [0, num_layers), num_layers in [1, n_layers]; the last of them keeps
  // only the logits rows.
  const float* run(const plinth_batch& b, int64_t num_layers);
  // Runs layer l over n tokens; the last layer keeps only the logits rows (compacted to the
  // front of x_) after attention, since no later layer reads the others.
  void run_layer(int64_t l, const plinth_batch& b, int64_t n, bool last);
  // Layer l: xn_[n, hidden] → q, k, v of the n tokens, RoPE applied, K/V stored at
  // slot_mapping; q left in q_[n, q_dim]. One fused matmul when LayerWeights::wqkv is set, else
  // three.
  void project_qkv(int64_t l, const plinth_batch& b, int64_t n);
  // xn_[rows, hidden] → silu(gate) ⊙ up in gate_[rows, ffn]. One fused matmul when
  // LayerWeights::w_gate_up is set, else two.
  void gate_up(const LayerWeights& L, int64_t rows);
  // The gated activation of the spec: silu(gate) ⊙ up, or gelu_tanh(gate) ⊙ up (gelu_tanh).
  void gated(const float* gate, const float* up, int64_t count, float* out) const;
  // x_[rows, hidden] RMSNormed with `norm` into xn_, or copied when `norm` is NULL
  // (no_pre_norms).
  void pre_norm(const float* norm, int64_t rows);
  // proj_[rows, hidden] (RMSNormed with `post_norm` first when not NULL: post_norms; then times
  // residual_scale: residual_scale) added to the residual stream x_.
  void add_residual(const float* post_norm, int64_t rows);
  // Logit scale and softcap of the spec over logits_[m, vocab].
  void finish_logits(int64_t m);
  void parallel_rows(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  LlamaWeights w_;
  ForwardOptions opt_;
  ThreadPool pool_;
  PagedKvStorage kv_;
  std::vector<Rope> ropes_;                           // one per distinct (base, scale)
  std::vector<std::pair<double, double>> rope_keys_;  // (base, scale) of ropes_[i]
  std::vector<int> layer_rope_;                       // [n_layers] index into ropes_, -1: no RoPE
  // Scratch, f32, rows = tokens of the batch (max_batch_tokens):
  std::vector<float> x_;        // [n, hidden] residual stream
  std::vector<float> xn_;       // [n, hidden] normed input of a sub-block
  std::vector<float> q_;        // [n, q_dim]
  std::vector<float> k_;        // [n, kv_dim]
  std::vector<float> v_;        // [n, kv_dim]
  std::vector<float> attn_;     // [n, q_dim]
  std::vector<float> proj_;     // [n, hidden] output of wo / w_down
  std::vector<float> gate_;     // [n, ffn]
  std::vector<float> up_;       // [n, ffn]
  std::vector<float> qkv_;      // [n, q_dim + 2 kv_dim] output of a fused wqkv (else empty)
  std::vector<float> gate_up_;  // [n, 2 ffn] output of a fused w_gate_up (else empty)
  std::vector<std::vector<float>> rope_tables_;  // per Rope [n, rope_dims] (cos, sin) pairs
  std::vector<float> logits_;                    // [num_logits, vocab], grown on demand
  std::vector<int32_t> rows_;                    // logits_indices of the current batch
};

}  // namespace plinth::cpu
