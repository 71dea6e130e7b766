// make_arch_model: per-architecture metadata and tensor tables of llama.cpp's converter
// (convert_hf_to_gguf.py: LlamaModel, Qwen2Model, Qwen3Model, Gemma3Model, Phi3MiniModel,
// GraniteModel, Olmo2Model, SmolLM3Model), tiny.
#include "model/synthetic_arch.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "model/ggml_quantize.hpp"
#include "model/ggml_random_blocks.hpp"
#include "model/synthetic_model.hpp"

namespace plinth {
namespace {

constexpr std::array<const char*, 9> kArchs = {"gemma3", "granite", "llama", "llama3", "olmo2",
                                               "phi3",   "qwen2",   "qwen3", "smollm3"};

struct Shape {
  std::string gguf_arch;  // general.architecture
  uint64_t hidden = 128, heads = 4, kv_heads = 2, head_dim = 32, ffn = 256, layers = 4;
  uint64_t vocab = 512, context = 512, rope_dims = 32;
  bool tied = true;
  bool qkv_bias = false, qk_norm = false, post_norms = false, fused = false, rope_freqs = false;
  bool pre_norms = true, qk_norm_full = false;
  bool key_length = false;  // writes attention.key_length / value_length
};

Shape shape_of(const std::string& arch) {
  Shape s;
  s.gguf_arch = arch == "llama3" ? "llama" : arch;
  if (arch == "llama3") {
    s.rope_freqs = true;
    s.tied = false;
  } else if (arch == "qwen2") {
    s.qkv_bias = true;
  } else if (arch == "qwen3") {
    s.qk_norm = true;
    s.hidden = 96;  // q_dim 128 != hidden: Qwen3 sets head_dim apart from hidden / heads
    s.key_length = true;
  } else if (arch == "gemma3") {
    s.qk_norm = s.post_norms = s.key_length = true;
    s.kv_heads = 1;
    s.layers = 6;
  } else if (arch == "phi3") {
    s.fused = true;
    s.rope_dims = 16;
    s.tied = false;
  } else if (arch == "olmo2") {
    s.pre_norms = false;
    s.qk_norm_full = s.post_norms = true;
    s.tied = false;  // llama.cpp's olmo2 requires output.weight
  }
  return s;
}

constexpr std::array<GgmlType, 12> kQuantMix = {GgmlType::kQ6_K, GgmlType::kQ2_K, GgmlType::kQ3_K,
                                                GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kIQ4_XS,
                                                GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kIQ4_NL,
                                                GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0};

struct Writer {
  GgufWriter& w;
  const ArchModelOptions& o;
  size_t matrices = 0;  // quant_mix: matrices written so far

