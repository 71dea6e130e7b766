// plinth SDK — the model as the host and every backend read it (header-only C++):
//  - ModelSpec: plinth_model_config and the architecture description of ABI 1.4
//    (plinth_arch_desc, model.h) in C++ form, read from a plinth_model_desc with every check;
//    a model from a 1.0..1.3 host (no `arch`) is the plain LLaMA block;
//  - TensorTable: the model's tensors by name;
//  - bind_model_tensors: the one recipe of the generic decoder block's tensors (names as
//    llama.cpp's GGUF converter writes them, gguf-py constants.py), each checked against the
//    shape the spec implies.
// The host checks a file with the same code a backend binds it with, so the two cannot drift.
// This header reads only 1.0 fields of a model built against older headers (tests/plugins/
// abi_compat rebuilds backend_cpu against the 1.0 ones), where the spec is always the LLaMA block.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plinth/model.h"
#include "plinth/plugin.hpp"

namespace plinth::sdk {

/// The feature bits of plinth_arch_desc.required_features (model.h's PLINTH_ARCH_*), also
/// defined here so code built against headers older than 1.4 compiles (it never sees them set).
enum ArchFeature : uint64_t {
  kQkvBias = 1ull << 0,
  kQkNorm = 1ull << 1,
  kPostNorms = 1ull << 2,
  kGeluTanh = 1ull << 3,
  kFusedQkv = 1ull << 4,
  kFusedGateUp = 1ull << 5,
  kEmbedScale = 1ull << 6,
  kAttnScale = 1ull << 7,
  kLogitSoftcap = 1ull << 8,
  kLogitScale = 1ull << 9,
  kPartialRotary = 1ull << 10,
  kRopeFreqFactors = 1ull << 11,
  kSlidingWindow = 1ull << 12,
  kLayerRope = 1ull << 13,
  kResidualScale = 1ull << 14,
  kNoPreNorms = 1ull << 15,
  kQkNormFull = 1ull << 16,
};
inline constexpr uint64_t kKnownArchFeatures = (1ull << 17) - 1;
#if PLINTH_ABI_MINOR >= 4
static_assert(
    kQkvBias == PLINTH_ARCH_QKV_BIAS && kQkNorm == PLINTH_ARCH_QK_NORM &&
        kPostNorms == PLINTH_ARCH_POST_NORMS && kGeluTanh == PLINTH_ARCH_GELU_TANH &&
        kFusedQkv == PLINTH_ARCH_FUSED_QKV && kFusedGateUp == PLINTH_ARCH_FUSED_GATE_UP &&
        kEmbedScale == PLINTH_ARCH_EMBED_SCALE && kAttnScale == PLINTH_ARCH_ATTN_SCALE &&
        kLogitSoftcap == PLINTH_ARCH_LOGIT_SOFTCAP && kLogitScale == PLINTH_ARCH_LOGIT_SCALE &&
        kPartialRotary == PLINTH_ARCH_PARTIAL_ROTARY &&
        kRopeFreqFactors == PLINTH_ARCH_ROPE_FREQ_FACTORS &&
        kSlidingWindow == PLINTH_ARCH_SLIDING_WINDOW && kLayerRope == PLINTH_ARCH_LAYER_ROPE &&
        kResidualScale == PLINTH_ARCH_RESIDUAL_SCALE && kNoPreNorms == PLINTH_ARCH_NO_PRE_NORMS &&
        kQkNormFull == PLINTH_ARCH_QK_NORM_FULL && kKnownArchFeatures == PLINTH_ARCH_KNOWN_FEATURES,
    "plinth::sdk::ArchFeature must equal model.h's PLINTH_ARCH_* bits");
#endif

/// "qkv_bias, qk_norm" for the set bits of `bits` (unknown bits as "bit N").
inline std::string arch_feature_names(uint64_t bits) {
  static const char* const kNames[] = {
      "qkv_bias",       "qk_norm",           "post_norms",     "gelu_tanh",     "fused_qkv",
      "fused_gate_up",  "embed_scale",       "attn_scale",     "logit_softcap", "logit_scale",
      "partial_rotary", "rope_freq_factors", "sliding_window", "layer_rope",    "residual_scale",
      "no_pre_norms",   "qk_norm_full"};
  std::string out;
  for (unsigned b = 0; b < 64; ++b) {
    if ((bits >> b & 1u) == 0) continue;
    if (!out.empty()) out += ", ";
    out += b < sizeof(kNames) / sizeof(kNames[0]) ? kNames[b] : "bit " + std::to_string(b);
  }
  return out;
}

/// One layer's values (plinth_arch_layer).
struct LayerSpec {
  double rope_base = 10000.0;  // theta
  double rope_scale = 1.0;     // position multiplier
  bool rope = true;
  int64_t sliding_window = 0;  // 0: full causal
};

/// Everything the generic decoder block needs to know about a model.
struct ModelSpec {
  std::string path;          // for messages
  std::string architecture;  // informational
  int64_t n_layers = 0;
  int64_t hidden = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t ffn = 0;
  int64_t vocab = 0;
  int64_t context = 0;
  double rope_theta = 10000.0;
  float rms_eps = 1e-5f;
  bool rope_neox = false;
  bool tied_embeddings = false;

