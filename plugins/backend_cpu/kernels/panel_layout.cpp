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

// Rows of a type repacked through the SDK's split_block (every type but Q4_0 / Q4_1 / Q8_0): each
// 32-element chunk c of the row goes to panel block c, slot r.
void put_split_row(WeightType type, const uint8_t* row, int64_t cols, int64_t r, uint8_t* panel,
                   int64_t pbb, PanelOrder order) {
  const ggml::Format& f = ggml::format(static_cast<int32_t>(type));
  const PanelKind kind = panel_kind(type);
  const int64_t chunks = f.block_elems / kQuantBlock;
  int8_t q[ggml::kQK_K];
  float d16[ggml::kQK_K / ggml::kSubBlock];
  float m16[ggml::kQK_K / ggml::kSubBlock];
  for (int64_t blk = 0; blk < cols / f.block_elems; ++blk) {
    ggml::split_block(f, row + blk * f.block_bytes, q, d16, m16);
    for (int64_t c = 0; c < chunks; ++c) {
      uint8_t* pb = panel + (blk * chunks + c) * pbb;
      const int8_t* qc = q + c * kQuantBlock;
      if (kind == PanelKind::kQ5 || kind == PanelKind::kQ5_1) {
        // f16 d (Q5_1: and m), the high-bit plane, Q4's nibble order. Q5_0's q is stored + 16.
        const bool q5_1 = kind == PanelKind::kQ5_1;
        const int add = q5_1 ? 0 : 16;
        const int64_t qh_at = q5_1 ? 64 : 32, q_at = q5_1 ? 128 : 96;
        const uint16_t h = ggml::f32_to_f16(d16[2 * c]);
        std::memcpy(pb + r * 2, &h, 2);
        if (q5_1) {
          const uint16_t m = ggml::f32_to_f16(m16[2 * c]);
          std::memcpy(pb + 32 + r * 2, &m, 2);
        }
        uint32_t qh = 0;
        for (int64_t j = 0; j < kQuantBlock; ++j) {
          qh |= static_cast<uint32_t>(((qc[j] + add) >> 4) & 1) << j;
        }
        if (order == PanelOrder::kFloat) {
          std::memcpy(pb + qh_at + r * 4, &qh, 4);
        } else {  // byte [g][r]: bits k = element 4g + k, bits 4 + k = element 16 + 4g + k
          for (int64_t g = 0; g < 4; ++g) {
            pb[qh_at + g * 16 + r] =
                static_cast<uint8_t>(((qh >> (4 * g)) & 0xf) | (((qh >> (16 + 4 * g)) & 0xf) << 4));
          }
        }
        for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
          const auto byte =
              static_cast<uint8_t>(((qc[t] + add) & 0xf) | (((qc[t + 16] + add) & 0xf) << 4));
          pb[q_at + quant_offset(order, t, r)] = byte;
        }
        continue;
      }
      if (kind == PanelKind::kK4) {  // f32 D, M per 32 (both halves equal), Q4_1's nibble order
        std::memcpy(pb + r * 4, &d16[2 * c], 4);
        std::memcpy(pb + 64 + r * 4, &m16[2 * c], 4);
        for (int64_t t = 0; t < kQuantBlock / 2; ++t) {
          const auto byte = static_cast<uint8_t>(qc[t] | (qc[t + 16] << 4));
          pb[128 + quant_offset(order, t, r)] = byte;
        }
        continue;
      }
      if (kind == PanelKind::kQ8_0) {  // one f16 d per 32 (exact: it is the file's f16)
        const uint16_t h = ggml::f32_to_f16(d16[2 * c]);
        std::memcpy(pb + r * 2, &h, 2);
      } else {  // S16: D, M per 16-element half
        for (int64_t h = 0; h < 2; ++h) {
          std::memcpy(pb + h * 64 + r * 4, &d16[2 * c + h], 4);
          std::memcpy(pb + 128 + h * 64 + r * 4, &m16[2 * c + h], 4);
        }
      }
      const int64_t qoff = kind == PanelKind::kQ8_0 ? 32 : 256;
      for (int64_t j = 0; j < kQuantBlock; ++j) {
        const int v = order == PanelOrder::kFloat ? static_cast<uint8_t>(qc[j]) : qc[j] + 128;
        pb[qoff + quant_offset(order, j, r)] = static_cast<uint8_t>(v);
      }
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
