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
    case PanelKind::kS16:
      return ggml::cpu_panel_block_bytes(ggml::CpuPanel::kS16);
  }
  throw std::invalid_argument("panel layout: unknown panel kind " +
                              std::to_string(static_cast<int>(kind)));
}

int64_t panel_block_bytes(WeightType type) {
  return panel_block_bytes(panel_kind(type));
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

// Where a repacked kind keeps one 32-element chunk of a row inside its panel block.
struct ChunkLayout {
  int scale_bytes;  // 2: f16 d (and m), 4: f32 D (and M) per 32; 0: S16's D[2], M[2] per half
  bool min;         // a minimum follows the 16 scales
  int add;          // added to q before it is stored (Q5_0: 16)
  int64_t qh_at;    // the high-bit plane, or -1
  int64_t q_at;     // the quants
  bool nibbles;     // 4-bit quants (else one byte each)
  bool lut;         // q is a kvalues_iq4nl value: its index is stored
};

ChunkLayout chunk_layout(PanelKind kind) {
  switch (kind) {
    case PanelKind::kQ8_0:
      return {2, false, 0, -1, 32, false, false};
    case PanelKind::kQ5:
      return {2, false, 16, 32, 96, true, false};
    case PanelKind::kQ5_1:
      return {2, true, 0, 64, 128, true, false};
    case PanelKind::kK4:
      return {4, true, 0, -1, 128, true, false};
    case PanelKind::kK5:
      return {4, true, 0, 128, 192, true, false};
    case PanelKind::kIQ4X:
      return {4, false, 0, -1, 64, true, true};
    case PanelKind::kS16:
      return {0, true, 0, -1, 256, false, false};
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

void put_scales(const ChunkLayout& l, uint8_t* pb, int64_t r, const float* d2, const float* m2) {
  if (l.scale_bytes == 0) {  // S16: D, M per 16-element half
    for (int64_t h = 0; h < 2; ++h) {
      std::memcpy(pb + h * 64 + r * 4, &d2[h], 4);
      std::memcpy(pb + 128 + h * 64 + r * 4, &m2[h], 4);
    }
    return;
  }
  if (l.scale_bytes == 2) {  // f16: exact, the values came from the file's f16 fields
    const uint16_t d = ggml::f32_to_f16(d2[0]), m = ggml::f32_to_f16(m2[0]);
    std::memcpy(pb + r * 2, &d, 2);
    if (l.min) std::memcpy(pb + 32 + r * 2, &m, 2);
    return;
  }
  std::memcpy(pb + r * 4, &d2[0], 4);
  if (l.min) std::memcpy(pb + 64 + r * 4, &m2[0], 4);
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

void put_quants(const ChunkLayout& l, uint8_t* pb, int64_t r, const int8_t* qc, PanelOrder order) {
  if (l.nibbles) {  // byte t: element t (low nibble), t + 16 (high)
    for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
      const int lo = l.lut ? iq4_index(qc[t]) : (qc[t] + l.add) & 0xf;
      const int hi = l.lut ? iq4_index(qc[t + 16]) : (qc[t + 16] + l.add) & 0xf;
      pb[l.q_at + quant_offset(order, t, r)] = static_cast<uint8_t>(lo | (hi << 4));
    }
    return;
  }
  for (int64_t j = 0; j < kQuantBlock; ++j) {  // int8; the Int8 order stores q + 128 (unsigned)
    const int v = order == PanelOrder::kFloat ? static_cast<uint8_t>(qc[j]) : qc[j] + 128;
    pb[l.q_at + quant_offset(order, j, r)] = static_cast<uint8_t>(v);
  }
}

// Rows of a type repacked through the SDK's split_block (every type but Q4_0 / Q4_1 / Q8_0 /
// IQ4_NL): each 32-element chunk c of the row goes to panel block c, slot r.
void put_split_row(WeightType type, const uint8_t* row, int64_t cols, int64_t r, uint8_t* panel,
                   int64_t pbb, PanelOrder order) {
  const ggml::Format& f = ggml::format(static_cast<int32_t>(type));
  const ChunkLayout l = chunk_layout(panel_kind(type));
  const int64_t chunks = f.block_elems / kQuantBlock;
  int8_t q[ggml::kQK_K];
  float d16[ggml::kQK_K / ggml::kSubBlock];
  float m16[ggml::kQK_K / ggml::kSubBlock];
  for (int64_t blk = 0; blk < cols / f.block_elems; ++blk) {
    ggml::split_block(f, row + blk * f.block_bytes, q, d16, m16);
    for (int64_t c = 0; c < chunks; ++c) {
      uint8_t* pb = panel + (blk * chunks + c) * pbb;
      const int8_t* qc = q + c * kQuantBlock;
      put_scales(l, pb, r, d16 + 2 * c, m16 + 2 * c);
      if (l.qh_at >= 0) put_high_bits(l, pb, r, qc, order);
      put_quants(l, pb, r, qc, order);
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
      if (!native_blocks(w.type)) {
        put_split_row(w.type, row, w.cols, r, panel, pbb, order);
        continue;
      }
      for (int64_t b = 0; b < nb; ++b) put_row(w.type, row + b * bb, r, panel + b * pbb, order);
    }
  }
}

}  // namespace plinth::cpu::detail