  uint64_t features = 0;  // ArchFeature bits
  int64_t rope_dims = 0;  // rotated elements per head (== head_dim unless kPartialRotary)
  float embed_scale = 1.0f;
  float attn_scale = 1.0f;  // 1 / sqrt(head_dim) unless kAttnScale
  float logit_softcap = 0.0f;
  float logit_scale = 1.0f;
  float residual_scale = 1.0f;           // kResidualScale
  std::vector<float> rope_freq_factors;  // [rope_dims / 2] with kRopeFreqFactors, else empty
  std::vector<LayerSpec> layers;         // [n_layers]

  bool has(uint64_t f) const { return (features & f) != 0; }
  int64_t q_dim() const { return n_heads * head_dim; }
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
};

namespace detail {
[[noreturn]] inline void bad_model(const std::string& path, const std::string& what) {
  throw Error(PLINTH_ERR_INVALID_ARGUMENT, path + ": model description: " + what);
}

// The sizes of plinth_model_config, checked; the spec of the plain LLaMA block.
inline ModelSpec read_config(const plinth_model_desc& m) {
  ModelSpec s;
  s.path = m.path != nullptr ? m.path : "<model>";
  const plinth_model_config& c = m.config;
  s.architecture = c.architecture != nullptr ? c.architecture : "";
  s.n_layers = c.n_layers;
  s.hidden = c.hidden_size;
  s.n_heads = c.n_heads;
  s.n_kv_heads = c.n_kv_heads;
  s.head_dim = c.head_dim;
  s.ffn = c.ffn_size;
  s.vocab = c.vocab_size;
  s.context = c.context_length;
  s.rope_theta = c.rope_theta;
  s.rms_eps = c.rms_norm_eps;
  s.rope_neox = c.rope_neox != 0;
  s.tied_embeddings = c.tied_embeddings != 0;
  if (s.n_layers < 1 || s.hidden < 1 || s.n_heads < 1 || s.n_kv_heads < 1 || s.head_dim < 2 ||
      s.ffn < 1 || s.vocab < 1 || s.context < 1) {
    bad_model(s.path,
              "n_layers, hidden_size, n_heads, n_kv_heads, head_dim, ffn_size, vocab_size and "
              "context_length must all be positive");
  }
  if (s.n_heads % s.n_kv_heads != 0) {
    bad_model(s.path, "n_heads=" + std::to_string(s.n_heads) +
                          " is not a multiple of n_kv_heads=" + std::to_string(s.n_kv_heads));
  }
  if (s.head_dim % 2 != 0) {
    bad_model(s.path, "head_dim=" + std::to_string(s.head_dim) + " must be even (RoPE)");
  }
  if (!(s.rope_theta > 0.0)) bad_model(s.path, "rope_theta must be > 0");
  if (!(s.rms_eps >= 0.0f)) bad_model(s.path, "rms_norm_eps must be >= 0");
  s.rope_dims = s.head_dim;
  s.attn_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  s.layers.assign(static_cast<size_t>(s.n_layers), LayerSpec{s.rope_theta, 1.0, true, 0});
  return s;
}

#if PLINTH_ABI_MINOR >= 4
// The scalar values of `a` whose feature bits are set (each finite and > 0) and the factors.
inline void read_arch_values(const plinth_arch_desc& a, ModelSpec& s) {
  const auto value = [&](float v, uint64_t bit, const char* field, float& out) {
    if (!s.has(bit)) return;
    if (!std::isfinite(v) || !(v > 0.0f)) {
      bad_model(s.path, std::string(field) + " must be finite and > 0");
    }
    out = v;
  };
  value(a.embed_scale, kEmbedScale, "arch.embed_scale", s.embed_scale);
  value(a.attn_scale, kAttnScale, "arch.attn_scale", s.attn_scale);
  value(a.logit_softcap, kLogitSoftcap, "arch.logit_softcap", s.logit_softcap);
  value(a.logit_scale, kLogitScale, "arch.logit_scale", s.logit_scale);
  value(a.residual_scale, kResidualScale, "arch.residual_scale", s.residual_scale);
  if (s.has(kRopeFreqFactors) != (a.rope_freq_factors != nullptr)) {
    bad_model(s.path,
              "arch.rope_freq_factors must be set exactly when rope_freq_factors is required");
  }
  if (!s.has(kRopeFreqFactors)) return;
  s.rope_freq_factors.assign(a.rope_freq_factors, a.rope_freq_factors + s.rope_dims / 2);
  for (float f : s.rope_freq_factors) {
    if (!std::isfinite(f) || !(f > 0.0f)) {
      bad_model(s.path, "arch.rope_freq_factors must be finite and > 0");
    }
  }
}

// The per-layer items of `a`, read at its layer_stride.
inline void read_arch_layers(const plinth_arch_desc& a, ModelSpec& s) {
  const auto* base = reinterpret_cast<const unsigned char*>(a.layers);
  for (int64_t l = 0; l < s.n_layers; ++l) {
    plinth_arch_layer item{};
    std::memcpy(&item, base + static_cast<size_t>(l) * a.layer_stride, sizeof(item));
    LayerSpec& L = s.layers[static_cast<size_t>(l)];
    L = LayerSpec{item.rope_base, item.rope_scale, item.rope != 0, item.sliding_window};
    const std::string at = "arch.layers[" + std::to_string(l) + "].";
    if (L.sliding_window != 0 && !s.has(kSlidingWindow)) {
      bad_model(s.path, at + "sliding_window is set without the sliding_window feature");
    }
    const bool plain = L.rope && L.rope_base == s.rope_theta && L.rope_scale == 1.0;
    if (!plain && !s.has(kLayerRope)) {
      bad_model(s.path, at + "rope/rope_base/rope_scale differ from the config without the "
                             "layer_rope feature");
    }
    if (!(L.rope_base > 0.0) || !std::isfinite(L.rope_base) || !(L.rope_scale > 0.0) ||
        !std::isfinite(L.rope_scale)) {
      bad_model(s.path, at + "rope_base and rope_scale must be finite and > 0");
    }
  }
}

// The architecture description (ABI 1.4) over the plain spec `s`.
inline void read_arch(const plinth_arch_desc& a, ModelSpec& s) {
  if (a.struct_size < PLINTH_ABI_1_4_SIZEOF_ARCH_DESC) {
    bad_model(s.path, "arch.struct_size=" + std::to_string(a.struct_size) + " is below ABI 1.4's " +
                          std::to_string(PLINTH_ABI_1_4_SIZEOF_ARCH_DESC));
  }
  if (a.layer_stride < PLINTH_ABI_1_4_SIZEOF_ARCH_LAYER) {
    bad_model(s.path, "arch.layer_stride=" + std::to_string(a.layer_stride) +
                          " is below ABI 1.4's " +
                          std::to_string(PLINTH_ABI_1_4_SIZEOF_ARCH_LAYER));
  }
  if ((a.required_features & ~kKnownArchFeatures) != 0) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                s.path + ": the model needs architecture features this build does not know (" +
                    arch_feature_names(a.required_features & ~kKnownArchFeatures) +
                    "): rebuild the plugin against a newer plinth SDK");
  }
  s.features = a.required_features;
  if (s.has(kQkNorm) && s.has(kQkNormFull)) {
    bad_model(s.path, "arch.required_features sets both qk_norm (per head) and qk_norm_full");
  }
  if (static_cast<int64_t>(a.n_layers) != s.n_layers || a.layers == nullptr) {
    bad_model(s.path, "arch.n_layers=" + std::to_string(a.n_layers) + " (layers " +
                          (a.layers == nullptr ? "NULL" : "set") + ") must equal config.n_layers=" +
                          std::to_string(s.n_layers) + " with a non-NULL layers array");
  }
  s.rope_dims = a.rope_dims;
  if (s.rope_dims < 2 || s.rope_dims > s.head_dim || s.rope_dims % 2 != 0 ||
      (s.rope_dims < s.head_dim && !s.has(kPartialRotary))) {
    bad_model(s.path, "arch.rope_dims=" + std::to_string(a.rope_dims) +
                          " must be even, in [2, head_dim=" + std::to_string(s.head_dim) +
                          "], and below head_dim only with partial_rotary");
  }
  read_arch_values(a, s);
  read_arch_layers(a, s);
}
#endif
}  // namespace detail

