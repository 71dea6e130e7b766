// qwen3 (Qwen3 dense): the llama block with a per-head RMSNorm of q and k before RoPE
// (blk.N.attn_{q,k}_norm.weight, head_dim elements), NeoX RoPE, no biases; llama.cpp's
// src/models/qwen3.cpp.
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_qwen3(const ArchReader& r, ModelConfig& c) {
  (void)r;
  c.rope_neox = true;
  c.features |= sdk::kQkNorm;
}

}  // namespace plinth::arch
