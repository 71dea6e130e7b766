// plinth SDK — the ggml tensor formats GGUF files store: one table row per type plinth reads (block
// geometry and how a block decodes), the one block decoder the host and every backend share, and
// the IEEE half / bfloat16 conversions. Header-only C++20, no dependencies.
//
// Sources: ggml/include/ggml.h (enum ggml_type), ggml/src/ggml-common.h (block_q4_0 ...
// block_iq4_xs, QK_K = 256, kvalues_iq4nl), ggml/src/ggml-quants.c (dequantize_row_*), and
// gguf-py's gguf/quants.py (dequantize_blocks), whose f32 results the decoder reproduces bit for
// bit.
//
// Every quantized type decodes, per sub-block of 16 elements, as an affine map of small integers:
//   value_j = D·q_j        (no minimum)        or   value_j = fl(D·q_j) + M    (has_min)
// with q_j an int8, D and M f32 (products of an f16 field and a ≤ 8-bit integer scale: exact in
// f32), each operation one f32 rounding, which is the order gguf-py computes in (for the K-quants,
// gguf-py's `d·q − dmin·m` is `fl(d·q) + M` with M = −(dmin·m), negation being exact).
// split_block() returns that decomposition; decode_blocks() applies it. A backend that keeps q, D
// and M (backend_cpu's panels) computes with the file's own values, never a rounded copy.
//
// Everything here has internal linkage (an unnamed namespace): a translation unit built for a
// wider instruction set (-mavx2 ...) gets its own copy instead of sharing one with callers that run
// on CPUs without it. Pure functions: thread-safe, no allocation. No part of the ABI and including
// no plinth header (like plinth/config.hpp), so a plugin built against an older ABI uses it too;
// the ids equal plinth_dtype's (model.h; asserted where both are seen, host/model/ggml_type.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace plinth::ggml {
namespace {

/// ggml type ids (ggml.h enum ggml_type; = plinth_dtype) of the table's types.
constexpr int32_t kF32 = 0;
constexpr int32_t kF16 = 1;
constexpr int32_t kQ4_0 = 2;
constexpr int32_t kQ4_1 = 3;
constexpr int32_t kQ5_0 = 6;
constexpr int32_t kQ5_1 = 7;
constexpr int32_t kQ8_0 = 8;
constexpr int32_t kQ2_K = 10;
constexpr int32_t kQ3_K = 11;
constexpr int32_t kQ4_K = 12;
constexpr int32_t kQ5_K = 13;
constexpr int32_t kQ6_K = 14;
constexpr int32_t kIQ4_NL = 20;
constexpr int32_t kIQ4_XS = 23;
constexpr int32_t kBF16 = 30;

/// Elements of a K-quant / IQ4_XS super-block (ggml QK_K).
constexpr uint32_t kQK_K = 256;
/// Elements per sub-block of split_block(): the smallest unit that shares one scale and minimum.
constexpr uint32_t kSubBlock = 16;

/// How backend_cpu's panel paths (Float, Int8) hold a type: 16 output rows interleaved
/// (plugins/backend_cpu/kernels/panel_layout.hpp), always the file's own bytes rearranged, never
/// a decoded copy. kQ4_0 / kQ4_1 / kQ8_0: the 32-element blocks (f16 scales). kQ5 / kQ5_1: Q5_0's
/// / Q5_1's f16 d (and m), nibbles and high-bit plane. kIQ4: IQ4_NL's blocks in Q4_0's layout, the
/// nibbles looked up in kvalues_iq4nl. The 256-element super-block types keep each super-block's
/// header (f16 d, dmin and the 4/6/8-bit sub-block scale codes, byte for byte) and decode the
/// codes in the kernels: kK4 (Q4_K: Q4_1's nibbles), kK5 (Q5_K: plus a high-bit plane), kIQ4X
/// (IQ4_XS: IQ4's nibbles), kK6 (Q6_K: nibbles + a 2-bit plane), kK3 (Q3_K: a 2-bit plane + a
/// 1-bit plane), kK2 (Q2_K: a 2-bit plane). Every repacking is exact and the same size as the file
/// (plus zero rows up to a multiple of 16).
enum class CpuPanel : uint8_t {
  kNone,
  kQ4_0,
  kQ4_1,
  kQ8_0,
  kQ5,
  kQ5_1,
  kIQ4,
  kK4,
  kK5,
  kIQ4X,
  kK6,
  kK3,
  kK2
};

/// Bytes of one panel block (32 elements × 16 rows) of `p`; 0 for kNone. For the super-block
/// kinds (kK4 .. kK2) the average over a 256-element panel super-block (header + 8 chunks), which
/// is 2 × the file's block bytes: 16 rows × block_bytes per 8 blocks of 32.
constexpr uint32_t cpu_panel_block_bytes(CpuPanel p) {
  switch (p) {
    case CpuPanel::kQ4_0:
      return 288;
    case CpuPanel::kQ4_1:
      return 320;
    case CpuPanel::kQ8_0:
      return 544;
    case CpuPanel::kQ5:
      return 352;
    case CpuPanel::kQ5_1:
      return 384;
    case CpuPanel::kIQ4:
      return 288;
    case CpuPanel::kK5:
      return 352;  // 2 × 176
    case CpuPanel::kK4:
      return 288;  // 2 × 144
    case CpuPanel::kIQ4X:
      return 272;  // 2 × 136
    case CpuPanel::kK6:
      return 420;  // 2 × 210
    case CpuPanel::kK3:
      return 220;  // 2 × 110
    case CpuPanel::kK2:
      return 168;  // 2 × 84
    case CpuPanel::kNone:
      break;
  }
  return 0;
}

/// One row of the format table.
struct Format {
  int32_t id;               ///< ggml_type / plinth_dtype value
  const char* name;         ///< ggml's name: "Q4_K"
  uint32_t block_elems;     ///< elements per block (1 for F32 / F16 / BF16)
  uint32_t block_bytes;     ///< bytes per block
  bool quantized;           ///< a block format (split_block applies), not a float type
  uint32_t scale_elems;     ///< elements sharing one scale in the file (32 or 16; 1 for floats)
  bool has_min;             ///< value = fl(D·q) + M, else D·q
  int32_t q_lo, q_hi;       ///< range of the integers q split_block() gives
  const char* decode;       ///< the decoding, in words (docs, messages)
  CpuPanel cpu_panel;       ///< backend_cpu's panel layout for it (kNone: F32/F16/BF16 row kernels)
  const char* cpu_kernels;  ///< which backend_cpu kernels run it, in words
};

/// The table: every type plinth reads, in ggml id order. A type outside it is refused by the
/// GGUF parser (naming the tensor and the type) and by format() (std::invalid_argument).
constexpr std::array<Format, 15> kFormats = {{
    {kF32, "F32", 1, 4, false, 1, false, 0, 0, "IEEE binary32", CpuPanel::kNone,
     "f32 FMA dot kernels (Simd path rows)"},
    {kF16, "F16", 1, 2, false, 1, false, 0, 0, "IEEE binary16, exact to f32", CpuPanel::kNone,
     "f32 FMA dot kernels (Simd path rows)"},
    {kQ4_0, "Q4_0", 32, 18, true, 32, false, -8, 7,
     "f16 d, 16 B nibbles (element j low / j+16 high): d*(q-8)", CpuPanel::kQ4_0,
     "Float/Int8 panel kernels, Q4 nibbles; Simd row kernels"},
    {kQ4_1, "Q4_1", 32, 20, true, 32, true, 0, 15, "f16 d, f16 m, 16 B nibbles: fl(d*q)+m",
     CpuPanel::kQ4_1, "Float/Int8 panel kernels, Q4 nibbles + min; Simd row kernels"},
    {kQ5_0, "Q5_0", 32, 22, true, 32, false, -16, 15,
     "f16 d, u32 qh (bit j = bit 4 of element j), 16 B nibbles: d*(q-16)", CpuPanel::kQ5,
     "Float/Int8 panel kernels, Q4 nibbles + a high-bit plane (Simd path: Int8)"},
    {kQ5_1, "Q5_1", 32, 24, true, 32, true, 0, 31, "f16 d, f16 m, u32 qh, 16 B nibbles: fl(d*q)+m",
     CpuPanel::kQ5_1,
     "Float/Int8 panel kernels, Q4 nibbles + a high-bit plane + min (Simd path: Int8)"},
    {kQ8_0, "Q8_0", 32, 34, true, 32, false, -128, 127, "f16 d, 32 int8: d*q", CpuPanel::kQ8_0,
     "Float/Int8 panel kernels, int8 quants; Simd row kernels"},
    {kQ2_K, "Q2_K", 256, 84, true, 16, true, 0, 3,
     "16 B scales (lo 4 bits sc, hi 4 bits m per 16), 64 B 2-bit q, f16 d, f16 dmin: "
     "fl((d*sc)*q)-dmin*m",
     CpuPanel::kK2,
     "Float/Int8 panel kernels, 2-bit plane, scale codes decoded per 16 (Simd path: Int8)"},
    {kQ3_K, "Q3_K", 256, 110, true, 16, false, -4, 3,
     "32 B hmask, 64 B 2-bit q, 12 B 6-bit scales, f16 d: (d*(sc-32))*(q-4*!hbit)", CpuPanel::kK3,
     "Float/Int8 panel kernels, 2-bit + 1-bit planes, scale codes decoded per 16 (Simd path: "
     "Int8)"},
    {kQ4_K, "Q4_K", 256, 144, true, 32, true, 0, 15,
     "f16 d, f16 dmin, 12 B 6-bit sc/m per 32, 128 B nibbles: fl((d*sc)*q)-dmin*m", CpuPanel::kK4,
     "Float/Int8 panel kernels, Q4 nibbles, scale codes decoded per 32 (Simd path: Int8)"},
    {kQ5_K, "Q5_K", 256, 176, true, 32, true, 0, 31,
     "f16 d, f16 dmin, 12 B 6-bit sc/m per 32, 32 B qh, 128 B nibbles: fl((d*sc)*q)-dmin*m",
     CpuPanel::kK5,
     "Float/Int8 panel kernels, Q4 nibbles + a high-bit plane, scale codes decoded per 32 (Simd "
     "path: Int8)"},
    {kQ6_K, "Q6_K", 256, 210, true, 16, false, -32, 31,
     "128 B low nibbles, 64 B high 2 bits, 16 int8 scales, f16 d: (d*sc)*(q-32)", CpuPanel::kK6,
     "Float/Int8 panel kernels, nibbles + a 2-bit plane, scale codes decoded per 16 (Simd path: "
     "Int8)"},
    {kIQ4_NL, "IQ4_NL", 32, 18, true, 32, false, -127, 113,
     "f16 d, 16 B nibbles: d*kvalues_iq4nl[q]", CpuPanel::kIQ4,
     "Float/Int8 panel kernels, Q4 nibbles through a 16-entry table (Simd path: Int8)"},
    {kIQ4_XS, "IQ4_XS", 256, 136, true, 32, false, -127, 113,
     "f16 d, u16 scales_h, 4 B scales_l (6-bit ls per 32), 128 B nibbles: "
     "(d*(ls-32))*kvalues_iq4nl[q]",
     CpuPanel::kIQ4X,
     "Float/Int8 panel kernels, Q4 nibbles through a 16-entry table, scale codes decoded per 32 "
     "(Simd path: Int8)"},
    {kBF16, "BF16", 1, 2, false, 1, false, 0, 0, "bfloat16, exact to f32", CpuPanel::kNone,
     "f32 FMA dot kernels (Simd path rows)"},
}};

/// ggml's name of any type id ggml.h ever defined (also those plinth does not read, such as
/// "IQ2_XXS"), or nullptr for an id ggml never defined. For error messages.
inline const char* ggml_name_any(uint32_t id) noexcept {
  static constexpr std::array<const char*, 40> kNames = {
      "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
      "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
      "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
      "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
      "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  return id < kNames.size() ? kNames[id] : nullptr;
}

/// The row of `id`, or nullptr when plinth does not read that type.
inline const Format* find_format(int32_t id) noexcept {
  for (const Format& f : kFormats) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

/// "F32, F16, Q4_0, ..." (the table's names, for messages).
inline std::string supported_names() {
  std::string s;
  for (const Format& f : kFormats) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

/// "type 15 (Q8_K)" / "type 99 (unknown to ggml)" for messages.
inline std::string describe_type(int32_t id) {
  const char* known = id >= 0 ? ggml_name_any(static_cast<uint32_t>(id)) : nullptr;
  return "type " + std::to_string(id) +
         (known != nullptr ? std::string(" (") + known + ")" : std::string(" (unknown to ggml)"));
}

/// The row of `id`. Throws std::invalid_argument naming the type and the supported ones.
inline const Format& format(int32_t id) {
  const Format* f = find_format(id);
  if (f == nullptr) {
    throw std::invalid_argument("ggml tensor " + describe_type(id) +
                                " is not supported; supported: " + supported_names());
  }
  return *f;
}

// ---- IEEE binary16 / bfloat16 <-> binary32 --------------------------------------------------

/// The value of binary16 bits `h`, exact for every input (subnormals, ±inf, NaN payloads kept).
inline float f16_to_f32(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits = 0;
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
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Binary16 bits of `f`, rounded to nearest even (ggml's GGML_FP32_TO_FP16 / numpy
/// astype(float16)): overflow gives ±inf, NaN stays a NaN (quiet), subnormal results are rounded,
/// not flushed.
inline uint16_t f32_to_f16(float f) noexcept {
  uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x38800000u && ax < 0x477ff000u) {  // the common case: a normal half after rounding
    // Adding 0xfff plus the kept lsb rounds the 13 dropped bits to nearest even (a carry moves
    // into the exponent, which is right); then rebias 127 -> 15. Same bits as the general path
    // below (checked over all 2^32 inputs), without its branches, for the KV cache's writes.
    const uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((r - 0x38000000u) >> 13));
  }
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // ≥ 65536: inf
  if (ax < 0x38800000u) {               // below the smallest normal half: a subnormal (or zero)
    if (ax < 0x33000000u) return sign;  // < 2^-25: rounds to 0
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14 .. 24
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u) != 0)) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = ((ax >> 23) - 112u) << 10 | ((ax >> 13) & 0x3ffu);
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0)) ++h;  // may carry into inf: correct
  return static_cast<uint16_t>(sign | h);
}

