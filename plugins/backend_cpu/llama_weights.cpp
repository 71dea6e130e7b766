#include "llama_weights.hpp"

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

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

// Kernel views of the SDK's bound tensors (sdk::bind_model_tensors checked names and dims).
class Binder {
 public:
  explicit Binder(std::string path) : path_(std::move(path)) {}

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

  // A linear layer in -> out (ggml dims {in, out}, checked) as W[out, in].
  WeightView matrix(const plinth_tensor_view& t) const {
    const auto in = static_cast<int64_t>(t.dims[0]);
    const auto out = static_cast<int64_t>(t.dims[1]);
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
                  path_ + ": tensor " + t.name + " is not a valid matrix: " + e.what());
    }
    return w;
  }

  // A vector (norm weight or bias) as f32: in place when F32, else converted into `owned`.
  // NULL for a NULL view.
  const float* vector(const plinth_tensor_view* t, std::vector<std::vector<float>>& owned) const {
    if (t == nullptr) return nullptr;
    const auto n = static_cast<int64_t>(t->dims[0]);
    const WeightType wt = type_of(*t);
    if (t->nbytes < static_cast<uint64_t>(n) * (wt == WeightType::kF32 ? 4u : 2u) ||
        (wt != WeightType::kF32 && wt != WeightType::kF16 && wt != WeightType::kBF16)) {
      throw Error(PLINTH_ERR_UNSUPPORTED, path_ + ": vector tensor " + t->name +
                                              " must be F32, F16 or BF16 with " +
                                              std::to_string(n) + " elements");
    }
    if (wt == WeightType::kF32) return static_cast<const float*>(t->data);
    owned.emplace_back(static_cast<size_t>(n));
    dequantize(wt, t->data, 0, n, owned.back().data());
    return owned.back().data();
  }

 private:
  std::string path_;
};

}  // namespace

LlamaWeights bind_llama_weights(const plinth_model_desc& model) {
  LlamaWeights w;
  w.shape = sdk::read_model_spec(model);
  const LlamaShape& s = w.shape;
  const sdk::TensorTable table(model);
  const sdk::ModelTensors t = sdk::bind_model_tensors(table, s);
  const Binder bind(s.path);
  // Vector pointers into `owned` stay valid as it grows or moves: the inner buffers never move.
  w.token_embd = bind.matrix(*t.token_embd);
  w.lm_head = t.output != nullptr ? bind.matrix(*t.output) : w.token_embd;
  w.output_norm = bind.vector(t.output_norm, w.owned);
  w.layers.resize(static_cast<size_t>(s.n_layers));
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const sdk::LayerTensors& T = t.layers[static_cast<size_t>(l)];
    LayerWeights& L = w.layers[static_cast<size_t>(l)];
    L.attn_norm = bind.vector(T.attn_norm, w.owned);
    L.ffn_norm = bind.vector(T.ffn_norm, w.owned);
    L.q_norm = bind.vector(T.q_norm, w.owned);
    L.k_norm = bind.vector(T.k_norm, w.owned);
    L.post_attn_norm = bind.vector(T.post_attn_norm, w.owned);
    L.post_ffn_norm = bind.vector(T.post_ffn_norm, w.owned);
    if (T.wqkv != nullptr) {
      L.file_fused_qkv = true;
      L.wqkv = bind.matrix(*T.wqkv);
    } else {
      L.wq = bind.matrix(*T.wq);
      L.wk = bind.matrix(*T.wk);
      L.wv = bind.matrix(*T.wv);
    }
    if (T.bqkv != nullptr) {
      const float* b = bind.vector(T.bqkv, w.owned);
      L.bq = b;
      L.bk = b + s.q_dim();
      L.bv = b + s.q_dim() + s.kv_dim();
    } else {
      L.bq = bind.vector(T.bq, w.owned);
      L.bk = bind.vector(T.bk, w.owned);
      L.bv = bind.vector(T.bv, w.owned);
    }
    L.wo = bind.matrix(*T.wo);
    if (T.w_gate_up != nullptr) {
      L.file_fused_gate_up = true;
      L.w_gate_up = bind.matrix(*T.w_gate_up);
    } else {
      L.w_gate = bind.matrix(*T.w_gate);
      L.w_up = bind.matrix(*T.w_up);
    }
    L.w_down = bind.matrix(*T.w_down);
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
  // `fused` is one matrix in the file already (packed as it is), or the parts' stacked copy
  // when they can stack, else the parts are packed one by one.
  const auto pack_group = [&](bool in_file, WeightView& fused,
                              std::initializer_list<WeightView*> parts) {
    if (in_file) {
      pack(fused);
      return;
    }
    std::vector<WeightView> views;
    for (WeightView* v : parts) views.push_back(*v);
    fused = pack_fused(views);
    if (fused.rows != 0) return;
    for (WeightView* v : parts) pack(*v);
  };
  for (LayerWeights& l : w.layers) {
    pack_group(l.file_fused_qkv, l.wqkv, {&l.wq, &l.wk, &l.wv});
    pack_group(l.file_fused_gate_up, l.w_gate_up, {&l.w_gate, &l.w_up});
    for (WeightView* v : {&l.wo, &l.w_down}) pack(*v);
  }
  pack(w.lm_head);
}

}  // namespace plinth::cpu
