// olmo2 (OLMo 2): a block that normalizes outputs only, as llama.cpp's src/models/olmo2.cpp —
//  - no attn_norm / ffn_norm: attention and FFN read the residual stream itself;
//  - RMSNorm of the whole q ({hidden}) and k ({kv heads * head_dim}) projections (one norm over
//    all heads) before NeoX RoPE;
//  - RMSNorm of the attention and FFN outputs before each residual add (post_attention_norm,
//    post_ffw_norm); SwiGLU; attention scale 1/sqrt(head_dim); untied output.weight.
// q's width is the hidden size (llama.cpp creates attn_q {hidden, hidden}), so a head dim other
// than hidden / heads is refused. Olmo 3's sliding-window layers (olmo2.attention.sliding_window
// > 0) are not implemented: such a file is refused naming the key (model_config.cpp).
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_olmo2(const ArchReader& r, ModelConfig& c) {
  if (c.head_dim * c.n_heads != c.hidden_size) {
    r.fail_key(r.key("attention.key_length"),
               "olmo2 needs head dim = hidden / heads (" + std::to_string(c.hidden_size) + " / " +
                   std::to_string(c.n_heads) + "), not " + std::to_string(c.head_dim));
  }
  if (c.rope_dims != c.head_dim) {
    r.fail_key(r.key("rope.dimension_count"), "partial RoPE (" + std::to_string(c.rope_dims) +
                                                  " of " + std::to_string(c.head_dim) +
                                                  " head dims) is not supported for olmo2");
  }
  c.rope_neox = true;
  c.features |= sdk::kNoPreNorms | sdk::kQkNormFull | sdk::kPostNorms;
}

}  // namespace plinth::arch
