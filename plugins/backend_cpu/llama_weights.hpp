// The LLaMA weights of a plinth_model_desc, bound in place (no copy) as kernel WeightViews.
#pragma once

#include <cstdint>
#include <vector>

#include "matmul.hpp"
#include "plinth/model.h"
#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu {

/// Hyper-parameters of the forward pass, copied out of plinth_model_config.
struct LlamaShape {
  int64_t n_layers = 0;
  int64_t hidden = 0;      // model width, elements
  int64_t n_heads = 0;     // query heads
  int64_t n_kv_heads = 0;  // key/value heads; n_heads % n_kv_heads == 0
  int64_t head_dim = 0;    // elements per head, even
  int64_t ffn = 0;         // SwiGLU intermediate size
  int64_t vocab = 0;
  int64_t context = 0;  // maximum positions, tokens
  double rope_theta = 10000.0;
  float rms_eps = 1e-5f;
  bool rope_neox = false;  // false: rotate adjacent pairs (GGML "normal"); true: NeoX halves

  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
};

/// One transformer block. Matrices are W[rows = out, cols = in] views into the model mapping;
/// norms point at f32 data (the mapping when the file stores F32, else LlamaWeights' own copy).
struct LayerWeights {
  const float* attn_norm = nullptr;  // [hidden]
  const float* ffn_norm = nullptr;   // [hidden]
  WeightView wq{};                   // [q_dim, hidden]
  WeightView wk{};                   // [kv_dim, hidden]
  WeightView wv{};                   // [kv_dim, hidden]
  WeightView wo{};                   // [hidden, q_dim]
  WeightView w_gate{};               // [ffn, hidden]
  WeightView w_up{};                 // [ffn, hidden]
  WeightView w_down{};               // [hidden, ffn]
  /// Fused projections that share one input (pack_for_path): wq, wk, wv's panel copies end to end
  /// ([q_dim + 2 kv_dim, hidden]) and w_gate, w_up's ([2 ffn, hidden]), so each is one matmul
  /// (one activation quantization, one thread hand-off) instead of three / two. Panel-only views
  /// (data null; only the packed path runs them); rows == 0 when not fused (other paths, mixed
  /// weight types, or rows not whole panels). Row r of the fused output is bit-identical to the
  /// separate matmul's (the kernels compute each output row alone).
  WeightView wqkv{};
  WeightView w_gate_up{};
};

/// The whole model. Valid while the plinth_model_desc it was bound from is (the host keeps it
/// until the backend instance is destroyed).
struct LlamaWeights {
  LlamaShape shape;
  WeightView token_embd{};                // [vocab, hidden]
  WeightView lm_head{};                   // [vocab, hidden]: output.weight, or token_embd when tied
  const float* output_norm = nullptr;     // [hidden]
  std::vector<LayerWeights> layers;       // [n_layers]
  std::vector<std::vector<float>> owned;  // norms converted from F16/BF16 files
  std::vector<std::vector<uint8_t>> packed;  // panel copies (pack_for_path)
};

/// Binds `model`. Throws plinth::sdk::Error: UNSUPPORTED for an architecture other than "llama"
/// or a tensor type the kernels cannot read (naming the tensor and its type), INVALID_ARGUMENT
/// for an inconsistent config or a missing / wrongly shaped tensor (naming it, its dims and the
/// expected dims, ggml order).
LlamaWeights bind_llama_weights(const plinth_model_desc& model);

/// Copies every quantized matrix (the layers' and the LM head; not token_embd, which is only
/// gathered from) into the panel layout of `path` (kernels/panel_layout.hpp: the Float path's or
/// the Int8 path's quant order), owned by `w`, and points the view's `panels` / `int8_panels` at
/// the copy, so the path does not repack per call. wq/wk/wv and w_gate/w_up go into one fused copy
/// each (LayerWeights::wqkv, w_gate_up) when they have the same quantized type and input width
/// and whole panels of rows; their own views then stay unpacked. Costs the quantized bytes again
/// (panels keep the f16 scales; rows padded to a multiple of 16). Splits the work over `pool`.
/// Does nothing for the other paths.
void pack_for_path(LlamaWeights& w, MatmulPath path, ThreadPool& pool);

}  // namespace plinth::cpu