/// The value of bfloat16 bits `b` (exact: the high half of the f32).
inline float bf16_to_f32(uint16_t b) noexcept {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Bfloat16 bits of `f`, rounded to nearest even; overflow gives ±inf; every NaN stays a NaN
/// (truncated, quiet bit set, so a payload only in the low bits does not become inf).
inline uint16_t f32_to_bf16(float f) noexcept {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// ---- block decoding --------------------------------------------------------------------------

/// ggml's kvalues_iq4nl (ggml-common.h): the 16 levels of IQ4_NL / IQ4_XS.
constexpr std::array<int8_t, 16> kIq4nlValues = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

namespace detail {

inline uint16_t u16_at(const uint8_t* p) noexcept {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));  // GGUF is little-endian
}
inline float half_at(const uint8_t* p) noexcept {
  return f16_to_f32(u16_at(p));
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (ggml get_scale_min_k4).
inline void scale_min_k4(int j, const uint8_t* s, int* sc, int* m) noexcept {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Fills every 16-element sub-block of a 32-element one with the same D, M.
inline void put32(float* d16, float* m16, std::ptrdiff_t sub32, float d, float m) noexcept {
  d16[2 * sub32] = d16[2 * sub32 + 1] = d;
  m16[2 * sub32] = m16[2 * sub32 + 1] = m;
}

// 32-element types: q[32], d16[2], m16[2].
inline void split_q4_0(const uint8_t* b, int8_t* q) noexcept {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>((b[2 + j] & 0x0f) - 8);
    q[j + 16] = static_cast<int8_t>((b[2 + j] >> 4) - 8);
  }
}
inline void split_q4_1(const uint8_t* b, int8_t* q) noexcept {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(b[4 + j] & 0x0f);
    q[j + 16] = static_cast<int8_t>(b[4 + j] >> 4);
  }
}
// Q5_0 / Q5_1: qh (u32 little-endian) at `qh`, nibbles at `qs`; minus `off`.
inline void split_q5(const uint8_t* qh_p, const uint8_t* qs, int off, int8_t* q) noexcept {
  const uint32_t qh = static_cast<uint32_t>(qh_p[0]) | static_cast<uint32_t>(qh_p[1]) << 8 |
                      static_cast<uint32_t>(qh_p[2]) << 16 | static_cast<uint32_t>(qh_p[3]) << 24;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    q[j] = static_cast<int8_t>(lo - off);
    q[j + 16] = static_cast<int8_t>(hi - off);
  }
}
inline void split_iq4_nl(const uint8_t* qs, int8_t* q) noexcept {
  for (int j = 0; j < 16; ++j) {
    q[j] = kIq4nlValues[qs[j] & 0x0f];
    q[j + 16] = kIq4nlValues[qs[j] >> 4];
  }
}

