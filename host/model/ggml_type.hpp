// ggml tensor element types as stored in GGUF files: ids, block geometry and names, read from the
// one format table of the SDK (plinth/ggml_format.hpp), which the backends read too.
#pragma once

#include <cstdint>
#include <string>

namespace plinth {

/// ggml tensor types plinth can read (values as in the GGUF spec / ggml.h; one row each in
/// plinth::ggml::kFormats, which holds the block layouts and decodings).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kBF16 = 30
};

/// Elements per block of a supported type (1 for F32/F16/BF16, 32 or 256 for the block types).
/// Throws std::invalid_argument for a value outside the format table.
uint32_t ggml_block_size(GgmlType type);
/// Bytes per block of a supported type. Throws std::invalid_argument otherwise.
uint32_t ggml_type_size(GgmlType type);
/// "F32", "Q4_K" ... Throws std::invalid_argument for a value outside the format table.
const char* ggml_type_name(GgmlType type);

/// True when `id` is a row of the format table.
bool ggml_type_supported(uint32_t id);
/// ggml's name of any type id ever defined in ggml.h (also the unsupported ones such as
/// "IQ2_XXS"), or nullptr for an id ggml never defined. For error messages.
const char* ggml_type_name_any(uint32_t id);
/// The supported types as a list for messages: "F32, F16, Q4_0, Q4_1, Q5_0, ...".
std::string ggml_supported_types();

}  // namespace plinth
