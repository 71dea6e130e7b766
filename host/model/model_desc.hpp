#pragma once
// The model as the ABI hands it to a backend (sdk/include/plinth/model.h): hyper-parameters and
// views of every tensor of a memory-mapped GGUF file. The one builder of a plinth_model_desc from a
// GGUF file: the host, bench/ and tests/ all use it (plinth_model).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/gguf.hpp"
#include "model/model_config.hpp"
#include "plinth/model.h"

namespace plinth {

/// The ABI view of one GGUF tensor: name and data point into `t` (valid while its file is mapped),
/// dtype is the ggml type id (GgmlType values are the plinth_dtype values), dims padded with 1 to
/// four (at most the first four of `t.dims`; GGUF tensors have at most four). No allocation.
plinth_tensor_view tensor_view(const GgufTensor& t);

/// Owns the plinth_model_desc of one GGUF file, its architecture description (ABI 1.4:
/// plinth_arch_desc with one plinth_arch_layer per layer) and the arrays they point to. The file
/// must outlive it (tensor data and names point into the file). Not copyable or movable: the
/// descriptor's pointers refer to members.
class ModelDesc {
 public:
  ModelDesc(const GgufFile& file, const ModelConfig& config);
  ModelDesc(const ModelDesc&) = delete;
  ModelDesc& operator=(const ModelDesc&) = delete;
  /// Valid while this object (and the file) live.
  const plinth_model_desc* get() const { return &desc_; }

 private:
  std::string architecture_;
  std::string path_;
  std::vector<plinth_tensor_view> views_;  // [num_tensors], file order
  std::vector<plinth_arch_layer> layers_;  // [n_layers]
  std::vector<float> rope_freq_factors_;   // [rope_dims / 2] or empty
  plinth_arch_desc arch_{};
  plinth_model_desc desc_{};
};

/// A model file opened for a pipeline: the mapping, its config and its ABI descriptor.
struct LoadedModel {
  std::unique_ptr<GgufFile> file;
  ModelConfig config;
  std::unique_ptr<ModelDesc> desc;
};

/// Opens and maps `path` and reads its config (read_model_config). Throws GgufError.
LoadedModel load_model(const std::filesystem::path& path);

}  // namespace plinth
