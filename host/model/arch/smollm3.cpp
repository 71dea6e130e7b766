// smollm3 (SmolLM3): the llama block (GGML "normal" RoPE over the whole head, SwiGLU) with NoPE
// layers: layer il applies no RoPE when (il + 1) % 4 == 0 (llama.cpp's n_no_rope_layer_step = 4,
// fixed in src/models/smollm3.cpp; the converter writes no key for it). Attention scale
// 1/sqrt(head_dim); rope_freqs.weight is not read by llama.cpp's smollm3 graph, so a file with it
// is refused (an unread tensor).
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_smollm3(const ArchReader& r, ModelConfig& c) {
  if (c.rope_dims != c.head_dim) {
    r.fail_key(r.key("rope.dimension_count"), "partial RoPE (" + std::to_string(c.rope_dims) +
                                                  " of " + std::to_string(c.head_dim) +
                                                  " head dims) is not supported for smollm3");
  }
  c.rope_neox = false;
  constexpr uint32_t kNoRopeLayerStep = 4;
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    if ((l + 1) % kNoRopeLayerStep == 0) c.layers[l].rope = false;
  }
}

}  // namespace plinth::arch
