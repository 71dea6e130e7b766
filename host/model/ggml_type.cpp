#include "model/ggml_type.hpp"

#include <array>
#include <stdexcept>

namespace plinth {
namespace {

struct TypeTraits {
  GgmlType type;
  const char* name;
  uint32_t block_size;  // elements per block
  uint32_t type_size;   // bytes per block
};

// Q4_0: ggml_half d + uint8 qs[16]; Q4_1: ggml_half d, m + qs[16]; Q8_0: ggml_half d + int8 qs[32].
constexpr std::array<TypeTraits, 6> kSupported = {{
    {GgmlType::kF32, "F32", 1, 4},
    {GgmlType::kF16, "F16", 1, 2},
    {GgmlType::kBF16, "BF16", 1, 2},
    {GgmlType::kQ4_0, "Q4_0", 32, 18},
    {GgmlType::kQ4_1, "Q4_1", 32, 20},
    {GgmlType::kQ8_0, "Q8_0", 32, 34},
}};

const TypeTraits& traits(GgmlType type) {
  for (const auto& t : kSupported) {
    if (t.type == type) return t;
  }
  throw std::invalid_argument("ggml type " + std::to_string(static_cast<uint32_t>(type)) +
                              " is not supported (supported: " + ggml_supported_types() + ")");
}

}  // namespace

uint32_t ggml_block_size(GgmlType type) {
  return traits(type).block_size;
}
uint32_t ggml_type_size(GgmlType type) {
  return traits(type).type_size;
}
const char* ggml_type_name(GgmlType type) {
  return traits(type).name;
}

bool ggml_type_supported(uint32_t id) {
  for (const auto& t : kSupported) {
    if (static_cast<uint32_t>(t.type) == id) return true;
  }
  return false;
}

const char* ggml_type_name_any(uint32_t id) {
  // Index = ggml_type value; nullptr marks ids removed from ggml (Q4_2, Q4_3, the repacked types).
  static constexpr std::array<const char*, 40> kNames = {
      "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
      "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
      "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
      "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
      "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  return id < kNames.size() ? kNames[id] : nullptr;
}

std::string ggml_supported_types() {
  std::string out;
  for (const auto& t : kSupported) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace plinth
