// ggml's reference encoders and decoders (ggml/src/ggml-quants.c, ggml/src/ggml-impl.h).
#include "model/ggml_quantize.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "plinth/ggml_format.hpp"

namespace plinth {
namespace {

constexpr size_t kQk = 32;  // elements per Q block (QK4_0 = QK4_1 = QK8_0)

void put16(std::byte* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}

void check_count(GgmlType type, size_t count) {
  if (count % ggml_block_size(type) != 0) {
    throw std::invalid_argument(std::string("ggml_quantize: ") + std::to_string(count) +
                                " values are not a multiple of the " + ggml_type_name(type) +
                                " block size " + std::to_string(ggml_block_size(type)));
  }
}

// One 32-element block of each Q type, `y` pointing at its bytes.
void q4_0_block(const float* x, std::byte* y) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < kQk; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put16(y, f32_to_f16_bits(d));
  for (size_t j = 0; j < kQk / 2; ++j) {
    const auto lo = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x[j] * id + 8.5f)));
    const auto hi =
        static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x[j + 16] * id + 8.5f)));
    y[2 + j] = std::byte(static_cast<uint8_t>(lo | (hi << 4)));
  }
}

void q4_1_block(const float* x, std::byte* y) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (size_t j = 0; j < kQk; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
  const float d = (max - min) / 15;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put16(y, f32_to_f16_bits(d));
  put16(y + 2, f32_to_f16_bits(min));
  for (size_t j = 0; j < kQk / 2; ++j) {
    const auto lo =
        // NOLINTNEXTLINE(bugprone-incorrect-roundings): ggml's reference rounding, x >= 0
        static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>((x[j] - min) * id + 0.5f)));
    const auto hi =
        // NOLINTNEXTLINE(bugprone-incorrect-roundings): ggml's reference rounding, x >= 0
        static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>((x[j + 16] - min) * id + 0.5f)));
    y[4 + j] = std::byte(static_cast<uint8_t>(lo | (hi << 4)));
  }
}

void q8_0_block(const float* x, std::byte* y) {
  float amax = 0.0f;
  for (size_t j = 0; j < kQk; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put16(y, f32_to_f16_bits(d));
  for (size_t j = 0; j < kQk; ++j) {
    y[2 + j] = std::byte(static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id))));
  }
}

}  // namespace

uint16_t f32_to_f16_bits(float f) {
  return ggml::f32_to_f16(f);
}
float f16_bits_to_f32(uint16_t h) {
  return ggml::f16_to_f32(h);
}
uint16_t f32_to_bf16_bits(float f) {
  return ggml::f32_to_bf16(f);
}
float bf16_bits_to_f32(uint16_t b) {
  return ggml::bf16_to_f32(b);
}

std::vector<std::byte> ggml_quantize(GgmlType type, std::span<const float> values) {
  check_count(type, values.size());
  const size_t blocks = values.size() / ggml_block_size(type);
  std::vector<std::byte> out(blocks * ggml_type_size(type));
  std::byte* y = out.data();
  const float* x = values.data();
  switch (type) {
    case GgmlType::kF32:
      std::memcpy(y, x, out.size());
      break;
    case GgmlType::kF16:
      for (size_t i = 0; i < blocks; ++i) put16(y + 2 * i, f32_to_f16_bits(x[i]));
      break;
    case GgmlType::kBF16:
      for (size_t i = 0; i < blocks; ++i) put16(y + 2 * i, f32_to_bf16_bits(x[i]));
      break;
    case GgmlType::kQ4_0:
      for (size_t i = 0; i < blocks; ++i) q4_0_block(x + i * kQk, y + i * 18);
      break;
    case GgmlType::kQ4_1:
      for (size_t i = 0; i < blocks; ++i) q4_1_block(x + i * kQk, y + i * 20);
      break;
    case GgmlType::kQ8_0:
      for (size_t i = 0; i < blocks; ++i) q8_0_block(x + i * kQk, y + i * 34);
      break;
    default:  // the other table types are read, never written, by plinth
      throw std::invalid_argument(std::string("ggml_quantize: no encoder for ") +
                                  ggml_type_name(type) +
                                  " (plinth writes F32, F16, BF16, Q4_0, Q4_1, Q8_0)");
  }
  return out;
}

std::vector<float> ggml_dequantize(GgmlType type, std::span<const std::byte> data, size_t count) {
  check_count(type, count);
  const size_t blocks = count / ggml_block_size(type);
  if (data.size() != blocks * ggml_type_size(type)) {
    throw std::invalid_argument(std::string("ggml_dequantize: ") + std::to_string(data.size()) +
                                " bytes for " + std::to_string(count) + " " + ggml_type_name(type) +
                                " elements, expected " +
                                std::to_string(blocks * ggml_type_size(type)));
  }
  std::vector<float> out(count);
  ggml::decode_blocks(static_cast<int32_t>(type), data.data(), blocks, out.data());
  return out;
}

}  // namespace plinth
