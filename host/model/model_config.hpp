// LLaMA-family hyper-parameters read from GGUF metadata, checked against the tensor table.
// Keys as written by llama.cpp's convert_hf_to_gguf.py (gguf-py constants.py,
// Keys.LLM/Attention/Rope).
#pragma once

#include <cstdint>
#include <string>

namespace plinth {

class GgufFile;

/// LLaMA-family hyper-parameters from `<arch>.*` metadata.
struct ModelConfig {
  std::string architecture;     // "llama"
  std::string name;             // general.name or ""
  uint32_t n_layers = 0;        // <arch>.block_count
  uint32_t hidden_size = 0;     // <arch>.embedding_length, elements
  uint32_t n_heads = 0;         // <arch>.attention.head_count (query heads)
  uint32_t n_kv_heads = 0;      // <arch>.attention.head_count_kv, default n_heads
  uint32_t head_dim = 0;        // <arch>.rope.dimension_count, default hidden_size / n_heads
  uint32_t ffn_size = 0;        // <arch>.feed_forward_length (SwiGLU intermediate size)
  uint32_t vocab_size = 0;      // <arch>.vocab_size, else length of tokenizer.ggml.tokens
  uint32_t context_length = 0;  // <arch>.context_length, tokens
  float rope_theta = 10000.0f;  // <arch>.rope.freq_base, default 10000
  float rms_norm_eps = 0.0f;    // <arch>.attention.layer_norm_rms_epsilon
  bool rope_neox = false;  // false: GGML "normal" RoPE on adjacent pairs (llama), true: NeoX halves
  bool tied_embeddings = false;  // true when there is no output.weight (LM head = token_embd)
};

/// Reads and checks the config of a LLaMA-family model. Throws GgufError for a non-LLaMA-family
/// architecture (naming it and the supported ones), for missing/inconsistent keys (naming the key)
/// and for a missing tensor of the forward pass or one with the wrong shape (naming the tensor,
/// its dims and the expected dims). Shapes checked, ggml order: token_embd.weight {hidden, vocab},
/// output_norm.weight {hidden}, output.weight {hidden, vocab} when present, and per layer N:
/// blk.N.attn_norm/ffn_norm {hidden}, attn_q {hidden, heads*head_dim}, attn_k/attn_v
/// {hidden, kv_heads*head_dim}, attn_output {heads*head_dim, hidden}, ffn_gate/ffn_up
/// {hidden, ffn}, ffn_down {ffn, hidden}.
ModelConfig read_model_config(const GgufFile& file);

}  // namespace plinth