// Super-block types (256 elements): q[256], d16[16], m16[16].
inline void split_q2_k(const uint8_t* b, int8_t* q, float* d16, float* m16) noexcept {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = half_at(b + 80);
  const float dmin = half_at(b + 82);
  for (int e = 0; e < 256; ++e) {  // element h*128 + s*32 + l: bits 2s of qs[32h + l]
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    q[e] = static_cast<int8_t>((qs[32 * h + l] >> (2 * s)) & 3);
  }
  for (int j = 0; j < 16; ++j) {
    d16[j] = d * static_cast<float>(scales[j] & 0x0f);
    m16[j] = -(dmin * static_cast<float>(scales[j] >> 4));
  }
}
inline void split_q3_k(const uint8_t* b, int8_t* q, float* d16) noexcept {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* sc = b + 96;
  const float d = half_at(b + 108);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    const int low = (qs[32 * h + l] >> (2 * s)) & 3;
    const int hbit = (hmask[l] >> (e / 32)) & 1;  // element i*32 + l: bit i of hmask[l]
    q[e] = static_cast<int8_t>(low - (hbit != 0 ? 0 : 4));
  }
  for (int j = 0; j < 16; ++j) {
    const int lo = j < 8 ? (sc[j] & 0x0f) : (sc[j - 8] >> 4);
    const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
    d16[j] = d * static_cast<float>((lo | (hi << 4)) - 32);
  }
}
// Q4_K (qh == nullptr) and Q5_K.
inline void split_q45_k(const uint8_t* b, const uint8_t* qh, const uint8_t* qs, int8_t* q,
                        float* d16, float* m16) noexcept {
  const float d = half_at(b);
  const float dmin = half_at(b + 2);
  for (int j = 0; j < 8; ++j) {  // sub-block j = 2c + h: nibble h of qs[32c + l]
    int sc = 0, m = 0;
    scale_min_k4(j, b + 4, &sc, &m);
    put32(d16, m16, j, d * static_cast<float>(sc), -(dmin * static_cast<float>(m)));
    for (int l = 0; l < 32; ++l) {
      int v = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0f;
      if (qh != nullptr) v |= ((qh[l] >> j) & 1) << 4;
      q[32 * j + l] = static_cast<int8_t>(v);
    }
  }
}
inline void split_q6_k(const uint8_t* b, int8_t* q, float* d16) noexcept {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = b + 192;
  const float d = half_at(b + 208);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, r = e % 128;
    const int low = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0f;
    const int high = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
    q[e] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
  for (int j = 0; j < 16; ++j) d16[j] = d * static_cast<float>(static_cast<int8_t>(sc[j]));
}
inline void split_iq4_xs(const uint8_t* b, int8_t* q, float* d16, float* m16) noexcept {
  const float d = half_at(b);
  const uint16_t scales_h = u16_at(b + 2);
  const uint8_t* scales_l = b + 4;
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 8; ++j) {
    const int ls = ((scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((scales_h >> (2 * j)) & 3) << 4);
    put32(d16, m16, j, d * static_cast<float>(ls - 32), 0.0f);
    split_iq4_nl(qs + std::ptrdiff_t{16} * j, q + std::ptrdiff_t{32} * j);
  }
}

}  // namespace detail

