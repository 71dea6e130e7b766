// granite (IBM Granite 3.x dense): the llama block (GGML "normal" RoPE over the whole head,
// SwiGLU) with Granite's four multipliers, as llama.cpp's src/models/granite.cpp applies them:
//  - granite.embedding_scale: the token embeddings multiplied by it (llama-graph.cpp's
//    build_inp_embd);
//  - granite.attention.scale: the q.k scale instead of 1/sqrt(head_dim);
//  - granite.residual_scale: the attention and FFN outputs multiplied by it before each
//    residual add;
//  - granite.logit_scale (required): the logits divided by it (multiplied by 1.0f / scale);
// each absent or 0 meaning "not applied", as llama.cpp reads them. granite.rope.scaling.finetuned
// false turns RoPE off in every layer (llama.cpp's rope_pattern). rope_freqs.weight is read as
// for llama. Not implemented, so refused: experts (granitemoe; granite.expert_count), the Granite 4
// Vision deepstack mapping, and the optional attn_output / ffn biases (unread tensors).
#include <cmath>

#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {
namespace {

// An optional multiplier: nullopt when absent or 0 (llama.cpp's "not set"), else finite and > 0.
std::optional<float> multiplier(const ArchReader& r, const std::string& suffix) {
  const double v = r.f64(suffix).value_or(0.0);
  if (v == 0.0) return std::nullopt;
  if (!std::isfinite(v) || !(v > 0.0)) r.fail_key(r.key(suffix), "must be finite and > 0");
  return static_cast<float>(v);
}

}  // namespace

void read_granite(const ArchReader& r, ModelConfig& c) {
  if (c.rope_dims != c.head_dim) {
    r.fail_key(r.key("rope.dimension_count"), "partial RoPE (" + std::to_string(c.rope_dims) +
                                                  " of " + std::to_string(c.head_dim) +
                                                  " head dims) is not supported for granite");
  }
  if (r.u32_or("expert_count", 1) > 1) {
    r.fail_key(r.key("expert_count"), "mixture-of-experts layers are not implemented");
  }
  if (r.has("deepstack_mapping")) {
    r.fail_key(r.key("deepstack_mapping"),
               "Granite Vision's deepstack layers are not implemented (a text-only granite file "
               "has no such key)");
  }
  c.rope_neox = false;
  if (const auto s = multiplier(r, "embedding_scale")) {
    c.embed_scale = *s;
    c.features |= sdk::kEmbedScale;
  }
  if (const auto s = multiplier(r, "attention.scale")) {
    c.attn_scale = *s;
    c.features |= sdk::kAttnScale;
  }
  if (const auto s = multiplier(r, "residual_scale")) {
    c.residual_scale = *s;
    c.features |= sdk::kResidualScale;
  }
  const double logit = r.f64_req("logit_scale");
  if (!std::isfinite(logit) || !(logit > 0.0)) {
    r.fail_key(r.key("logit_scale"), "must be finite and > 0");
  }
  c.logit_scale = 1.0f / static_cast<float>(logit);
  c.features |= sdk::kLogitScale;
  r.consume("rope.scaling.finetuned");
  const std::string finetuned = r.key("rope.scaling.finetuned");
  if (r.file().has(finetuned) && !r.file().get_bool(finetuned)) {
    for (sdk::LayerSpec& l : c.layers) l.rope = false;
  }
  read_rope_freq_factors(r, c);
}

}  // namespace plinth::arch
