// ggml tensor element types as stored in GGUF files: ids, block geometry and names.
// Source: ggml/include/ggml.h (enum ggml_type) and ggml/src/ggml-common.h (block layouts).
#pragma once

#include <cstdint>
#include <string>

namespace plinth {

/// ggml tensor types plinth can read (values as in the GGUF spec / ggml.h). Block formats:
/// Q8_0 = f16 scale + 32 int8 (34 bytes / 32 elements); Q4_0 = f16 scale + 16 bytes of nibbles
/// (18 / 32); Q4_1 = f16 scale + f16 min + 16 bytes of nibbles (20 / 32).
enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8, kBF16 = 30 };

/// Elements per block of a supported type (1 for F32/F16/BF16, 32 for the Q types).
/// Throws std::invalid_argument for a value outside GgmlType.
uint32_t ggml_block_size(GgmlType type);
/// Bytes per block of a supported type. Throws std::invalid_argument otherwise.
uint32_t ggml_type_size(GgmlType type);
/// "F32", "Q4_1" ... Throws std::invalid_argument for a value outside GgmlType.
const char* ggml_type_name(GgmlType type);

/// True when `id` is one of the GgmlType values above.
bool ggml_type_supported(uint32_t id);
/// ggml's name of any type id ever defined in ggml.h (also the unsupported ones such as "Q4_K"),
/// or nullptr for an id ggml never defined. For error messages.
const char* ggml_type_name_any(uint32_t id);
/// The supported types as a list for messages: "F32, F16, BF16, Q4_0, Q4_1, Q8_0".
std::string ggml_supported_types();

}  // namespace plinth
