#include "device_weights.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "plinth/ggml_format.hpp"
#include "weight_convert.hpp"

namespace plinth::cuda {
namespace {

using sdk::Error;

constexpr uint64_t kAlign = 256;  // every tensor starts 256-byte aligned

uint64_t aligned(uint64_t b) {
  return (b + kAlign - 1) / kAlign * kAlign;
}

// Copies host data to device memory at `dst` (synchronous).
void put(void* dst, const void* src, size_t bytes, const std::string& name) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "upload " + name);
}

// UNSUPPORTED unless `t` is a matrix type of the SDK's format table (backend_cpu's rule).
void check_matrix_type(const std::string& path, const plinth_tensor_view& t) {
  if (ggml::find_format(t.dtype) != nullptr) return;
  throw Error(PLINTH_ERR_UNSUPPORTED,
              path + ": tensor " + (t.name != nullptr ? t.name : "<unnamed>") + " has ggml " +
                  ggml::describe_type(t.dtype) + ", which backend_cuda cannot read (supported: " +
                  ggml::supported_names() + "); re-quantize the model to one of them");
}

// UNSUPPORTED unless the vector `t` (a norm or bias) is F32, F16 or BF16 with its elements.
void check_vector_type(const std::string& path, const plinth_tensor_view& t) {
  const uint64_t n = t.dims[0];
  const uint64_t esize = t.dtype == PLINTH_DTYPE_F32 ? 4 : 2;
  if ((t.dtype != PLINTH_DTYPE_F32 && t.dtype != PLINTH_DTYPE_F16 &&
       t.dtype != PLINTH_DTYPE_BF16) ||
      t.data == nullptr || t.nbytes < n * esize) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                path + ": vector tensor " + (t.name != nullptr ? t.name : "<unnamed>") + " (" +
                    dtype_name(t.dtype) + ") must be F32, F16 or BF16 with " + std::to_string(n) +
                    " elements");
  }
}

// A matrix (shape checked by sdk::bind_model_tensors) to bf16 at `dst` (device); returns the
// bytes written. UNSUPPORTED for a tensor type weight_convert cannot read, as backend_cpu.
uint64_t put_matrix(const std::string& path, const plinth_tensor_view& t, unsigned char* dst) {
  check_matrix_type(path, t);
  std::vector<uint16_t> h;
  try {
    h = to_bf16(t);
  } catch (const std::invalid_argument& e) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, path + ": " + e.what());
  }
  put(dst, h.data(), h.size() * sizeof(uint16_t), t.name != nullptr ? t.name : "<unnamed>");
  return h.size() * sizeof(uint16_t);
}

// A vector (norm weight or bias; shape checked) to f32 at `dst` (device), exact for F32, F16 and
// BF16; returns the elements written.
uint64_t put_vector(const std::string& path, const plinth_tensor_view& t, float* dst) {
  check_vector_type(path, t);
  std::vector<float> h(static_cast<size_t>(t.dims[0]));
  if (t.dtype == PLINTH_DTYPE_F32) {
    std::memcpy(h.data(), t.data, h.size() * sizeof(float));
  } else {
    const auto* src = static_cast<const uint16_t*>(t.data);
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = t.dtype == PLINTH_DTYPE_F16 ? f16_to_f32(src[i]) : bf16_to_f32(src[i]);
    }
  }
  put(dst, h.data(), h.size() * sizeof(float), t.name != nullptr ? t.name : "<unnamed>");
  return h.size();
}

