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
  desc_.struct_size = sizeof(plinth_model_desc);
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
