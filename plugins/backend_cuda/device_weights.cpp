#include "device_weights.hpp"

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "weight_convert.hpp"

namespace plinth::cuda {
namespace {

using sdk::Error;

constexpr uint64_t kAlign = 256;  // every tensor starts 256-byte aligned

uint64_t aligned(uint64_t b) {
  return (b + kAlign - 1) / kAlign * kAlign;
}

std::string dims_str(const plinth_tensor_view& t) {
  std::string s = "{";
  for (uint32_t i = 0; i < t.n_dims && i < 4; ++i)
    s += (i > 0 ? ", " : "") + std::to_string(t.dims[i]);
  return s + "}";
}

class TensorTable {
 public:
  explicit TensorTable(const plinth_model_desc& m) : path_(m.path != nullptr ? m.path : "<model>") {
    if (m.num_tensors > 0 && m.tensors == nullptr) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  "model: tensors is NULL with num_tensors=" + std::to_string(m.num_tensors));
    }
    for (uint64_t i = 0; i < m.num_tensors; ++i) {
      if (m.tensors[i].name != nullptr) by_name_[m.tensors[i].name] = &m.tensors[i];
    }
  }
  bool has(const std::string& name) const { return by_name_.count(name) != 0; }
  // The tensor `name` with ggml dims {d0, d1} (d1 = 1: a vector).
  const plinth_tensor_view& get(const std::string& name, int64_t d0, int64_t d1) const {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensor " + name + " is missing (needed by the LLaMA forward pass)");
    }
    const plinth_tensor_view& t = *it->second;
    bool ok = t.n_dims >= 1 && t.n_dims <= 4;
    const uint64_t want[4] = {static_cast<uint64_t>(d0), static_cast<uint64_t>(d1), 1, 1};
    for (uint32_t i = 0; ok && i < 4; ++i) ok = (i < t.n_dims ? t.dims[i] : 1) == want[i];
    if (!ok) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensor " + name + " has dims " + dims_str(t) + ", expected {" +
                      std::to_string(d0) + (d1 != 1 ? ", " + std::to_string(d1) : "") +
                      "} (ggml order)");
    }
    return t;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, const plinth_tensor_view*, std::less<>> by_name_;
};

// Copies host data to device memory at `dst` (synchronous).
void put(void* dst, const void* src, size_t bytes, const std::string& name) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "upload " + name);
}

// A matrix to bf16 at `dst` (device); returns the bytes written.
uint64_t put_matrix(const TensorTable& tab, const std::string& name, int64_t in, int64_t out,
                    unsigned char* dst) {
  const plinth_tensor_view& t = tab.get(name, in, out);
  std::vector<uint16_t> h;
  try {
    h = to_bf16(t);
  } catch (const std::invalid_argument& e) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, tab.path() + ": " + e.what());
  }
  put(dst, h.data(), h.size() * sizeof(uint16_t), name);
  return h.size() * sizeof(uint16_t);
}

// A norm vector to f32 at `dst` (device), exact for F32, F16 and BF16.
void put_norm(const TensorTable& tab, const std::string& name, int64_t n, float* dst) {
  const plinth_tensor_view& t = tab.get(name, n, 1);
  const uint64_t esize = t.dtype == PLINTH_DTYPE_F32 ? 4 : 2;
  if ((t.dtype != PLINTH_DTYPE_F32 && t.dtype != PLINTH_DTYPE_F16 &&
       t.dtype != PLINTH_DTYPE_BF16) ||
      t.data == nullptr || t.nbytes < static_cast<uint64_t>(n) * esize) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                tab.path() + ": norm tensor " + name + " (" + dtype_name(t.dtype) +
                    ") must be F32, F16 or BF16 with " + std::to_string(n) + " elements");
  }
  std::vector<float> h(static_cast<size_t>(n));
  if (t.dtype == PLINTH_DTYPE_F32) {
    std::memcpy(h.data(), t.data, h.size() * sizeof(float));
  } else {
    const auto* src = static_cast<const uint16_t*>(t.data);
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = t.dtype == PLINTH_DTYPE_F16 ? f16_to_f32(src[i]) : bf16_to_f32(src[i]);
    }
  }
  put(dst, h.data(), h.size() * sizeof(float), name);
}

}  // namespace

