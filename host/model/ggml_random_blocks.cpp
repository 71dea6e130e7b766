#include "model/ggml_random_blocks.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/ggml_quantize.hpp"
#include "plinth/ggml_format.hpp"

namespace plinth {
namespace {

// Byte offsets of a block's f16 scale field d and of its minimum field (−1: none), ggml-common.h.
struct ScaleFields {
  int d;
  int min;
};

ScaleFields scale_fields(int32_t id) {
  switch (id) {
    case ggml::kQ4_1:
    case ggml::kQ5_1:
    case ggml::kQ4_K:
    case ggml::kQ5_K:
      return {0, 2};
    case ggml::kQ2_K:
      return {80, 82};
    case ggml::kQ3_K:
      return {108, -1};
    case ggml::kQ6_K:
      return {208, -1};
    default:  // Q4_0, Q5_0, Q8_0, IQ4_NL, IQ4_XS: d first, no minimum
      return {0, -1};
  }
}

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void put_half(std::byte* p, float f) {
  const uint16_t h = f32_to_f16_bits(f);
  std::memcpy(p, &h, 2);
}

// The block decoded with d = 1 and the minimum field 0 (a), and with d = 0 and the minimum 1 (b):
// every type decodes linearly in those two fields, value = d·a + min·b.
void unit_parts(const ggml::Format& f, std::byte* blk, ScaleFields sf, float* a, float* b) {
  put_half(blk + sf.d, 1.0f);
  if (sf.min >= 0) put_half(blk + sf.min, 0.0f);
  ggml::decode_blocks(f, reinterpret_cast<const uint8_t*>(blk), 1, a);
  if (sf.min < 0) return;
  put_half(blk + sf.d, 0.0f);
  put_half(blk + sf.min, 1.0f);
  ggml::decode_blocks(f, reinterpret_cast<const uint8_t*>(blk), 1, b);
}

}  // namespace

std::vector<std::byte> ggml_random_blocks(GgmlType type, std::span<const float> values) {
  const ggml::Format& f = ggml::format(static_cast<int32_t>(type));
  if (!f.quantized || values.size() % f.block_elems != 0) {
    throw std::invalid_argument(std::string("ggml_random_blocks: ") + f.name + " needs a " +
                                "quantized type and a multiple of its block size " +
                                std::to_string(f.block_elems) + " values, got " +
                                std::to_string(values.size()));
  }
  const size_t nb = values.size() / f.block_elems;
  const ScaleFields sf = scale_fields(f.id);
  std::vector<std::byte> out(nb * f.block_bytes);
  std::vector<float> a(f.block_elems), b(f.block_elems);
  for (size_t i = 0; i < nb; ++i) {
    const float* v = values.data() + i * f.block_elems;
    std::byte* blk = out.data() + i * f.block_bytes;
    uint64_t seed = 0xcbf29ce484222325ull;  // FNV-1a of the values' bits
    double sq = 0.0;
    for (uint32_t e = 0; e < f.block_elems; ++e) {
      uint32_t bits = 0;
      std::memcpy(&bits, &v[e], 4);
      for (int k = 0; k < 4; ++k) seed = (seed ^ ((bits >> (8 * k)) & 0xffu)) * 0x100000001b3ull;
      sq += static_cast<double>(v[e]) * v[e];
    }
    for (uint32_t k = 0; k < f.block_bytes; k += 8) {
      const uint64_t r = splitmix64(seed);
      std::memcpy(blk + k, &r, std::min<size_t>(8, f.block_bytes - k));
    }
    unit_parts(f, blk, sf, a.data(), b.data());
    double ma = 0.0, mb = 0.0;
    for (uint32_t e = 0; e < f.block_elems; ++e) {
      ma += a[e];
      mb += sf.min >= 0 ? b[e] : 0.0;
    }
    const double k = sf.min >= 0 && mb != 0.0 ? -ma / mb : 0.0;  // min = k·d centres the block
    double var = 0.0;
    for (uint32_t e = 0; e < f.block_elems; ++e) {
      const double w = a[e] + (sf.min >= 0 ? k * b[e] : 0.0);
      var += w * w;
    }
    const double rms = std::sqrt(sq / f.block_elems);
    const double d = var > 0.0 ? rms / std::sqrt(var / f.block_elems) : 0.0;
    put_half(blk + sf.d, static_cast<float>(d));
    if (sf.min >= 0) put_half(blk + sf.min, static_cast<float>(k * d));
  }
  return out;
}

}  // namespace plinth
