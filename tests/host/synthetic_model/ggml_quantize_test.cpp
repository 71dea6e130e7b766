// ggml_quantize / ggml_dequantize against values computed by hand from the block formats of
// ggml/src/ggml-common.h and the reference quantizers of ggml/src/ggml-quants.c, and the binary16 /
// bfloat16 conversions against IEEE 754 bit patterns.
#include "model/ggml_quantize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "plinth/ggml_format.hpp"

namespace plinth {
namespace {

uint8_t byte_at(const std::vector<std::byte>& b, size_t i) {
  return static_cast<uint8_t>(b.at(i));
}
uint16_t u16_at(const std::vector<std::byte>& b, size_t i) {
  uint16_t v;
  std::memcpy(&v, b.data() + i, 2);
  return v;
}

TEST(Fp16, KnownBitPatterns) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);                      // largest finite
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);                      // rounds up to inf
  EXPECT_EQ(f32_to_f16_bits(0.1f), 0x2e66);                          // 0.0999755859375
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);         // tie -> even (0)
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp -> 2 (even)
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(std::nanf("")) & 0x7c00, 0x7c00);
  EXPECT_NE(f32_to_f16_bits(std::nanf("")) & 0x03ff, 0);
  EXPECT_EQ(f16_bits_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_bits_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_bits_to_f32(0xfbff), -65504.0f);
  // Every finite half survives the round trip.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(f32_to_f16_bits(f16_bits_to_f32(static_cast<uint16_t>(h))), h) << h;
  }
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32_to_bf16_bits(std::nanf("")) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(bf16_bits_to_f32(0xc000), -2.0f);
}

// x_j = j - 16: the value of largest magnitude is -16 (j = 0), so d = -16 / -8 = 2, and
// q = min(15, trunc(x / 2 + 8.5)).
TEST(Q4_0, HandComputedBlock) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  const auto b = ggml_quantize(GgmlType::kQ4_0, x);
  ASSERT_EQ(b.size(), 18u);
  EXPECT_EQ(u16_at(b, 0), 0x4000);  // 2.0
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, static_cast<int>((j - 16) / 2.0f + 8.5f));
    const int hi = std::min(15, static_cast<int>(j / 2.0f + 8.5f));
    EXPECT_EQ(byte_at(b, 2 + j), lo | (hi << 4)) << j;
  }
  EXPECT_EQ(byte_at(b, 2) & 0x0f, 0);  // -16 -> 0
  EXPECT_EQ(byte_at(b, 17) >> 4, 15);  // 15 -> 16.0, clamped to 15
  const auto y = ggml_dequantize(GgmlType::kQ4_0, b, 32);
  EXPECT_EQ(y[0], -16.0f);
  EXPECT_EQ(y[31], 14.0f);  // (15 - 8) * 2
}

// x_j = j / 4 + 1: min 1, max 8.75, d = 7.75 / 15, q = trunc((x - 1) / d + 0.5).
TEST(Q4_1, HandComputedBlockAndErrorBound) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = j / 4.0f + 1.0f;
  const auto b = ggml_quantize(GgmlType::kQ4_1, x);
  ASSERT_EQ(b.size(), 20u);
  const float d = 7.75f / 15;
  EXPECT_EQ(u16_at(b, 0), f32_to_f16_bits(d));
  EXPECT_EQ(u16_at(b, 2), 0x3c00);  // min 1.0
  EXPECT_EQ(byte_at(b, 4) & 0x0f, 0);
  EXPECT_EQ(byte_at(b, 4 + 15) >> 4, 15);
  const auto y = ggml_dequantize(GgmlType::kQ4_1, b, 32);
  const float dq = f16_bits_to_f32(u16_at(b, 0));
  for (int j = 0; j < 32; ++j) EXPECT_LE(std::fabs(y[j] - x[j]), dq / 2 + 16 * (d - dq) + 1e-6f);
}

TEST(Q8_0, HandComputedBlock) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  const auto b = ggml_quantize(GgmlType::kQ8_0, x);
  ASSERT_EQ(b.size(), 34u);
  EXPECT_EQ(u16_at(b, 0), f32_to_f16_bits(16.0f / 127));
  const float id = 127 / 16.0f;
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(static_cast<int8_t>(byte_at(b, 2 + j)),
              static_cast<int8_t>(std::round((j - 16) * id)));
  }
  EXPECT_EQ(static_cast<int8_t>(byte_at(b, 2)), -127);
}

