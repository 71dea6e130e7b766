#include "model/gguf_value.hpp"

namespace plinth {

const char* gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
      return "uint8";
    case GgufValueType::kInt8:
      return "int8";
    case GgufValueType::kUint16:
      return "uint16";
    case GgufValueType::kInt16:
      return "int16";
    case GgufValueType::kUint32:
      return "uint32";
    case GgufValueType::kInt32:
      return "int32";
    case GgufValueType::kFloat32:
      return "float32";
    case GgufValueType::kBool:
      return "bool";
    case GgufValueType::kString:
      return "string";
    case GgufValueType::kArray:
      return "array";
    case GgufValueType::kUint64:
      return "uint64";
    case GgufValueType::kInt64:
      return "int64";
    case GgufValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

bool gguf_is_unsigned(GgufValueType type) {
  return type == GgufValueType::kUint8 || type == GgufValueType::kUint16 ||
         type == GgufValueType::kUint32 || type == GgufValueType::kUint64;
}

bool gguf_is_signed(GgufValueType type) {
  return type == GgufValueType::kInt8 || type == GgufValueType::kInt16 ||
         type == GgufValueType::kInt32 || type == GgufValueType::kInt64;
}

}  // namespace plinth
