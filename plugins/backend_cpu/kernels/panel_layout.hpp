// Internal: the Float path's weight layout ("panels") and its packing from ggml blocks.
//
// A panel is 16 consecutive output rows of a quantized matrix, stored block by block so that one
// vector load gives the same weight element of all 16 rows (the layout idea of llama.cpp's
// repacked "x8"/"x16" CPU formats and of GEMM micro-kernels; the code here is our own). Panel p
// holds rows 16p .. 16p+15 (rows past the end are zeros). Every panel is the file's bytes
// rearranged: no value is decoded into a wider copy, so a panel copy is as large as the matrix it
// packs (plus zero rows up to a multiple of 16) and batch-1 decode, bound by the bytes it
// streams, reads no more than the file.
//
// The 32-element kinds: nb = cols/32 panel blocks, each:
//   Q4_1: d[16] f16 | m[16] f16 | qs[16][16] u8     (320 bytes, the GGUF blocks' own size)
//   Q4_0: d[16] f16 | qs[16][16] u8                 (288 bytes)
//   Q8_0: d[16] f16 | qs[32][16] i8                 (544 bytes)
//   Q5:   d[16] f16 | qh (64 B) | qs[16][16] u8           (352 B; Q5_0: nibble | bit << 4, − 16)
//   Q5_1: d[16] f16 | m[16] f16 | qh (64 B) | qs[16][16] u8 (384 B; Q5_1: nibble | bit << 4, + m)
//   IQ4:  d[16] f16 | qs[16][16] u8                     (288 B; IQ4_NL: kvalues_iq4nl indices)
// where d and m are the IEEE half scale / minimum of row r's block, as stored in the GGUF, at
// [r] (the kernels widen 8 or 16 of them at once, exactly), and for Q4, qs[t][r] is byte t of row
// r's block (low nibble: element t, high: element t + 16, ggml's order); for Q8_0, qs[j][r] is
// element j of row r's block. The high-bit plane qh (bit 4 of each 5-bit quant): Float order a
// u32 per row (bit j: element j), Int8 order a byte [g][r] (bits k and 4 + k: elements 4g + k and
// 16 + 4g + k).
//
// The super-block kinds (the K-quants and IQ4_XS, 256-element blocks): cols/256 panel
// super-blocks, each a header then 8 chunks of 32 elements (chunk c: elements 32c .. 32c+31):
//   header: the 16 rows' f16 d at [r] (bytes 0..31), then per kind, byte k of row r at
//           H + 16k + r (the file's bytes, transposed):
//     K4, K5 (Q4_K, Q5_K): f16 dmin[16] | the 12 scale bytes (6-bit sc, m per 32)   (256 B)
//     IQ4X (IQ4_XS):       u16 scales_h[16] | the 4 scales_l bytes                   (128 B)
//     K6 (Q6_K):           the 16 int8 scales (per 16)                                (288 B)
//     K3 (Q3_K):           the 12 scale bytes (6-bit, per 16)                         (224 B)
//     K2 (Q2_K):           f16 dmin[16] | the 16 scale bytes (4-bit sc, m per 16)     (320 B)
//   chunk: K4: Q4_1's qs (256 B); K5: Q5_1's qh (64 B) | qs (256 B); IQ4X: IQ4's qs (256 B);
//     K6: u = q + 32: the low nibbles as Q4's qs (256 B) | a 2-bit plane of the high bits (128 B);
//     K3: u = q + 4: a 2-bit plane of the low bits (128 B) | a 1-bit plane of bit 2 (64 B);
//     K2: u = q: a 2-bit plane (128 B).
//   The 2-bit plane: 8 bytes per row, byte 4v + k holding in bits 2g, 2g + 1 the two bits of
//   element 16v + 4g + k (v = 0, 1; g, k = 0..3); the 1-bit plane: 4 bytes per row, byte k
//   holding in bit 4v + g that of element 16v + 4g + k. Both are interleaved like qs (a row's
//   byte t at the same place as qs's byte t), so one 64-byte Int8 group or one 16-byte Float load
//   gives 16 rows' bits of the same elements.
//   Panel super-block bytes: 16 × the file's block bytes (2304, 2816, 2176, 3360, 1760, 1344).
// The kernels decode a header's scale codes into f32 D (and M) per chunk (K4, K5, IQ4X: per 32;
// K6, K3, K2: per 16-element half) with decode_scales (panel_driver.hpp), exactly: D = d·sc and
// M = −(dmin·m) are products of an f16 and a ≤ 8-bit integer, exact in f32.
// Which kind serves which file type is the SDK format table's cpu_panel (weight_types.hpp's
// panel_kind()); every repacking is exact.
//
// The Int8 path (matmul_int8.hpp) uses the same block sizes and d / m, with the quants ordered for
// 4-byte integer dot products (x86 VNNI vpdpbusd: one 32-bit lane = 4 consecutive bytes of one
// row): qs[g][r][k], g = 0..3 (Q4) or 0..7 (Q8_0), k = 0..3, holds byte 4g + k of row r's block
// (Q4: nibbles as above) or, for Q8_0, element 4g + k of row r plus 128 as an unsigned byte; the
// bit planes likewise (row r's byte 4g + k at [g][r][k]).
#pragma once

#include <cstdint>
#include <vector>

#include "weight_types.hpp"

namespace plinth::cpu::detail {

inline constexpr int64_t kPanelRows = 16;

/// Bytes of one panel block (32 elements × 16 rows): 320 (Q4_1), 288 (Q4_0), 544 (Q8_0) ...; for
/// the super-block kinds the average over a panel super-block (an eighth of it: 288 for K4).
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

/// True for the super-block kinds (K4, K5, IQ4X, K6, K3, K2: header + 8 chunks per 256 elements).
bool panel_super(PanelKind kind);
/// True for the kinds with a scale (and minimum) per 16-element half (K6, K3, K2).
bool panel_halves(PanelKind kind);

/// Which order a panel block's quants are in: the Float path's or the Int8 path's (above).
enum class PanelOrder { kFloat, kInt8 };

/// Packs rows [16·p0, 16·p1) of the quantized matrix `w` (validated by the caller) into
/// `out + p0 · panel bytes` in `order`; `out` holds packed_bytes(w). Exact: no value is rounded.
void pack_panels(const WeightView& w, int64_t p0, int64_t p1, uint8_t* out,
                 PanelOrder order = PanelOrder::kFloat);

}  // namespace plinth::cpu::detail
