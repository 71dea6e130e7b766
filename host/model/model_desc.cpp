#include "model/model_desc.hpp"

#include <algorithm>

namespace plinth {

plinth_tensor_view tensor_view(const GgufTensor& t) {
  plinth_tensor_view v{};
  v.struct_size = sizeof(plinth_tensor_view);
  v.name = t.name.c_str();
  v.dtype = static_cast<int32_t>(t.type);
  v.n_dims = static_cast<uint32_t>(std::min<size_t>(t.dims.size(), 4));
  for (size_t i = 0; i < 4; ++i) v.dims[i] = i < t.dims.size() ? t.dims[i] : 1;
  v.data = t.data;
  v.nbytes = t.nbytes;
  return v;
}

ModelDesc::ModelDesc(const GgufFile& file, const ModelConfig& c)
    : architecture_(c.architecture), path_(file.path()) {
  views_.reserve(file.tensors().size());
  for (const GgufTensor& t : file.tensors()) views_.push_back(tensor_view(t));
  plinth_model_config& mc = desc_.config;
  mc.struct_size = sizeof(plinth_model_config);
  mc.architecture = architecture_.c_str();
  mc.n_layers = c.n_layers;
  mc.hidden_size = c.hidden_size;
  mc.n_heads = c.n_heads;
  mc.n_kv_heads = c.n_kv_heads;
  mc.head_dim = c.head_dim;
  mc.ffn_size = c.ffn_size;
  mc.vocab_size = c.vocab_size;
  mc.context_length = c.context_length;
  mc.rope_theta = c.rope_theta;
  mc.rms_norm_eps = c.rms_norm_eps;
  mc.rope_neox = c.rope_neox ? 1 : 0;
  mc.tied_embeddings = c.tied_embeddings ? 1 : 0;
  layers_.reserve(c.layers.size());
  for (const sdk::LayerSpec& l : c.layers) {
    layers_.push_back(plinth_arch_layer{static_cast<float>(l.rope_base),
                                        static_cast<float>(l.rope_scale), l.rope ? 1u : 0u,
                                        static_cast<uint32_t>(l.sliding_window)});
  }
  rope_freq_factors_ = c.rope_freq_factors;
  arch_.struct_size = sizeof(plinth_arch_desc);
  arch_.layer_stride = sizeof(plinth_arch_layer);
  arch_.required_features = c.features;
  arch_.rope_dims = c.rope_dims != 0 ? c.rope_dims : c.head_dim;
  arch_.embed_scale = c.embed_scale;
  arch_.attn_scale = c.attn_scale;
  arch_.logit_softcap = c.logit_softcap;
  arch_.logit_scale = c.logit_scale;
  arch_.residual_scale = c.residual_scale;
  arch_.n_layers = static_cast<uint32_t>(layers_.size());
  arch_.layers = layers_.data();
  arch_.rope_freq_factors = rope_freq_factors_.empty() ? nullptr : rope_freq_factors_.data();
  desc_.struct_size = sizeof(plinth_model_desc);
  desc_.arch = &arch_;
  desc_.num_tensors = views_.size();
  desc_.tensors = views_.data();
  desc_.path = path_.c_str();
}

LoadedModel load_model(const std::filesystem::path& path) {
  LoadedModel m;
  m.file = GgufFile::open(path.string());
  m.config = read_model_config(*m.file);
  m.desc = std::make_unique<ModelDesc>(*m.file, m.config);
  return m;
}

}  // namespace plinth