// The config and architecture description as the kernels read them.
ModelShape shape_of(const sdk::ModelSpec& spec) {
  const auto bad = [&](const std::string& what) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, spec.path + ": model config: " + what);
  };
  const auto as_int = [&](int64_t v, const char* field) {
    if (v < 1 || v > (1 << 30)) {
      bad(std::string(field) + " = " + std::to_string(v) + " must be in [1, 2^30]");
    }
    return static_cast<int>(v);
  };
  ModelShape s;
  s.n_layers = as_int(spec.n_layers, "n_layers");
  s.hidden = as_int(spec.hidden, "hidden_size");
  s.n_heads = as_int(spec.n_heads, "n_heads");
  s.n_kv_heads = as_int(spec.n_kv_heads, "n_kv_heads");
  s.head_dim = as_int(spec.head_dim, "head_dim");
  s.ffn = as_int(spec.ffn, "ffn_size");
  s.vocab = as_int(spec.vocab, "vocab_size");
  s.context = as_int(spec.context, "context_length");
  s.rope_theta = spec.rope_theta;
  s.rms_eps = spec.rms_eps;
  s.rope_neox = spec.rope_neox;
  s.qkv_bias = spec.has(sdk::kQkvBias);
  s.qk_norm = spec.has(sdk::kQkNorm);
  s.post_norms = spec.has(sdk::kPostNorms);
#if defined(PLINTH_ARCH_QK_NORM_FULL)
  s.qk_norm_full = spec.has(sdk::kQkNormFull);
  s.qk_norm = s.qk_norm || s.qk_norm_full;
#endif
#if defined(PLINTH_ARCH_NO_PRE_NORMS)
  s.pre_norms = !spec.has(sdk::kNoPreNorms);
#endif
#if defined(PLINTH_ARCH_RESIDUAL_SCALE)
  s.residual_scale = spec.has(sdk::kResidualScale) ? spec.residual_scale : 1.0f;
#endif
  s.gelu = spec.has(sdk::kGeluTanh);
  s.rope_dims = static_cast<int>(spec.rope_dims);
  s.embed_scale = spec.embed_scale;
  s.attn_scale = spec.attn_scale;
  s.logit_scale = spec.logit_scale;
  s.logit_softcap = spec.has(sdk::kLogitSoftcap) ? spec.logit_softcap : 0.0f;
  s.rope_freq_factors = spec.rope_freq_factors;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const sdk::LayerSpec& L = spec.layers[l];
    if (L.sliding_window < 0 || L.sliding_window > (1 << 30)) {
      bad("layers[" + std::to_string(l) + "].sliding_window = " + std::to_string(L.sliding_window) +
          " must be in [0, 2^30]");
    }
    s.layers.push_back(
        LayerShape{L.rope, L.rope_base, L.rope_scale, static_cast<int>(L.sliding_window)});
  }
  return s;
}

}  // namespace

ModelShape model_shape(const plinth_model_desc& model) {
  // The SDK's reader checks the config and the architecture description (ABI 1.4); the generic
  // block implements every feature of it (kImplementedFeatures) and names any other.
  const sdk::ModelSpec spec = sdk::read_model_spec(model);
  sdk::require_features(spec, kImplementedFeatures, "backend_cuda");
  ModelShape s = shape_of(spec);
  if (s.head_dim % 32 != 0 || s.head_dim > 256) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                spec.path + ": head_dim=" + std::to_string(s.head_dim) +
                    " is not supported by backend_cuda's attention kernel (a multiple of 32, at "
                    "most 256); run this model with backend_cpu");
  }
  return s;
}

void check_weight_types(const plinth_model_desc& model) {
  const sdk::ModelSpec spec = sdk::read_model_spec(model);
  const sdk::TensorTable tab(model);
  const sdk::ModelTensors t = sdk::bind_model_tensors(tab, spec);
  const std::string& path = spec.path;
  const auto matrix = [&](const plinth_tensor_view* v) {
    if (v != nullptr) check_matrix_type(path, *v);
  };
  const auto vector = [&](const plinth_tensor_view* v) {
    if (v != nullptr) check_vector_type(path, *v);
  };
  matrix(t.token_embd);
  matrix(t.output);
  vector(t.output_norm);
  // rope_freqs.weight: the host hands its values in the description (plinth_arch_desc).
  for (const sdk::LayerTensors& L : t.layers) {
    for (const plinth_tensor_view* v :
         {L.wq, L.wk, L.wv, L.wqkv, L.wo, L.w_gate, L.w_up, L.w_gate_up, L.w_down}) {
      matrix(v);
    }
    for (const plinth_tensor_view* v : {L.attn_norm, L.ffn_norm, L.bq, L.bk, L.bv, L.bqkv, L.q_norm,
                                        L.k_norm, L.post_attn_norm, L.post_ffn_norm}) {
      vector(v);
    }
  }
}

