#include "model/ggml_type.hpp"

#include <limits>

#include "plinth/ggml_format.hpp"
#include "plinth/model.h"

namespace plinth {
namespace {

// The SDK's format table numbers types as the ABI does.
static_assert(ggml::kF32 == PLINTH_DTYPE_F32 && ggml::kF16 == PLINTH_DTYPE_F16 &&
              ggml::kQ4_0 == PLINTH_DTYPE_Q4_0 && ggml::kQ4_1 == PLINTH_DTYPE_Q4_1 &&
              ggml::kQ5_0 == PLINTH_DTYPE_Q5_0 && ggml::kQ5_1 == PLINTH_DTYPE_Q5_1 &&
              ggml::kQ8_0 == PLINTH_DTYPE_Q8_0 && ggml::kQ2_K == PLINTH_DTYPE_Q2_K &&
              ggml::kQ3_K == PLINTH_DTYPE_Q3_K && ggml::kQ4_K == PLINTH_DTYPE_Q4_K &&
              ggml::kQ5_K == PLINTH_DTYPE_Q5_K && ggml::kQ6_K == PLINTH_DTYPE_Q6_K &&
              ggml::kIQ4_NL == PLINTH_DTYPE_IQ4_NL && ggml::kIQ4_XS == PLINTH_DTYPE_IQ4_XS &&
              ggml::kBF16 == PLINTH_DTYPE_BF16);

const ggml::Format& row(GgmlType type) {
  return ggml::format(static_cast<int32_t>(type));  // throws for a type outside the table
}

}  // namespace

uint32_t ggml_block_size(GgmlType type) {
  return row(type).block_elems;
}
uint32_t ggml_type_size(GgmlType type) {
  return row(type).block_bytes;
}
const char* ggml_type_name(GgmlType type) {
  return row(type).name;
}

bool ggml_type_supported(uint32_t id) {
  return id <= static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) &&
         ggml::find_format(static_cast<int32_t>(id)) != nullptr;
}

const char* ggml_type_name_any(uint32_t id) {
  return ggml::ggml_name_any(id);
}

std::string ggml_supported_types() {
  return ggml::supported_names();
}

}  // namespace plinth
