#include "model_cost.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "model/ggml_type.hpp"
#include "model/gguf.hpp"
#include "model/model_config.hpp"

namespace plinth::roofline {
namespace {

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : "+") + x;
  return out;
}

}  // namespace

ModelCost model_cost(const GgufFile& file) {
  const ModelConfig config = read_model_config(file);
  ModelCost c;
  c.n_layers = config.n_layers;
  c.n_heads = config.n_heads;
  c.head_dim = config.head_dim;
  std::set<std::string> layer_types;
  const GgufTensor* output = nullptr;
  const GgufTensor* embd = nullptr;
  for (const GgufTensor& t : file.tensors()) {
    if (t.name == "output.weight") output = &t;
    if (t.name == "token_embd.weight") embd = &t;
    if (t.name.rfind("blk.", 0) == 0 && t.dims.size() >= 2 && t.dims[1] > 1) {
      c.layer_bytes += t.nbytes;
      c.layer_macs += t.num_elements();
      layer_types.insert(ggml_type_name(t.type));
    }
  }
  const GgufTensor* head = output ? output : embd;
  if (c.layer_bytes == 0 || !head) {
    throw std::runtime_error(file.path() +
                             ": no blk.* matrices or no LM head (output.weight / "
                             "token_embd.weight); model_cost expects a LLaMA-family GGUF");
  }
  c.head_bytes = head->nbytes;
  c.head_macs = head->num_elements();
  c.layer_types = join(layer_types);
  c.head_type = ggml_type_name(head->type);
  return c;
}

double step_bound_tps(const ModelCost& cost, double weight_bytes, double tokens, double logits_rows,
                      double context, double gbps, double matmul_macs_per_s,
                      double f32_fmas_per_s) {
  const double memory_s = weight_bytes / (gbps * 1e9);
  const double matmul_macs = tokens * static_cast<double>(cost.layer_macs) +
                             logits_rows * static_cast<double>(cost.head_macs);
  const double compute_s =
      matmul_macs / matmul_macs_per_s + tokens * cost.attention_macs(context) / f32_fmas_per_s;
  return tokens / std::max(memory_s, compute_s);
}

}  // namespace plinth::roofline
