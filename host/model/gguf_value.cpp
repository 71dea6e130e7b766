#include "model/gguf_value.hpp"

namespace plinth {

const char* gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8:
      return "uint8";
    case GgufValueType::INT8:
      return "int8";
    case GgufValueType::UINT16:
      return "uint16";
    case GgufValueType::INT16:
      return "int16";
    case GgufValueType::UINT32:
      return "uint32";
    case GgufValueType::INT32:
      return "int32";
    case GgufValueType::FLOAT32:
      return "float32";
    case GgufValueType::BOOL:
      return "bool";
    case GgufValueType::STRING:
      return "string";
    case GgufValueType::ARRAY:
      return "array";
    case GgufValueType::UINT64:
      return "uint64";
    case GgufValueType::INT64:
      return "int64";
    case GgufValueType::FLOAT64:
      return "float64";
  }
  return "unknown";
}

bool gguf_is_unsigned(GgufValueType type) {
  return type == GgufValueType::UINT8 || type == GgufValueType::UINT16 ||
         type == GgufValueType::UINT32 || type == GgufValueType::UINT64;
}

bool gguf_is_signed(GgufValueType type) {
  return type == GgufValueType::INT8 || type == GgufValueType::INT16 ||
         type == GgufValueType::INT32 || type == GgufValueType::INT64;
}

}  // namespace plinth
