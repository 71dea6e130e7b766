#include "weight_types.hpp"

#include <stdexcept>
#include <string>

namespace plinth::cpu {

const char* weight_type_name(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return "F32";
    case WeightType::kF16:
      return "F16";
    case WeightType::kBF16:
      return "BF16";
    case WeightType::kQ8_0:
      return "Q8_0";
    case WeightType::kQ4_0:
      return "Q4_0";
    case WeightType::kQ4_1:
      return "Q4_1";
  }
  return "unknown";
}

int64_t block_elems(WeightType type) {
  switch (type) {
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
      return 1;
    case WeightType::kQ8_0:
    case WeightType::kQ4_0:
    case WeightType::kQ4_1:
      return kQuantBlock;
  }
  throw std::invalid_argument("block_elems: unknown WeightType " +
                              std::to_string(static_cast<int>(type)));
}

int64_t block_bytes(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return 4;
    case WeightType::kF16:
    case WeightType::kBF16:
      return 2;
    case WeightType::kQ8_0:
      return sizeof(BlockQ8_0);
    case WeightType::kQ4_0:
      return sizeof(BlockQ4_0);
    case WeightType::kQ4_1:
      return sizeof(BlockQ4_1);
  }
  throw std::invalid_argument("block_bytes: unknown WeightType " +
                              std::to_string(static_cast<int>(type)));
}

int64_t row_bytes(WeightType type, int64_t cols) {
  const int64_t be = block_elems(type);
  if (cols < 0 || cols % be != 0) {
    throw std::invalid_argument(std::string("row_bytes: cols=") + std::to_string(cols) +
                                " is not a non-negative multiple of the " + weight_type_name(type) +
                                " block size " + std::to_string(be));
  }
  return cols / be * block_bytes(type);
}

bool is_quantized(WeightType type) {
  return type == WeightType::kQ8_0 || type == WeightType::kQ4_0 || type == WeightType::kQ4_1;
}

void validate(const WeightView& w) {
  const std::string name = std::string("WeightView(") + weight_type_name(w.type) + ")";
  if (w.data == nullptr && w.panels == nullptr && w.int8_panels == nullptr) {
    throw std::invalid_argument(name + ": data is null (and no panel copy is set)");
  }
  if (w.rows <= 0 || w.cols <= 0) {
    throw std::invalid_argument(name + ": rows=" + std::to_string(w.rows) +
                                " and cols=" + std::to_string(w.cols) + " must both be > 0");
  }
  if (w.cols % block_elems(w.type) != 0) {
    throw std::invalid_argument(name + ": cols=" + std::to_string(w.cols) +
                                " must be a multiple of the block size " +
                                std::to_string(block_elems(w.type)));
  }
}

}  // namespace plinth::cpu
