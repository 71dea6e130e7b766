// qwen2 (Qwen2, Qwen2.5): the llama block with biases on the Q, K and V projections
// (blk.N.attn_{q,k,v}.bias) and NeoX RoPE; llama.cpp's src/models/qwen2.cpp.
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_qwen2(const ArchReader& r, ModelConfig& c) {
  (void)r;
  c.rope_neox = true;
  c.features |= sdk::kQkvBias;
}

}  // namespace plinth::arch