/// Reads and checks `m`: every size positive, n_heads % n_kv_heads == 0, head_dim even,
/// rope_theta > 0, rms_eps >= 0; with an architecture description (ABI 1.4): struct_size and
/// layer_stride at least 1.4's, one layer item per layer, no bit this SDK does not know
/// (UNSUPPORTED), rope_dims even in [2, head_dim] (less only with kPartialRotary), the factor
/// array present exactly with kRopeFreqFactors, scales finite and positive, per-layer values
/// other than the plain ones only with their bits. Throws Error (INVALID_ARGUMENT naming the
/// field, or UNSUPPORTED); qk_norm and qk_norm_full together are INVALID_ARGUMENT.
inline ModelSpec read_model_spec(const plinth_model_desc& m) {
  ModelSpec s = detail::read_config(m);
#if PLINTH_ABI_MINOR >= 4
  // NOLINTNEXTLINE(bugprone-sizeof-expression): PLINTH_HAS_FIELD sizes the pointer member itself
  if (PLINTH_HAS_FIELD(&m, plinth_model_desc, arch) && m.arch != nullptr) {
    detail::read_arch(*m.arch, s);
  }
#endif
  return s;
}

/// Throws Error(UNSUPPORTED) naming every feature `s` needs that `implemented` lacks, for
/// `who` (e.g. "backend_cuda").
inline void require_features(const ModelSpec& s, uint64_t implemented, const std::string& who) {
  const uint64_t missing = s.features & ~implemented;
  if (missing != 0) {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                s.path + ": architecture \"" + s.architecture + "\" needs " +
                    arch_feature_names(missing) + ", which " + who +
                    " does not implement (implemented: " +
                    (implemented == 0 ? std::string("none beyond the LLaMA block")
                                      : arch_feature_names(implemented)) +
                    "); use a backend that does (backend_cpu implements every feature)");
  }
}

