#include "memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace plinth::cuda {
namespace {

constexpr uint64_t kF32 = 4;
constexpr uint64_t kBf16 = 2;
constexpr uint64_t kI32 = 4;

uint64_t mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    throw std::invalid_argument("backend_cuda memory plan: size overflows 64 bits (" +
                                std::to_string(a) + " * " + std::to_string(b) + ")");
  }
  return a * b;
}

uint64_t add(uint64_t a, uint64_t b) {
  if (b > std::numeric_limits<uint64_t>::max() - a) {
    throw std::invalid_argument("backend_cuda memory plan: size overflows 64 bits");
  }
  return a + b;
}

void require(uint64_t v, const char* field) {
  if (v == 0) {
    throw std::invalid_argument(std::string("backend_cuda memory plan: ") + field +
                                " is 0; the model config must give it");
  }
}

std::string mib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

ActivationPlan plan_activations(const plinth_model_config& c, uint32_t max_num_tokens,
                                uint32_t max_num_seqs) {
  require(c.hidden_size, "config.hidden_size");
  require(c.n_heads, "config.n_heads");
  require(c.n_kv_heads, "config.n_kv_heads");
  require(c.head_dim, "config.head_dim");
  require(c.ffn_size, "config.ffn_size");
  require(c.vocab_size, "config.vocab_size");
  require(max_num_tokens, "max_num_tokens");
  require(max_num_seqs, "max_num_seqs");
  const uint64_t t = max_num_tokens;
  const uint64_t s = max_num_seqs;
  const uint64_t h = c.hidden_size;
  const uint64_t q_dim = mul(c.n_heads, c.head_dim);
  const uint64_t kv_dim = mul(c.n_kv_heads, c.head_dim);
  const uint64_t f = c.ffn_size;
  ActivationPlan p;
  p.logits_rows = std::min(max_num_seqs, max_num_tokens);
  const uint64_t l = p.logits_rows;
  p.residual = mul(mul(t, h), kF32);
  p.hidden = p.residual;
  p.gemm_input = mul(mul(t, std::max({h, q_dim, f})), kBf16);
  p.q = mul(mul(t, q_dim), kF32);
  p.k = mul(mul(t, kv_dim), kF32);
  p.v = p.k;
  p.attn_out = p.q;
  p.ffn_gate = mul(mul(t, f), kF32);
  p.ffn_up = p.ffn_gate;
  p.logits = mul(mul(l, c.vocab_size), kF32);
  p.argmax_ids = mul(l, kI32);
  p.batch_meta = mul(add(add(mul(3, t), s + 1), add(s, l)), kI32);
  for (uint64_t b : {p.residual, p.hidden, p.gemm_input, p.q, p.k, p.v, p.attn_out, p.ffn_gate,
                     p.ffn_up, p.logits, p.argmax_ids, p.batch_meta}) {
    p.total = add(p.total, b);
  }
  return p;
}

uint64_t block_table_bytes(uint32_t max_num_seqs, uint32_t context_length, uint32_t block_size) {
  if (block_size == 0) {
    throw std::invalid_argument("backend_cuda memory plan: block_size is 0");
  }
  const uint64_t blocks = (static_cast<uint64_t>(context_length) + block_size - 1) / block_size;
  return mul(mul(max_num_seqs, blocks), kI32);
}

uint64_t weight_bytes_bf16(const plinth_model_config& c) {
  const uint64_t h = c.hidden_size;
  const uint64_t q_dim = mul(c.n_heads, c.head_dim);
  const uint64_t kv_dim = mul(c.n_kv_heads, c.head_dim);
  const uint64_t f = c.ffn_size;
  const uint64_t per_layer = add(add(mul(2, h),                     // attn_norm, ffn_norm
                                     add(mul(2, mul(q_dim, h)),     // attn_q, attn_output
                                         mul(2, mul(kv_dim, h)))),  // attn_k, attn_v
                                 mul(3, mul(f, h)));                // gate, up, down
  const uint64_t embd = mul(c.vocab_size, h);
  uint64_t elements = add(add(embd, h), mul(c.n_layers, per_layer));  // + output_norm
  if (c.tied_embeddings == 0) elements = add(elements, embd);         // output.weight
  return mul(elements, kBf16);
}

uint64_t kv_bytes_per_token_bf16(const plinth_model_config& c) {
  return mul(mul(mul(2, c.n_layers), mul(c.n_kv_heads, c.head_dim)), kBf16);
}

KvPoolPlan plan_kv_pool(uint64_t free_bytes, double memory_fraction, uint64_t bytes_per_block) {
  if (!(memory_fraction > 0.0 && memory_fraction <= 1.0)) {
    throw std::invalid_argument("backend_cuda: memory_fraction = " +
                                std::to_string(memory_fraction) + " must be in (0, 1]");
  }
  if (bytes_per_block == 0) {
    throw std::invalid_argument(
        "backend_cuda: bytes_per_block is 0 (block_size or the KV "
        "layout is 0)");
  }
  const long double usable_ld =
      std::floor(static_cast<long double>(free_bytes) * static_cast<long double>(memory_fraction));
  const uint64_t usable = usable_ld >= static_cast<long double>(free_bytes)
                              ? free_bytes
                              : static_cast<uint64_t>(usable_ld);
  KvPoolPlan p;
  p.num_blocks = usable / bytes_per_block;
  p.bytes = p.num_blocks * bytes_per_block;
  if (p.num_blocks == 0) {
    char frac[32];
    std::snprintf(frac, sizeof frac, "%.2f", memory_fraction);
    throw std::runtime_error(
        "backend_cuda: too little device memory for the KV cache: " + mib(free_bytes) +
        " free after the weights and activation buffers, memory_fraction " + frac + " gives " +
        mib(usable) + ", but one KV block needs " + mib(bytes_per_block) +
        "; lower max_num_tokens (smaller activation buffers), raise memory_fraction (at most "
        "1), use a smaller block_size, free the GPU of other processes, or use a smaller model");
  }
  return p;
}

}  // namespace plinth::cuda
