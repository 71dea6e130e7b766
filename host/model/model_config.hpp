// A model's hyper-parameters and architecture description, read from GGUF metadata by the
// adapter of its architecture (host/model/arch/) and checked against the tensor table. Keys as
// written by llama.cpp's convert_hf_to_gguf.py (gguf-py constants.py, Keys.LLM/Attention/Rope).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plinth/model_spec.hpp"

namespace plinth {

class GgufFile;

/// Hyper-parameters from `<arch>.*` metadata and the architecture description that crosses the
/// ABI as plinth_arch_desc (sdk/include/plinth/model.h, ABI 1.4).
struct ModelConfig {
  std::string architecture;     // general.architecture: "llama", "qwen2", ...
  std::string name;             // general.name or ""
  uint32_t n_layers = 0;        // <arch>.block_count
  uint32_t hidden_size = 0;     // <arch>.embedding_length, elements
  uint32_t n_heads = 0;         // <arch>.attention.head_count (query heads)
  uint32_t n_kv_heads = 0;      // <arch>.attention.head_count_kv, default n_heads
  uint32_t head_dim = 0;        // <arch>.attention.key_length, default hidden_size / n_heads
  uint32_t ffn_size = 0;        // <arch>.feed_forward_length (gated FFN intermediate size)
  uint32_t vocab_size = 0;      // <arch>.vocab_size, else length of tokenizer.ggml.tokens
  uint32_t context_length = 0;  // <arch>.context_length, tokens
  float rope_theta = 10000.0f;  // <arch>.rope.freq_base, default 10000
  float rms_norm_eps = 0.0f;    // <arch>.attention.layer_norm_rms_epsilon
  bool rope_neox = false;  // false: GGML "normal" RoPE on adjacent pairs (llama), true: NeoX halves
  bool tied_embeddings = false;  // true when there is no output.weight (LM head = token_embd)

  // The architecture description (plinth_arch_desc): the feature bits and their values.
  uint64_t features = 0;   // sdk::ArchFeature bits
  uint32_t rope_dims = 0;  // rotated elements per head (<arch>.rope.dimension_count)
  float embed_scale = 1.0f;
  float attn_scale = 0.0f;  // 1 / sqrt(head_dim) unless kAttnScale
  float logit_softcap = 0.0f;
  float logit_scale = 1.0f;
  float residual_scale = 1.0f;           // kResidualScale
  std::vector<float> rope_freq_factors;  // rope_freqs.weight (kRopeFreqFactors)
  std::vector<sdk::LayerSpec> layers;    // [n_layers]
};

/// Reads and checks the config of a model whose architecture has an adapter (arch_adapters()).
/// Throws GgufError: for an architecture without one (naming it and the supported ones), for
/// missing/inconsistent keys (naming the key), for a key whose math no adapter implements (ALiBi,
/// attention.clamp_kqv, an unknown rope.scaling.type, ...: naming the key), for a missing tensor
/// of the forward pass or one with the wrong shape (naming the tensor, its dims and the expected
/// dims, ggml order; the recipe is sdk::bind_model_tensors, the one backends bind with), and for
/// a tensor the forward pass would not read (naming it: nothing that changes the math is
/// ignored).
ModelConfig read_model_config(const GgufFile& file);

}  // namespace plinth
