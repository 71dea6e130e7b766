// The weights of the generic decoder block of a plinth_model_desc, bound in place (no copy) as
// kernel WeightViews through the SDK's one tensor recipe (plinth/model_spec.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "matmul.hpp"
#include "plinth/model.h"
#include "plinth/model_spec.hpp"
#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu {

/// Hyper-parameters and architecture description of the forward pass (the SDK's ModelSpec:
/// sizes of plinth_model_config plus the feature bits of plinth_arch_desc, ABI 1.4).
using LlamaShape = sdk::ModelSpec;

/// One transformer block. Matrices are W[rows = out, cols = in] views into the model mapping;
/// norms point at f32 data (the mapping when the file stores F32, else LlamaWeights' own copy).
struct LayerWeights {
  const float* attn_norm = nullptr;  // [hidden]; nullptr with no_pre_norms
  const float* ffn_norm = nullptr;   // [hidden]; nullptr with no_pre_norms
  // Optional, per the spec's features (nullptr when unused):
  const float* bq = nullptr;              // [q_dim] (qkv_bias)
  const float* bk = nullptr;              // [kv_dim]
  const float* bv = nullptr;              // [kv_dim]
  const float* q_norm = nullptr;          // [head_dim] (qk_norm), [q_dim] (qk_norm_full)
  const float* k_norm = nullptr;          // [head_dim], [kv_dim] (qk_norm_full)
  const float* post_attn_norm = nullptr;  // [hidden] (post_norms)
  const float* post_ffn_norm = nullptr;   // [hidden] (post_norms)
  /// The file stores Q/K/V (fused_qkv) or gate/up (fused_gate_up) as one matrix: wqkv /
  /// w_gate_up below view it in the mapping (and are packed like the other matrices), and
  /// wq/wk/wv or w_gate/w_up stay empty.
  bool file_fused_qkv = false;
  bool file_fused_gate_up = false;
  WeightView wq{};      // [q_dim, hidden]
  WeightView wk{};      // [kv_dim, hidden]
  WeightView wv{};      // [kv_dim, hidden]
  WeightView wo{};      // [hidden, q_dim]
  WeightView w_gate{};  // [ffn, hidden]
  WeightView w_up{};    // [ffn, hidden]
  WeightView w_down{};  // [hidden, ffn]
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

/// Binds `model` (sdk::read_model_spec, sdk::bind_model_tensors). Throws plinth::sdk::Error:
/// UNSUPPORTED for a feature bit this build does not know or a tensor type the kernels cannot
/// read (naming the tensor and its type), INVALID_ARGUMENT for an inconsistent description or a
/// missing / wrongly shaped tensor (naming it, its dims and the expected dims, ggml order).
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