/// The affine decomposition of one block of quantized type `f` at `blk` (f.block_bytes bytes):
/// q[f.block_elems] integers in [f.q_lo, f.q_hi], and per 16-element sub-block s (element
/// 16s .. 16s+15) the f32 scale d16[s] and minimum m16[s] (0 when !f.has_min), such that gguf-py
/// decodes element e as d16[e/16]*q[e] (rounded once) and, with a minimum, + m16[e/16] (rounded
/// once more). Arrays: q[block_elems], d16 and m16 [block_elems / 16]. Throws
/// std::invalid_argument for a float type (F32 / F16 / BF16: no blocks to split).
inline void split_block(const Format& f, const uint8_t* blk, int8_t* q, float* d16, float* m16) {
  const auto same32 = [&](float d, float m) { detail::put32(d16, m16, 0, d, m); };
  switch (f.id) {
    case kQ4_0:
      same32(detail::half_at(blk), 0.0f);
      return detail::split_q4_0(blk, q);
    case kQ4_1:
      same32(detail::half_at(blk), detail::half_at(blk + 2));
      return detail::split_q4_1(blk, q);
    case kQ5_0:
      same32(detail::half_at(blk), 0.0f);
      return detail::split_q5(blk + 2, blk + 6, 16, q);
    case kQ5_1:
      same32(detail::half_at(blk), detail::half_at(blk + 2));
      return detail::split_q5(blk + 4, blk + 8, 0, q);
    case kQ8_0:
      same32(detail::half_at(blk), 0.0f);
      std::memcpy(q, blk + 2, 32);
      return;
    case kIQ4_NL:
      same32(detail::half_at(blk), 0.0f);
      return detail::split_iq4_nl(blk + 2, q);
    case kQ2_K:
      return detail::split_q2_k(blk, q, d16, m16);
    case kQ3_K:
      for (int j = 0; j < 16; ++j) m16[j] = 0.0f;
      return detail::split_q3_k(blk, q, d16);
    case kQ4_K:
      return detail::split_q45_k(blk, nullptr, blk + 16, q, d16, m16);
    case kQ5_K:
      return detail::split_q45_k(blk, blk + 16, blk + 48, q, d16, m16);
    case kQ6_K:
      for (int j = 0; j < 16; ++j) m16[j] = 0.0f;
      return detail::split_q6_k(blk, q, d16);
    case kIQ4_XS:
      return detail::split_iq4_xs(blk, q, d16, m16);
    default:
      break;
  }
  throw std::invalid_argument(std::string("split_block: ") + f.name +
                              " is not a block-quantized type");
}

