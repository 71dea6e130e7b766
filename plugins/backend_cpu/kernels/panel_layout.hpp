// Internal: the Float path's weight layout ("panels") and its packing from ggml blocks.
//
// A panel is 16 consecutive output rows of a quantized matrix, stored block by block so that one
// vector load gives the same weight element of all 16 rows (the layout idea of llama.cpp's
// repacked "x8"/"x16" CPU formats and of GEMM micro-kernels; the code here is our own). Panel p
// holds rows 16p .. 16p+15 (rows past the end are zeros) as nb = cols/32 panel blocks, each:
//   Q4_1: d[16] f16 | m[16] f16 | qs[16][16] u8     (320 bytes, the GGUF blocks' own size)
//   Q4_0: d[16] f16 | qs[16][16] u8                 (288 bytes)
//   Q8_0: d[16] f16 | qs[32][16] i8                 (544 bytes)
//   Q5:   d[16] f16 | qh (64 B) | qs[16][16] u8       (352 bytes; Q5_0: q = nibble | bit << 4, −
//   16;
//         qh: Float order u32 per row (bit j: element j), Int8 order byte [g][r] (bits k and 4 + k:
//         elements 4g + k and 16 + 4g + k))
//   Q5_1: d[16] f16 | m[16] f16 | qh (64 B) | qs[16][16] u8  (384 bytes; q = nibble | bit << 4, +
//   m) K4:   D[16] f32 | M[16] f32 | qs[16][16] u8      (384 bytes; Q4_1's nibbles, f32 scale/min)
//   S16:  D[2][16] f32 | M[2][16] f32 | qs[32][16] i8 (768 bytes; D[h][r], M[h][r]: scale and
//         minimum of elements 16h .. 16h+15 of row r's 32: value = D·q + M)
// where d and m are the IEEE half scale / minimum of row r's block, as stored in the GGUF, at
// [r] (the kernels widen 8 or 16 of them at once, exactly), and for Q4, qs[t][r] is byte t of row
// r's block (low nibble: element t, high: element t + 16, ggml's order); for Q8_0, qs[j][r] is
// element j of row r's block. A panel copy is as large as the matrix it packs (plus zero rows up
// to a multiple of 16): batch-1 decode, bound by the bytes it streams, reads no more than the file.
// Which kind serves which file type is weight_types.hpp's panel_kind(): Q5_0 and IQ4_NL become
// Q8_0 panels (their int8 values q − 16 / kvalues_iq4nl[q] and f16 d, exactly), the K-quants, Q5_1
// and IQ4_XS S16 panels (their 32-element chunks split by the SDK's split_block, exactly; 1.5 bytes
// per weight, more than the file's 0.56 .. 0.82: a first, correct version).
//
// The Int8 path (matmul_int8.hpp) uses the same block sizes and d / m, with the quants ordered for
// 4-byte integer dot products (x86 VNNI vpdpbusd: one 32-bit lane = 4 consecutive bytes of one
// row): qs[g][r][k], g = 0..3 (Q4) or 0..7 (Q8_0), k = 0..3, holds byte 4g + k of row r's block
// (Q4: nibbles as above) or, for Q8_0 and S16, element 4g + k of row r plus 128 as an unsigned
// byte.
#pragma once

#include <cstdint>
#include <vector>

#include "weight_types.hpp"

namespace plinth::cpu::detail {

inline constexpr int64_t kPanelRows = 16;

/// Bytes of one panel block (32 elements × 16 rows): 320 (Q4_1), 288 (Q4_0), 544 (Q8_0), 384 (K4),
/// 768 (S16).
int64_t panel_block_bytes(PanelKind kind);
/// panel_block_bytes(panel_kind(type)). Throws std::invalid_argument for a type without a panel
/// layout (F32, F16, BF16).
int64_t panel_block_bytes(WeightType type);
/// Number of panels for `rows` output rows: ceil(rows / 16).
inline int64_t panel_count(int64_t rows) {
  return (rows + kPanelRows - 1) / kPanelRows;
}
/// Bytes of the whole packed matrix: panel_count(w.rows) · (w.cols / 32) · panel_block_bytes.
int64_t packed_bytes(const WeightView& w);

/// Which order a panel block's quants are in: the Float path's or the Int8 path's (above).
enum class PanelOrder { kFloat, kInt8 };

/// Packs rows [16·p0, 16·p1) of the quantized matrix `w` (validated by the caller) into
/// `out + p0 · panel bytes` in `order`; `out` holds packed_bytes(w). Exact: no value is rounded.
void pack_panels(const WeightView& w, int64_t p0, int64_t p1, uint8_t* out,
                 PanelOrder order = PanelOrder::kFloat);

}  // namespace plinth::cpu::detail
