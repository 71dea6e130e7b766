// Test support: a tiny random LLaMA model (F32 weights) as a plinth_model_desc, and a naive float
// implementation of its forward pass (contiguous K/V, one token at a time, no paging, no threads)
// written from the LLaMA architecture, independently of backend_cpu's code.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "plinth/model.h"

namespace tiny {

struct Dims {
  uint32_t n_layers = 2, hidden = 64, n_heads = 4, n_kv_heads = 2, head_dim = 16, ffn = 96,
           vocab = 128, context = 256;
  float rope_theta = 10000.0f, eps = 1e-5f;
  uint32_t rope_neox = 0;
};

/// Owns the tensors and the descriptor pointing at them. Not copyable (the desc points inside).
class Model {
 public:
  explicit Model(const Dims& d = Dims{}, uint32_t seed = 42) : d_(d) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const auto matrix = [&](const std::string& name, uint32_t in, uint32_t out) {
      const float scale = 1.0f / std::sqrt(static_cast<float>(in));
      std::vector<float> w(static_cast<size_t>(in) * out);
      for (float& v : w) v = u(rng) * scale;
      add(name, std::move(w), in, out);
    };
    const auto norm = [&](const std::string& name) {
      std::vector<float> w(d.hidden);
      for (float& v : w) v = 1.0f + 0.2f * u(rng);
      add(name, std::move(w), d.hidden, 1);
    };
    {
      std::vector<float> e(static_cast<size_t>(d.hidden) * d.vocab);
      for (float& v : e) v = u(rng);
      add("token_embd.weight", std::move(e), d.hidden, d.vocab);
    }
    norm("output_norm.weight");
    const uint32_t qd = d.n_heads * d.head_dim, kvd = d.n_kv_heads * d.head_dim;
    for (uint32_t l = 0; l < d.n_layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      norm(p + "attn_norm.weight");
      norm(p + "ffn_norm.weight");
      matrix(p + "attn_q.weight", d.hidden, qd);
      matrix(p + "attn_k.weight", d.hidden, kvd);
      matrix(p + "attn_v.weight", d.hidden, kvd);
      matrix(p + "attn_output.weight", qd, d.hidden);
      matrix(p + "ffn_gate.weight", d.hidden, d.ffn);
      matrix(p + "ffn_up.weight", d.hidden, d.ffn);
      matrix(p + "ffn_down.weight", d.ffn, d.hidden);
    }
    rebuild_views();
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const Dims& dims() const { return d_; }
  plinth_model_desc& desc() { return desc_; }
  std::vector<plinth_tensor_view>& views() { return views_; }
  const std::vector<float>& w(const std::string& name) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return data_[i];
    }
    throw std::runtime_error("no tensor " + name);
  }

  /// Logits [tokens.size(), vocab] of every position of `tokens` processed from position 0.
  std::vector<std::vector<float>> naive_logits(const std::vector<int32_t>& tokens) const {
    return naive_logits(tokens, d_.n_layers);
  }
  /// The same for the model cut after its first `num_layers` layers (the final norm and the LM
  /// head applied to the hidden state after layer num_layers - 1). Throws std::invalid_argument
  /// for num_layers outside [1, n_layers].
  std::vector<std::vector<float>> naive_logits(const std::vector<int32_t>& tokens,
                                               uint32_t num_layers) const;

 private:
  void add(const std::string& name, std::vector<float> w, uint32_t d0, uint32_t d1) {
    names_.push_back(name);
    data_.push_back(std::move(w));
    dims_.push_back({d0, d1});
  }
  void rebuild_views() {
    views_.clear();
    for (size_t i = 0; i < names_.size(); ++i) {
      plinth_tensor_view v{};
      v.struct_size = sizeof(v);
      v.name = names_[i].c_str();
      v.dtype = PLINTH_DTYPE_F32;
      v.n_dims = dims_[i][1] == 1 ? 1 : 2;
      v.dims[0] = dims_[i][0];
      v.dims[1] = dims_[i][1];
      v.dims[2] = v.dims[3] = 1;
      v.data = data_[i].data();
      v.nbytes = data_[i].size() * sizeof(float);
      views_.push_back(v);
    }
    desc_ = plinth_model_desc{};
    desc_.struct_size = sizeof(desc_);
    plinth_model_config& c = desc_.config;
    c.struct_size = sizeof(c);
    c.architecture = "llama";
    c.n_layers = d_.n_layers;
    c.hidden_size = d_.hidden;
    c.n_heads = d_.n_heads;
    c.n_kv_heads = d_.n_kv_heads;
    c.head_dim = d_.head_dim;
    c.ffn_size = d_.ffn;
    c.vocab_size = d_.vocab;
    c.context_length = d_.context;
    c.rope_theta = d_.rope_theta;
    c.rms_norm_eps = d_.eps;
    c.rope_neox = d_.rope_neox;
    c.tied_embeddings = 1;
    desc_.num_tensors = views_.size();
    desc_.tensors = views_.data();
    desc_.path = "<tiny test model>";
  }

  Dims d_;
  std::vector<std::string> names_;
  std::vector<std::vector<float>> data_;
  std::vector<std::array<uint32_t, 2>> dims_;
  std::vector<plinth_tensor_view> views_;
  plinth_model_desc desc_{};
};

}  // namespace tiny
