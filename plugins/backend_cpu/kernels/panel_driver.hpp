// Internal: the loop nest shared by the three panel kernel files. Each file supplies a tile
// policy K (its registers) and includes this header; the loops decide only which tile computes
// which outputs, never how an output is computed, so tiling cannot change a result.
//
// K provides:
//   static constexpr int kMaxRows;   // activation rows per tile (MR)
//   static constexpr int kWide;      // panels per tile when n <= kWideUpTo (few rows: more
//                                    // chains); used only when > kNarrow, and then kMaxRows
//                                    // must be >= 2
//   static constexpr int kNarrow;    // panels per tile otherwise
//   static constexpr int kWideUpTo;  // optional (default 2): the largest n that runs kWide tiles
//                                    // (of <= 2 rows each: n = 3 as 2 + 1, 5 as 1 + 2 + 2)
//   template <class F, int MR, int NV> static void tile(const PanelJob&, int64_t p, int64_t i);
//     y[i .. i+MR, panels p .. p+NV]
// F is one of the format descriptions below.
#pragma once

#include <cstdint>

#include "kernel_table.hpp"
#include "panel_layout.hpp"

// Everything here has internal linkage on purpose: this header is compiled into TUs built with
// different instruction sets (-mavx512f, -mavx2, none), and a shared inline function could be
// linked from the AVX-512 TU into a caller running on a CPU without it. For the same reason no
// standard-library function is called here.
namespace plinth::cpu::detail::panel {
namespace {

// Byte offsets inside a panel block (panel_layout.hpp): the 16 f16 scales d at 0, Q4_1's 16 f16
// minimums m at kM, the quants at kQ.
// kHalves (S16): f32 D and M per 16-element half (D[h] at 64h, M[h] at kM + 64h), int8 quants.
struct Q4_1 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = false;
  static constexpr int kOff = 0;
  static constexpr int64_t kM = 32, kQ = 64, kBytes = 320;
};
struct Q4_0 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = true, kHalves = false,
                        kF32 = false, kQh = false, kLut = false;
  static constexpr int kOff = 8;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 288;
};
struct Q8_0 {
  static constexpr bool kNibbles = false, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = false;
  static constexpr int kOff = 128;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 544;
};
// kQh (Q5): Q5_0 — nibbles plus a high-bit plane at kQH (panel_layout.hpp), q − 16 (kOff).
struct Q5 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = true, kLut = false;
  static constexpr int kOff = 16;
  static constexpr int64_t kM = 0, kQH = 32, kQ = 96, kBytes = 352;
};
struct Q5_1 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = true, kLut = false;
  static constexpr int kOff = 0;
  static constexpr int64_t kM = 32, kQH = 64, kQ = 128, kBytes = 384;
};
// kLut (IQ4): Q4_0's layout, each nibble an index into kvalues_iq4nl (kOff: the Int8 kernels'
// u = value + 128 operand where they use one).
struct IQ4 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = true;
  static constexpr int kOff = 128;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 288;
};
// K5 (Q5_K): Q5_1's layout with f32 D, M; IQ4X (IQ4_XS): IQ4's with an f32 D.
struct K5 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = true, kLut = false;
  static constexpr int kOff = 0;
  static constexpr int64_t kM = 64, kQH = 128, kQ = 192, kBytes = 448;
};
struct IQ4X {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = false, kLut = true;
  static constexpr int kOff = 128;
  static constexpr int64_t kM = 0, kQ = 64, kBytes = 320;
};
// kF32 (K4): Q4_1's layout with f32 scales / minimums (D[16] at 0, M[16] at kM).
struct K4 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = false, kLut = false;
  static constexpr int kOff = 0;
  static constexpr int64_t kM = 64, kQ = 128, kBytes = 384;
};
struct S16 {
  static constexpr bool kNibbles = false, kMin = true, kOffset8 = false, kHalves = true,
                        kF32 = true, kQh = false, kLut = false;
  static constexpr int kOff = 128;
  static constexpr int64_t kM = 128, kQ = 256, kBytes = 768;
};
static_assert(Q4_1::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ4_1) &&
              Q4_0::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ4_0) &&
              Q8_0::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ8_0) &&
              K4::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK4) &&
              K5::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK5) &&
              IQ4X::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kIQ4X) &&
              Q5::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ5) &&
              Q5_1::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ5_1) &&
              IQ4::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kIQ4) &&
              S16::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kS16));

// The largest n whose rows run in tiles of <= 2 rows × K::kWide panels (K::kWideUpTo, else 2).
template <class K>
constexpr int64_t wide_up_to() {
  if constexpr (requires { K::kWideUpTo; }) {
    return K::kWideUpTo;
  } else {
    return 2;
  }
}

// Activation rows [i, i + rem) against panels [p, p + NV), 1 <= rem <= MR.
template <class K, class F, int NV, int MR>
void tail(const PanelJob& j, int64_t p, int64_t i, int64_t rem) {
  if constexpr (MR >= 1) {
    if (rem == MR) {
      K::template tile<F, MR, NV>(j, p, i);
    } else {
      tail<K, F, NV, MR - 1>(j, p, i, rem);
    }
  }
}