/// An error about one tensor (missing, mis-shaped): INVALID_ARGUMENT with the tensor's name, so
/// the host can report it as a GGUF error of that tensor.
class TensorError : public Error {
 public:
  TensorError(std::string tensor, const std::string& message)
      : Error(PLINTH_ERR_INVALID_ARGUMENT, message), tensor_(std::move(tensor)) {}
  const std::string& tensor() const noexcept { return tensor_; }

 private:
  std::string tensor_;
};

/// "{a, b}" of a view's used dims.
inline std::string dims_str(const plinth_tensor_view& t) {
  std::string s = "{";
  for (uint32_t i = 0; i < t.n_dims && i < 4; ++i) {
    s += (i > 0 ? ", " : "") + std::to_string(t.dims[i]);
  }
  return s + "}";
}

/// The tensors of a model by name. Views point into the plinth_model_desc, which must outlive
/// the table. Records which tensors were asked for (unused()), so the host can refuse a file
/// holding a tensor no part of the forward pass reads.
class TensorTable {
 public:
  explicit TensorTable(const plinth_model_desc& m) : path_(m.path != nullptr ? m.path : "<model>") {
    if (m.num_tensors > 0 && m.tensors == nullptr) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensors is NULL with num_tensors=" + std::to_string(m.num_tensors));
    }
    for (uint64_t i = 0; i < m.num_tensors; ++i) {
      if (m.tensors[i].name != nullptr) by_name_[m.tensors[i].name] = &m.tensors[i];
    }
  }

  const std::string& path() const { return path_; }
  bool has(const std::string& name) const { return by_name_.count(name) != 0; }

  /// The tensor `name` with ggml dims `want` (trailing dims 1), non-NULL data; INVALID_ARGUMENT
  /// naming it, its dims and the expected dims otherwise.
  const plinth_tensor_view& get(const std::string& name, std::vector<int64_t> want) const {
    const auto it = by_name_.find(name);
    std::string expected = "{";
    for (size_t i = 0; i < want.size(); ++i) {
      expected += (i > 0 ? ", " : "") + std::to_string(want[i]);
    }
    expected += "}";
    if (it == by_name_.end()) {
      throw TensorError(name, path_ + ": tensor " + name +
                                  " is missing (the forward pass needs it with dims " + expected +
                                  ", ggml order)");
    }
    const plinth_tensor_view& t = *it->second;
    want.resize(4, 1);
    bool ok = t.n_dims >= 1 && t.n_dims <= 4 && t.data != nullptr;
    for (uint32_t i = 0; ok && i < 4; ++i) {
      ok = (i < t.n_dims ? t.dims[i] : 1) == static_cast<uint64_t>(want[i]);
    }
    if (!ok) {
      throw TensorError(name, path_ + ": tensor " + name + " has dims " + dims_str(t) +
                                  ", expected " + expected + " (ggml order)" +
                                  (t.data == nullptr ? " and non-NULL data" : ""));
    }
    used_.insert(name);
    return t;
  }

  /// Names of the tensors get() was never asked for, in name order.
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto& [name, view] : by_name_) {
      if (used_.count(name) == 0) out.push_back(name);
    }
    return out;
  }

 private:
  std::string path_;
  std::map<std::string, const plinth_tensor_view*, std::less<>> by_name_;
  mutable std::set<std::string, std::less<>> used_;
};

