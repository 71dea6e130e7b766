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
// minimums m at kM, the quants at kQ. kSuper: a super-block kind (below). kTwoBit: 0 for the
// 32-element kinds, else which bit planes a 16-element-sub-block kind has (kSix, kThree, kTwo).
inline constexpr int kSix = 1, kThree = 2, kTwo = 3;
struct Q4_1 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = false, kSuper = false;
  static constexpr int kOff = 0, kTwoBit = 0;
  static constexpr int64_t kM = 32, kQ = 64, kBytes = 320, kSStride = 0;
};
struct Q4_0 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = true, kHalves = false,
                        kF32 = false, kQh = false, kLut = false, kSuper = false;
  static constexpr int kOff = 8, kTwoBit = 0;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 288, kSStride = 0;
};
struct Q8_0 {
  static constexpr bool kNibbles = false, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = false, kSuper = false;
  static constexpr int kOff = 128, kTwoBit = 0;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 544, kSStride = 0;
};
// kQh (Q5): Q5_0 — nibbles plus a high-bit plane at kQH (panel_layout.hpp), q − 16 (kOff).
struct Q5 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = true, kLut = false, kSuper = false;
  static constexpr int kOff = 16, kTwoBit = 0;
  static constexpr int64_t kM = 0, kQH = 32, kQ = 96, kBytes = 352, kSStride = 0;
};
struct Q5_1 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = true, kLut = false, kSuper = false;
  static constexpr int kOff = 0, kTwoBit = 0;
  static constexpr int64_t kM = 32, kQH = 64, kQ = 128, kBytes = 384, kSStride = 0;
};
// kLut (IQ4): Q4_0's layout, each nibble an index into kvalues_iq4nl (kOff: the Int8 kernels'
// u = value + 128 operand where they use one).
struct IQ4 {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = false, kQh = false, kLut = true, kSuper = false;
  static constexpr int kOff = 128, kTwoBit = 0;
  static constexpr int64_t kM = 0, kQ = 32, kBytes = 288, kSStride = 0;
};
// The super-block kinds (kSuper): a panel super-block of 8·kBytes bytes is a header of kHead
// bytes and 8 chunks of kChunk; the offsets kQ, kQH, kQ2, kQ1 are inside a chunk. Their scales
// (kF32) are not in the panel but decoded per super-block by decode_scales into a buffer of
// kSStride bytes per chunk: D[16] f32 at 0 and M[16] at kM = 64 (per 32), or D[h][16] at 64h and
// M[h][16] at kM + 64h = 128 + 64h (kHalves: per 16-element half h).
// K4 (Q4_K): Q4_1's nibbles; K5 (Q5_K): Q5_1's nibbles + high-bit plane; IQ4X (IQ4_XS): IQ4's.
struct K4 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = false, kLut = false, kSuper = true;
  static constexpr int kOff = 0, kTwoBit = 0;
  static constexpr int64_t kM = 64, kQ = 0, kBytes = 288, kHead = 256, kChunk = 256, kSStride = 128;
};
struct K5 {
  static constexpr bool kNibbles = true, kMin = true, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = true, kLut = false, kSuper = true;
  static constexpr int kOff = 0, kTwoBit = 0;
  static constexpr int64_t kM = 64, kQH = 0, kQ = 64, kBytes = 352, kHead = 256, kChunk = 320,
                           kSStride = 128;
};
struct IQ4X {
  static constexpr bool kNibbles = true, kMin = false, kOffset8 = false, kHalves = false,
                        kF32 = true, kQh = false, kLut = true, kSuper = true;
  static constexpr int kOff = 128, kTwoBit = 0;
  static constexpr int64_t kM = 0, kQ = 0, kBytes = 272, kHead = 128, kChunk = 256, kSStride = 128;
};
// The 16-element sub-block kinds (kHalves): unsigned u = q + kOff from bit planes (kTwoBit):
// K6 (Q6_K): nibbles at kQ | 2-bit plane of bits 4-5 at kQ2, u = q + 32; K3 (Q3_K): 2-bit plane
// of bits 0-1 at kQ2 | 1-bit plane of bit 2 at kQ1, u = q + 4; K2 (Q2_K): 2-bit plane, u = q,
// with minimums.
struct K6 {
  static constexpr bool kNibbles = false, kMin = false, kOffset8 = false, kHalves = true,
                        kF32 = true, kQh = false, kLut = false, kSuper = true;
  static constexpr int kOff = 32, kTwoBit = kSix;
  static constexpr int64_t kM = 128, kQ = 0, kQ2 = 256, kQ1 = 0, kBytes = 420, kHead = 288,
                           kChunk = 384, kSStride = 256;
};
struct K3 {
  static constexpr bool kNibbles = false, kMin = false, kOffset8 = false, kHalves = true,
                        kF32 = true, kQh = false, kLut = false, kSuper = true;
  static constexpr int kOff = 4, kTwoBit = kThree;
  static constexpr int64_t kM = 128, kQ = 0, kQ2 = 0, kQ1 = 128, kBytes = 220, kHead = 224,
                           kChunk = 192, kSStride = 256;
};
struct K2 {
  static constexpr bool kNibbles = false, kMin = true, kOffset8 = false, kHalves = true,
                        kF32 = true, kQh = false, kLut = false, kSuper = true;
  static constexpr int kOff = 0, kTwoBit = kTwo;
  static constexpr int64_t kM = 128, kQ = 0, kQ2 = 0, kQ1 = 0, kBytes = 168, kHead = 320,
                           kChunk = 128, kSStride = 256;
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
              K6::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK6) &&
              K3::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK3) &&
              K2::kBytes == ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK2));
