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
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
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
  GgufValueType type = GgufValueType::kUint8;
  GgufValueType elem_type = GgufValueType::kUint8;  // meaningful only when type == ARRAY
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> data;

  const std::vector<GgufValue>& items() const { return std::get<std::vector<GgufValue>>(data); }
};

}  // namespace plinth
