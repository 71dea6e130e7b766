// The decoder weights of a plinth_model_desc on the device: matrices in bf16 (converted on the host
// by host/weight_convert.hpp's to_bf16 from every GGUF type backend_cpu reads), norm and bias
// vectors and RoPE frequency factors in f32 (exact). Q/K/V and gate/up are stored fused, so a
// layer runs 4 GEMMs.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_util.hpp"
#include "plinth/model.h"
#include "plinth/model_spec.hpp"

namespace plinth::cuda {

/// One layer's values of the architecture description (sdk::LayerSpec).
struct LayerShape {
  bool rope = true;         // RoPE applied to q and k
  double rope_base = 1e4;   // theta
  double rope_scale = 1.0;  // position multiplier (freq_scale)
  int window = 0;           // sliding window (0: full causal)
};

/// Hyper-parameters of the forward pass, from plinth_model_config and the architecture
/// description (sdk::ModelSpec): the generic block's switches, never an architecture name.
struct ModelShape {
  int n_layers = 0;
  int hidden = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int ffn = 0;
  int vocab = 0;
  int context = 0;
  double rope_theta = 10000.0;
  float rms_eps = 1e-5f;
  bool rope_neox = false;
  bool qkv_bias = false;        // Q/K/V biases (qkv_bias)
  bool qk_norm = false;         // q/k RMSNorm before RoPE (per head; all heads: qk_norm_full)
  bool qk_norm_full = false;    // one RMSNorm over all q heads and one over all k heads
  bool pre_norms = true;        // attn_norm / ffn_norm before the sub-blocks (off: no_pre_norms)
  bool post_norms = false;      // RMSNorm of the attention / FFN outputs (post_norms)
  float residual_scale = 1.0f;  // sub-block outputs scaled before the add (residual_scale)
  bool gelu = false;            // GELU-tanh gated FFN (gelu_tanh), else SiLU
  int rope_dims = 0;            // rotated elements per head (partial_rotary: < head_dim)
  float embed_scale = 1.0f;
  float attn_scale = 0.0f;               // multiplies q . k (1 / sqrt(head_dim) unless attn_scale)
  float logit_scale = 1.0f;              // 1: none
  float logit_softcap = 0.0f;            // 0: none
  std::vector<float> rope_freq_factors;  // [rope_dims / 2] (rope_freq_factors) or empty
  std::vector<LayerShape> layers;        // [n_layers]

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  int qkv_dim() const { return q_dim() + 2 * kv_dim(); }
};

/// The architecture features (sdk::ArchFeature, plinth_arch_desc ABI 1.4) backend_cuda
/// implements: every bit of the SDK it is built against (the generic block: cuda_backend.cpp's
/// enqueue) — the residual scale, no pre-norms and whole-projection q/k norm bits where that SDK
/// defines them (model.h's PLINTH_ARCH_RESIDUAL_SCALE, _NO_PRE_NORMS, _QK_NORM_FULL). A bit a
/// later SDK defines is refused by sdk::read_model_spec (UNSUPPORTED naming it).
inline constexpr uint64_t kImplementedFeatures =
    sdk::kQkvBias | sdk::kQkNorm | sdk::kPostNorms | sdk::kGeluTanh | sdk::kFusedQkv |
    sdk::kFusedGateUp | sdk::kEmbedScale | sdk::kAttnScale | sdk::kLogitSoftcap | sdk::kLogitScale |
    sdk::kPartialRotary | sdk::kRopeFreqFactors | sdk::kSlidingWindow | sdk::kLayerRope
#if defined(PLINTH_ARCH_RESIDUAL_SCALE)
    | sdk::kResidualScale
#endif
#if defined(PLINTH_ARCH_NO_PRE_NORMS)
    | sdk::kNoPreNorms
#endif
#if defined(PLINTH_ARCH_QK_NORM_FULL)
    | sdk::kQkNormFull
#endif
    ;

/// Reads and checks the config and architecture description (sdk::read_model_spec; every
/// feature outside kImplementedFeatures: UNSUPPORTED naming it), head_dim a multiple of 32 and
/// <= 256 (the attention kernel's lanes; else UNSUPPORTED), sizes and sliding windows <= 2^30
/// (else INVALID_ARGUMENT naming the field). Throws sdk::Error. No architecture name is compared.
ModelShape model_shape(const plinth_model_desc& model);

/// Checks the type of every tensor the generic block binds for `model` (sdk::bind_model_tensors:
/// INVALID_ARGUMENT for a missing or mis-shaped tensor, naming it), before any device work:
/// matrices must be a type of the SDK's format table (plinth/ggml_format.hpp), norm and bias
/// vectors F32, F16 or BF16 — as backend_cpu; else UNSUPPORTED naming the tensor, its type and
/// the supported ones.
void check_weight_types(const plinth_model_desc& model);

/// Device pointers of one transformer block.
struct LayerWeights {
  const float* attn_norm = nullptr;       // [hidden] f32 (NULL: no pre-norms)
  const float* ffn_norm = nullptr;        // [hidden] f32 (NULL: no pre-norms)
  const float* qkv_bias = nullptr;        // [q_dim + 2 kv_dim] f32: bq, bk, bv (qkv_bias)
  const float* q_norm = nullptr;          // [head_dim] f32 (qk_norm), [q_dim] (qk_norm_full)
  const float* k_norm = nullptr;          // [head_dim] f32 (qk_norm), [kv_dim] (qk_norm_full)
  const float* post_attn_norm = nullptr;  // [hidden] f32 (post_norms)
  const float* post_ffn_norm = nullptr;   // [hidden] f32 (post_norms)
  const uint16_t* wqkv = nullptr;         // [q_dim + 2 kv_dim, hidden] bf16: rows of wq, wk, wv
  const uint16_t* wo = nullptr;           // [hidden, q_dim] bf16
  const uint16_t* wgu = nullptr;          // [2 ffn, hidden] bf16: rows of w_gate, then w_up
  const uint16_t* wdown = nullptr;        // [hidden, ffn] bf16
};

/// The whole model on the device, in one allocation.
struct DeviceWeights {
  ModelShape shape;
  const uint16_t* token_embd = nullptr;  // [vocab, hidden] bf16
  const uint16_t* lm_head = nullptr;     // [vocab, hidden] bf16 (token_embd when tied)
  const float* output_norm = nullptr;    // [hidden] f32
  const float* rope_freqs = nullptr;     // [rope_dims / 2] f32 (rope_freq_factors) or NULL
  std::vector<LayerWeights> layers;      // [n_layers]
  DeviceBuffer memory;                   // owns everything above
};

/// Device bytes upload_weights allocates for `shape` (tied: no separate LM head), the optional
/// vectors of its features included.
uint64_t device_weight_bytes(const ModelShape& shape, bool tied);

/// Converts and copies every tensor bound by sdk::bind_model_tensors (synchronous cudaMemcpy;
/// the current device must be set). Throws sdk::Error: INVALID_ARGUMENT for a missing or wrongly
/// shaped tensor (naming it, its dims and the expected ones, ggml order) or an inconsistent one
/// (weight_convert's message); UNSUPPORTED for a tensor type it cannot read (naming the tensor
/// and its type); OUT_OF_MEMORY when the device allocation fails.
DeviceWeights upload_weights(const plinth_model_desc& model);

}  // namespace plinth::cuda