ModelShape model_shape(const plinth_model_desc& model) {
  const plinth_model_config& c = model.config;
  const std::string path = model.path != nullptr ? model.path : "<model>";
  const std::string arch = c.architecture != nullptr ? c.architecture : "";
  if (arch != "llama") {
    throw Error(PLINTH_ERR_UNSUPPORTED, path + ": architecture \"" + arch +
                                            "\" is not supported by backend_cuda (supported: "
                                            "llama)");
  }
  const auto bad = [&](const std::string& what) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, path + ": model config: " + what);
  };
  const auto as_int = [&](uint32_t v, const char* field) {
    if (v < 1 || v > (1u << 30))
      bad(std::string(field) + " = " + std::to_string(v) + " must be in [1, 2^30]");
    return static_cast<int>(v);
  };
  ModelShape s;
  s.n_layers = as_int(c.n_layers, "n_layers");
  s.hidden = as_int(c.hidden_size, "hidden_size");
  s.n_heads = as_int(c.n_heads, "n_heads");
  s.n_kv_heads = as_int(c.n_kv_heads, "n_kv_heads");
  s.head_dim = as_int(c.head_dim, "head_dim");
  s.ffn = as_int(c.ffn_size, "ffn_size");
  s.vocab = as_int(c.vocab_size, "vocab_size");
  s.context = as_int(c.context_length, "context_length");
  s.rope_theta = c.rope_theta;
  s.rms_eps = c.rms_norm_eps;
  s.rope_neox = c.rope_neox != 0;
  if (s.n_heads % s.n_kv_heads != 0) {
    bad("n_heads=" + std::to_string(s.n_heads) +
        " is not a multiple of n_kv_heads=" + std::to_string(s.n_kv_heads));
  }
  if (s.head_dim % 32 != 0 || s.head_dim > 256) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                path + ": head_dim=" + std::to_string(s.head_dim) +
                    " is not supported by backend_cuda's attention kernel (a multiple of 32, at "
                    "most 256); run this model with backend_cpu");
  }
  if (!(s.rope_theta > 0.0)) bad("rope_theta must be > 0");
  if (!(s.rms_eps >= 0.0f)) bad("rms_norm_eps must be >= 0");
  return s;
}

uint64_t device_weight_bytes(const ModelShape& s, bool tied) {
  const uint64_t h = static_cast<uint64_t>(s.hidden);
  const uint64_t per_layer = 2 * aligned(h * 4) + aligned(uint64_t(s.qkv_dim()) * h * 2) +
                             aligned(h * uint64_t(s.q_dim()) * 2) +
                             aligned(2 * uint64_t(s.ffn) * h * 2) +
                             aligned(h * uint64_t(s.ffn) * 2);
  const uint64_t table = aligned(uint64_t(s.vocab) * h * 2);
  return table * (tied ? 1 : 2) + aligned(h * 4) + per_layer * uint64_t(s.n_layers);
}

DeviceWeights upload_weights(const plinth_model_desc& model) {
  DeviceWeights w;
  w.shape = model_shape(model);
  const ModelShape& s = w.shape;
  const TensorTable tab(model);
  const bool own_head = tab.has("output.weight");
  if (!own_head && model.config.tied_embeddings == 0) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                tab.path() + ": tensor output.weight is missing and tied_embeddings is 0");
  }
  w.memory = DeviceBuffer(device_weight_bytes(s, !own_head), "weights");
  unsigned char* base = w.memory.as<unsigned char>();
  uint64_t off = 0;
  const auto take = [&](uint64_t bytes) {
    unsigned char* p = base + off;
    off += aligned(bytes);
    return p;
  };
  const int64_t h = s.hidden;
  const uint64_t table_bytes = static_cast<uint64_t>(s.vocab) * h * 2;
  unsigned char* embd = take(table_bytes);
  put_matrix(tab, "token_embd.weight", h, s.vocab, embd);
  w.token_embd = reinterpret_cast<const uint16_t*>(embd);
  if (own_head) {
    unsigned char* head = take(table_bytes);
    put_matrix(tab, "output.weight", h, s.vocab, head);
    w.lm_head = reinterpret_cast<const uint16_t*>(head);
  } else {
    w.lm_head = w.token_embd;
  }
  float* onorm = reinterpret_cast<float*>(take(h * 4));
  put_norm(tab, "output_norm.weight", h, onorm);
  w.output_norm = onorm;
  w.layers.resize(static_cast<size_t>(s.n_layers));
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    float* an = reinterpret_cast<float*>(take(h * 4));
    float* fn = reinterpret_cast<float*>(take(h * 4));
    put_norm(tab, p + "attn_norm.weight", h, an);
    put_norm(tab, p + "ffn_norm.weight", h, fn);
    L.attn_norm = an;
    L.ffn_norm = fn;
    unsigned char* qkv = take(static_cast<uint64_t>(s.qkv_dim()) * h * 2);
    uint64_t o = put_matrix(tab, p + "attn_q.weight", h, s.q_dim(), qkv);
    o += put_matrix(tab, p + "attn_k.weight", h, s.kv_dim(), qkv + o);
    put_matrix(tab, p + "attn_v.weight", h, s.kv_dim(), qkv + o);
    L.wqkv = reinterpret_cast<const uint16_t*>(qkv);
    unsigned char* wo = take(static_cast<uint64_t>(h) * s.q_dim() * 2);
    put_matrix(tab, p + "attn_output.weight", s.q_dim(), h, wo);
    L.wo = reinterpret_cast<const uint16_t*>(wo);
    unsigned char* gu = take(2 * static_cast<uint64_t>(s.ffn) * h * 2);
    const uint64_t g = put_matrix(tab, p + "ffn_gate.weight", h, s.ffn, gu);
    put_matrix(tab, p + "ffn_up.weight", h, s.ffn, gu + g);
    L.wgu = reinterpret_cast<const uint16_t*>(gu);
    unsigned char* down = take(static_cast<uint64_t>(h) * s.ffn * 2);
    put_matrix(tab, p + "ffn_down.weight", s.ffn, h, down);
    L.wdown = reinterpret_cast<const uint16_t*>(down);
  }
  return w;
}

}  // namespace plinth::cuda
