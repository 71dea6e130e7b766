// GGUF -> bf16 conversion: bf16 rounding against hand-computed bit patterns and an independent
// nearest-value reference; dequantization against hand-written ggml blocks (ggml-common.h
// layouts), backend_cpu's dequantize() and gguf-py's (tests/fixtures/quant); size errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "plinth/ggml_format.hpp"
#include "weight_convert.hpp"

namespace plinth::cuda {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

plinth_tensor_view view(const char* name, plinth_dtype dtype, std::vector<uint64_t> dims,
                        const std::vector<uint8_t>& bytes) {
  plinth_tensor_view v{};
  v.struct_size = sizeof v;
  v.name = name;
  v.dtype = dtype;
  v.n_dims = static_cast<uint32_t>(dims.size());
  for (size_t i = 0; i < 4; ++i) v.dims[i] = i < dims.size() ? dims[i] : 1;
  v.data = bytes.data();
  v.nbytes = bytes.size();
  return v;
}

void put_u16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v & 0xff));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

cpu::WeightType cpu_type(plinth_dtype d) {
  cpu::WeightType t{};
  if (!cpu::weight_type_from_dtype(d, &t)) throw std::logic_error("no such type");
  return t;
}

/// backend_cpu's dequantize() of the whole view.
std::vector<float> cpu_dequant(const plinth_tensor_view& v) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < v.n_dims; ++i) n *= v.dims[i];
  std::vector<float> out(n);
  cpu::dequantize(cpu_type(static_cast<plinth_dtype>(v.dtype)), v.data, 0, static_cast<int64_t>(n),
                  out.data());
  return out;
}

// Independent bf16 reference: of the two bf16 values around x (truncation and the next one up
// in magnitude), the nearer in exact (double) arithmetic, the even one on a tie.
uint16_t nearest_bf16(float x) {
  const uint32_t u = bits_of(x);
  const auto lo = static_cast<uint16_t>(u >> 16);
  const auto hi = static_cast<uint16_t>(lo + 1);
  const double dx = x;
  const double dlo = bf16_to_f32(lo);
  const double dhi = (hi & 0x7f80) == 0x7f80 && (hi & 0x7f) == 0
                         ? std::copysign(std::ldexp(1.0, 128), dx)  // rounding target past max
                         : static_cast<double>(bf16_to_f32(hi));
  const double elo = std::fabs(dx - dlo), ehi = std::fabs(dhi - dx);
  if (elo < ehi) return lo;
  if (ehi < elo) return hi;
  return (lo & 1) == 0 ? lo : hi;
}

TEST(Bf16, HandComputedRounding) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  // 1 + 2^-8 lies exactly between bf16 1.0 (0x3f80, even) and 1 + 2^-7 (0x3f81): ties to even.
  EXPECT_EQ(f32_to_bf16(float_of(0x3f808000u)), 0x3f80);
  // 0x3f818000 lies between 0x3f81 (odd) and 0x3f82 (even): up.
  EXPECT_EQ(f32_to_bf16(float_of(0x3f818000u)), 0x3f82);
  EXPECT_EQ(f32_to_bf16(float_of(0x3f808001u)), 0x3f81);  // just above half: up
  EXPECT_EQ(f32_to_bf16(float_of(0x3f807fffu)), 0x3f80);  // just below half: down
  EXPECT_EQ(f32_to_bf16(float_of(0xbf808001u)), 0xbf81);  // negative: magnitude rounds the same
  // 1/3 = 0x3eaaaaab -> 0x3eab (0xaaab > 0x8000)
  EXPECT_EQ(f32_to_bf16(1.0f / 3.0f), 0x3eab);
}

TEST(Bf16, InfinityOverflowAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f32_to_bf16(inf), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-inf), 0xff80);
  // FLT_MAX is above the largest bf16 (0x7f7f) by more than half an ulp: rounds to inf (IEEE).
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  // A signalling NaN whose payload is only in the low 16 bits must not become inf.
  for (uint32_t nan : {0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fffffffu}) {
    const uint16_t b = f32_to_bf16(float_of(nan));
    EXPECT_TRUE(std::isnan(bf16_to_f32(b))) << std::hex << nan << " -> " << b;
    EXPECT_EQ(b & 0x8000, (nan >> 16) & 0x8000) << "sign kept";
  }
}

