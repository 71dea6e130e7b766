// backend_cpu as an ordinary C++ class, shaped for plinth::sdk::backend_vtable (backend.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama_forward.hpp"
#include "matmul_choice.hpp"
#include "plinth/backend.h"
#include "plinth/plugin.hpp"

namespace plinth::cpu {

/// A parsed backend_cpu config: the forward's options and how the matmul path was chosen.
struct BackendConfig {
  ForwardOptions forward;    // matmul resolved: "auto" is already Int8 or Float here
  std::string matmul_label;  // for the start-up log: "auto -> int8 (AVX-512 VNNI)", "float", ...
};

/// The JSON Schema of the manifest config, which the host validates (types, ranges, enums, no
/// unknown keys) and fills with its defaults before create(): {"threads": 1..1024 (default: the
/// number of cores), "kv_dtype": "f32" | "f16" (default "f32"), "max_batch_tokens": 1..1048576
/// (default 2048), "matmul": "auto" | "float" | "int8" | "simd" | "blas" | "simd_blas" (default
/// "auto")}.
extern const char* const kConfigSchema;

/// Reads a config that passed kConfigSchema (sdk::ConfigReader). "matmul": "auto" (or absent) is
/// resolved by choose_auto_matmul(best_int8); "simd_blas" is the kernels' MatmulPath::kAuto.
/// NULL or "" means {}. Throws std::invalid_argument naming the key for a value C++ cannot read
/// (wrong JSON type, out of the C++ type's range, a name not in an enum); the schema's ranges are
/// the host's to check (LlamaForward still refuses threads or max_batch_tokens < 1).
BackendConfig parse_config(const char* config_json, Int8Kernel best_int8 = best_int8_kernel());

/// Bytes of MemTotal and MemAvailable in /proc/meminfo ("MemAvailable: N kB"). Throws
/// std::runtime_error when the file or a field is missing.
struct MemInfo {
  uint64_t total = 0;
  uint64_t available = 0;
};
MemInfo read_meminfo(const std::string& path = "/proc/meminfo");

/// The plugin instance. Every method may throw; the SDK adapter converts at the boundary.
class CpuBackend {
 public:
  /// Needs args.model (INVALID_ARGUMENT when NULL); see LlamaForward for the model errors.
  explicit CpuBackend(const plinth_create_args& args);

  /// bytes_per_token = 2 * n_layers * n_kv_heads * head_dim * (4 for f32, 2 for f16).
  plinth_kv_layout kv_layout() const;
  /// CPU; free = MemAvailable, total = MemTotal.
  plinth_memory_info memory_info() const;
  void allocate_kv(uint32_t num_blocks, uint32_t block_size);
  plinth_forward_output forward(const plinth_batch& batch);
  void copy_blocks(std::span<const plinth_block_copy> copies);

  /// Transformer layers of the model (extension plinth.early_exit/1 num_layers).
  uint32_t num_layers() const { return static_cast<uint32_t>(forward_.shape().n_layers); }
  /// forward with the model cut after layer exit_layer - 1 (LlamaForward::forward_early_exit):
  /// logits [num_logits, vocab] f32 on the host. INVALID_ARGUMENT for exit_layer outside
  /// [1, num_layers) and everything forward refuses.
  plinth_forward_output forward_early_exit(const plinth_batch& batch, uint32_t exit_layer);
  /// Answers PLINTH_EXT_EARLY_EXIT ("plinth.early_exit/1") with a plinth_early_exit_ext that
  /// lives as long as the library; NULL for any other name (and for NULL).
  const void* extension(const char* name) const;

  LlamaForward& model() { return forward_; }

 private:
  CpuBackend(const plinth_create_args& args, const BackendConfig& config);

  std::vector<int32_t> argmax_;  // [num_logits] ids of the last argmax_only forward (ABI 1.3)
  sdk::Host host_;
  LlamaForward forward_;
};

}  // namespace plinth::cpu