TEST(Quantize, ZeroBlocksAndRoundTripBounds) {
  std::vector<float> zeros(64, 0.0f);
  for (GgmlType t : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0}) {
    const auto y = ggml_dequantize(t, ggml_quantize(t, zeros), 64);
    for (float v : y) EXPECT_EQ(v, 0.0f);
  }
  std::mt19937 g(1);
  std::normal_distribution<float> n(0.0f, 0.02f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = n(g);
  // Per element error: half a step (a whole one for Q4_0, whose top level is clamped), plus the
  // scale's own fp16 rounding (relative 2^-11) times up to `steps` levels.
  const struct {
    GgmlType type;
    double steps;  // quantization levels over the block's range
  } cases[] = {{GgmlType::kQ4_0, 8}, {GgmlType::kQ4_1, 15}, {GgmlType::kQ8_0, 127}};
  for (const auto& c : cases) {
    const auto y = ggml_dequantize(c.type, ggml_quantize(c.type, x), x.size());
    for (size_t blk = 0; blk < 64; ++blk) {
      float lo = 1e9f, hi = -1e9f, amax = 0;
      for (size_t j = 0; j < 32; ++j) {
        lo = std::min(lo, x[blk * 32 + j]);
        hi = std::max(hi, x[blk * 32 + j]);
        amax = std::max(amax, std::fabs(x[blk * 32 + j]));
      }
      const double range = c.type == GgmlType::kQ4_1 ? hi - lo : amax;
      const double tol =
          (c.type == GgmlType::kQ4_0 ? 1.0 : 0.5) * range / c.steps + range / 1024 + 1e-7;
      for (size_t j = 0; j < 32; ++j) {
        ASSERT_LE(std::fabs(y[blk * 32 + j] - x[blk * 32 + j]), tol)
            << ggml_type_name(c.type) << " block " << blk << " element " << j;
      }
    }
  }
  for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16}) {
    const auto y = ggml_dequantize(t, ggml_quantize(t, x), x.size());
    const double rel = t == GgmlType::kF32 ? 0 : t == GgmlType::kF16 ? 1.0 / 2048 : 1.0 / 256;
    for (size_t i = 0; i < x.size(); ++i) {
      // + half the smallest binary16 subnormal (2^-25) for values below its normal range.
      ASSERT_LE(std::fabs(y[i] - x[i]), rel * std::fabs(x[i]) + 3e-8) << ggml_type_name(t);
    }
  }
}

TEST(Quantize, RejectsPartialBlocks) {
  std::vector<float> x(33);
  EXPECT_THROW(ggml_quantize(GgmlType::kQ4_1, x), std::invalid_argument);
  EXPECT_THROW(ggml_dequantize(GgmlType::kQ8_0, std::vector<std::byte>(33), 32),
               std::invalid_argument);
}

// The host's decoder (the SDK's ggml::decode_blocks) on every type of the format table equals
// gguf-py's gguf.quants.dequantize bit for bit (tests/fixtures/quant, tools/reference/
// quant_fixture.py: the K-quants and IQ4 as random-byte blocks with zero, subnormal, normal and
// negative f16 fields).
TEST(GgmlDequantize, EveryTableTypeMatchesGgufPy) {
  const std::string dir = std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/quant/";
  std::ifstream index_file(dir + "index.json");
  ASSERT_TRUE(index_file) << dir << "index.json";
  const auto index = nlohmann::json::parse(index_file);
  const size_t count = index.at("rows").get<size_t>() * index.at("cols").get<size_t>();
  const auto read = [&](const std::string& name) {
    std::ifstream in(dir + name, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  };
  for (const ggml::Format& f : ggml::kFormats) {
    const auto& e = index.at("types").at(f.name);
    const std::vector<char> raw = read(e.at("weights"));
    const std::vector<char> deq = read(e.at("dequantized"));
    ASSERT_EQ(deq.size(), count * 4) << f.name;
    const std::vector<float> out = ggml_dequantize(
        static_cast<GgmlType>(f.id),
        std::span(reinterpret_cast<const std::byte*>(raw.data()), raw.size()), count);
    for (size_t i = 0; i < count; ++i) {
      uint32_t want = 0, got = 0;
      std::memcpy(&want, deq.data() + 4 * i, 4);
      std::memcpy(&got, &out[i], 4);
      ASSERT_EQ(got, want) << f.name << " element " << i;
    }
  }
}

// The table's geometry is ggml's (ggml-common.h static_asserts: sizeof(block_*)).
TEST(GgmlFormatTable, BlockSizesAreGgmls) {
  const std::pair<const char*, std::pair<uint32_t, uint32_t>> ggml[] = {
      {"Q4_0", {32, 18}},   {"Q4_1", {32, 20}},   {"Q5_0", {32, 22}},   {"Q5_1", {32, 24}},
      {"Q8_0", {32, 34}},   {"Q2_K", {256, 84}},  {"Q3_K", {256, 110}}, {"Q4_K", {256, 144}},
      {"Q5_K", {256, 176}}, {"Q6_K", {256, 210}}, {"IQ4_NL", {32, 18}}, {"IQ4_XS", {256, 136}}};
  for (const auto& [name, geo] : ggml) {
    bool found = false;
    for (const ggml::Format& f : ggml::kFormats) {
      if (std::string(f.name) != name) continue;
      found = true;
      EXPECT_EQ(f.block_elems, geo.first) << name;
      EXPECT_EQ(f.block_bytes, geo.second) << name;
      EXPECT_STREQ(ggml::ggml_name_any(static_cast<uint32_t>(f.id)), name);
    }
    EXPECT_TRUE(found) << name;
  }
  EXPECT_THROW(ggml::format(15), std::invalid_argument);  // Q8_K: not a weight type
  EXPECT_EQ(ggml::find_format(16), nullptr);              // IQ2_XXS
}

}  // namespace
}  // namespace plinth