/// Decodes `nblocks` blocks of type `f` at `src` into out[nblocks * f.block_elems], bit-identical
/// to gguf-py's gguf.quants.dequantize (float types: exact widening / copy). `src` need not be
/// aligned. Throws std::invalid_argument only as split_block would (never for a table row).
inline void decode_blocks(const Format& f, const uint8_t* src, uint64_t nblocks, float* out) {
  if (!f.quantized) {
    for (uint64_t i = 0; i < nblocks; ++i) {
      if (f.id == kF32) {
        std::memcpy(out + i, src + 4 * i, 4);
      } else {
        const uint16_t h = detail::u16_at(src + 2 * i);
        out[i] = f.id == kF16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
    }
    return;
  }
  int8_t q[kQK_K];
  float d16[kQK_K / kSubBlock];
  float m16[kQK_K / kSubBlock];
  for (uint64_t i = 0; i < nblocks; ++i, src += f.block_bytes, out += f.block_elems) {
    split_block(f, src, q, d16, m16);
    for (uint32_t e = 0; e < f.block_elems; ++e) {
      // Two roundings, as gguf-py: a caller compiled with FMA contraction on (-mfma without
      // -ffp-contract=off) could fuse them, so every user builds this with contraction off.
      const float v = d16[e / kSubBlock] * static_cast<float>(q[e]);
      out[e] = f.has_min ? v + m16[e / kSubBlock] : v;
    }
  }
}

/// decode_blocks for the dtype id `id` (throws std::invalid_argument for a type not in the table).
inline void decode_blocks(int32_t id, const void* src, uint64_t nblocks, float* out) {
  decode_blocks(format(id), static_cast<const uint8_t*>(src), nblocks, out);
}

}  // namespace
}  // namespace plinth::ggml
