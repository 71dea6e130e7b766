#include "panel_layout.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace plinth::cpu::detail {

int64_t panel_block_bytes(PanelKind kind) {
  switch (kind) {  // the format table's sizes (plinth/ggml_format.hpp cpu_panel_block_bytes)
    case PanelKind::kQ4_1:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ4_1);
    case PanelKind::kQ4_0:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ4_0);
    case PanelKind::kQ8_0:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ8_0);
    case PanelKind::kQ5:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ5);
    case PanelKind::kQ5_1:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kQ5_1);
    case PanelKind::kIQ4:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kIQ4);
    case PanelKind::kK5:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK5);
    case PanelKind::kIQ4X:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kIQ4X);
    case PanelKind::kK4:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK4);
    case PanelKind::kK6:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK6);
    case PanelKind::kK3:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK3);
    case PanelKind::kK2:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kK2);
  }
  throw std::invalid_argument("panel layout: unknown panel kind " +
                              std::to_string(static_cast<int>(kind)));
}

int64_t panel_block_bytes(WeightType type) {
  return panel_block_bytes(panel_kind(type));
}

bool panel_super(PanelKind kind) {
  return kind == PanelKind::kK4 || kind == PanelKind::kK5 || kind == PanelKind::kIQ4X ||
         panel_halves(kind);
}

bool panel_halves(PanelKind kind) {
  return kind == PanelKind::kK6 || kind == PanelKind::kK3 || kind == PanelKind::kK2;
}

int64_t packed_bytes(const WeightView& w) {
  return panel_count(w.rows) * (w.cols / kQuantBlock) * panel_block_bytes(w.type);
}

namespace {

// Offset of quant byte t (Q4: byte t of the block; Q8_0: element t) of row r inside the quants.
int64_t quant_offset(PanelOrder order, int64_t t, int64_t r) {
  return order == PanelOrder::kFloat ? t * kPanelRows + r : (t / 4) * 64 + r * 4 + t % 4;
}

// Copies one row's block into slot r of a panel block.
void put_row(WeightType type, const uint8_t* blk, int64_t r, uint8_t* pb, PanelOrder order) {
  const auto put_f16 = [&](int64_t off, uint16_t h) { std::memcpy(pb + off + r * 2, &h, 2); };
  if (type == WeightType::kQ8_0) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(blk);
    put_f16(0, b->d);
    for (int64_t j = 0; j < kQuantBlock; ++j) {
      // Int8: the unsigned operand of vpdpbusd, q + 128 in 0..255 (the kernel subtracts 128·Σx).
      const int v = order == PanelOrder::kFloat ? static_cast<uint8_t>(b->qs[j]) : b->qs[j] + 128;
      pb[32 + quant_offset(order, j, r)] = static_cast<uint8_t>(v);
    }
    return;
  }
  const uint8_t* qs = nullptr;
  int64_t qoff = 32;
  if (type == WeightType::kQ4_1) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(blk);
    put_f16(0, b->d);
    put_f16(32, b->m);
    qs = b->qs;
    qoff = 64;
  } else {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(blk);
    put_f16(0, b->d);
    qs = b->qs;
  }
  for (int64_t t = 0; t < kQuantBlock / 2; ++t) pb[qoff + quant_offset(order, t, r)] = qs[t];
}

// Where a repacked kind keeps one 32-element chunk of a row: Q5_0 / Q5_1 in their panel blocks
// (with their f16 d, m), the super-block kinds in a chunk of their panel super-block (header
// apart, put_header).
struct ChunkLayout {
  bool f16_scales;  // Q5_0 / Q5_1: f16 d (and m) at the block's start
  bool min;         // a minimum follows the 16 scales
  int add;          // added to q before it is stored (Q5_0: 16; K6: 32; K3: 4)
  int64_t qh_at;    // the high-bit plane (bit 4), or -1
  int64_t q_at;     // the nibbles, or -1
  int64_t p2_at;    // the 2-bit plane (K6: bits 4-5; K3, K2: bits 0-1), or -1
  int64_t p1_at;    // the 1-bit plane (K3: bit 2), or -1
  bool lut;         // q is a kvalues_iq4nl value: its index is stored
};

ChunkLayout chunk_layout(PanelKind kind) {
  switch (kind) {
    case PanelKind::kQ5:
      return {true, false, 16, 32, 96, -1, -1, false};
    case PanelKind::kQ5_1:
      return {true, true, 0, 64, 128, -1, -1, false};
    case PanelKind::kK4:
      return {false, false, 0, -1, 0, -1, -1, false};
    case PanelKind::kK5:
      return {false, false, 0, 0, 64, -1, -1, false};
    case PanelKind::kIQ4X:
      return {false, false, 0, -1, 0, -1, -1, true};
    case PanelKind::kK6:
      return {false, false, 32, -1, 0, 256, -1, false};
    case PanelKind::kK3:
      return {false, false, 4, -1, -1, 0, 128, false};
    case PanelKind::kK2:
      return {false, false, 0, -1, -1, 0, -1, false};
    case PanelKind::kQ8_0:
    case PanelKind::kQ4_0:
    case PanelKind::kQ4_1:
    case PanelKind::kIQ4:
      break;  // the file's own blocks (put_row)
  }
  throw std::logic_error("panel layout: kind copied as blocks, not split");
}

