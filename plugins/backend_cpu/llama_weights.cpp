#include "llama_weights.hpp"

#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "dequantize.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"
#include "plinth/plugin.hpp"

namespace plinth::cpu {
namespace {

using sdk::Error;

bool to_weight_type(int32_t dtype, WeightType* out) {
  return weight_type_from_dtype(dtype, out);  // the SDK's format table
}

std::string dims_str(const plinth_tensor_view& t) {
  std::string s = "{";
  for (uint32_t i = 0; i < t.n_dims && i < 4; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(t.dims[i]);
  }
  return s + "}";
}

class TensorTable {
 public:
  TensorTable(const plinth_model_desc& m) : path_(m.path != nullptr ? m.path : "<model>") {
    if (m.num_tensors > 0 && m.tensors == nullptr) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  "model: tensors is NULL with num_tensors=" + std::to_string(m.num_tensors));
    }
    for (uint64_t i = 0; i < m.num_tensors; ++i) {
      if (m.tensors[i].name != nullptr) by_name_[m.tensors[i].name] = &m.tensors[i];
    }
  }

  const plinth_tensor_view* find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

  // The tensor `name`, checked to have ggml dims {d0, d1} (d1 = 1 for a vector).
  const plinth_tensor_view& get(const std::string& name, int64_t d0, int64_t d1) const {
    const plinth_tensor_view* t = find(name);
    if (t == nullptr) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensor " + name + " is missing (needed by the LLaMA forward pass)");
    }
    bool ok = t->n_dims >= 1 && t->n_dims <= 4 && t->data != nullptr;
    const uint64_t want[4] = {static_cast<uint64_t>(d0), static_cast<uint64_t>(d1), 1, 1};
    for (uint32_t i = 0; ok && i < 4; ++i) {
      const uint64_t have = i < t->n_dims ? t->dims[i] : 1;
      ok = have == want[i];
    }
    if (!ok) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensor " + name + " has dims " + dims_str(*t) + ", expected {" +
                      std::to_string(d0) + (d1 != 1 ? ", " + std::to_string(d1) : "") +
                      "} (ggml order)" + (t->data == nullptr ? " and non-NULL data" : ""));
    }
    return *t;
  }

  WeightType type_of(const plinth_tensor_view& t) const {
    WeightType wt{};
    if (!to_weight_type(t.dtype, &wt)) {
      throw Error(PLINTH_ERR_UNSUPPORTED,
                  path_ + ": tensor " + std::string(t.name) + " has ggml type " +
                      std::to_string(t.dtype) + ", which backend_cpu cannot read (supported: " +
                      ggml::supported_names() + "); re-quantize the model to one of them");
    }
    return wt;
  }

  // A linear layer in -> out (ggml dims {in, out}) as W[out, in].
  WeightView matrix(const std::string& name, int64_t in, int64_t out) const {
    const plinth_tensor_view& t = get(name, in, out);
    const WeightView w{type_of(t), t.data, out, in};
    try {
      validate(w);
      const uint64_t need = static_cast<uint64_t>(out * row_bytes(w.type, in));
      if (t.nbytes < need) {
        throw std::invalid_argument("nbytes=" + std::to_string(t.nbytes) + " < " +
                                    std::to_string(need));
      }
    } catch (const std::invalid_argument& e) {
      throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                  path_ + ": tensor " + name + " is not a valid matrix: " + e.what());
    }
    return w;
  }

  // A norm weight [n] as f32: in place when F32, else converted into `owned`.
  const float* vector(const std::string& name, int64_t n,
                      std::vector<std::vector<float>>& owned) const {
    const plinth_tensor_view& t = get(name, n, 1);
    const WeightType wt = type_of(t);
    if (t.nbytes < static_cast<uint64_t>(n) * (wt == WeightType::kF32 ? 4u : 2u) ||
        (wt != WeightType::kF32 && wt != WeightType::kF16 && wt != WeightType::kBF16)) {
      throw Error(PLINTH_ERR_UNSUPPORTED, path_ + ": norm tensor " + name +
                                              " must be F32, F16 or "
                                              "BF16 with " +
                                              std::to_string(n) + " elements");
    }
    if (wt == WeightType::kF32) return static_cast<const float*>(t.data);
    owned.emplace_back(static_cast<size_t>(n));
    dequantize(wt, t.data, 0, n, owned.back().data());
    return owned.back().data();
  }

 private:
  std::string path_;
  std::map<std::string, const plinth_tensor_view*, std::less<>> by_name_;
};

