// ggml tensor element types as stored in GGUF files: ids, block geometry and names, read from the
// one format table of the SDK (plinth/ggml_format.hpp), which the backends read too.
#pragma once

#include <cstdint>
#include <string>

#include "plinth/ggml_format.hpp"

namespace plinth {

/// ggml tensor types plinth can read, typed: the ids of the SDK's format table
/// (plinth/ggml_format.hpp, ggml.h's enum ggml_type), whose rows hold the block layouts and
/// decodings.
enum class GgmlType : uint32_t {
  kF32 = static_cast<uint32_t>(ggml::kF32),
  kF16 = static_cast<uint32_t>(ggml::kF16),
  kQ4_0 = static_cast<uint32_t>(ggml::kQ4_0),
  kQ4_1 = static_cast<uint32_t>(ggml::kQ4_1),
  kQ5_0 = static_cast<uint32_t>(ggml::kQ5_0),
  kQ5_1 = static_cast<uint32_t>(ggml::kQ5_1),
  kQ8_0 = static_cast<uint32_t>(ggml::kQ8_0),
  kQ2_K = static_cast<uint32_t>(ggml::kQ2_K),
  kQ3_K = static_cast<uint32_t>(ggml::kQ3_K),
  kQ4_K = static_cast<uint32_t>(ggml::kQ4_K),
  kQ5_K = static_cast<uint32_t>(ggml::kQ5_K),
  kQ6_K = static_cast<uint32_t>(ggml::kQ6_K),
  kIQ4_NL = static_cast<uint32_t>(ggml::kIQ4_NL),
  kIQ4_XS = static_cast<uint32_t>(ggml::kIQ4_XS),
  kBF16 = static_cast<uint32_t>(ggml::kBF16)
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