// Rows [i0, i1) in the fewest tiles, of near-equal sizes (they differ by at most one row): 7 rows
// with kMaxRows 6 run as 4 + 3, not 6 + 1, since every tile unpacks the weights once and a thin
// tile pays that for a single row (a verification of 4 draft tokens has 5 rows).
template <class K, class F, int NV, int MaxRows = K::kMaxRows>
void rows_loop(const PanelJob& j, int64_t p, int64_t i0, int64_t i1) {
  const int64_t tiles = (i1 - i0 + MaxRows - 1) / MaxRows;
  int64_t i = i0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t rows = (i1 - i) / (tiles - t);  // <= kMaxRows: what is left fits the tiles left
    tail<K, F, NV, MaxRows>(j, p, i, rows);
    i += rows;
  }
}

// Activation rows are taken 64 at a time (x rows of ≤ 1536 f32 stay in L2) and, within them, the
// tile's panels stay in L1 while the rows pass.
template <class K, class F>
void drive(const PanelJob& j, int64_t p0, int64_t p1) {
  constexpr int64_t kRowChunk = 64;
  for (int64_t i0 = 0; i0 < j.n; i0 += kRowChunk) {
    const int64_t i1 = j.n < i0 + kRowChunk ? j.n : i0 + kRowChunk;
    int64_t p = p0;
    if constexpr (K::kWide > K::kNarrow && K::kMaxRows >= 2) {
      if (j.n <= wide_up_to<K>()) {  // tiles of <= 2 rows × kWide panels
        for (; p + K::kWide <= p1; p += K::kWide) rows_loop<K, F, K::kWide, 2>(j, p, i0, i1);
      }
    }
    for (; p + K::kNarrow <= p1; p += K::kNarrow) rows_loop<K, F, K::kNarrow>(j, p, i0, i1);
    for (; p < p1; ++p) rows_loop<K, F, 1>(j, p, i0, i1);
  }
}

// Every PanelKind has its case and no default: a new kind fails to compile here (-Wswitch) rather
// than running as another. A value outside the enum (memory corruption) traps.
template <class K>
void run(const PanelJob& j, int64_t p0, int64_t p1) {
  switch (j.kind) {
    case PanelKind::kQ4_1:
      return drive<K, Q4_1>(j, p0, p1);
    case PanelKind::kQ4_0:
      return drive<K, Q4_0>(j, p0, p1);
    case PanelKind::kQ8_0:
      return drive<K, Q8_0>(j, p0, p1);
    case PanelKind::kQ5:
      return drive<K, Q5>(j, p0, p1);
    case PanelKind::kQ5_1:
      return drive<K, Q5_1>(j, p0, p1);
    case PanelKind::kIQ4:
      return drive<K, IQ4>(j, p0, p1);
    case PanelKind::kK4:
      return drive<K, K4>(j, p0, p1);
    case PanelKind::kK5:
      return drive<K, K5>(j, p0, p1);
    case PanelKind::kIQ4X:
      return drive<K, IQ4X>(j, p0, p1);
    case PanelKind::kS16:
      return drive<K, S16>(j, p0, p1);
  }
  __builtin_trap();
}

// The f32 at p (an S16 panel block's D or M entry; p need not be aligned).
inline float f32_at(const uint8_t* p) {
  float f;
  __builtin_memcpy(&f, p, sizeof f);
  return f;
}

// Q5, Int8 order: the 4-bit groups of `bits4` (one per int32 lane, 0..15) spread to bit 4 of the
// lane's 4 bytes (bit k → byte k): the multiply places bit k at 8k with no carries.
// (Used by the vector kernels through their own integer types.)
constexpr uint32_t kSpread4 = 0x00204081u;

// Row r's scale (off = 0) or minimum (off = F::kM) of the panel block at pb, as f32: IEEE half
// bits widened exactly, or K4's f32.
template <class F>
inline float scale_at(const uint8_t* pb, int64_t off, int64_t r) {
  if constexpr (F::kF32) {
    return f32_at(pb + off + 4 * r);
  } else {
    uint16_t h;
    __builtin_memcpy(&h, pb + off + 2 * r, sizeof h);
    return ggml::f16_to_f32(h);
  }
}

// The IEEE half bits stored at p (a panel block's d or m entry; p need not be aligned).
inline uint16_t f16_bits_at(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, sizeof h);
  return h;
}

// Writes the 16 outputs of one panel for one activation row, clipped at the last row of W.
inline void store_panel(const PanelJob& j, int64_t i, int64_t p, const float* v16) {
  float* out = j.y + i * j.rows + p * kPanelRows;
  const int64_t left = j.rows - p * kPanelRows;
  if (left >= kPanelRows) {  // a full panel: a fixed-size copy (vector moves, not `rep movs`)
    __builtin_memcpy(out, v16, sizeof(float) * kPanelRows);
    return;
  }
  for (int64_t k = 0; k < left; ++k) out[k] = v16[k];
}

}  // namespace
}  // namespace plinth::cpu::detail::panel
