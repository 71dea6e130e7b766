// Weight storage formats the CPU kernels read, and their ggml block layouts.
// Source: ggml/src/ggml-common.h and gguf-py quants.py, through the SDK's format table.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "plinth/ggml_format.hpp"

namespace plinth::cpu {

/// Element type of a weight matrix, as stored in GGUF: the values are ggml's type ids, and the
/// block layouts and decodings are the SDK's format table (plinth/ggml_format.hpp), which this
/// backend reads for everything but the panel kind that serves a type (panel_kind below).
/// Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL are 32-element blocks; the K-quants and IQ4_XS are
/// 256-element super-blocks (8 sub-blocks of 32 or 16 of 16, each with its own scale).
/// The classic ones:
///  - Q8_0: f16 d, int8 q[32];            value = q * d
///  - Q4_0: f16 d, uint8 nibbles[16];     value = (q - 8) * d
///  - Q4_1: f16 d, f16 m, nibbles[16];    value = q * d + m
/// Nibble order as ggml: the low nibble of byte i is element i, the high nibble element i + 16.
enum class WeightType : int32_t {
  kF32 = ggml::kF32,
  kF16 = ggml::kF16,
  kQ4_0 = ggml::kQ4_0,
  kQ4_1 = ggml::kQ4_1,
  kQ5_0 = ggml::kQ5_0,
  kQ5_1 = ggml::kQ5_1,
  kQ8_0 = ggml::kQ8_0,
  kQ2_K = ggml::kQ2_K,
  kQ3_K = ggml::kQ3_K,
  kQ4_K = ggml::kQ4_K,
  kQ5_K = ggml::kQ5_K,
  kQ6_K = ggml::kQ6_K,
  kIQ4_NL = ggml::kIQ4_NL,
  kIQ4_XS = ggml::kIQ4_XS,
  kBF16 = ggml::kBF16
};

/// How the panel paths (Float, Int8; panel_layout.hpp) hold a quantized type. A type is repacked
/// into its kind exactly (the file's own bytes rearranged: the same integers, scales and scale
/// codes, no value rounded), and the panels are the file's size plus zero rows up to 16:
///  - kQ4_0, kQ4_1, kQ8_0: the file's own 32-element blocks (f16 scales), 16 rows interleaved;
///  - kIQ4: IQ4_NL's blocks as Q4_0's panels, nibbles looked up in the table;
///  - kQ5 / kQ5_1: Q5_0's / Q5_1's f16 d (and m), nibbles (Q4's order) and its 32 high bits;
///  - the 256-element super-block types, as panel super-blocks: a header holding the 16 rows'
///    f16 d (and dmin) and sub-block scale codes byte for byte, then 8 chunks of 32 elements
///    whose quants the kernels read like the 32-element kinds' (the scales D = d·sc and minimums
///    M = −dmin·m are decoded from the header in the kernels, exactly):
///    kK4 (Q4_K: Q4_1's nibbles, D and M per 32), kK5 (Q5_K: Q5_1's nibbles + high-bit plane),
///    kIQ4X (IQ4_XS: IQ4's nibbles, D per 32), and the 16-element sub-block types, D (and M) per
///    16: kK6 (Q6_K: nibbles + a 2-bit plane, q + 32), kK3 (Q3_K: a 2-bit plane + a 1-bit plane,
///    q + 4), kK2 (Q2_K: a 2-bit plane, with minimums).
enum class PanelKind { kQ4_0, kQ4_1, kQ8_0, kQ5, kQ5_1, kIQ4, kK4, kK5, kIQ4X, kK6, kK3, kK2 };

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

inline constexpr int64_t kQuantBlock = 32;  ///< elements per kernel block (and Q8_0/Q4_x block)

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

/// "F32", "Q4_K", ... Throws std::invalid_argument for a value outside the format table.
const char* weight_type_name(WeightType type);
/// Elements per block: 1 for F32/F16/BF16, 32 or 256 for the quantized types (the format table).
int64_t block_elems(WeightType type);
/// Bytes per block (the format table: 4, 2, 2, 34, 18, 20, 144 ...).
int64_t block_bytes(WeightType type);
/// The WeightType of a ggml / plinth_dtype id, or false when the format table has no such row.
bool weight_type_from_dtype(int32_t dtype, WeightType* out);
/// The panel kind serving a quantized type (above). Throws std::invalid_argument for F32 / F16 /
/// BF16 (no panels) and for a value outside the format table.
PanelKind panel_kind(WeightType type);
/// "Q4_0", "Q4_1", "Q8_0", "K6" ... (docs, bench output).
const char* panel_kind_name(PanelKind kind);
/// Bytes of one row of `cols` elements. Throws std::invalid_argument when `cols` is not a
/// multiple of the block size.
int64_t row_bytes(WeightType type, int64_t cols);
/// True for the block-quantized types (every table row but F32 / F16 / BF16): those with a panel
/// layout (panel_layout.hpp) and the Int8 / Float paths' quantized kernels.
bool is_quantized(WeightType type);
/// Throws std::invalid_argument naming the field when `w` is not a valid view (null data without
/// a panel copy, non-positive dimensions, cols not a multiple of the block size).
void validate(const WeightView& w);

/// IEEE half → float, exact for every input (subnormals, inf, NaN payloads kept): the SDK's.
inline float fp16_to_fp32(uint16_t h) {
  return ggml::f16_to_f32(h);
}

/// bfloat16 → float (exact: the bf16 bits are the high half of the float): the SDK's.
inline float bf16_to_fp32(uint16_t b) {
  return ggml::bf16_to_f32(b);
}

}  // namespace plinth::cpu
