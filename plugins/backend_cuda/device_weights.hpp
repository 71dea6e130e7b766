// The decoder weights of a plinth_model_desc on the device: matrices in bf16 (converted on the host
// by host/weight_convert.hpp's to_bf16 from every GGUF type backend_cpu reads), norm vectors in
// f32 (exact). Q/K/V and gate/up are stored fused, so a layer runs 4 GEMMs.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_util.hpp"
#include "plinth/model.h"
#include "plinth/model_spec.hpp"

namespace plinth::cuda {

/// Hyper-parameters of the forward pass, from plinth_model_config.
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

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  int qkv_dim() const { return q_dim() + 2 * kv_dim(); }
};

/// The architecture features (sdk::ArchFeature, plinth_arch_desc ABI 1.4) backend_cuda
/// implements: the plain block and the fused Q/K/V and gate/up layouts (its device layout).
inline constexpr uint64_t kImplementedFeatures = sdk::kFusedQkv | sdk::kFusedGateUp;

/// Reads and checks the config and architecture description (sdk::read_model_spec; every
/// feature outside kImplementedFeatures: UNSUPPORTED naming it), head_dim a multiple of 32 and
/// <= 256 (the attention kernel's lanes; else UNSUPPORTED), sizes <= 2^30 (else
/// INVALID_ARGUMENT naming the field). Throws sdk::Error. No architecture name is compared.
ModelShape model_shape(const plinth_model_desc& model);

/// Device pointers of one transformer block.
struct LayerWeights {
  const float* attn_norm = nullptr;  // [hidden] f32
  const float* ffn_norm = nullptr;   // [hidden] f32
  const uint16_t* wqkv = nullptr;    // [q_dim + 2 kv_dim, hidden] bf16: rows of wq, wk, wv
  const uint16_t* wo = nullptr;      // [hidden, q_dim] bf16
  const uint16_t* wgu = nullptr;     // [2 ffn, hidden] bf16: rows of w_gate, then w_up
  const uint16_t* wdown = nullptr;   // [hidden, ffn] bf16
};

/// The whole model on the device, in one allocation.
struct DeviceWeights {
  ModelShape shape;
  const uint16_t* token_embd = nullptr;  // [vocab, hidden] bf16
  const uint16_t* lm_head = nullptr;     // [vocab, hidden] bf16 (token_embd when tied)
  const float* output_norm = nullptr;    // [hidden] f32
  std::vector<LayerWeights> layers;      // [n_layers]
  DeviceBuffer memory;                   // owns everything above
};

/// Device bytes upload_weights allocates for `shape` (tied: no separate LM head).
uint64_t device_weight_bytes(const ModelShape& shape, bool tied);

/// Converts and copies every tensor bound by sdk::bind_model_tensors (synchronous cudaMemcpy;
/// the current device must be set). Throws sdk::Error: INVALID_ARGUMENT for a missing or wrongly
/// shaped tensor (naming it, its dims and the expected ones, ggml order) or an inconsistent one
/// (weight_convert's message); UNSUPPORTED for a tensor type it cannot read (naming the tensor
/// and its type); OUT_OF_MEMORY when the device allocation fails.
DeviceWeights upload_weights(const plinth_model_desc& model);

}  // namespace plinth::cuda