/// One decoder block's tensors; a pointer is NULL when the spec does not use that tensor.
struct LayerTensors {
  const plinth_tensor_view* attn_norm = nullptr;  // {hidden}; NULL with kNoPreNorms
  const plinth_tensor_view* wq = nullptr;         // {hidden, q_dim}
  const plinth_tensor_view* wk = nullptr;         // {hidden, kv_dim}
  const plinth_tensor_view* wv = nullptr;         // {hidden, kv_dim}
  const plinth_tensor_view* wqkv = nullptr;       // {hidden, q_dim + 2 kv_dim} (kFusedQkv)
  const plinth_tensor_view* bq = nullptr;         // {q_dim} (kQkvBias, separate)
  const plinth_tensor_view* bk = nullptr;         // {kv_dim}
  const plinth_tensor_view* bv = nullptr;         // {kv_dim}
  const plinth_tensor_view* bqkv = nullptr;       // {q_dim + 2 kv_dim} (kQkvBias, fused)
  const plinth_tensor_view* q_norm = nullptr;     // {head_dim} (kQkNorm), {q_dim} (kQkNormFull)
  const plinth_tensor_view* k_norm = nullptr;     // {head_dim}, {kv_dim} (kQkNormFull)
  const plinth_tensor_view* wo = nullptr;         // {q_dim, hidden}
  const plinth_tensor_view* post_attn_norm = nullptr;  // {hidden} (kPostNorms)
  const plinth_tensor_view* ffn_norm = nullptr;        // {hidden}; NULL with kNoPreNorms
  const plinth_tensor_view* w_gate = nullptr;          // {hidden, ffn}
  const plinth_tensor_view* w_up = nullptr;            // {hidden, ffn}
  const plinth_tensor_view* w_gate_up = nullptr;       // {hidden, 2 ffn} (kFusedGateUp)
  const plinth_tensor_view* w_down = nullptr;          // {ffn, hidden}
  const plinth_tensor_view* post_ffn_norm = nullptr;   // {hidden} (kPostNorms)
};

/// Every tensor of the generic decoder block.
struct ModelTensors {
  const plinth_tensor_view* token_embd = nullptr;   // {hidden, vocab}
  const plinth_tensor_view* output = nullptr;       // {hidden, vocab}; NULL when tied
  const plinth_tensor_view* output_norm = nullptr;  // {hidden}
  const plinth_tensor_view* rope_freqs = nullptr;   // {rope_dims / 2} (kRopeFreqFactors)
  std::vector<LayerTensors> layers;                 // [n_layers]
};

