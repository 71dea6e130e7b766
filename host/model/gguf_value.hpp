// A GGUF metadata value: every type of the spec, arrays (also nested) included.
// Source: ggml docs/gguf.md, "enum gguf_metadata_value_type" and "gguf_metadata_value_t".
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace plinth {

/// Metadata value types, numbered as in the GGUF spec.
enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

/// "uint8", "string", "array" ...; "unknown" for a value outside the enum.
const char* gguf_value_type_name(GgufValueType type);
/// True for UINT8/16/32/64; false for everything else.
bool gguf_is_unsigned(GgufValueType type);
/// True for INT8/16/32/64.
bool gguf_is_signed(GgufValueType type);

/// One decoded value. Unsigned integers are held as uint64_t, signed ones as int64_t, FLOAT32 and
/// FLOAT64 as double (exact for FLOAT32), strings as bytes (the spec says UTF-8; not checked), an
/// array as its elements, each a GgufValue of type `elem_type`.
struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  GgufValueType elem_type = GgufValueType::UINT8;  // meaningful only when type == ARRAY
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> data;

  const std::vector<GgufValue>& items() const { return std::get<std::vector<GgufValue>>(data); }
};

}  // namespace plinth
