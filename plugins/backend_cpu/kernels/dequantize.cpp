#include "dequantize.hpp"

#include <stdexcept>
#include <string>

namespace plinth::cpu {
namespace {

void dequant_q8_0(const BlockQ8_0* b, int64_t nblocks, float* out) {
  for (int64_t i = 0; i < nblocks; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQuantBlock; ++j)
      out[i * kQuantBlock + j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void dequant_q4_0(const BlockQ4_0* b, int64_t nblocks, float* out) {
  for (int64_t i = 0; i < nblocks; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    float* o = out + i * kQuantBlock;
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      o[j] = static_cast<float>((b[i].qs[j] & 0x0f) - 8) * d;
      o[j + kQuantBlock / 2] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequant_q4_1(const BlockQ4_1* b, int64_t nblocks, float* out) {
  for (int64_t i = 0; i < nblocks; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const float m = fp16_to_fp32(b[i].m);
    float* o = out + i * kQuantBlock;
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      // Two roundings as gguf-py computes (d * q) + m; the library builds with -ffp-contract=off.
      const float lo = d * static_cast<float>(b[i].qs[j] & 0x0f);
      const float hi = d * static_cast<float>(b[i].qs[j] >> 4);
      o[j] = lo + m;
      o[j + kQuantBlock / 2] = hi + m;
    }
  }
}

}  // namespace

void dequantize(WeightType type, const void* data, int64_t first, int64_t count, float* out) {
  const int64_t be = block_elems(type);
  if (data == nullptr || out == nullptr) {
    throw std::invalid_argument("dequantize: data and out must not be null");
  }
  if (first < 0 || count < 0 || first % be != 0 || count % be != 0) {
    throw std::invalid_argument(
        std::string("dequantize(") + weight_type_name(type) + "): first=" + std::to_string(first) +
        " and count=" + std::to_string(count) +
        " must be non-negative multiples of the block size " + std::to_string(be));
  }
  const auto* bytes = static_cast<const uint8_t*>(data) + first / be * block_bytes(type);
  switch (type) {
    case WeightType::kF32:
      // memcpy: the mapped bytes need not be float-aligned (and casting them breaks aliasing).
      std::memcpy(out, bytes, static_cast<size_t>(count) * sizeof(float));
      return;
    case WeightType::kF16: {
      const auto* src = reinterpret_cast<const uint16_t*>(bytes);
      for (int64_t i = 0; i < count; ++i) out[i] = fp16_to_fp32(src[i]);
      return;
    }
    case WeightType::kBF16: {
      const auto* src = reinterpret_cast<const uint16_t*>(bytes);
      for (int64_t i = 0; i < count; ++i) out[i] = bf16_to_fp32(src[i]);
      return;
    }
    case WeightType::kQ8_0:
      dequant_q8_0(reinterpret_cast<const BlockQ8_0*>(bytes), count / be, out);
      return;
    case WeightType::kQ4_0:
      dequant_q4_0(reinterpret_cast<const BlockQ4_0*>(bytes), count / be, out);
      return;
    case WeightType::kQ4_1:
      dequant_q4_1(reinterpret_cast<const BlockQ4_1*>(bytes), count / be, out);
      return;
  }
  throw std::invalid_argument("dequantize: unknown WeightType " +
                              std::to_string(static_cast<int>(type)));
}

void dequantize_rows(const WeightView& w, int64_t row_begin, int64_t row_end, float* out) {
  validate(w);
  if (row_begin < 0 || row_end > w.rows || row_begin > row_end) {
    throw std::invalid_argument("dequantize_rows: row range [" + std::to_string(row_begin) + ", " +
                                std::to_string(row_end) + ") is outside [0, " +
                                std::to_string(w.rows) + ")");
  }
  dequantize(w.type, w.data, row_begin * w.cols, (row_end - row_begin) * w.cols, out);
}

}  // namespace plinth::cpu
