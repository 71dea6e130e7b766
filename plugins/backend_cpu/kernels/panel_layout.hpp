// Internal: the Float path's weight layout ("panels") and its packing from ggml blocks.
//
// A panel is 16 consecutive output rows of a quantized matrix, stored block by block so that one
// vector load gives the same weight element of all 16 rows (the layout idea of llama.cpp's
// repacked "x8"/"x16" CPU formats and of GEMM micro-kernels; the code here is our own). Panel p
// holds rows 16p .. 16p+15 (rows past the end are zeros) as nb = cols/32 panel blocks, each:
//   Q4_1: d[16] f16 | m[16] f16 | qs[16][16] u8     (320 bytes, the GGUF blocks' own size)
//   Q4_0: d[16] f16 | qs[16][16] u8                 (288 bytes)
//   Q8_0: d[16] f16 | qs[32][16] i8                 (544 bytes)
//   Q5:   d[16] f16 | qh (64 B) | qs[16][16] u8           (352 B; Q5_0: nibble | bit << 4, − 16)
//   Q5_1: d[16] f16 | m[16] f16 | qh (64 B) | qs[16][16] u8 (384 B; Q5_1: nibble | bit << 4, + m)
//   IQ4:  d[16] f16 | qs[16][16] u8                     (288 B; IQ4_NL: kvalues_iq4nl indices)
//   K4:   D[16] f32 | M[16] f32 | qs[16][16] u8         (384 B; Q4_K: Q4_1's, f32 scale / min)
//   K5:   D[16] f32 | M[16] f32 | qh (64 B) | qs[16][16] u8 (448 B; Q5_K: Q5_1's, f32)
//   IQ4X: D[16] f32 | qs[16][16] u8                     (320 B; IQ4_XS: IQ4's, f32 scale)
//   S16:  D[2][16] f32 | M[2][16] f32 | qs[32][16] i8   (768 B; D[h][r], M[h][r]: scale and
//         minimum of elements 16h .. 16h+15 of row r's 32: value = D·q + M)
// The high-bit plane qh (bit 4 of each 5-bit quant): Float order a u32 per row (bit j: element
// j), Int8 order a byte [g][r] (bits k and 4 + k: elements 4g + k and 16 + 4g + k).
// where d and m are the IEEE half scale / minimum of row r's block, as stored in the GGUF, at
// [r] (the kernels widen 8 or 16 of them at once, exactly), and for Q4, qs[t][r] is byte t of row
// r's block (low nibble: element t, high: element t + 16, ggml's order); for Q8_0, qs[j][r] is
// element j of row r's block. A panel copy is as large as the matrix it packs (plus zero rows up
// to a multiple of 16): batch-1 decode, bound by the bytes it streams, reads no more than the file.
// Which kind serves which file type is the SDK format table's cpu_panel (weight_types.hpp's
// panel_kind()); every repacking is exact. Q4_0 / Q4_1 / Q8_0 / Q5_0 / Q5_1 / IQ4_NL panels are the
// file's size; Q4_K / Q5_K / IQ4_XS keep f32 scales per 32 (1.1–1.3× the file); Q6_K / Q3_K / Q2_K
// (16-element sub-blocks) run as S16, 1.5 bytes per weight (1.8–4.5× the file: correct, not yet
// compact).
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