LlamaShape shape_of(const plinth_model_config& c, const std::string& path) {
  const std::string arch = c.architecture != nullptr ? c.architecture : "";
  if (arch != "llama") {
    throw Error(PLINTH_ERR_UNSUPPORTED,
                path + ": architecture \"" + arch +
                    "\" is not supported by backend_cpu (supported: llama)");
  }
  LlamaShape s;
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
  const auto bad = [&](const std::string& what) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT, path + ": model config: " + what);
  };
  if (s.n_layers < 1 || s.hidden < 1 || s.n_heads < 1 || s.n_kv_heads < 1 || s.head_dim < 2 ||
      s.ffn < 1 || s.vocab < 1 || s.context < 1) {
    bad("n_layers, hidden_size, n_heads, n_kv_heads, head_dim, ffn_size, vocab_size and "
        "context_length must all be positive");
  }
  if (s.n_heads % s.n_kv_heads != 0) {
    bad("n_heads=" + std::to_string(s.n_heads) +
        " is not a multiple of n_kv_heads=" + std::to_string(s.n_kv_heads));
  }
  if (s.head_dim % 2 != 0) bad("head_dim=" + std::to_string(s.head_dim) + " must be even (RoPE)");
  if (!(s.rope_theta > 0.0)) bad("rope_theta must be > 0");
  if (!(s.rms_eps >= 0.0f)) bad("rms_norm_eps must be >= 0");
  return s;
}

}  // namespace

LlamaWeights bind_llama_weights(const plinth_model_desc& model) {
  const std::string path = model.path != nullptr ? model.path : "<model>";
  LlamaWeights w;
  w.shape = shape_of(model.config, path);
  const LlamaShape& s = w.shape;
  const TensorTable table(model);
  // Norm pointers into `owned` stay valid as it grows or moves: the inner buffers never move.

  w.token_embd = table.matrix("token_embd.weight", s.hidden, s.vocab);
  if (table.find("output.weight") != nullptr) {
    w.lm_head = table.matrix("output.weight", s.hidden, s.vocab);
  } else if (model.config.tied_embeddings != 0) {
    w.lm_head = w.token_embd;
  } else {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                path + ": tensor output.weight is missing and tied_embeddings is 0");
  }
  w.output_norm = table.vector("output_norm.weight", s.hidden, w.owned);

  w.layers.resize(static_cast<size_t>(s.n_layers));
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    L.attn_norm = table.vector(p + "attn_norm.weight", s.hidden, w.owned);
    L.ffn_norm = table.vector(p + "ffn_norm.weight", s.hidden, w.owned);
    L.wq = table.matrix(p + "attn_q.weight", s.hidden, s.q_dim());
    L.wk = table.matrix(p + "attn_k.weight", s.hidden, s.kv_dim());
    L.wv = table.matrix(p + "attn_v.weight", s.hidden, s.kv_dim());
    L.wo = table.matrix(p + "attn_output.weight", s.q_dim(), s.hidden);
    L.w_gate = table.matrix(p + "ffn_gate.weight", s.hidden, s.ffn);
    L.w_up = table.matrix(p + "ffn_up.weight", s.hidden, s.ffn);
    L.w_down = table.matrix(p + "ffn_down.weight", s.ffn, s.hidden);
  }
  return w;
}

void pack_for_path(LlamaWeights& w, MatmulPath path, ThreadPool& pool) {
  if (path != MatmulPath::kFloat && path != MatmulPath::kInt8) return;
  const auto order =
      path == MatmulPath::kFloat ? detail::PanelOrder::kFloat : detail::PanelOrder::kInt8;
  const auto set_panels = [&](WeightView& v, const uint8_t* panels) {
    (order == detail::PanelOrder::kFloat ? v.panels : v.int8_panels) = panels;
  };
  const auto pack = [&](WeightView& v) {
    if (!is_quantized(v.type)) return;
    auto& buf = w.packed.emplace_back(static_cast<size_t>(detail::packed_bytes(v)));
    detail::pack_weights(v, buf.data(), pool, order);
    set_panels(v, buf.data());
  };
  // One copy for projections that share an input (rows == 0 when they cannot stack).
  const auto pack_fused = [&](const std::vector<WeightView>& parts) {
    if (!detail::can_stack(parts)) return WeightView{};
    auto& buf = w.packed.emplace_back(static_cast<size_t>(detail::stacked_bytes(parts)));
    return detail::pack_stacked(parts, buf.data(), pool, order);
  };
  for (LayerWeights& l : w.layers) {
    l.wqkv = pack_fused({l.wq, l.wk, l.wv});
    if (l.wqkv.rows == 0) {
      for (WeightView* v : {&l.wq, &l.wk, &l.wv}) pack(*v);
    }
    l.w_gate_up = pack_fused({l.w_gate, l.w_up});
    if (l.w_gate_up.rows == 0) {
      for (WeightView* v : {&l.w_gate, &l.w_up}) pack(*v);
    }
    for (WeightView* v : {&l.wo, &l.w_down}) pack(*v);
  }
  pack(w.lm_head);
}

}  // namespace plinth::cpu
