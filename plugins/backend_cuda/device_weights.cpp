#include "device_weights.hpp"

#include <cstring>
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

// Copies host data to device memory at `dst` (synchronous).
void put(void* dst, const void* src, size_t bytes, const std::string& name) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "upload " + name);
}

bool convertible(int32_t dtype) {
  return dtype == PLINTH_DTYPE_F32 || dtype == PLINTH_DTYPE_F16 || dtype == PLINTH_DTYPE_BF16 ||
         dtype == PLINTH_DTYPE_Q8_0 || dtype == PLINTH_DTYPE_Q4_0 || dtype == PLINTH_DTYPE_Q4_1;
}

// A matrix (shape checked by sdk::bind_model_tensors) to bf16 at `dst` (device); returns the
// bytes written. UNSUPPORTED for a tensor type weight_convert cannot read, as backend_cpu.
uint64_t put_matrix(const std::string& path, const plinth_tensor_view& t, unsigned char* dst) {
  const std::string name = t.name != nullptr ? t.name : "<unnamed>";
  if (!convertible(t.dtype)) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                path + ": tensor " + name + " has ggml type " + dtype_name(t.dtype) +
                    ", which backend_cuda cannot read (supported: F32, F16, BF16, Q8_0, Q4_0, "
                    "Q4_1); re-quantize the model to one of them");
  }
  std::vector<uint16_t> h;
  try {
    h = to_bf16(t);
  } catch (const std::invalid_argument& e) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, path + ": " + e.what());
  }
  put(dst, h.data(), h.size() * sizeof(uint16_t), name);
  return h.size() * sizeof(uint16_t);
}

// A norm vector (shape checked) to f32 at `dst` (device), exact for F32, F16 and BF16.
void put_norm(const std::string& path, const plinth_tensor_view& t, float* dst) {
  const auto n = static_cast<int64_t>(t.dims[0]);
  const std::string name = t.name != nullptr ? t.name : "<unnamed>";
  const uint64_t esize = t.dtype == PLINTH_DTYPE_F32 ? 4 : 2;
  if ((t.dtype != PLINTH_DTYPE_F32 && t.dtype != PLINTH_DTYPE_F16 &&
       t.dtype != PLINTH_DTYPE_BF16) ||
      t.data == nullptr || t.nbytes < static_cast<uint64_t>(n) * esize) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                path + ": norm tensor " + name + " (" + dtype_name(t.dtype) +
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
  // The SDK's reader checks the config and the architecture description (ABI 1.4); this
  // backend implements the plain block plus the fused-matrix layouts and names every other
  // feature the model needs.
  const sdk::ModelSpec spec = sdk::read_model_spec(model);
  sdk::require_features(spec, kImplementedFeatures, "backend_cuda");
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
  if (s.head_dim % 32 != 0 || s.head_dim > 256) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                spec.path + ": head_dim=" + std::to_string(s.head_dim) +
                    " is not supported by backend_cuda's attention kernel (a multiple of 32, at "
                    "most 256); run this model with backend_cpu");
  }
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
  const sdk::ModelSpec spec = sdk::read_model_spec(model);
  const sdk::TensorTable tab(model);
  const sdk::ModelTensors t = sdk::bind_model_tensors(tab, spec);
  const std::string& path = spec.path;
  const bool own_head = t.output != nullptr;
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
  put_matrix(path, *t.token_embd, embd);
  w.token_embd = reinterpret_cast<const uint16_t*>(embd);
  if (own_head) {
    unsigned char* head = take(table_bytes);
    put_matrix(path, *t.output, head);
    w.lm_head = reinterpret_cast<const uint16_t*>(head);
  } else {
    w.lm_head = w.token_embd;
  }
  float* onorm = reinterpret_cast<float*>(take(h * 4));
  put_norm(path, *t.output_norm, onorm);
  w.output_norm = onorm;
  w.layers.resize(static_cast<size_t>(s.n_layers));
  for (int l = 0; l < s.n_layers; ++l) {
    const sdk::LayerTensors& T = t.layers[static_cast<size_t>(l)];
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    float* an = reinterpret_cast<float*>(take(h * 4));
    float* fn = reinterpret_cast<float*>(take(h * 4));
    put_norm(path, *T.attn_norm, an);
    put_norm(path, *T.ffn_norm, fn);
    L.attn_norm = an;
    L.ffn_norm = fn;
    // Q/K/V and gate/up as one matrix each: the file's fused tensor has that layout already.
    unsigned char* qkv = take(static_cast<uint64_t>(s.qkv_dim()) * h * 2);
    if (T.wqkv != nullptr) {
      put_matrix(path, *T.wqkv, qkv);
    } else {
      uint64_t o = put_matrix(path, *T.wq, qkv);
      o += put_matrix(path, *T.wk, qkv + o);
      put_matrix(path, *T.wv, qkv + o);
    }
    L.wqkv = reinterpret_cast<const uint16_t*>(qkv);
    unsigned char* wo = take(static_cast<uint64_t>(h) * s.q_dim() * 2);
    put_matrix(path, *T.wo, wo);
    L.wo = reinterpret_cast<const uint16_t*>(wo);
    unsigned char* gu = take(2 * static_cast<uint64_t>(s.ffn) * h * 2);
    if (T.w_gate_up != nullptr) {
      put_matrix(path, *T.w_gate_up, gu);
    } else {
      const uint64_t g = put_matrix(path, *T.w_gate, gu);
      put_matrix(path, *T.w_up, gu + g);
    }
    L.wgu = reinterpret_cast<const uint16_t*>(gu);
    unsigned char* down = take(static_cast<uint64_t>(h) * s.ffn * 2);
    put_matrix(path, *T.w_down, down);
    L.wdown = reinterpret_cast<const uint16_t*>(down);
  }
  return w;
}

}  // namespace plinth::cuda