TEST(Bf16, Denormals) {
  EXPECT_EQ(f32_to_bf16(float_of(0x00010000u)), 0x0001);  // smallest bf16 denormal, exact
  EXPECT_EQ(f32_to_bf16(float_of(0x00000001u)), 0x0000);  // smallest float denormal: down
  EXPECT_EQ(f32_to_bf16(float_of(0x00008000u)), 0x0000);  // tie, 0 is even
  EXPECT_EQ(f32_to_bf16(float_of(0x00018000u)), 0x0002);  // tie, 1 is odd: up to 2
  EXPECT_EQ(f32_to_bf16(float_of(0x80008001u)), 0x8001);  // negative denormal above half
  EXPECT_EQ(f32_to_bf16(float_of(0x007fffffu)), 0x0080);  // largest denormal -> smallest normal
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));
}

TEST(Bf16, EveryBf16ValueRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    EXPECT_EQ(bits_of(f), b << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f))));
    } else {
      ASSERT_EQ(f32_to_bf16(f), b);
    }
  }
}

TEST(Bf16, RandomFloatsRoundToTheNearestValue) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = float_of(any(rng));
    if (std::isnan(x) || std::isinf(x)) continue;
    ASSERT_EQ(f32_to_bf16(x), nearest_bf16(x)) << std::hex << bits_of(x);
    ++checked;
  }
  EXPECT_GT(checked, 190000);
}

TEST(F16, EveryHalfMatchesBackendCpu) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    ASSERT_EQ(bits_of(f16_to_f32(static_cast<uint16_t>(h))),
              bits_of(cpu::fp16_to_fp32(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest half subnormal
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
}

// Q8_0 (ggml block_q8_0): f16 d, int8 qs[32]; x = q * d.
TEST(ToBf16, Q8_0HandWrittenBlocks) {
  std::vector<uint8_t> raw;
  put_u16(raw, 0x3800);  // d = 0.5
  for (int j = 0; j < 32; ++j) raw.push_back(static_cast<uint8_t>(static_cast<int8_t>(j - 16)));
  put_u16(raw, 0xc400);  // d = -4
  for (int j = 0; j < 32; ++j) raw.push_back(static_cast<uint8_t>(j == 0 ? -128 : 127 - j));
  const auto v = view("blk.0.attn_q.weight", PLINTH_DTYPE_Q8_0, {64}, raw);
  const std::vector<uint16_t> out = to_bf16(v);
  ASSERT_EQ(out.size(), 64u);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(bf16_to_f32(out[j]), (j - 16) * 0.5f) << j;
  EXPECT_EQ(bf16_to_f32(out[32]), 512.0f);  // -128 * -4
  // x = (127 - j) * -4, at most 7 significant bits: exact in bf16.
  for (int j = 1; j < 32; ++j) EXPECT_EQ(bf16_to_f32(out[32 + j]), (127 - j) * -4.0f) << j;
  const std::vector<float> ref = cpu_dequant(v);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], f32_to_bf16(ref[i])) << i;
}

// Q4_0 (block_q4_0): f16 d, 16 bytes; low nibble of byte j = element j, high = element j + 16;
// x = (nibble - 8) * d.
TEST(ToBf16, Q4_0HandWrittenBlock) {
  std::vector<uint8_t> raw;
  put_u16(raw, 0x4000);  // d = 2
  for (int j = 0; j < 16; ++j) raw.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
  const auto v = view("t", PLINTH_DTYPE_Q4_0, {32}, raw);
  const std::vector<uint16_t> out = to_bf16(v);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(bf16_to_f32(out[j]), static_cast<float>((j - 8) * 2)) << j;
    EXPECT_EQ(bf16_to_f32(out[j + 16]), static_cast<float>((7 - j) * 2)) << j + 16;
  }
  const std::vector<float> ref = cpu_dequant(v);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], f32_to_bf16(ref[i])) << i;
}

// Q4_1 (block_q4_1): f16 d, f16 m, 16 bytes; x = nibble * d + m.
TEST(ToBf16, Q4_1HandWrittenBlock) {
  std::vector<uint8_t> raw;
  put_u16(raw, 0x3400);  // d = 0.25
  put_u16(raw, 0xbc00);  // m = -1
  for (int j = 0; j < 16; ++j) raw.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
  const auto v = view("t", PLINTH_DTYPE_Q4_1, {32}, raw);
  const std::vector<uint16_t> out = to_bf16(v);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(bf16_to_f32(out[j]), j * 0.25f - 1.0f) << j;
    EXPECT_EQ(bf16_to_f32(out[j + 16]), (15 - j) * 0.25f - 1.0f) << j + 16;
  }
  const std::vector<float> ref = cpu_dequant(v);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], f32_to_bf16(ref[i])) << i;
}