// The index of value v in kvalues_iq4nl (every IQ4 value is one of them).
uint8_t iq4_index(int v) {
  for (size_t i = 0; i < ggml::kIq4nlValues.size(); ++i) {
    if (ggml::kIq4nlValues[i] == v) return static_cast<uint8_t>(i);
  }
  throw std::logic_error("IQ4: value not in kvalues_iq4nl");
}

// Q5_0 / Q5_1: the block's f16 d (and m), exact (the values came from the file's f16 fields).
void put_f16_scales(const ChunkLayout& l, uint8_t* pb, int64_t r, float d, float m) {
  const uint16_t dh = ggml::f32_to_f16(d), mh = ggml::f32_to_f16(m);
  std::memcpy(pb + r * 2, &dh, 2);
  if (l.min) std::memcpy(pb + 32 + r * 2, &mh, 2);
}

// Bit 4 of every stored quant: Float order a u32 per row (bit j: element j), Int8 order a byte
// [g][r] (bits k and 4 + k: elements 4g + k and 16 + 4g + k).
void put_high_bits(const ChunkLayout& l, uint8_t* pb, int64_t r, const int8_t* qc,
                   PanelOrder order) {
  uint32_t qh = 0;
  for (int64_t j = 0; j < kQuantBlock; ++j) {
    qh |= static_cast<uint32_t>(((qc[j] + l.add) >> 4) & 1) << j;
  }
  if (order == PanelOrder::kFloat) {
    std::memcpy(pb + l.qh_at + r * 4, &qh, 4);
    return;
  }
  for (int64_t g = 0; g < 4; ++g) {
    pb[l.qh_at + g * 16 + r] =
        static_cast<uint8_t>(((qh >> (4 * g)) & 0xf) | (((qh >> (16 + 4 * g)) & 0xf) << 4));
  }
}

// The stored (unsigned) quant u of element e of the chunk.
int stored(const ChunkLayout& l, const int8_t* qc, int64_t e) {
  return l.lut ? iq4_index(qc[e]) : qc[e] + l.add;
}

// The nibbles (low 4 bits of u): byte t holds element t (low nibble) and t + 16 (high).
void put_nibbles(const ChunkLayout& l, uint8_t* pb, int64_t r, const int8_t* qc, PanelOrder order) {
  for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
    const int lo = stored(l, qc, t) & 0xf;
    const int hi = stored(l, qc, t + 16) & 0xf;
    pb[l.q_at + quant_offset(order, t, r)] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// The bit planes (panel_layout.hpp): 2-bit byte 4v + k holds the field (u >> shift) & 3 of
// element 16v + 4g + k at bits 2g; 1-bit byte k holds (u >> 2) & 1 of it at bit 4v + g.
void put_planes(const ChunkLayout& l, uint8_t* pb, int64_t r, const int8_t* qc, PanelOrder order) {
  const int shift2 = l.q_at >= 0 ? 4 : 0;  // K6: the bits above the nibble; K3 / K2: the lowest
  uint8_t p2[8] = {};
  uint8_t p1[4] = {};
  for (int64_t e = 0; e < kQuantBlock; ++e) {
    const int64_t v = e / 16, g = (e % 16) / 4, k = e % 4;
    const int u = stored(l, qc, e);
    p2[4 * v + k] = static_cast<uint8_t>(p2[4 * v + k] | (((u >> shift2) & 3) << (2 * g)));
    p1[k] = static_cast<uint8_t>(p1[k] | (((u >> 2) & 1) << (4 * v + g)));
  }
  for (int64_t t = 0; t < 8; ++t) pb[l.p2_at + quant_offset(order, t, r)] = p2[t];
  if (l.p1_at < 0) return;
  for (int64_t t = 0; t < 4; ++t) pb[l.p1_at + quant_offset(order, t, r)] = p1[t];
}

void put_chunk(const ChunkLayout& l, uint8_t* pb, int64_t r, const int8_t* qc, PanelOrder order) {
  if (l.qh_at >= 0) put_high_bits(l, pb, r, qc, order);
  if (l.q_at >= 0) put_nibbles(l, pb, r, qc, order);
  if (l.p2_at >= 0) put_planes(l, pb, r, qc, order);
}

// Q5_0 / Q5_1 rows: each 32-element block through the SDK's split_block into panel block b.
void put_q5_row(WeightType type, const uint8_t* row, int64_t cols, int64_t r, uint8_t* panel,
                int64_t pbb, PanelOrder order) {
  const ggml::Format& f = ggml::format(static_cast<int32_t>(type));
  const ChunkLayout l = chunk_layout(panel_kind(type));
  int8_t q[kQuantBlock];
  float d16[2];
  float m16[2];
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    ggml::split_block(f, row + b * f.block_bytes, q, d16, m16);
    uint8_t* pb = panel + b * pbb;
    put_f16_scales(l, pb, r, d16[0], m16[0]);
    put_chunk(l, pb, r, q, order);
  }
}