static_assert(K4::kHead + 8 * K4::kChunk == 8 * K4::kBytes &&
              K5::kHead + 8 * K5::kChunk == 8 * K5::kBytes &&
              IQ4X::kHead + 8 * IQ4X::kChunk == 8 * IQ4X::kBytes &&
              K6::kHead + 8 * K6::kChunk == 8 * K6::kBytes &&
              K3::kHead + 8 * K3::kChunk == 8 * K3::kBytes &&
              K2::kHead + 8 * K2::kChunk == 8 * K2::kBytes);

// Where block b's quants start in a panel: b · kBytes, or chunk b % 8 of super-block b / 8.
template <class F>
constexpr int64_t chunk_at(int64_t b) {
  if constexpr (F::kSuper) {
    return (b >> 3) * (8 * F::kBytes) + F::kHead + (b & 7) * F::kChunk;
  } else {
    return b * F::kBytes;
  }
}

// The panel super-block holding block b (b % 8 == 0 starts one).
template <class F>
constexpr int64_t super_at(int64_t b) {
  return (b >> 3) * (8 * F::kBytes);
}

// Chunk c's D (and M) of 16 rows from a K4 / K5 header's 12 bytes of 6-bit sc, m per 32
// (ggml's get_scale_min_k4), the rows' d and dmin widened in d, dm.
inline void decode_k45(const uint8_t* h, int c, const float* d, const float* dm, float* o) {
  const uint8_t* s = h + 64;
  for (int r = 0; r < 16; ++r) {
    int sc = 0, m = 0;
    if (c < 4) {
      sc = s[16 * c + r] & 63;
      m = s[16 * (c + 4) + r] & 63;
    } else {
      sc = (s[16 * (c + 4) + r] & 0x0f) | ((s[16 * (c - 4) + r] >> 6) << 4);
      m = (s[16 * (c + 4) + r] >> 4) | ((s[16 * c + r] >> 6) << 4);
    }
    o[r] = d[r] * static_cast<float>(sc);
    o[16 + r] = -(dm[r] * static_cast<float>(m));
  }
}

// IQ4X: chunk c's ls = 4 bits of scales_l | 2 bits of scales_h, D = d·(ls − 32).
inline void decode_iq4x(const uint8_t* h, int c, const float* d, float* o) {
  for (int r = 0; r < 16; ++r) {
    const int sh = h[32 + 2 * r] | (h[33 + 2 * r] << 8);
    const int ls =
        ((h[64 + 16 * (c / 2) + r] >> (4 * (c % 2))) & 0x0f) | (((sh >> (2 * c)) & 3) << 4);
    o[r] = d[r] * static_cast<float>(ls - 32);
  }
}

