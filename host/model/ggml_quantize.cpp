// ggml's reference encoders and decoders (ggml/src/ggml-quants.c, ggml/src/ggml-impl.h).
#include "model/ggml_quantize.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace plinth {
namespace {

constexpr size_t kQk = 32;  // elements per Q block (QK4_0 = QK4_1 = QK8_0)

void put16(std::byte* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}
uint16_t get16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
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
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) {  // inf, NaN (quiet, top payload bits kept)
    return static_cast<uint16_t>(sign | 0x7c00 | (mant != 0 ? 0x200 | (mant >> 13) : 0));
  }
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {  // a binary16 subnormal or zero
    if (e < -10) return sign;
    mant |= 0x800000;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u) != 0)) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1u) != 0)) ++half;  // a carry reaches inf
  return static_cast<uint16_t>(sign | half);
}

float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_bf16_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float bf16_bits_to_f32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
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
  const std::byte* p = data.data();
  auto nibble = [](const std::byte* qs, size_t j) {
    const auto b = static_cast<uint8_t>(qs[j % 16]);
    return j < 16 ? (b & 0x0f) : (b >> 4);
  };
  for (size_t i = 0; i < blocks; ++i) {
    switch (type) {
      case GgmlType::kF32:
        std::memcpy(&out[i], p + 4 * i, 4);
        break;
      case GgmlType::kF16:
        out[i] = f16_bits_to_f32(get16(p + 2 * i));
        break;
      case GgmlType::kBF16:
        out[i] = bf16_bits_to_f32(get16(p + 2 * i));
        break;
      case GgmlType::kQ4_0: {
        const std::byte* b = p + i * 18;
        const float d = f16_bits_to_f32(get16(b));
        for (size_t j = 0; j < kQk; ++j) out[i * kQk + j] = (nibble(b + 2, j) - 8) * d;
        break;
      }
      case GgmlType::kQ4_1: {
        const std::byte* b = p + i * 20;
        const float d = f16_bits_to_f32(get16(b)), m = f16_bits_to_f32(get16(b + 2));
        for (size_t j = 0; j < kQk; ++j) out[i * kQk + j] = nibble(b + 4, j) * d + m;
        break;
      }
      case GgmlType::kQ8_0: {
        const std::byte* b = p + i * 34;
        const float d = f16_bits_to_f32(get16(b));
        for (size_t j = 0; j < kQk; ++j) {
          out[i * kQk + j] = static_cast<int8_t>(static_cast<uint8_t>(b[2 + j])) * d;
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace plinth
