// backend_cuda's manifest config: the parsed options and the JSON schema the host validates them
// against (host/runtime/json_schema.hpp dialect). Pure C++ (no CUDA headers).
#pragma once

#include <cstdint>
#include <string_view>

namespace plinth::cuda {

/// The options of backend_cuda, defaults as in kCudaConfigSchema.
struct CudaConfig {
  /// CUDA device ordinal (cudaSetDevice), >= 0.
  int device = 0;
  /// Share of the device's free memory, after weights and activation buffers are allocated,
  /// that the KV pool takes; in (0, 1].
  double memory_fraction = 0.9;
  /// true ("gemm": "invariant"): own bf16 GEMM with a fixed per-output reduction order (f32
  /// accumulate, K in order, no split-K), so a row's result never depends on the batch size;
  /// false ("gemm": "fast"): cuBLAS, whose algorithm choice depends on the shape.
  bool invariant_gemm = true;
  /// Rows of the activation buffers: the largest num_tokens of one forward (prefill chunks
  /// included), tokens; >= 1 and >= max_num_seqs.
  uint32_t max_num_tokens = 8192;
  /// Largest num_seqs of one forward (and rows of the logits buffer); >= 1.
  uint32_t max_num_seqs = 256;
};

/// Reads the config create() receives (JSON text), which the host has validated against
/// kCudaConfigSchema (types, ranges, the gemm names, no unknown keys) with defaults filled. An
/// empty string means all defaults; absent keys keep their defaults. Integers may be written as
/// whole floats (8192.0), as the schema dialect allows. Throws std::invalid_argument
/// "backend_cuda: config.<key> ..." for max_num_seqs > max_num_tokens (the rule the schema cannot
/// express), and for what C++ cannot read: text that is not a JSON object, a value of the wrong
/// JSON type, an integer that does not fit its field, a gemm name it does not know.
CudaConfig parse_cuda_config(std::string_view json);

/// As above; nullptr means all defaults (create args' config_json may be NULL).
CudaConfig parse_cuda_config(const char* json);

/// JSON schema of the config (the subset host/runtime/json_schema.hpp validates: type, enum,
/// minimum, maximum, exclusiveMinimum, default, description, additionalProperties), for the
/// plugin descriptor's config_schema. Static storage, NUL-terminated.
extern const char* const kCudaConfigSchema;

}  // namespace plinth::cuda
