// What one token costs a LLaMA-family GGUF model: weight bytes read and multiply-adds.
#pragma once

#include <cstdint>
#include <string>

namespace plinth {
class GgufFile;
}

namespace plinth::roofline {

/// Per-token costs of a model, from its GGUF tensor table.
struct ModelCost {
  uint64_t layer_bytes = 0;  // GGUF nbytes of every 2-D blk.* tensor (q, k, v, o, gate, up, down)
  uint64_t layer_macs = 0;   // their elements: one multiply-add per weight per token
  uint64_t head_bytes = 0;   // the LM head: output.weight, or token_embd.weight when tied
  uint64_t head_macs = 0;
  std::string layer_types;  // ggml type names of the layer matrices, e.g. "q4_1" or "q4_1+q6_k"
  std::string head_type;
  uint32_t n_layers = 0, n_heads = 0, head_dim = 0;

  /// Bytes one batch-1 decode step reads at least: every matrix once (norms and the embedding
  /// row are < 0.1% and left out).
  uint64_t decode_bytes() const { return layer_bytes + head_bytes; }
  /// Attention multiply-adds of one token attending to `context` positions (QKᵀ and PV, every
  /// query head).
  double attention_macs(double context) const {
    return 2.0 * n_layers * n_heads * head_dim * context;
  }
};

/// Reads the costs from `file` (read_model_config's tensor names, llama.cpp's GGUF naming).
/// Throws std::runtime_error naming the file when it has no blk.* matrix or no LM head.
ModelCost model_cost(const GgufFile& file);

/// The time-bound of one step of `tokens` new tokens (roofline: the slower of reading the weights
/// once at `gbps` and doing the multiply-adds at the peaks), as tokens/s:
///   tokens / max(weight_bytes / bandwidth,
///                (tokens × layer_macs + logits_rows × head_macs) / matmul_peak
///                + tokens × attention_macs(context) / f32_peak)
/// `weight_bytes` is decode_bytes() (pass a larger figure for packed copies), `logits_rows` the
/// rows of LM head output computed (1 for a prefill that needs only the last token's logits,
/// `tokens` for decode), `context` the mean number of positions each token attends to. Peaks
/// in MAC/s, bandwidth in 1e9 bytes/s. Pure.
double step_bound_tps(const ModelCost& cost, double weight_bytes, double tokens, double logits_rows,
                      double context, double gbps, double matmul_macs_per_s, double f32_fmas_per_s);

}  // namespace plinth::roofline