// The header of a panel super-block: row r's f16 d at 2r, then its scale bytes (and dmin) as
// panel_layout.hpp lists them, copied from the file's block `fb`.
struct HeaderLayout {
  int64_t d_at;      // f16 d in the file's block
  int64_t dmin_at;   // f16 dmin (K4, K5, K2) or u16 scales_h (IQ4X) in the file's block, or -1
  int64_t codes_at;  // the scale bytes in the file's block
  int64_t codes;     // how many
  int64_t head;      // the panel header's bytes
};

HeaderLayout header_layout(PanelKind kind) {
  switch (kind) {
    case PanelKind::kK4:
    case PanelKind::kK5:
      return {0, 2, 4, 12, 256};
    case PanelKind::kIQ4X:
      return {0, 2, 4, 4, 128};
    case PanelKind::kK6:
      return {208, -1, 192, 16, 288};
    case PanelKind::kK3:
      return {108, -1, 96, 12, 224};
    case PanelKind::kK2:
      return {80, 82, 0, 16, 320};
    default:
      break;
  }
  throw std::logic_error("panel layout: not a super-block kind");
}

void put_header(const HeaderLayout& h, const uint8_t* fb, uint8_t* sp, int64_t r) {
  std::memcpy(sp + 2 * r, fb + h.d_at, 2);
  int64_t at = 32;
  if (h.dmin_at >= 0) {
    std::memcpy(sp + at + 2 * r, fb + h.dmin_at, 2);
    at += 32;
  }
  for (int64_t k = 0; k < h.codes; ++k) sp[at + 16 * k + r] = fb[h.codes_at + k];
}

// Super-block rows: per 256-element block its header, then its 8 chunks of 32 (the quants through
// the SDK's split_block).
void put_super_row(WeightType type, const uint8_t* row, int64_t cols, int64_t r, uint8_t* panel,
                   int64_t pbb, PanelOrder order) {
  const ggml::Format& f = ggml::format(static_cast<int32_t>(type));
  const PanelKind kind = panel_kind(type);
  const ChunkLayout l = chunk_layout(kind);
  const HeaderLayout h = header_layout(kind);
  const int64_t super_bytes = 8 * pbb;
  const int64_t chunk_bytes = (super_bytes - h.head) / 8;
  int8_t q[ggml::kQK_K];
  float d16[ggml::kQK_K / ggml::kSubBlock];
  float m16[ggml::kQK_K / ggml::kSubBlock];
  for (int64_t blk = 0; blk < cols / f.block_elems; ++blk) {
    const uint8_t* fb = row + blk * f.block_bytes;
    uint8_t* sp = panel + blk * super_bytes;
    put_header(h, fb, sp, r);
    ggml::split_block(f, fb, q, d16, m16);
    for (int64_t c = 0; c < 8; ++c) {
      put_chunk(l, sp + h.head + c * chunk_bytes, r, q + c * kQuantBlock, order);
    }
  }
}

// Types whose blocks are copied as they are: Q8_0, Q4_0, Q4_1, and IQ4_NL (f16 d + 16 bytes of
// nibbles: Q4_0's block layout, the nibbles meaning kvalues_iq4nl indices).
bool native_blocks(WeightType type) {
  return type == WeightType::kQ8_0 || type == WeightType::kQ4_0 || type == WeightType::kQ4_1 ||
         type == WeightType::kIQ4_NL;
}

}  // namespace

void pack_panels(const WeightView& w, int64_t p0, int64_t p1, uint8_t* out, PanelOrder order) {
  const int64_t nb = w.cols / kQuantBlock;
  const int64_t pbb = panel_block_bytes(w.type);
  const int64_t bb = block_bytes(w.type);
  const int64_t wrow = row_bytes(w.type, w.cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t p = p0; p < p1; ++p) {
    uint8_t* panel = out + p * nb * pbb;
    std::memset(panel, 0, static_cast<size_t>(nb * pbb));  // rows past the end stay 0
    for (int64_t r = 0; r < kPanelRows && p * kPanelRows + r < w.rows; ++r) {
      const uint8_t* row = base + (p * kPanelRows + r) * wrow;
      if (panel_super(panel_kind(w.type))) {
        put_super_row(w.type, row, w.cols, r, panel, pbb, order);
        continue;
      }
      if (!native_blocks(w.type)) {
        put_q5_row(w.type, row, w.cols, r, panel, pbb, order);
        continue;
      }
      for (int64_t b = 0; b < nb; ++b) put_row(w.type, row + b * bb, r, panel + b * pbb, order);
    }
  }
}

}  // namespace plinth::cpu::detail