// K6 / K3 / K2: the D (and M) of 16-element sub-block j for its half `half` of the chunk.
template <class F>
inline void decode_sub16(const uint8_t* h, int j, int half, const float* d, const float* dm,
                         float* o) {
  for (int r = 0; r < 16; ++r) {
    if constexpr (F::kTwoBit == kSix) {  // int8 scales
      o[16 * half + r] = d[r] * static_cast<float>(static_cast<int8_t>(h[32 + 16 * j + r]));
    } else if constexpr (F::kTwoBit == kThree) {  // 6-bit scales − 32 (ggml's Q3_K packing)
      const uint8_t* s = h + 32;
      const int lo = j < 8 ? (s[16 * j + r] & 0x0f) : (s[16 * (j - 8) + r] >> 4);
      const int hi = (s[16 * (8 + j % 4) + r] >> (2 * (j / 4))) & 3;
      o[16 * half + r] = d[r] * static_cast<float>((lo | (hi << 4)) - 32);
    } else {  // K2: 4-bit sc (low), 4-bit m (high)
      const int s = h[64 + 16 * j + r];
      o[16 * half + r] = d[r] * static_cast<float>(s & 0x0f);
      o[32 + 16 * half + r] = -(dm[r] * static_cast<float>(s >> 4));
    }
  }
}

// Decodes the scale codes of the panel super-block header at `h` into out[8 · kSStride / 4]
// (f32: chunk c's D[16] at c·kSStride/4, M[16] after it; or D[2][16], M[2][16] per 16-element
// half), exactly: d·sc and −(dmin·m) are products of an f16 value and an integer below 2⁸, exact
// in f32 (the values split_block gives, so the same bits whichever kernel decodes). W::widen16(p,
// out) widens 16 IEEE halves at p to f32 (each kernel's own instructions; all exact). The loops
// run over the 16 rows with fixed trip counts, for the compiler to vectorize.
template <class F, class W>
inline void decode_scales(const uint8_t* h, float* out) {
  float d[16];
  float dm[16] = {};
  W::widen16(h, d);
  if constexpr (F::kMin) W::widen16(h + 32, dm);
  constexpr int64_t kStride = F::kSStride / 4;
  for (int c = 0; c < 8; ++c) {
    float* o = out + c * kStride;
    if constexpr (F::kTwoBit != 0) {
      decode_sub16<F>(h, 2 * c, 0, d, dm, o);
      decode_sub16<F>(h, 2 * c + 1, 1, d, dm, o);
    } else if constexpr (F::kLut) {
      decode_iq4x(h, c, d, o);
    } else {
      decode_k45(h, c, d, dm, o);
    }
  }
}

// The unsigned quant u (q + kOff) of element e of row r in the chunk at `ch` of a kHalves kind,
// its bytes in the Float order (int8 = false: byte t of row r at 16t + r) or the Int8 order
// (byte t at 64(t / 4) + 4r + t % 4). The scalar kernels' decoding; the vector ones do the same
// with shifts and masks on 16 rows at once.
template <class F, bool kInt8>
inline int stored_u(const uint8_t* ch, int64_t r, int e) {
  const auto at = [r](int t) -> int64_t {
    return kInt8 ? int64_t{64} * (t / 4) + 4 * r + t % 4 : int64_t{16} * t + r;
  };
  const int v = e / 16, g = (e % 16) / 4, k = e % 4;
  const int two = (ch[F::kQ2 + at(4 * v + k)] >> (2 * g)) & 3;
  if constexpr (F::kTwoBit == kSix) {
    return ((ch[F::kQ + at(e % 16)] >> (4 * v)) & 0x0f) | (two << 4);
  } else if constexpr (F::kTwoBit == kThree) {
    return two | (((ch[F::kQ1 + at(k)] >> (4 * v + g)) & 1) << 2);
  } else {
    return two;
  }
}

// WidenScalar::widen16: 16 IEEE halves → f32 by the SDK's exact conversion (the scalar kernels).
struct WidenScalar {
  static void widen16(const uint8_t* p, float* out) {
    for (int64_t i = 0; i < 16; ++i) {
      uint16_t v;
      __builtin_memcpy(&v, p + 2 * i, sizeof v);
      out[i] = ggml::f16_to_f32(v);
    }
  }
};

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
    case PanelKind::kK6:
      return drive<K, K6>(j, p0, p1);
    case PanelKind::kK3:
      return drive<K, K3>(j, p0, p1);
    case PanelKind::kK2:
      return drive<K, K2>(j, p0, p1);
  }
  __builtin_trap();
}

// The f32 at p (a decoded scale buffer's D or M entry; p need not be aligned).
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
