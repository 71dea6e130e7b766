// read_model_config: LLaMA hyper-parameters from `<arch>.*` keys, then a shape check of every
// tensor the forward pass reads, so a backend can index them without further checks.
#include "model/model_config.hpp"

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "model/gguf.hpp"

namespace plinth {
namespace {

// Architectures whose GGUF tensor layout and hyper-parameter keys are exactly llama's. Others of
// the family (granite, mistral3, ...) add scaling keys or tensors and are refused, not misread.
constexpr std::array<const char*, 1> kSupportedArchs = {"llama"};

std::string supported_archs() {
  std::string out;
  for (const char* a : kSupportedArchs) out += (out.empty() ? "" : ", ") + std::string(a);
  return out;
}

std::string dims_str(const std::vector<uint64_t>& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "}";
}

class ConfigReader {
 public:
  ConfigReader(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  std::string key(const char* suffix) const { return arch_ + "." + suffix; }

  // A required positive integer that fits uint32.
  uint32_t u32(const char* suffix) const {
    return check_u32(key(suffix), f_.get_uint(key(suffix)));
  }

  uint32_t u32_or(const char* suffix, uint32_t fallback) const {
    const auto v = f_.find_uint(key(suffix));
    return v ? check_u32(key(suffix), *v) : fallback;
  }

  [[noreturn]] void fail_key(const std::string& k, const std::string& what) const {
    throw GgufError(f_.path(), f_.has(k) ? f_.offset_of(k) : 0, k, what);
  }

 private:
  uint32_t check_u32(const std::string& k, uint64_t v) const {
    if (v == 0 || v > std::numeric_limits<uint32_t>::max()) {
      fail_key(k, "value " + std::to_string(v) + " outside 1..2^32-1");
    }
    return static_cast<uint32_t>(v);
  }

  const GgufFile& f_;
  std::string arch_;
};

void expect_tensor(const GgufFile& f, const std::string& name, const std::vector<uint64_t>& want) {
  const GgufTensor* t = f.find_tensor(name);
  if (t == nullptr) {
    throw GgufError(f.path(), 0, name,
                    "tensor required by the llama forward pass is missing (expected dims " +
                        dims_str(want) + ")");
  }
  if (t->dims != want) {
    throw GgufError(f.path(), t->offset, name,
                    "tensor has dims " + dims_str(t->dims) + ", expected " + dims_str(want) +
                        " (ggml order) from the model's hyper-parameters");
  }
}

void check_tensors(const GgufFile& f, const ModelConfig& c) {
  const uint64_t hidden = c.hidden_size;
  const uint64_t q_dim = uint64_t{c.n_heads} * c.head_dim;
  const uint64_t kv_dim = uint64_t{c.n_kv_heads} * c.head_dim;
  expect_tensor(f, "token_embd.weight", {hidden, c.vocab_size});
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    expect_tensor(f, p + "attn_norm.weight", {hidden});
    expect_tensor(f, p + "attn_q.weight", {hidden, q_dim});
    expect_tensor(f, p + "attn_k.weight", {hidden, kv_dim});
    expect_tensor(f, p + "attn_v.weight", {hidden, kv_dim});
    expect_tensor(f, p + "attn_output.weight", {q_dim, hidden});
    expect_tensor(f, p + "ffn_norm.weight", {hidden});
    expect_tensor(f, p + "ffn_gate.weight", {hidden, c.ffn_size});
    expect_tensor(f, p + "ffn_up.weight", {hidden, c.ffn_size});
    expect_tensor(f, p + "ffn_down.weight", {c.ffn_size, hidden});
  }
  expect_tensor(f, "output_norm.weight", {hidden});
  if (!c.tied_embeddings) expect_tensor(f, "output.weight", {hidden, c.vocab_size});
}

}  // namespace

ModelConfig read_model_config(const GgufFile& file) {
  ModelConfig c;
  c.architecture = file.get_string("general.architecture");
  bool supported = false;
  for (const char* a : kSupportedArchs) supported = supported || c.architecture == a;
  if (!supported) {
    throw GgufError(
        file.path(), file.offset_of("general.architecture"), "general.architecture",
        "architecture '" + c.architecture + "' is not supported; supported: " + supported_archs());
  }
  c.name = file.find_string("general.name").value_or("");
  const ConfigReader r(file, c.architecture);

  c.n_layers = r.u32("block_count");
  c.hidden_size = r.u32("embedding_length");
  c.n_heads = r.u32("attention.head_count");
  c.n_kv_heads = r.u32_or("attention.head_count_kv", c.n_heads);
  c.ffn_size = r.u32("feed_forward_length");
  c.context_length = r.u32("context_length");
  c.rope_theta = static_cast<float>(file.find_float(r.key("rope.freq_base")).value_or(10000.0));
  c.rms_norm_eps = static_cast<float>(file.get_float(r.key("attention.layer_norm_rms_epsilon")));
  c.rope_neox = false;  // llama GGUFs use GGML "normal" RoPE (adjacent pairs)

  if (c.n_heads % c.n_kv_heads != 0) {
    r.fail_key(r.key("attention.head_count_kv"), std::to_string(c.n_kv_heads) +
                                                     " KV heads do not divide " +
                                                     std::to_string(c.n_heads) + " query heads");
  }
  // head_dim: attention.key_length when given (llama.cpp's n_embd_head_k), else
  // rope.dimension_count, else hidden / heads. RoPE must rotate the whole head.
  const bool has_rope_dims = file.has(r.key("rope.dimension_count"));
  if (!has_rope_dims && !file.has(r.key("attention.key_length")) &&
      c.hidden_size % c.n_heads != 0) {
    r.fail_key(r.key("attention.head_count"),
               std::to_string(c.n_heads) + " heads do not divide hidden size " +
                   std::to_string(c.hidden_size) + " and no head dim key is present");
  }
  c.head_dim =
      r.u32_or("attention.key_length", r.u32_or("rope.dimension_count", c.hidden_size / c.n_heads));
  if (has_rope_dims && r.u32("rope.dimension_count") != c.head_dim) {
    r.fail_key(r.key("rope.dimension_count"),
               "partial RoPE (" + std::to_string(r.u32("rope.dimension_count")) + " of " +
                   std::to_string(c.head_dim) + " head dims) is not supported");
  }
  if (file.has(r.key("attention.value_length")) && r.u32("attention.value_length") != c.head_dim) {
    r.fail_key(r.key("attention.value_length"), "value head dim differs from key head dim");
  }

  if (file.has(r.key("vocab_size"))) {
    c.vocab_size = r.u32("vocab_size");
  } else if (file.has("tokenizer.ggml.tokens")) {
    const uint64_t n = file.array_size("tokenizer.ggml.tokens");
    if (n == 0 || n > std::numeric_limits<uint32_t>::max()) {
      r.fail_key("tokenizer.ggml.tokens", "token count " + std::to_string(n) + " out of range");
    }
    c.vocab_size = static_cast<uint32_t>(n);
  } else {
    r.fail_key(r.key("vocab_size"),
               "vocab size unknown: neither this key nor tokenizer.ggml.tokens is present");
  }

  c.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  check_tensors(file, c);
  return c;
}

}  // namespace plinth
