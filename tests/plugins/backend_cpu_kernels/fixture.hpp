// Loads tests/fixtures/quant (written by tools/reference/quant_fixture.py from gguf-py).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weight_types.hpp"

namespace plinth::cpu::test {

struct QuantFixture {
  int64_t rows = 0, cols = 0, n = 0;
  std::vector<float> x;         // [n, cols]
  std::vector<uint8_t> x_q8_0;  // gguf Q8_0 of x, [n, cols/32] blocks
  struct Weights {
    std::vector<uint8_t> raw;    // gguf-quantized bytes, [rows, cols] in blocks
    std::vector<float> dequant;  // gguf.quants.dequantize of raw, [rows, cols]
  };
  std::map<WeightType, Weights> weights;
};

/// Reads the fixture folder; throws std::runtime_error naming a missing or short file.
const QuantFixture& quant_fixture();

std::vector<uint8_t> read_bytes(const std::string& path);

/// Every weight type with its name, for parameterized tests: each row of the format table.
inline const WeightType kAllTypes[] = {WeightType::kF32,  WeightType::kF16,    WeightType::kBF16,
                                       WeightType::kQ8_0, WeightType::kQ4_0,   WeightType::kQ4_1,
                                       WeightType::kQ5_0, WeightType::kQ5_1,   WeightType::kQ2_K,
                                       WeightType::kQ3_K, WeightType::kQ4_K,   WeightType::kQ5_K,
                                       WeightType::kQ6_K, WeightType::kIQ4_NL, WeightType::kIQ4_XS};
/// The quantized ones (those with panels).
inline const WeightType kQuantTypes[] = {
    WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1,   WeightType::kQ5_0,
    WeightType::kQ5_1, WeightType::kQ2_K, WeightType::kQ3_K,   WeightType::kQ4_K,
    WeightType::kQ5_K, WeightType::kQ6_K, WeightType::kIQ4_NL, WeightType::kIQ4_XS};
/// `cols` rounded up to a whole number of blocks of `t` (576 → 768 for the 256-element types).
inline int64_t fit_cols(WeightType t, int64_t cols) {
  const int64_t be = block_elems(t);
  return (cols + be - 1) / be * be;
}

}  // namespace plinth::cpu::test
