// gemma3 (Gemma 3 text models): llama.cpp's src/models/gemma3.cpp —
//  - embeddings scaled by sqrt(hidden) (float sqrtf, as ggml_scale);
//  - per-head RMSNorm of q and k before NeoX RoPE; the attention scale 1/sqrt(head_dim), or
//    1/sqrt(hidden / heads) for the 62-layer 27B (llama.cpp's f_attention_scale);
//  - RMSNorm of the attention and FFN outputs before each residual add (post_attention_norm,
//    post_ffw_norm; the GGUF weights already hold Gemma's +1);
//  - GELU-tanh gated FFN;
//  - sliding-window layers when attention.sliding_window > 0: layer il is local unless
//    il % pattern == pattern - 1 (attention.sliding_window_pattern, default 6: 5 local, 1
//    global; or a per-layer bool array), local layers with rope.freq_base_swa (default 10000)
//    and no RoPE scaling, global ones with rope.freq_base and rope.scaling;
//  - final_logit_softcapping when present.
#include <cmath>

#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {
namespace {

// is_swa per layer, llama.cpp's load_swa_pattern(ml, 6) + set_swa_pattern.
std::vector<bool> swa_layers(const ArchReader& r, uint32_t n_layers) {
  const GgufFile& f = r.file();
  const std::string k = r.key("attention.sliding_window_pattern");
  r.consume("attention.sliding_window_pattern");
  std::vector<bool> out(n_layers);
  if (f.has(k) && !f.find_uint(k).has_value()) {
    const std::vector<int64_t> v = f.get_int_array(k);
    if (v.size() != n_layers) {
      r.fail_key(k, "has " + std::to_string(v.size()) + " entries for " + std::to_string(n_layers) +
                        " layers");
    }
    for (uint32_t l = 0; l < n_layers; ++l) out[l] = v[l] != 0;
    return out;
  }
  const uint64_t pattern = f.find_uint(k).value_or(6);
  for (uint32_t l = 0; l < n_layers; ++l) {
    out[l] = pattern == 0 || (l % pattern < pattern - 1);
  }
  return out;
}

}  // namespace

void read_gemma3(const ArchReader& r, ModelConfig& c) {
  c.rope_neox = true;
  c.features |= sdk::kEmbedScale | sdk::kQkNorm | sdk::kPostNorms | sdk::kGeluTanh;
  c.embed_scale = std::sqrt(static_cast<float>(c.hidden_size));
  if (c.n_layers == 62) {  // llama.cpp's LLM_TYPE_27B: float(n_embd / n_head), integer division
    const uint32_t per_head = c.hidden_size / c.n_heads;
    c.attn_scale = 1.0f / std::sqrt(static_cast<float>(per_head));
    c.features |= sdk::kAttnScale;
  }
  const double softcap = r.f64("final_logit_softcapping").value_or(0.0);
  if (softcap != 0.0) {
    if (!(softcap > 0.0) || !std::isfinite(softcap)) {
      r.fail_key(r.key("final_logit_softcapping"), "must be finite and > 0");
    }
    c.logit_softcap = static_cast<float>(softcap);
    c.features |= sdk::kLogitSoftcap;
  }
  r.consume("attention.sliding_window");
  const uint64_t window = r.file().find_uint(r.key("attention.sliding_window")).value_or(0);
  if (window > (1u << 30)) r.fail_key(r.key("attention.sliding_window"), "is above 2^30");
  const double base_swa = r.f64("rope.freq_base_swa").value_or(10000.0);
  if (window == 0) return;
  const std::vector<bool> swa = swa_layers(r, c.n_layers);
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    if (!swa[l]) continue;
    c.layers[l].sliding_window = static_cast<int64_t>(window);
    c.layers[l].rope_base = base_swa;
    c.layers[l].rope_scale = 1.0;
  }
}

}  // namespace plinth::arch