uint64_t device_weight_bytes(const ModelShape& s, bool tied) {
  const uint64_t h = static_cast<uint64_t>(s.hidden);
  uint64_t per_layer = (s.pre_norms ? 2 * aligned(h * 4) : 0) +
                       aligned(uint64_t(s.qkv_dim()) * h * 2) +
                       aligned(h * uint64_t(s.q_dim()) * 2) + aligned(2 * uint64_t(s.ffn) * h * 2) +
                       aligned(h * uint64_t(s.ffn) * 2);
  if (s.qkv_bias) per_layer += aligned(uint64_t(s.qkv_dim()) * 4);
  if (s.qk_norm_full) {
    per_layer += aligned(uint64_t(s.q_dim()) * 4) + aligned(uint64_t(s.kv_dim()) * 4);
  } else if (s.qk_norm) {
    per_layer += 2 * aligned(uint64_t(s.head_dim) * 4);
  }
  if (s.post_norms) per_layer += 2 * aligned(h * 4);
  const uint64_t table = aligned(uint64_t(s.vocab) * h * 2);
  return table * (tied ? 1 : 2) + aligned(h * 4) + aligned(s.rope_freq_factors.size() * 4) +
         per_layer * uint64_t(s.n_layers);
}

namespace {

// Bump allocation inside the one device buffer, 256-byte aligned; INTERNAL when a take would
// pass its end (device_weight_bytes and upload_weights disagree: a bug, never a write past it).
class Arena {
 public:
  explicit Arena(const DeviceBuffer& memory)
      : base_(memory.as<unsigned char>()), limit_(memory.bytes()) {}
  unsigned char* take(uint64_t bytes) {
    if (off_ + aligned(bytes) > limit_) {
      throw Error(PLINTH_ERR_INTERNAL, "backend_cuda: the weights need more than the " +
                                           std::to_string(limit_) +
                                           " bytes device_weight_bytes counted");
    }
    unsigned char* p = base_ + off_;
    off_ += aligned(bytes);
    return p;
  }
  float* take_f32(uint64_t n) { return reinterpret_cast<float*>(take(n * 4)); }

