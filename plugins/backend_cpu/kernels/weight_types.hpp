// Weight storage formats the CPU kernels read, and their ggml block layouts.
// Source: ggml/src/ggml-common.h (block_q8_0, block_q4_0, block_q4_1) and gguf-py quants.py.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace plinth::cpu {

/// Element type of a weight matrix, as stored in GGUF. The quantized types are ggml block
/// formats of 32 elements each:
///  - Q8_0: f16 d, int8 q[32];            value = q * d
///  - Q4_0: f16 d, uint8 nibbles[16];     value = (q - 8) * d
///  - Q4_1: f16 d, f16 m, nibbles[16];    value = q * d + m
/// Nibble order as ggml: the low nibble of byte i is element i, the high nibble element i + 16.
enum class WeightType { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_1 };

/// A weight matrix `W[rows, cols]` in row-major blocks, not owned. `rows` = output features (ggml
/// ne1), `cols` = input features (ggml ne0); for quantized types `cols` must be a multiple of 32
/// and each row is `cols / 32` whole blocks.
struct WeightView {
  WeightType type;
  /// Row-major blocks. May be null in a panel-only view (`panels` or `int8_panels` set, e.g. the
  /// fused projections of llama_weights.hpp): matmul then runs it only on that panel's path.
  const void* data;
  int64_t rows;
  int64_t cols;
  /// Optional, not owned: the same matrix in the Float path's panel layout (panel_layout.hpp,
  /// pack_panels; quantized types only), kept alive by whoever owns the view. When null, the
  /// Float path packs the weights itself on every call (correct, slower: tests and one-off uses).
  const uint8_t* panels = nullptr;
  /// Optional, not owned: the same matrix in the Int8 path's panel order (PanelOrder::kInt8,
  /// panel_layout.hpp). When null, the Int8 path packs per call, like `panels` above.
  const uint8_t* int8_panels = nullptr;
};

inline constexpr int64_t kQuantBlock = 32;  ///< elements per Q8_0/Q4_0/Q4_1 block

struct BlockQ8_0 {
  uint16_t d;  // f16 bits
  int8_t qs[kQuantBlock];
};
struct BlockQ4_0 {
  uint16_t d;  // f16 bits
  uint8_t qs[kQuantBlock / 2];
};
struct BlockQ4_1 {
  uint16_t d;  // f16 bits
  uint16_t m;  // f16 bits
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);

/// Activation row quantized for the int8 dot products: per 32 elements a float scale `d`, the
/// float `s = d * sum(qs)` (the Q8_1 idea of ggml, kept in f32 instead of f16) and 32 int8.
/// Internal to the kernels; never stored in files.
struct BlockQ8A {
  float d;
  float s;
  int8_t qs[kQuantBlock];
};
static_assert(sizeof(BlockQ8A) == 40);

/// "F32", "Q4_1", ...
const char* weight_type_name(WeightType type);
/// Elements per block: 1 for F32/F16/BF16, 32 for the quantized types.
int64_t block_elems(WeightType type);
/// Bytes per block (4, 2, 2, 34, 18, 20).
int64_t block_bytes(WeightType type);
/// Bytes of one row of `cols` elements. Throws std::invalid_argument when `cols` is not a
/// multiple of the block size.
int64_t row_bytes(WeightType type, int64_t cols);
/// True for the block-quantized types (Q8_0, Q4_0, Q4_1): those with a panel layout
/// (panel_layout.hpp) and the Int8 / Float paths' quantized kernels.
bool is_quantized(WeightType type);
/// Throws std::invalid_argument naming the field when `w` is not a valid view (null data without
/// a panel copy, non-positive dimensions, cols not a multiple of the block size).
void validate(const WeightView& w);

/// IEEE half → float, exact for every input (subnormals, inf, NaN payloads kept).
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalize
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// bfloat16 → float (exact: the bf16 bits are the high half of the float).
inline float bf16_to_fp32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace plinth::cpu
