// make_synthetic_model: SmolLM2-135M's metadata and tensor table with seeded random weights
// (synthetic_model.hpp).
#include "model/synthetic_model.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/ggml_quantize.hpp"
#include "model/gguf.hpp"
#include "model/layer_selection.hpp"
#include "model/model_config.hpp"

namespace plinth {
namespace {

using S = SmolLm2Shape;

constexpr double kProjectionStd = 0.02;
constexpr double kEmbeddingStd = 0.02;
constexpr double kNormStd = 0.1;

// The GPT-2 byte-to-unicode table (openai/gpt-2 encoder.py bytes_to_unicode) as UTF-8 strings:
// printable Latin-1 bytes stand for themselves, the other 68 for U+0100.. in byte order. The host's
// tokenizer (tokenizer/byte_unicode.hpp) holds the same table; tests compare the two.
std::vector<std::string> byte_strings() {
  std::vector<std::string> out(256);
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const char32_t cp = printable ? static_cast<char32_t>(b) : next++;
    std::string& s = out[static_cast<size_t>(b)];
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {  // below U+0800: two bytes
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<float> synthetic_normals(uint64_t seed, const std::string& name, size_t n, double mean,
                                     double std_dev) {
  std::mt19937_64 g(splitmix64(seed ^ fnv1a(name)));
  std::vector<float> v(n);
  constexpr double kInv53 = 1.0 / 9007199254740992.0;  // 2^-53
  for (size_t i = 0; i < n; i += 2) {
    const double u1 = static_cast<double>((g() >> 11) + 1) * kInv53;  // (0, 1]
    const double u2 = static_cast<double>(g() >> 11) * kInv53;        // [0, 1)
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    v[i] = static_cast<float>(mean + std_dev * r * std::cos(a));
    if (i + 1 < n) v[i + 1] = static_cast<float>(mean + std_dev * r * std::sin(a));
  }
  return v;
}

namespace {

std::vector<float> normals(uint64_t seed, const std::string& name, size_t n, double mean,
                           double std_dev) {
  return synthetic_normals(seed, name, n, mean, std_dev);
}

enum class Role { kEmbedding, kProjection, kNorm };

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order
  Role role;
};

// The real file's tensor order: token_embd, per block attn_norm, ffn_down, ffn_gate, ffn_up,
// ffn_norm, attn_k, attn_output, attn_q, attn_v, then output_norm.
std::vector<TensorSpec> block_tensors(uint32_t l) {
  const std::string p = "blk." + std::to_string(l) + ".";
  const uint64_t h = S::kHidden, q = uint64_t{S::kHeads} * S::kHeadDim,
                 kv = uint64_t{S::kKvHeads} * S::kHeadDim, f = S::kFfn;
  return {{p + "attn_norm.weight", {h}, Role::kNorm},
          {p + "ffn_down.weight", {f, h}, Role::kProjection},
          {p + "ffn_gate.weight", {h, f}, Role::kProjection},
          {p + "ffn_up.weight", {h, f}, Role::kProjection},
          {p + "ffn_norm.weight", {h}, Role::kNorm},
          {p + "attn_k.weight", {h, kv}, Role::kProjection},
          {p + "attn_output.weight", {q, h}, Role::kProjection},
          {p + "attn_q.weight", {h, q}, Role::kProjection},
          {p + "attn_v.weight", {h, kv}, Role::kProjection}};
}

GgmlType type_of(Role role, GgmlType dtype) {
  if (role == Role::kNorm) return GgmlType::kF32;
  if (role == Role::kEmbedding && (dtype == GgmlType::kQ4_0 || dtype == GgmlType::kQ4_1)) {
    return GgmlType::kQ8_0;
  }
  return dtype;
}

void add_random(GgufWriter& w, const TensorSpec& t, const SyntheticModelOptions& o) {
  uint64_t n = 1;
  for (const uint64_t d : t.dims) n *= d;
  const double mean = t.role == Role::kNorm ? 1.0 : 0.0;
  const double std_dev = t.role == Role::kNorm        ? kNormStd
                         : t.role == Role::kEmbedding ? kEmbeddingStd
                                                      : kProjectionStd;
  const std::vector<float> v = normals(o.seed, t.name, static_cast<size_t>(n), mean, std_dev);
  const GgmlType type = type_of(t.role, o.dtype);
  w.add_tensor(t.name, type, t.dims, ggml_quantize(type, v));
}

[[noreturn]] void bad(const std::string& message) {
  throw std::invalid_argument(message);
}

// The source's hyper-parameters must be SmolLM2-135M's.
void check_shape(const GgufFile& f) {
  const ModelConfig c = read_model_config(f);
  auto expect = [&](const char* key, double got, double want) {
    if (std::fabs(got - want) > 1e-6 * std::fabs(want)) {
      bad("--from: " + f.path() + " is not SmolLM2-135M: " + key + " is " + std::to_string(got) +
          ", SmolLM2-135M has " + std::to_string(want) +
          " (give models/SmolLM2-135M-Instruct.Q4_1.gguf or a file of its shape)");
    }
  };
  expect("llama.embedding_length", c.hidden_size, S::kHidden);
  expect("llama.attention.head_count", c.n_heads, S::kHeads);
  expect("llama.attention.head_count_kv", c.n_kv_heads, S::kKvHeads);
  expect("head dim", c.head_dim, S::kHeadDim);
  expect("llama.feed_forward_length", c.ffn_size, S::kFfn);
  expect("vocab size", c.vocab_size, S::kVocab);
  expect("llama.context_length", c.context_length, S::kContext);
  expect("llama.rope.freq_base", c.rope_theta, S::kRopeTheta);
  expect("llama.attention.layer_norm_rms_epsilon", c.rms_norm_eps, S::kRmsEps);
  if (!c.tied_embeddings) bad("--from: " + f.path() + " has an output.weight; SmolLM2 ties it");
}

void add_architecture(GgufWriter& w, const SyntheticModelOptions& o) {
  w.add_string("general.architecture", "llama");
  w.add_string("general.type", "model");
  w.add_string("general.name", "SmolLM2-135M synthetic (seed " + std::to_string(o.seed) + ")");
  w.add_u32("llama.block_count", o.layers);
  w.add_u32("llama.context_length", S::kContext);
  w.add_u32("llama.embedding_length", S::kHidden);
  w.add_u32("llama.feed_forward_length", S::kFfn);
  w.add_u32("llama.attention.head_count", S::kHeads);
  w.add_u32("llama.attention.head_count_kv", S::kKvHeads);
  w.add_f32("llama.rope.freq_base", S::kRopeTheta);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", S::kRmsEps);
  w.add_u32("general.file_type", gguf_file_type(o.dtype));
  w.add_u32("llama.vocab_size", S::kVocab);
  w.add_u32("llama.rope.dimension_count", S::kHeadDim);
}

void copy_tokenizer(GgufWriter& w, const GgufFile& src) {
  if (!src.has("tokenizer.ggml.tokens")) {
    bad("--vocab-from: " + src.path() +
        " has no tokenizer.ggml.tokens; give a GGUF with a tokenizer");
  }
  const uint64_t n = src.array_size("tokenizer.ggml.tokens");
  if (n != S::kVocab) {
    bad("--vocab-from: " + src.path() + " has " + std::to_string(n) +
        " tokens; SmolLM2-135M's vocabulary has " + std::to_string(S::kVocab) +
        " (give models/SmolLM2-135M-Instruct.Q4_1.gguf or omit the option)");
  }
  for (const std::string& key : src.keys()) {
    if (key.starts_with("tokenizer.")) w.add(key, *src.find_value(key));
  }
}

// From the real model: its metadata with block_count = layers and per-layer arrays cut.
void copy_metadata(GgufWriter& w, const GgufFile& src, const SyntheticModelOptions& o) {
  const uint64_t blocks = src.get_uint("llama.block_count");
  for (const std::string& key : src.keys()) {
    GgufValue v = *src.find_value(key);
    if (key == "llama.block_count") {
      v = gguf_uint(GgufValueType::kUint32, o.layers);
    } else if (key == "general.name" && v.type == GgufValueType::kString) {
      std::get<std::string>(v.data) += " (synthetic: " + std::to_string(o.real_layers) +
                                       " real layers, seed " + std::to_string(o.seed) + ")";
    } else if (key.starts_with("llama.") && v.type == GgufValueType::kArray &&
               v.items().size() == blocks) {
      std::get<std::vector<GgufValue>>(v.data).resize(o.layers);
    }
    w.add(key, std::move(v));
  }
}

}  // namespace

uint32_t gguf_file_type(GgmlType dtype) {
  switch (dtype) {
    case GgmlType::kF32:
      return 0;
    case GgmlType::kF16:
      return 1;
    case GgmlType::kQ4_0:
      return 2;
    case GgmlType::kQ4_1:
      return 3;
    case GgmlType::kQ8_0:
      return 7;
    case GgmlType::kBF16:
      return 32;
    // llama_ftype (llama.h) of a file mostly of that type (the K-quants: the _M mix).
    case GgmlType::kQ5_0:
      return 8;
    case GgmlType::kQ5_1:
      return 9;
    case GgmlType::kQ2_K:
      return 10;
    case GgmlType::kQ3_K:
      return 12;
    case GgmlType::kQ4_K:
      return 15;
    case GgmlType::kQ5_K:
      return 17;
    case GgmlType::kQ6_K:
      return 18;
    case GgmlType::kIQ4_NL:
      return 25;
    case GgmlType::kIQ4_XS:
      return 30;
  }
  return 0;
}

void add_synthetic_tokenizer(GgufWriter& w, uint32_t vocab) {
  if (vocab < 259 || vocab > S::kVocab) {
    throw std::invalid_argument("add_synthetic_tokenizer: vocab " + std::to_string(vocab) +
                                " outside 259..49152");
  }
  const std::vector<std::string> bytes = byte_strings();
  std::vector<std::string> tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  std::vector<GgufValue> types(3, gguf_int(GgufValueType::kInt32, 3));  // control
  std::vector<std::string> merges;
  tokens.reserve(vocab);
  types.reserve(vocab);
  merges.reserve(vocab);
  for (int b = 0; b < 256; ++b) tokens.push_back(bytes[static_cast<size_t>(b)]);
  for (int a = 0; a < 256 && tokens.size() < vocab; ++a) {
    for (int b = 0; b < 256 && tokens.size() < vocab; ++b) {
      const std::string& l = bytes[static_cast<size_t>(a)];
      const std::string& r = bytes[static_cast<size_t>(b)];
      tokens.push_back(l + r);
      merges.push_back(l + " " + r);
    }
  }
  types.resize(vocab, gguf_int(GgufValueType::kInt32, 1));  // normal
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "smollm");
  w.add("tokenizer.ggml.tokens", gguf_string_array(tokens));
  w.add("tokenizer.ggml.token_type", gguf_array(GgufValueType::kInt32, std::move(types)));
  w.add("tokenizer.ggml.merges", gguf_string_array(merges));
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  w.add_u32("tokenizer.ggml.unknown_token_id", 0);
  w.add_u32("tokenizer.ggml.padding_token_id", 2);
}

namespace {

// The options against SmolLM2's shape and each other (std::invalid_argument naming the flag).
void check_options(const SyntheticModelOptions& o) {
  if (!o.vocab_only && (o.layers < 1 || o.layers > S::kLayers)) {
    bad("--layers: " + std::to_string(o.layers) + " is outside 1.." + std::to_string(S::kLayers) +
        " (SmolLM2-135M has " + std::to_string(S::kLayers) + " blocks; fewer make a faster test)");
  }
  if (o.from == nullptr && o.real_layers > 0) {
    bad("--real-layers: needs --from REAL.gguf, the model whose layers are copied");
  }
  if (o.real_layers > o.layers) {
    bad("--real-layers: " + std::to_string(o.real_layers) + " is more than --layers " +
        std::to_string(o.layers) + "; give at most --layers");
  }
}

// The metadata: copied from --from (after its shape check), else SmolLM2's architecture and a
// tokenizer (from --vocab-from or the synthetic one).
void add_metadata(GgufWriter& w, const SyntheticModelOptions& o) {
  if (o.from != nullptr) {
    check_shape(*o.from);
    const uint64_t blocks = o.from->get_uint("llama.block_count");
    if (o.real_layers > blocks || o.layers > blocks) {
      bad("--layers / --real-layers: " + o.from->path() + " has only " + std::to_string(blocks) +
          " blocks");
    }
    copy_metadata(w, *o.from, o);
  } else {
    add_architecture(w, o);
    if (o.vocab_from != nullptr) {
      copy_tokenizer(w, *o.vocab_from);
    } else {
      add_synthetic_tokenizer(w);
    }
  }
}

// The source's tensor order; real tensors verbatim, the other blocks random.
void add_tensors_from(GgufWriter& w, const SyntheticModelOptions& o) {
  for (const GgufTensor& t : o.from->tensors()) {
    const int64_t block = gguf_block_index(t.name);
    if (block >= static_cast<int64_t>(o.layers)) continue;
    if (block < static_cast<int64_t>(o.real_layers)) {
      w.add_tensor(t.name, t.type, t.dims,
                   std::span<const std::byte>(t.data, static_cast<size_t>(t.nbytes)));
    } else {
      add_random(w, {t.name, t.dims, t.dims.size() == 1 ? Role::kNorm : Role::kProjection}, o);
    }
  }
}

}  // namespace

GgufWriter make_synthetic_model(const SyntheticModelOptions& o) {
  check_options(o);
  GgufWriter w;
  add_metadata(w, o);
  w.add("plinth.synthetic.seed", gguf_uint(GgufValueType::kUint64, o.seed));
  w.add_u32("plinth.synthetic.real_layers", o.real_layers);
  if (o.vocab_only) return w;

  if (o.from != nullptr) {
    add_tensors_from(w, o);
    return w;
  }
  add_random(w, {"token_embd.weight", {S::kHidden, S::kVocab}, Role::kEmbedding}, o);
  for (uint32_t l = 0; l < o.layers; ++l) {
    for (const TensorSpec& t : block_tensors(l)) add_random(w, t, o);
  }
  add_random(w, {"output_norm.weight", {S::kHidden}, Role::kNorm}, o);
  return w;
}

}  // namespace plinth