TEST(ToBf16, FloatTypes) {
  std::vector<uint8_t> f32;
  for (float x : {1.0f, -0.0f, 1.0f / 3.0f, float_of(0x3f808000u)}) {
    const uint32_t u = bits_of(x);
    for (int b = 0; b < 4; ++b) f32.push_back(static_cast<uint8_t>(u >> (8 * b)));
  }
  EXPECT_EQ(to_bf16(view("f", PLINTH_DTYPE_F32, {4}, f32)),
            (std::vector<uint16_t>{0x3f80, 0x8000, 0x3eab, 0x3f80}));
  std::vector<uint8_t> f16;
  for (uint16_t h : {0x3c00, 0x3555, 0x0001, 0xfc00}) put_u16(f16, h);  // 1, 0.333, 2^-24, -inf
  // 0x3555 = 1.0101010101b * 2^-2 = f32 0x3eaaa000; bf16 keeps 7 fraction bits 0101010, the
  // dropped 101b is above half: up to 0101011 = 0x3eab. 2^-24 = f32 0x33800000 -> 0x3380.
  EXPECT_EQ(to_bf16(view("h", PLINTH_DTYPE_F16, {2, 2}, f16)),
            (std::vector<uint16_t>{0x3f80, 0x3eab, 0x3380, 0xff80}));
  std::vector<uint8_t> bf;
  for (uint16_t b : {0x3f80, 0x7fc1, 0x0001}) put_u16(bf, b);
  EXPECT_EQ(to_bf16(view("b", PLINTH_DTYPE_BF16, {3}, bf)),
            (std::vector<uint16_t>{0x3f80, 0x7fc1, 0x0001}));
}

// Random blocks of every type, 2-D, against backend_cpu's dequantize() bit for bit.
TEST(ToBf16, RandomBlocksMatchBackendCpu) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-2.0f, 2.0f);
  const auto f16_bits = [&](float x) {  // a finite f16 near x (exponent kept small)
    const uint32_t u = bits_of(x);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const int e = std::clamp(static_cast<int>((u >> 23) & 0xff) - 112, 1, 30);
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e) << 10) | ((u >> 13) & 0x3ffu));
  };
  for (plinth_dtype t : {PLINTH_DTYPE_Q8_0, PLINTH_DTYPE_Q4_0, PLINTH_DTYPE_Q4_1, PLINTH_DTYPE_F16,
                         PLINTH_DTYPE_F32, PLINTH_DTYPE_BF16}) {
    const uint64_t cols = 96, rows = 5, blocks = cols / 32 * rows;
    std::vector<uint8_t> raw;
    if (t == PLINTH_DTYPE_Q8_0 || t == PLINTH_DTYPE_Q4_0 || t == PLINTH_DTYPE_Q4_1) {
      for (uint64_t b = 0; b < blocks; ++b) {
        put_u16(raw, f16_bits(scale(rng)));
        if (t == PLINTH_DTYPE_Q4_1) put_u16(raw, f16_bits(scale(rng)));
        const int n = t == PLINTH_DTYPE_Q8_0 ? 32 : 16;
        for (int j = 0; j < n; ++j) raw.push_back(static_cast<uint8_t>(byte(rng)));
      }
    } else {
      const int width = t == PLINTH_DTYPE_F32 ? 4 : 2;
      for (uint64_t i = 0; i < cols * rows; ++i) {
        const float x = scale(rng);
        const uint32_t u = t == PLINTH_DTYPE_F32   ? bits_of(x)
                           : t == PLINTH_DTYPE_F16 ? f16_bits(x)
                                                   : (bits_of(x) >> 16);
        for (int b = 0; b < width; ++b) raw.push_back(static_cast<uint8_t>(u >> (8 * b)));
      }
    }
    const auto v = view("w", t, {cols, rows}, raw);
    const std::vector<uint16_t> out = to_bf16(v);
    const std::vector<float> ref = cpu_dequant(v);
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], f32_to_bf16(ref[i])) << dtype_name(t) << " element " << i;
      // bf16 keeps 8 significant bits: rounding error <= half an ulp <= 2^-8 * |x|.
      ASSERT_LE(std::fabs(bf16_to_f32(out[i]) - ref[i]), std::ldexp(std::fabs(ref[i]), -8));
    }
    std::vector<uint16_t> into(out.size());
    to_bf16_into(v, into.data(), into.size());
    EXPECT_EQ(into, out);
  }
}

