// llama (also Mistral, SmolLM2, Llama 2/3.x in GGUF): the plain pre-norm block — RMSNorm, Q/K/V,
// GGML "normal" RoPE over the whole head (llama.cpp refuses rope.dimension_count != head dim for
// llama), causal GQA attention, output projection, RMSNorm, SwiGLU. Llama 3.1/3.2 files carry
// their RoPE scaling as rope_freqs.weight (per-pair frequency divisors), read here; llama.cpp's
// src/models/llama.cpp. Its optional bias tensors (attn_output.bias, ffn_*.bias) and experts are
// not implemented: such a file is refused (expert_count here, the biases as unread tensors).
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_llama(const ArchReader& r, ModelConfig& c) {
  if (c.rope_dims != c.head_dim) {
    r.fail_key(r.key("rope.dimension_count"), "partial RoPE (" + std::to_string(c.rope_dims) +
                                                  " of " + std::to_string(c.head_dim) +
                                                  " head dims) is not supported for llama");
  }
  if (r.u32_or("expert_count", 1) > 1) {
    r.fail_key(r.key("expert_count"), "mixture-of-experts layers are not implemented");
  }
  c.rope_neox = false;
  read_rope_freq_factors(r, c);
}

}  // namespace plinth::arch
