// read_model_config: the architecture's adapter (host/model/arch/) reads `<arch>.*` keys, keys
// whose math no adapter implements are refused, and every tensor is checked with the binder the
// backends use (sdk::bind_model_tensors), so a backend can index them without further checks.
#include "model/model_config.hpp"

#include <array>
#include <string>
#include <vector>

#include "model/arch/arch_adapters.hpp"
#include "model/gguf.hpp"
#include "model/model_desc.hpp"

namespace plinth {
namespace {

// `<arch>.*` keys that change the forward pass (llama.cpp's LLM_KV_* read by some model): a file
// holding one its adapter did not consume needs math plinth does not implement.
constexpr std::array<const char*, 17> kMathKeys = {"attention.clamp_kqv",
                                                   "attention.max_alibi_bias",
                                                   "attn_logit_softcapping",
                                                   "final_logit_softcapping",
                                                   "residual_scale",
                                                   "embedding_scale",
                                                   "logit_scale",
                                                   "attention.scale",
                                                   "rope.scaling.type",
                                                   "rope.scaling.factor",
                                                   "attention.sliding_window",
                                                   "rope.freq_base_swa",
                                                   "attention.sliding_window_pattern",
                                                   "rope.scaling.attn_factor",
                                                   "expert_count",
                                                   "attention.layer_norm_epsilon",
                                                   "rope.dimension_sections"};

bool numeric_zero(const GgufFile& f, const std::string& key) {
  try {
    if (const auto u = f.find_uint(key)) return *u == 0;
  } catch (const GgufError&) {  // not an unsigned integer
  }
  try {
    if (const auto v = f.find_float(key)) return *v == 0.0;
  } catch (const GgufError&) {  // not a float
  }
  return false;
}

void refuse_unconsumed_keys(const arch::ArchReader& r) {
  for (const char* suffix : kMathKeys) {
    const std::string k = r.key(suffix);
    if (!r.file().has(k) || r.consumed(k)) continue;
    // A zero value is the neutral one for every numeric key above.
    if (numeric_zero(r.file(), k)) continue;
    r.fail_key(k, "changes the forward pass in a way the " + r.arch() +
                      " adapter does not implement (plinth never ignores such a key)");
  }
}

void check_tensors(const GgufFile& file, const ModelConfig& c) {
  const ModelDesc desc(file, c);
  try {
    const sdk::ModelSpec spec = sdk::read_model_spec(*desc.get());
    const sdk::TensorTable table(*desc.get());
    (void)sdk::bind_model_tensors(table, spec);
    const std::vector<std::string> unused = table.unused();
    if (!unused.empty()) {
      const GgufTensor* t = file.find_tensor(unused.front());
      throw GgufError(file.path(), t != nullptr ? t->offset : 0, unused.front(),
                      "tensor is not read by the " + c.architecture +
                          " forward pass as plinth implements it (" +
                          std::to_string(unused.size()) +
                          " such tensors); plinth never ignores a tensor that may change the math");
    }
  } catch (const sdk::TensorError& e) {
    const GgufTensor* t = file.find_tensor(e.tensor());
    const std::string what = e.what();
    const std::string prefix = file.path() + ": tensor " + e.tensor() + " ";
    throw GgufError(file.path(), t != nullptr ? t->offset : 0, e.tensor(),
                    what.rfind(prefix, 0) == 0 ? "tensor " + what.substr(prefix.size()) : what);
  } catch (const sdk::Error& e) {
    throw GgufError(file.path(), 0, "general.architecture", e.what());
  }
}

}  // namespace

ModelConfig read_model_config(const GgufFile& file) {
  ModelConfig c;
  c.architecture = file.get_string("general.architecture");
  const arch::ArchAdapter* adapter = nullptr;
  for (const arch::ArchAdapter& a : arch::arch_adapters()) {
    if (c.architecture == a.name) adapter = &a;
  }
  if (adapter == nullptr) {
    throw GgufError(file.path(), file.offset_of("general.architecture"), "general.architecture",
                    "architecture '" + c.architecture +
                        "' is not supported; supported: " + arch::known_architectures());
  }
  c.name = file.find_string("general.name").value_or("");
  const arch::ArchReader r(file, c.architecture);
  arch::read_common(r, c);
  adapter->read(r, c);
  arch::finish_rope_features(c);
  refuse_unconsumed_keys(r);
  check_tensors(file, c);
  return c;
}

}  // namespace plinth