  void tensor(const std::string& name, std::vector<uint64_t> dims, double mean, double std_dev,
              bool matrix) {
    uint64_t n = 1;
    for (const uint64_t d : dims) n *= d;
    const std::vector<float> v =
        synthetic_normals(o.seed, name, static_cast<size_t>(n), mean, std_dev);
    if (matrix && o.quant_mix) {
      const GgmlType type = kQuantMix[matrices++ % kQuantMix.size()];
      w.add_tensor(name, type, std::move(dims), ggml_random_blocks(type, v));
      return;
    }
    const GgmlType type = matrix ? o.dtype : GgmlType::kF32;
    w.add_tensor(name, type, std::move(dims), ggml_quantize(type, v));
  }
  void matrix(const std::string& name, uint64_t in, uint64_t out) {
    tensor(name, {in, out}, 0.0, 1.0 / std::sqrt(static_cast<double>(in)), true);
  }
  void norm(const std::string& name, uint64_t n) { tensor(name, {n}, 1.0, 0.1, false); }
  void bias(const std::string& name, uint64_t n) { tensor(name, {n}, 0.0, 0.1, false); }
};

// Llama 3's RoPE frequency factors (convert_hf_to_gguf.py LlamaModel.generate_extra_tensors,
// rope_type "llama3": factor 8, low_freq_factor 1, high_freq_factor 4, original context 8192).
std::vector<float> llama3_rope_freqs(uint64_t rope_dims, double base) {
  const double factor = 8.0, low = 1.0, high = 4.0, old_ctx = 8192.0;
  const double low_wavelen = old_ctx / low, high_wavelen = old_ctx / high;
  std::vector<float> out;
  for (uint64_t i = 0; i < rope_dims; i += 2) {
    const double freq =
        1.0 / std::pow(base, static_cast<double>(i) / static_cast<double>(rope_dims));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelen < high_wavelen) {
      f = 1.0;
    } else if (wavelen > low_wavelen) {
      f = factor;
    } else {
      const double smooth = (old_ctx / wavelen - low) / (high - low);
      f = 1.0 / ((1.0 - smooth) / factor + smooth);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

void add_metadata(GgufWriter& w, const ArchModelOptions& o, const Shape& s) {
  const std::string a = s.gguf_arch;
  w.add_string("general.architecture", a);
  w.add_string("general.type", "model");
  // No architecture name in general.name: llama.cpp's vocabulary loader keys quirks on it (a
  // "phi3" name makes it look for Phi-3's "</s>" token).
  w.add_string("general.name", "plinth synthetic model (seed " + std::to_string(o.seed) + ")");
  w.add_u32(a + ".block_count", static_cast<uint32_t>(s.layers));
  w.add_u32(a + ".context_length", static_cast<uint32_t>(s.context));
  w.add_u32(a + ".embedding_length", static_cast<uint32_t>(s.hidden));
  w.add_u32(a + ".feed_forward_length", static_cast<uint32_t>(s.ffn));
  w.add_u32(a + ".attention.head_count", static_cast<uint32_t>(s.heads));
  w.add_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.kv_heads));
  const bool gemma = o.arch == "gemma3";
  w.add_f32(a + ".rope.freq_base", gemma ? 1000000.0f : o.arch == "llama3" ? 500000.0f : 10000.0f);
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", gemma ? 1e-6f : 1e-5f);
  if (s.key_length) {
    w.add_u32(a + ".attention.key_length", static_cast<uint32_t>(s.head_dim));
    w.add_u32(a + ".attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  if (a == "llama" || a == "granite" || a == "smollm3") {  // LlamaModel's keys
    w.add_u32(a + ".vocab_size", static_cast<uint32_t>(s.vocab));
    w.add_u32(a + ".rope.dimension_count", static_cast<uint32_t>(s.rope_dims));
  }
  if (a == "granite") {  // Granite 3.3 2B's multipliers (GraniteModel.set_gguf_parameters)
    w.add_f32(a + ".attention.scale", 0.015625f);
    w.add_f32(a + ".embedding_scale", 12.0f);
    w.add_f32(a + ".residual_scale", 0.22f);
    w.add_f32(a + ".logit_scale", 8.0f);
  }
  if (a == "phi3") {
    w.add_u32(a + ".rope.dimension_count", static_cast<uint32_t>(s.rope_dims));
    w.add_u32(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(s.context));
  }
  if (gemma) {
    w.add_u32(a + ".attention.sliding_window", 8);
    w.add_string(a + ".rope.scaling.type", "linear");
    w.add_f32(a + ".rope.scaling.factor", 8.0f);
  }
  w.add_u32("general.file_type", gguf_file_type(o.quant_mix ? GgmlType::kF32 : o.dtype));
  add_synthetic_tokenizer(w, static_cast<uint32_t>(s.vocab));
}

void add_layer(Writer& t, const Shape& s, uint64_t l) {
  const std::string p = "blk." + std::to_string(l) + ".";
  const uint64_t h = s.hidden, q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  if (s.pre_norms) t.norm(p + "attn_norm.weight", h);
  if (s.fused) {
    t.matrix(p + "attn_qkv.weight", h, q + 2 * kv);
  } else {
    t.matrix(p + "attn_q.weight", h, q);
    t.matrix(p + "attn_k.weight", h, kv);
    t.matrix(p + "attn_v.weight", h, kv);
  }
  if (s.qkv_bias) {
    t.bias(p + "attn_q.bias", q);
    t.bias(p + "attn_k.bias", kv);
    t.bias(p + "attn_v.bias", kv);
  }
  if (s.qk_norm) {
    t.norm(p + "attn_q_norm.weight", s.head_dim);
    t.norm(p + "attn_k_norm.weight", s.head_dim);
  }
  if (s.qk_norm_full) {
    t.norm(p + "attn_q_norm.weight", q);
    t.norm(p + "attn_k_norm.weight", kv);
  }
  t.matrix(p + "attn_output.weight", q, h);
  if (s.post_norms) t.norm(p + "post_attention_norm.weight", h);
  if (s.pre_norms) t.norm(p + "ffn_norm.weight", h);
  if (s.fused) {
    t.matrix(p + "ffn_up.weight", h, 2 * s.ffn);
  } else {
    t.matrix(p + "ffn_gate.weight", h, s.ffn);
    t.matrix(p + "ffn_up.weight", h, s.ffn);
  }
  t.matrix(p + "ffn_down.weight", s.ffn, h);
  if (s.post_norms) t.norm(p + "post_ffw_norm.weight", h);
}

}  // namespace

std::span<const char* const> synthetic_architectures() {
  return kArchs;
}

std::span<const GgmlType> synthetic_quant_mix() {
  return kQuantMix;
}

GgufWriter make_arch_model(const ArchModelOptions& o) {
  bool known = false;
  std::string names;
  for (const char* a : kArchs) {
    known = known || o.arch == a;
    names += (names.empty() ? "" : ", ") + std::string(a);
  }
  if (!known) {
    throw std::invalid_argument("--arch: \"" + o.arch + "\" is not a synthetic architecture (" +
                                names + ")");
  }
  Shape s = shape_of(o.arch);
  if (o.quant_mix) {
    if (o.arch != "llama") {
      throw std::invalid_argument("--quant-mix: only with --arch llama (got \"" + o.arch + "\")");
    }
    s.hidden = 256;
    s.ffn = 512;
    s.head_dim = s.rope_dims = 64;
    s.tied = false;  // a random output.weight: the logits depend on every layer, not the echo of
                     // the input token a tied head of a random model gives
  }
  GgufWriter w;
  add_metadata(w, o, s);
  w.add("plinth.synthetic.seed", gguf_uint(GgufValueType::kUint64, o.seed));
  Writer t{w, o};
  t.tensor("token_embd.weight", {s.hidden, s.vocab}, 0.0, 1.0, true);
  if (s.rope_freqs) {
    const std::vector<float> f = llama3_rope_freqs(s.rope_dims, 500000.0);
    w.add_tensor("rope_freqs.weight", GgmlType::kF32, {s.rope_dims / 2},
                 ggml_quantize(GgmlType::kF32, f));
  }
  for (uint64_t l = 0; l < s.layers; ++l) add_layer(t, s, l);
  t.norm("output_norm.weight", s.hidden);
  if (!s.tied) t.matrix("output.weight", s.hidden, s.vocab);
  return w;
}

}  // namespace plinth
