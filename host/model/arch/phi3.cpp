// phi3 (Phi-3, Phi-3.5, Phi-4-mini): the llama block with Q/K/V fused into one matrix
// (blk.N.attn_qkv.weight; separate attn_q/k/v are accepted as llama.cpp does), gate and up
// fused into blk.N.ffn_up.weight ({hidden, 2 ffn}: gate rows, then up rows; SwiGLU), NeoX RoPE
// over rope.dimension_count elements of each head (partial rotary when fewer). llama.cpp's
// src/models/phi3.cpp. LongRoPE (rope_factors_long/short, the 128k models) is not implemented
// and refused. phi3.attention.sliding_window is read and not applied, exactly as llama.cpp does
// ("Phi SWA is currently disabled"), so both compute the same logits.
#include "model/arch/arch_adapters.hpp"

namespace plinth::arch {

void read_phi3(const ArchReader& r, ModelConfig& c) {
  const GgufFile& f = r.file();
  for (const char* t : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (const GgufTensor* g = f.find_tensor(t)) {
      throw GgufError(f.path(), g->offset, t,
                      "LongRoPE (the Phi-3 128k models' rope_factors_long/short) is not "
                      "implemented; use a 4k-context Phi-3 file");
    }
  }
  r.consume("attention.sliding_window");  // disabled in llama.cpp; see above
  c.rope_neox = true;
  c.features |= sdk::kFusedGateUp;
  if (f.find_tensor("blk.0.attn_qkv.weight") != nullptr) c.features |= sdk::kFusedQkv;
}

}  // namespace plinth::arch