 private:
  unsigned char* base_;
  uint64_t limit_;
  uint64_t off_ = 0;
};

// One layer's tensors into the arena (order and sizes as device_weight_bytes counts them).
LayerWeights put_layer(const std::string& path, const ModelShape& s, const sdk::LayerTensors& T,
                       Arena& a) {
  LayerWeights L;
  const uint64_t h = static_cast<uint64_t>(s.hidden);
  const auto vec = [&](const plinth_tensor_view* t, uint64_t n) -> const float* {
    if (t == nullptr) return nullptr;
    float* d = a.take_f32(n);
    put_vector(path, *t, d);
    return d;
  };
  L.attn_norm = vec(T.attn_norm, h);
  L.ffn_norm = vec(T.ffn_norm, h);
  // Q/K/V and gate/up as one matrix each: the file's fused tensor has that layout already.
  unsigned char* qkv = a.take(static_cast<uint64_t>(s.qkv_dim()) * h * 2);
  if (T.wqkv != nullptr) {
    put_matrix(path, *T.wqkv, qkv);
  } else {
    uint64_t o = put_matrix(path, *T.wq, qkv);
    o += put_matrix(path, *T.wk, qkv + o);
    put_matrix(path, *T.wv, qkv + o);
  }
  L.wqkv = reinterpret_cast<const uint16_t*>(qkv);
  if (s.qkv_bias) {  // one [q_dim + 2 kv_dim] vector, as the fused rows
    float* b = a.take_f32(static_cast<uint64_t>(s.qkv_dim()));
    if (T.bqkv != nullptr) {
      put_vector(path, *T.bqkv, b);
    } else {
      uint64_t o = put_vector(path, *T.bq, b);
      o += put_vector(path, *T.bk, b + o);
      put_vector(path, *T.bv, b + o);
    }
    L.qkv_bias = b;
  }
  if (s.qk_norm) {
    L.q_norm = vec(T.q_norm, static_cast<uint64_t>(s.qk_norm_full ? s.q_dim() : s.head_dim));
    L.k_norm = vec(T.k_norm, static_cast<uint64_t>(s.qk_norm_full ? s.kv_dim() : s.head_dim));
  }
  unsigned char* wo = a.take(h * static_cast<uint64_t>(s.q_dim()) * 2);
  put_matrix(path, *T.wo, wo);
  L.wo = reinterpret_cast<const uint16_t*>(wo);
  unsigned char* gu = a.take(2 * static_cast<uint64_t>(s.ffn) * h * 2);
  if (T.w_gate_up != nullptr) {
    put_matrix(path, *T.w_gate_up, gu);
  } else {
    const uint64_t g = put_matrix(path, *T.w_gate, gu);
    put_matrix(path, *T.w_up, gu + g);
  }
  L.wgu = reinterpret_cast<const uint16_t*>(gu);
  unsigned char* down = a.take(h * static_cast<uint64_t>(s.ffn) * 2);
  put_matrix(path, *T.w_down, down);
  L.wdown = reinterpret_cast<const uint16_t*>(down);
  if (s.post_norms) {
    L.post_attn_norm = vec(T.post_attn_norm, h);
    L.post_ffn_norm = vec(T.post_ffn_norm, h);
  }
  return L;
}

}  // namespace

DeviceWeights upload_weights(const plinth_model_desc& model) {
  DeviceWeights w;
  w.shape = model_shape(model);
  check_weight_types(model);
  const ModelShape& s = w.shape;
  const sdk::ModelSpec spec = sdk::read_model_spec(model);
  const sdk::TensorTable tab(model);
  const sdk::ModelTensors t = sdk::bind_model_tensors(tab, spec);
  const std::string& path = spec.path;
  const bool own_head = t.output != nullptr;
  w.memory = DeviceBuffer(device_weight_bytes(s, !own_head), "weights");
  Arena a(w.memory);
  const uint64_t table_bytes = static_cast<uint64_t>(s.vocab) * s.hidden * 2;
  unsigned char* embd = a.take(table_bytes);
  put_matrix(path, *t.token_embd, embd);
  w.token_embd = reinterpret_cast<const uint16_t*>(embd);
  if (own_head) {
    unsigned char* head = a.take(table_bytes);
    put_matrix(path, *t.output, head);
    w.lm_head = reinterpret_cast<const uint16_t*>(head);
  } else {
    w.lm_head = w.token_embd;
  }
  float* onorm = a.take_f32(static_cast<uint64_t>(s.hidden));
  put_vector(path, *t.output_norm, onorm);
  w.output_norm = onorm;
  if (!s.rope_freq_factors.empty()) {  // the description's values (the host read the tensor)
    float* f = a.take_f32(s.rope_freq_factors.size());
    put(f, s.rope_freq_factors.data(), s.rope_freq_factors.size() * sizeof(float),
        "rope frequency factors");
    w.rope_freqs = f;
  }
  w.layers.reserve(static_cast<size_t>(s.n_layers));
  for (int l = 0; l < s.n_layers; ++l) {
    w.layers.push_back(put_layer(path, s, t.layers[static_cast<size_t>(l)], a));
  }
  return w;
}

}  // namespace plinth::cuda