// gguf-py's own quantized bytes and dequantized floats (tests/fixtures/quant, written by
// tools/reference/quant_fixture.py with gguf 0.19.0).
TEST(ToBf16, MatchesGgufPyFixture) {
  const std::string dir = std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/quant/";
  std::ifstream index_file(dir + "index.json");
  if (!index_file) GTEST_SKIP() << "skipped: " << dir << "index.json is missing";
  const nlohmann::json index = nlohmann::json::parse(index_file);
  const uint64_t rows = index.at("rows"), cols = index.at("cols");
  const auto read = [&](const std::string& name) {
    std::ifstream in(dir + name, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  };
  // Every type of the format table (the K-quants and IQ4 from random-byte blocks).
  for (const ggml::Format& fmt : ggml::kFormats) {
    const char* name = fmt.name;
    const auto dtype = static_cast<plinth_dtype>(fmt.id);
    const nlohmann::json& e = index.at("types").at(name);
    const std::vector<uint8_t> raw = read(e.at("weights"));
    const std::vector<uint8_t> deq = read(e.at("dequantized"));
    ASSERT_EQ(deq.size(), rows * cols * 4) << name;
    const std::vector<uint16_t> out = to_bf16(view(name, dtype, {cols, rows}, raw));
    for (uint64_t i = 0; i < rows * cols; ++i) {
      float ref;
      std::memcpy(&ref, deq.data() + 4 * i, 4);
      ASSERT_EQ(out[i], f32_to_bf16(ref)) << name << " element " << i;
    }
  }
}

std::string error_of(const plinth_tensor_view& v) {
  try {
    (void)to_bf16(v);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ToBf16, ErrorsNameTheTensorAndTheFix) {
  std::vector<uint8_t> raw(20 * 3, 0);
  auto v = view("blk.7.ffn_up.weight", PLINTH_DTYPE_Q4_1, {96}, raw);
  EXPECT_EQ(error_of(v), "");
  v.dtype = 16;  // ggml IQ2_XXS: not in the format table
  std::string e = error_of(v);
  EXPECT_NE(e.find("blk.7.ffn_up.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("type id 16"), std::string::npos) << e;
  EXPECT_NE(e.find("re-quantize"), std::string::npos) << e;

  v = view("blk.7.ffn_up.weight", PLINTH_DTYPE_Q4_1, {96}, raw);
  v.nbytes = 59;
  e = error_of(v);
  EXPECT_NE(e.find("nbytes = 59"), std::string::npos) << e;
  EXPECT_NE(e.find("need 60 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("Q4_1"), std::string::npos) << e;

  v = view("odd", PLINTH_DTYPE_Q8_0, {48}, raw);  // 48 is not a multiple of 32
  e = error_of(v);
  EXPECT_NE(e.find("dims[0] = 48 is not a multiple of the block size 32"), std::string::npos) << e;

  v = view("empty", PLINTH_DTYPE_F32, {0}, raw);
  EXPECT_NE(error_of(v).find("dims[0] is 0"), std::string::npos);
  v = view("nodims", PLINTH_DTYPE_F32, {}, raw);
  EXPECT_NE(error_of(v).find("n_dims = 0 must be 1..4"), std::string::npos);
  v = view("null", PLINTH_DTYPE_F16, {2}, raw);
  v.nbytes = 4;
  v.data = nullptr;
  EXPECT_NE(error_of(v).find("data is NULL"), std::string::npos);

  v = view("x", PLINTH_DTYPE_F16, {30}, raw);
  std::vector<uint16_t> small(29);
  try {
    to_bf16_into(v, small.data(), small.size());
    ADD_FAILURE() << "no error for a short output buffer";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("holds 29 elements but the tensor has 30"),
              std::string::npos)
        << ex.what();
  }
}

}  // namespace
}  // namespace plinth::cuda