/// Names and shape-checks every tensor the generic block reads for `s`, through `table` (see
/// TensorTable::get for the errors). Layer N's names are "blk.N." + attn_norm (not with
/// kNoPreNorms), attn_q, attn_k, attn_v (or attn_qkv), their .bias (kQkvBias), attn_q_norm,
/// attn_k_norm (kQkNorm: {head_dim}; kQkNormFull: {q_dim}, {kv_dim}), attn_output,
/// post_attention_norm (kPostNorms), ffn_norm (not with kNoPreNorms), ffn_gate and ffn_up (or
/// ffn_up alone holding both, kFusedGateUp), ffn_down, post_ffw_norm (kPostNorms), each
/// ".weight". The LM head
/// is output.weight, or token_embd.weight when the file has no output.weight and the config says
/// tied (INVALID_ARGUMENT otherwise).
inline ModelTensors bind_model_tensors(const TensorTable& table, const ModelSpec& s) {
  ModelTensors t;
  const int64_t h = s.hidden, q = s.q_dim(), kv = s.kv_dim();
  t.token_embd = &table.get("token_embd.weight", {h, s.vocab});
  t.output_norm = &table.get("output_norm.weight", {h});
  if (table.has("output.weight")) {
    t.output = &table.get("output.weight", {h, s.vocab});
  } else if (!s.tied_embeddings) {
    throw TensorError("output.weight", table.path() +
                                           ": tensor output.weight is missing and tied_embeddings "
                                           "is 0");
  }
  if (s.has(kRopeFreqFactors)) t.rope_freqs = &table.get("rope_freqs.weight", {s.rope_dims / 2});
  t.layers.resize(static_cast<size_t>(s.n_layers));
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerTensors& L = t.layers[static_cast<size_t>(l)];
    if (!s.has(kNoPreNorms)) L.attn_norm = &table.get(p + "attn_norm.weight", {h});
    if (s.has(kFusedQkv)) {
      L.wqkv = &table.get(p + "attn_qkv.weight", {h, q + 2 * kv});
      if (s.has(kQkvBias)) L.bqkv = &table.get(p + "attn_qkv.bias", {q + 2 * kv});
    } else {
      L.wq = &table.get(p + "attn_q.weight", {h, q});
      L.wk = &table.get(p + "attn_k.weight", {h, kv});
      L.wv = &table.get(p + "attn_v.weight", {h, kv});
      if (s.has(kQkvBias)) {
        L.bq = &table.get(p + "attn_q.bias", {q});
        L.bk = &table.get(p + "attn_k.bias", {kv});
        L.bv = &table.get(p + "attn_v.bias", {kv});
      }
    }
    if (s.has(kQkNorm)) {
      L.q_norm = &table.get(p + "attn_q_norm.weight", {s.head_dim});
      L.k_norm = &table.get(p + "attn_k_norm.weight", {s.head_dim});
    } else if (s.has(kQkNormFull)) {
      L.q_norm = &table.get(p + "attn_q_norm.weight", {q});
      L.k_norm = &table.get(p + "attn_k_norm.weight", {kv});
    }
    L.wo = &table.get(p + "attn_output.weight", {q, h});
    if (s.has(kPostNorms)) L.post_attn_norm = &table.get(p + "post_attention_norm.weight", {h});
    if (!s.has(kNoPreNorms)) L.ffn_norm = &table.get(p + "ffn_norm.weight", {h});
    if (s.has(kFusedGateUp)) {
      L.w_gate_up = &table.get(p + "ffn_up.weight", {h, 2 * s.ffn});
    } else {
      L.w_gate = &table.get(p + "ffn_gate.weight", {h, s.ffn});
      L.w_up = &table.get(p + "ffn_up.weight", {h, s.ffn});
    }
    L.w_down = &table.get(p + "ffn_down.weight", {s.ffn, h});
    if (s.has(kPostNorms)) L.post_ffn_norm = &table.get(p + "post_ffw_norm.weight", {h});
  }
  return t;
}

}  // namespace plinth::sdk
