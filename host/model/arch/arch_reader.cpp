// ArchReader and the hyper-parameters every architecture shares (llama.cpp's
// llama_model::load_hparams, src/llama-model.cpp).
#include "model/arch/arch_reader.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "model/ggml_quantize.hpp"

namespace plinth::arch {

uint32_t ArchReader::check_u32(const std::string& k, uint64_t v) const {
  if (v == 0 || v > std::numeric_limits<uint32_t>::max()) {
    fail_key(k, "value " + std::to_string(v) + " outside 1..2^32-1");
  }
  return static_cast<uint32_t>(v);
}

uint32_t ArchReader::u32(const std::string& suffix) const {
  consumed_.insert(key(suffix));
  return check_u32(key(suffix), f_.get_uint(key(suffix)));
}

uint32_t ArchReader::u32_or(const std::string& suffix, uint32_t fallback) const {
  consumed_.insert(key(suffix));
  const auto v = f_.find_uint(key(suffix));
  return v ? check_u32(key(suffix), *v) : fallback;
}

std::optional<double> ArchReader::f64(const std::string& suffix) const {
  consumed_.insert(key(suffix));
  return f_.find_float(key(suffix));
}

double ArchReader::f64_req(const std::string& suffix) const {
  consumed_.insert(key(suffix));
  return f_.get_float(key(suffix));
}

void ArchReader::fail_key(const std::string& full_key, const std::string& what) const {
  throw GgufError(f_.path(), f_.has(full_key) ? f_.offset_of(full_key) : 0, full_key, what);
}

namespace {

void read_head_dims(const ArchReader& r, ModelConfig& c) {
  if (!r.has("attention.key_length") && c.hidden_size % c.n_heads != 0) {
    r.fail_key(r.key("attention.head_count"),
               std::to_string(c.n_heads) + " heads do not divide hidden size " +
                   std::to_string(c.hidden_size) + " and attention.key_length is absent");
  }
  c.head_dim = r.u32_or("attention.key_length", c.hidden_size / c.n_heads);
  if (r.u32_or("attention.value_length", c.head_dim) != c.head_dim) {
    r.fail_key(r.key("attention.value_length"), "value head dim differs from key head dim");
  }
  c.rope_dims = r.u32_or("rope.dimension_count", c.head_dim);
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0) {
    r.fail_key(r.key("rope.dimension_count"),
               std::to_string(c.rope_dims) + " rotated dims must be even and at most head dim " +
                   std::to_string(c.head_dim));
  }
}

void read_vocab(const ArchReader& r, ModelConfig& c) {
  const GgufFile& f = r.file();
  if (r.has("vocab_size")) {
    c.vocab_size = r.u32("vocab_size");
  } else if (f.has("tokenizer.ggml.tokens")) {
    const uint64_t n = f.array_size("tokenizer.ggml.tokens");
    if (n == 0 || n > std::numeric_limits<uint32_t>::max()) {
      r.fail_key("tokenizer.ggml.tokens", "token count " + std::to_string(n) + " out of range");
    }
    c.vocab_size = static_cast<uint32_t>(n);
  } else {
    r.fail_key(r.key("vocab_size"),
               "vocab size unknown: neither this key nor tokenizer.ggml.tokens is present");
  }
}

// rope.scaling.type (llama.cpp: absent = "linear") and its factor, as every layer's scale.
double read_rope_scale(const ArchReader& r) {
  const GgufFile& f = r.file();
  r.consume("rope.scaling.type");
  const std::string type = f.find_string(r.key("rope.scaling.type")).value_or("linear");
  if (type != "linear" && type != "none") {
    r.fail_key(r.key("rope.scaling.type"),
               "RoPE scaling \"" + type +
                   "\" is not implemented (plinth implements \"none\" and \"linear\"; yarn and "
                   "longrope are not)");
  }
  std::optional<double> factor = r.f64("rope.scaling.factor");
  if (!factor) factor = r.f64("rope.scale_linear");
  if (!factor || *factor == 0.0 || type == "none") return 1.0;
  if (!(*factor > 0.0) || !std::isfinite(*factor)) {
    r.fail_key(r.key("rope.scaling.factor"), "must be finite and > 0");
  }
  return 1.0 / *factor;
}

}  // namespace

void read_common(const ArchReader& r, ModelConfig& c) {
  c.n_layers = r.u32("block_count");
  c.hidden_size = r.u32("embedding_length");
  c.n_heads = r.u32("attention.head_count");
  c.n_kv_heads = r.u32_or("attention.head_count_kv", c.n_heads);
  c.ffn_size = r.u32("feed_forward_length");
  c.context_length = r.u32("context_length");
  c.rope_theta = static_cast<float>(r.f64("rope.freq_base").value_or(10000.0));
  if (!(c.rope_theta > 0.0f) || !std::isfinite(c.rope_theta)) {
    r.fail_key(r.key("rope.freq_base"), "must be finite and > 0");
  }
  c.rms_norm_eps = static_cast<float>(r.f64_req("attention.layer_norm_rms_epsilon"));
  if (c.n_heads % c.n_kv_heads != 0) {
    r.fail_key(r.key("attention.head_count_kv"), std::to_string(c.n_kv_heads) +
                                                     " KV heads do not divide " +
                                                     std::to_string(c.n_heads) + " query heads");
  }
  read_head_dims(r, c);
  read_vocab(r, c);
  c.tied_embeddings = r.file().find_tensor("output.weight") == nullptr;
  // Every layer has several tensors: a larger count is a broken file (and must not size the
  // per-layer arrays below).
  if (c.n_layers > r.file().tensors().size()) {
    r.fail_key(r.key("block_count"), std::to_string(c.n_layers) + " layers, but the file has " +
                                         std::to_string(r.file().tensors().size()) + " tensors");
  }
  const double scale = read_rope_scale(r);
  c.layers.assign(c.n_layers, sdk::LayerSpec{c.rope_theta, scale, true, 0});
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
}

void finish_rope_features(ModelConfig& c) {
  if (c.rope_dims < c.head_dim) c.features |= sdk::kPartialRotary;
  for (const sdk::LayerSpec& l : c.layers) {
    if (!l.rope || l.rope_base != static_cast<double>(c.rope_theta) || l.rope_scale != 1.0) {
      c.features |= sdk::kLayerRope;
    }
    if (l.sliding_window > 0) c.features |= sdk::kSlidingWindow;
  }
}

void read_rope_freq_factors(const ArchReader& r, ModelConfig& c) {
  const GgufTensor* t = r.file().find_tensor("rope_freqs.weight");
  if (t == nullptr) return;
  const uint64_t n = c.rope_dims / 2;
  if (t->dims != std::vector<uint64_t>{n}) {
    throw GgufError(
        r.file().path(), t->offset, t->name,
        "RoPE frequency factors must have dims {" + std::to_string(n) + "} (rope dims / 2)");
  }
  if (t->type != GgmlType::kF32 && t->type != GgmlType::kF16 && t->type != GgmlType::kBF16) {
    throw GgufError(r.file().path(), t->offset, t->name,
                    std::string("RoPE frequency factors must be F32, F16 or BF16, not ") +
                        ggml_type_name(t->type));
  }
  c.rope_freq_factors = ggml_dequantize(t->type, std::span<const std::byte>(t->data, t->nbytes), n);
  for (float v : c.rope_freq_factors) {
    if (!std::isfinite(v) || !(v > 0.0f)) {
      throw GgufError(r.file().path(), t->offset, t->name,
                      "RoPE frequency factors must be finite and > 0");
    }
  }
  c.features |= sdk::kRopeFreqFactors;
}

}  // namespace plinth::arch
