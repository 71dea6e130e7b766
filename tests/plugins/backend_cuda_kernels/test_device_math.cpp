// backend_cuda's per-element arithmetic (plugins/backend_cuda/kernels/device_math.cuh), compiled
// by g++ as plain inline functions, against backend_cpu's own functions (Rope with partial rotary,
// position scale and frequency factors, rmsnorm incl. per-head q/k norm, silu_mul, gelu_tanh_mul,
// scale, softmax, paged_attention incl. sliding windows and attention scales, the logit softcap
// expression), H2's bf16 conversion and hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "activation.hpp"
#include "attention.hpp"
#include "device_math.cuh"
#include "float_ops.hpp"
#include "kernel_test_data.hpp"
#include "kv_storage.hpp"
#include "rope.hpp"
#include "thread_pool.hpp"
#include "weight_convert.hpp"

namespace m = plinth::cuda::math;
using plinth::cuda::test::OneSequence;
using plinth::cuda::test::randn;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

TEST(DeviceMathBf16, HandValues) {
  EXPECT_EQ(m::f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(m::f32_to_bf16(-2.0f), 0xC000);
  // Ties go to the even bf16: 0x3F808000 is halfway between 0x3F80 and 0x3F81 -> 0x3F80;
  // 0x3F818000 halfway between 0x3F81 and 0x3F82 -> 0x3F82.
  EXPECT_EQ(m::f32_to_bf16(from_bits(0x3F808000u)), 0x3F80);
  EXPECT_EQ(m::f32_to_bf16(from_bits(0x3F818000u)), 0x3F82);
  EXPECT_EQ(m::f32_to_bf16(from_bits(0x3F808001u)), 0x3F81);  // above the tie: up
  // The largest float rounds to +inf; inf stays inf; NaN stays NaN with its sign.
  EXPECT_EQ(m::f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(m::f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(m::f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  const uint16_t nan = m::f32_to_bf16(from_bits(0x7F800001u));  // signalling NaN, low payload
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x007F, 0);
  EXPECT_EQ(m::f32_to_bf16(from_bits(0xFFC00000u)) & 0x8000, 0x8000);
  EXPECT_EQ(m::bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(m::bf16_to_f32(0x4049), 3.140625f);
}

TEST(DeviceMathBf16, MatchesHostConversionOnRandomBits) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const float f = from_bits(rng());
    const uint16_t a = m::f32_to_bf16(f), b = plinth::cuda::f32_to_bf16(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(m::bf16_to_f32(a)));
      EXPECT_TRUE(std::isnan(plinth::cuda::bf16_to_f32(b)));
    } else {
      ASSERT_EQ(a, b) << "bits " << std::hex << bits(f);
    }
    const uint16_t h = static_cast<uint16_t>(rng());
    if (!std::isnan(m::bf16_to_f32(h))) {
      ASSERT_EQ(bits(m::bf16_to_f32(h)), bits(plinth::cuda::bf16_to_f32(h)));
    }
  }
}

TEST(DeviceMathRmsNorm, HandValues) {
  // x = {1, 2, 3, 4}: mean of squares 7.5, eps 0: x / sqrt(7.5).
  const float x[4] = {1, 2, 3, 4};
  float sq = 0.0f;
  for (float v : x) sq = m::add_rn(sq, m::mul_rn(v, v));
  EXPECT_EQ(sq, 30.0f);
  const float inv = m::rms_inv(sq, 4, 0.0f);
  EXPECT_NEAR(inv, 1.0 / std::sqrt(7.5), 1e-7);
  EXPECT_NEAR(m::rms_apply(4.0f, inv, 0.5f), 0.5 * 4.0 / std::sqrt(7.5), 1e-7);
  // eps dominates a zero row: inv = 1 / sqrt(eps).
  EXPECT_NEAR(m::rms_inv(0.0f, 576, 1e-4f), 100.0, 1e-3);
}

TEST(DeviceMathRmsNorm, MatchesBackendCpu) {
  const int d = 576;
  const auto x = randn(3 * d, 11, 2.0f);
  const auto w = randn(d, 12);
  std::vector<float> want(x.size());
  plinth::cpu::rmsnorm(x.data(), w.data(), 3, d, 1e-5f, want.data());
  for (int r = 0; r < 3; ++r) {
    const float* xr = x.data() + r * d;
    float sq = 0.0f;
    for (int i = 0; i < d; ++i) sq = m::add_rn(sq, m::mul_rn(xr[i], xr[i]));
    const float inv = m::rms_inv(sq, d, 1e-5f);
    for (int i = 0; i < d; ++i) {
      // The CPU's sum of squares may be vectorized (another summation order): relative 1e-6.
      const float got = m::rms_apply(xr[i], inv, w[i]);
      ASSERT_NEAR(got, want[r * d + i], 1e-6f * std::fabs(want[r * d + i]) + 1e-7f)
          << r << "," << i;
    }
  }
}

class DeviceMathRope : public ::testing::TestWithParam<bool> {};

TEST_P(DeviceMathRope, MatchesBackendCpuBitForBit) {
  const bool neox = GetParam();
  const int hd = 64, heads = 3;
  const double theta = 100000.0;  // SmolLM2's rope_theta
  const plinth::cpu::Rope rope(hd, theta, neox);
  const int32_t positions[] = {0, 1, 17, 300, 8191};
  for (int32_t pos : positions) {
    std::vector<float> table(hd);
    rope.tables(&pos, 1, table.data());
    auto want = randn(static_cast<size_t>(heads * hd), 20 + pos);
    auto got = want;
    rope.apply(want.data(), heads, table.data());
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < hd / 2; ++i) {
        float c = 0, s = 0;
        m::rope_cos_sin(pos, m::rope_inv_freq(i, hd, theta, 1.0, 1.0f), &c, &s);
        ASSERT_EQ(bits(c), bits(table[2 * i])) << "pos " << pos << " pair " << i;
        ASSERT_EQ(bits(s), bits(table[2 * i + 1])) << "pos " << pos << " pair " << i;
        int ia = 0, ib = 0;
        m::rope_pair(i, hd, neox, &ia, &ib);
        m::rope_rotate(&got[h * hd + ia], &got[h * hd + ib], c, s);
      }
    }
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(bits(got[e]), bits(want[e])) << pos << " " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(NormalAndNeox, DeviceMathRope, ::testing::Values(false, true));

TEST(DeviceMathRopeHand, PairsAndAngles) {
  int ia = 0, ib = 0;
  m::rope_pair(5, 64, false, &ia, &ib);
  EXPECT_EQ(ia, 10);
  EXPECT_EQ(ib, 11);
  m::rope_pair(5, 64, true, &ia, &ib);
  EXPECT_EQ(ia, 5);
  EXPECT_EQ(ib, 37);
  float c = 0, s = 0;
  m::rope_cos_sin(0, m::rope_inv_freq(3, 64, 10000.0, 1.0, 1.0f), &c, &s);  // position 0: identity
  EXPECT_EQ(c, 1.0f);
  EXPECT_EQ(s, 0.0f);
  m::rope_cos_sin(1, m::rope_inv_freq(0, 64, 10000.0, 1.0, 1.0f), &c, &s);  // pair 0: 1 rad
  EXPECT_FLOAT_EQ(c, static_cast<float>(std::cos(1.0)));
  EXPECT_FLOAT_EQ(s, static_cast<float>(std::sin(1.0)));
  m::rope_cos_sin(2, m::rope_inv_freq(16, 64, 10000.0, 1.0, 1.0f), &c, &s);  // 2 * 10000^-0.5
  EXPECT_FLOAT_EQ(c, static_cast<float>(std::cos(0.02)));
  // Partial rotary: the exponent's denominator is rope_dims (16 of 64): pair 4 of 16 dims has
  // 10000^(-8/16) = 0.01; position scale 0.125 and a frequency factor 8 divide it further.
  EXPECT_DOUBLE_EQ(m::rope_inv_freq(4, 16, 10000.0, 1.0, 1.0f), 0.01);
  EXPECT_DOUBLE_EQ(m::rope_inv_freq(4, 16, 10000.0, 0.125, 8.0f), 0.01 * 0.125 / 8.0);
  m::rope_pair(3, 16, true, &ia, &ib);  // NeoX halves of the rotated part: (3, 3 + 8)
  EXPECT_EQ(ia, 3);
  EXPECT_EQ(ib, 11);
  float a = 1.0f, b = 0.0f;
  m::rope_rotate(&a, &b, 0.0f, 1.0f);  // quarter turn: (1, 0) -> (0, 1)
  EXPECT_EQ(a, 0.0f);
  EXPECT_EQ(b, 1.0f);
}

TEST(DeviceMathSwiglu, HandValuesAndBackendCpu) {
  EXPECT_EQ(m::silu_mul(0.0f, 5.0f), 0.0f);
  EXPECT_NEAR(m::silu_mul(1.0f, 2.0f), 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(m::silu_mul(-20.0f, 1.0f), -20.0 / (1.0 + std::exp(20.0)), 1e-12);
  const auto g = randn(1536, 30, 3.0f), u = randn(1536, 31);
  std::vector<float> want(g.size());
  plinth::cpu::silu_mul(g.data(), u.data(), static_cast<int64_t>(g.size()), want.data());
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(m::silu_mul(g[i], u[i]), want[i], 2e-6f * std::fabs(want[i]) + 1e-7f) << i;
  }
}

// The attention kernel's reduction for one query: keys j = w mod kWarps per warp, each warp an
// online softmax, merged in warp order (kernels/attention.cu), over score/value rows.
std::vector<float> online_attention(const std::vector<float>& scores,
                                    const std::vector<std::vector<float>>& v, int warps) {
  const size_t hd = v.empty() ? 0 : v[0].size();
  std::vector<m::SoftmaxState> st(static_cast<size_t>(warps), m::softmax_empty());
  std::vector<std::vector<float>> acc(static_cast<size_t>(warps), std::vector<float>(hd, 0.0f));
  for (size_t j = 0; j < scores.size(); ++j) {
    const size_t w = j % static_cast<size_t>(warps);
    float alpha = 0, p = 0;
    m::softmax_step(&st[w], scores[j], &alpha, &p);
    for (size_t e = 0; e < hd; ++e) acc[w][e] = std::fma(p, v[j][e], acc[w][e] * alpha);
  }
  for (size_t w = 1; w < static_cast<size_t>(warps); ++w) {
    float fa = 0, fb = 0;
    m::softmax_merge(&st[0], st[w], &fa, &fb);
    for (size_t e = 0; e < hd; ++e) acc[0][e] = std::fma(acc[w][e], fb, acc[0][e] * fa);
  }
  for (float& x : acc[0]) x = m::div_rn(x, st[0].l);
  return acc[0];
}

TEST(DeviceMathSoftmax, OnlineEqualsBackendCpuSoftmax) {
  for (int ctx : {1, 2, 3, 5, 37, 300}) {
    const auto sc = randn(static_cast<size_t>(ctx), 40 + ctx, 4.0f);
    std::vector<std::vector<float>> v;
    for (int j = 0; j < ctx; ++j) v.push_back(randn(64, 100 + j));
    std::vector<float> p = sc;
    plinth::cpu::softmax(p.data(), ctx);
    std::vector<float> want(64, 0.0f);
    for (int j = 0; j < ctx; ++j) {
      for (int e = 0; e < 64; ++e) want[e] += p[j] * v[j][e];
    }
    for (int warps : {1, 4}) {
      const auto got = online_attention(sc, v, warps);
      for (int e = 0; e < 64; ++e) {
        ASSERT_NEAR(got[e], want[e], 2e-5f * (1.0f + std::fabs(want[e])))
            << "ctx " << ctx << " warps " << warps << " e " << e;
      }
    }
  }
}

using Rows = std::vector<std::vector<float>>;

// The attention kernel's per-query path on the host: for every new token t and head h, the fma
// dot products of q with the keys t sees (from attn_first_key: all earlier ones, or the last
// `window`), GQA head h reading kv head h / (heads / kv_heads), each scaled_score'd, reduced by
// online_attention over 4 warps; every element within 2e-5 (relative) of `want`, backend_cpu's
// paged_attention. krows / vrows: [position][kv_heads * head_dim].
void expect_kernel_attention(const plinth::cpu::AttentionShape& shape, const std::vector<float>& q,
                             const Rows& krows, const Rows& vrows, const std::vector<int32_t>& pos,
                             float scale, int window, const std::vector<float>& want) {
  const int n_heads = static_cast<int>(shape.n_heads), hd = static_cast<int>(shape.head_dim);
  const int group = static_cast<int>(shape.n_heads / shape.n_kv_heads);
  for (size_t t = 0; t < pos.size(); ++t) {
    for (int h = 0; h < n_heads; ++h) {
      const int g = h / group;
      const size_t row = (t * n_heads + h) * hd;
      std::vector<float> sc;
      Rows vv;
      for (int j = m::attn_first_key(pos[t], window); j <= pos[t]; ++j) {
        float d = 0;
        for (int e = 0; e < hd; ++e) d = std::fma(q[row + e], krows[j][g * hd + e], d);
        sc.push_back(m::scaled_score(d, scale));
        vv.emplace_back(vrows[j].begin() + g * hd, vrows[j].begin() + (g + 1) * hd);
      }
      ASSERT_EQ(sc.size(),
                static_cast<size_t>(window > 0 ? std::min(pos[t] + 1, window) : pos[t] + 1));
      const auto got = online_attention(sc, vv, 4);
      for (int e = 0; e < hd; ++e) {
        const float w = want[row + e];
        ASSERT_NEAR(got[e], w, 2e-5f * (1.0f + std::fabs(w))) << t << " " << h << " " << e;
      }
    }
  }
}

TEST(DeviceMathSoftmax, HandValues) {
  // Equal scores: the plain mean of the values. One score: that value exactly.
  std::vector<std::vector<float>> v = {{1.0f}, {2.0f}, {6.0f}};
  EXPECT_FLOAT_EQ(online_attention({0.5f, 0.5f, 0.5f}, v, 4)[0], 3.0f);
  EXPECT_EQ(online_attention({-7.0f}, {{9.0f}}, 4)[0], 9.0f);
  // Scores ln 1, ln 3 -> weights 1/4, 3/4 of {4, 8} = 7.
  EXPECT_NEAR(online_attention({0.0f, std::log(3.0f)}, {{4.0f}, {8.0f}}, 4)[0], 7.0f, 1e-6f);
  m::SoftmaxState st = m::softmax_empty();
  float alpha = 1, p = 0;
  m::softmax_step(&st, 2.0f, &alpha, &p);
  EXPECT_EQ(alpha, 0.0f);  // empty state: nothing to rescale
  EXPECT_EQ(p, 1.0f);
  EXPECT_EQ(m::scaled_score(8.0f, 0.125f), 1.0f);
}

// The kernel's per-query reduction over a real paged cache equals backend_cpu's paged_attention
// (GQA head mapping, causal range, block-table addressing).
TEST(DeviceMathAttention, PagedGqaMatchesBackendCpu) {
  const int hd = 64, n_heads = 9, n_kv = 3, bs = 16, ctx_len = 40;
  plinth::cpu::PagedKvStorage kv(1, n_kv, hd, plinth::cpu::KvDtype::kF32);
  kv.allocate(8, bs);
  const std::vector<int32_t> table = {5, 2, 7};  // non-contiguous blocks
  std::vector<std::vector<float>> krows, vrows;
  for (int j = 0; j < ctx_len; ++j) {
    krows.push_back(randn(n_kv * hd, 500 + j));
    vrows.push_back(randn(n_kv * hd, 900 + j));
    const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
    kv.write(0, slot, krows.back().data(), vrows.back().data());
  }
  // One sequence, a prefill chunk of its last 3 tokens (positions 37..39) over 37 cached ones.
  const int n = 3;
  std::vector<int32_t> pos = {37, 38, 39}, slots(n);
  for (int t = 0; t < n; ++t) slots[t] = table[pos[t] / bs] * bs + pos[t] % bs;
  const OneSequence one(pos, slots, table, ctx_len, bs);
  const plinth_batch& b = one.batch();
  const auto q = randn(static_cast<size_t>(n * n_heads * hd), 77);
  std::vector<float> want(q.size());
  plinth::cpu::ThreadPool pool(1);
  plinth::cpu::paged_attention(b, kv, 0, {n_heads, n_kv, hd}, q.data(), want.data(), pool);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  expect_kernel_attention({n_heads, n_kv, hd}, q, krows, vrows, pos, scale, 0, want);
}

// Partial rotary, a position scale (per-layer RoPE, linear scaling) and RoPE frequency factors
// (Llama 3's rope_freqs.weight, here random in [1, 8]) in both modes: the device functions give
// backend_cpu's Rope bit for bit, and elements past rope_dims pass through untouched.
TEST_P(DeviceMathRope, PartialScaledWithFactorsMatchesBackendCpuBitForBit) {
  const bool neox = GetParam();
  const int hd = 96, rope_dims = 32, heads = 2;  // phi3-like: a third of the head rotated
  const double theta = 500000.0, scale = 0.125;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> fd(1.0f, 8.0f);
  std::vector<float> factors(rope_dims / 2);
  for (float& f : factors) f = fd(rng);
  const plinth::cpu::Rope rope(hd, rope_dims, theta, neox, scale, factors);
  for (const int32_t pos : {0, 1, 7, 511, 4095, 131071}) {
    std::vector<float> table(rope_dims);
    rope.tables(&pos, 1, table.data());
    auto want = randn(static_cast<size_t>(heads * hd), 60 + static_cast<uint32_t>(pos));
    auto got = want;
    const auto before = want;
    rope.apply(want.data(), heads, table.data());
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < rope_dims / 2; ++i) {
        float c = 0, s = 0;
        m::rope_cos_sin(pos, m::rope_inv_freq(i, rope_dims, theta, scale, factors[i]), &c, &s);
        ASSERT_EQ(bits(c), bits(table[2 * i])) << "pos " << pos << " pair " << i;
        ASSERT_EQ(bits(s), bits(table[2 * i + 1])) << "pos " << pos << " pair " << i;
        int ia = 0, ib = 0;
        m::rope_pair(i, rope_dims, neox, &ia, &ib);
        ASSERT_LT(ia, rope_dims);
        ASSERT_LT(ib, rope_dims);
        m::rope_rotate(&got[h * hd + ia], &got[h * hd + ib], c, s);
      }
      for (int e = rope_dims; e < hd; ++e) {
        ASSERT_EQ(bits(got[h * hd + e]), bits(before[h * hd + e])) << "pass-through " << e;
      }
    }
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(bits(got[e]), bits(want[e])) << pos << " " << e;
  }
}

TEST(DeviceMathGelu, MatchesBackendCpuBitForBitAndHandValues) {
  // The same double arithmetic as backend_cpu's gelu_tanh_mul, operation for operation.
  auto g = randn(20000, 70, 4.0f);
  const auto u = randn(g.size(), 71);
  g[0] = 0.0f;
  g[1] = 30.0f;
  g[2] = -30.0f;
  g[3] = 1e-30f;
  std::vector<float> want(g.size());
  plinth::cpu::gelu_tanh_mul(g.data(), u.data(), static_cast<int64_t>(g.size()), want.data());
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_EQ(bits(m::gelu_tanh_mul(g[i], u[i])), bits(want[i])) << i << " gate " << g[i];
  }
  EXPECT_EQ(m::gelu_tanh_mul(0.0f, 3.0f), 0.0f);
  EXPECT_EQ(m::gelu_tanh_mul(30.0f, 2.0f), 60.0f);  // gelu(x) = x for large x
  EXPECT_EQ(m::gelu_tanh_mul(-30.0f, 2.0f), 0.0f);
  // gelu_tanh(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.841191990607...
  EXPECT_NEAR(m::gelu_tanh_mul(1.0f, 1.0f), 0.8411919906, 1e-7);
}

TEST(DeviceMathScales, EmbeddingScaleAndLogitSoftcap) {
  // Embedding: the bf16 value times the scale in f32 (backend_cpu: dequantize, then scale()).
  const float sqrt_d = std::sqrt(640.0f);  // Gemma 3 270M's embed_scale
  for (const uint16_t h :
       {uint16_t{0x3F80}, uint16_t{0xC049}, uint16_t{0x0001}, uint16_t{0x7F7F}}) {
    const float v = m::bf16_to_f32(h);
    float cpu = v;
    plinth::cpu::scale(&cpu, sqrt_d, 1);
    EXPECT_EQ(bits(m::embed_scaled(h, sqrt_d)), bits(cpu)) << std::hex << h;
    EXPECT_EQ(bits(m::embed_scaled(h, 1.0f)), bits(v));  // no scale: exact
  }
  // Softcap: backend_cpu's finish_logits expression, tanh(v * (1 / c)) * c after v * scale.
  const auto v = randn(5000, 80, 40.0f);
  for (const float cap : {30.0f, 5.0f}) {
    for (const float sc : {1.0f, 0.25f}) {
      const float inv = 1.0f / cap;
      for (const float x : v) {
        const float y = x * sc;
        const float want = std::tanh(y * inv) * cap;
        ASSERT_EQ(bits(m::finish_logit(x, sc, cap)), bits(want)) << x << " cap " << cap;
        // Against the exact value: within a few ulp of c.
        ASSERT_NEAR(m::finish_logit(x, sc, cap),
                    static_cast<double>(cap) * std::tanh(static_cast<double>(x) * sc / cap),
                    4e-7 * cap);
      }
    }
  }
  EXPECT_EQ(m::finish_logit(0.0f, 1.0f, 30.0f), 0.0f);
  EXPECT_EQ(m::finish_logit(1e6f, 1.0f, 30.0f), 30.0f);  // saturates at the cap
  EXPECT_EQ(m::finish_logit(-1e6f, 1.0f, 30.0f), -30.0f);
  EXPECT_EQ(m::finish_logit(3.0f, 0.5f, 0.0f), 1.5f);                  // scale alone
  EXPECT_EQ(bits(m::finish_logit(-7.25f, 1.0f, 0.0f)), bits(-7.25f));  // neither: unchanged
}

// The q/k norm of prepare_qkv: one warp per head, each lane summing its elements e = lane + 32 i
// in order, a xor butterfly across the 32 lanes, then rms_inv / rms_apply; equals backend_cpu's
// rmsnorm over each head (rows of head_dim) to within its summation order.
TEST(DeviceMathQkNorm, PerHeadRmsNormMatchesBackendCpu) {
  for (const int hd : {32, 64, 128, 256}) {
    const int heads = 6;
    const auto x = randn(static_cast<size_t>(heads * hd), 90 + hd, 3.0f);
    const auto w = randn(static_cast<size_t>(hd), 91);
    std::vector<float> want(x.size());
    plinth::cpu::rmsnorm(x.data(), w.data(), heads, hd, 1e-6f, want.data());
    for (int h = 0; h < heads; ++h) {
      const float* xh = x.data() + h * hd;
      float lane[32];
      for (int l = 0; l < 32; ++l) {
        lane[l] = 0.0f;
        for (int e = l; e < hd; e += 32) lane[l] = m::add_rn(lane[l], m::mul_rn(xh[e], xh[e]));
      }
      for (int off = 16; off > 0; off >>= 1) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = m::add_rn(lane[l], lane[l ^ off]);
        std::copy(next, next + 32, lane);
      }
      for (int l = 1; l < 32; ++l) ASSERT_EQ(bits(lane[l]), bits(lane[0]));  // every lane agrees
      const float inv = m::rms_inv(lane[0], hd, 1e-6f);
      for (int e = 0; e < hd; ++e) {
        const float got = m::rms_apply(xh[e], inv, w[e]);
        const float ref = want[h * hd + e];
        ASSERT_NEAR(got, ref, 1e-6f * std::fabs(ref) + 1e-7f) << hd << " " << h << " " << e;
      }
    }
  }
}

// The whole-projection q/k norm (qk_norm_full) and the post-norm residual add: a block sum over
// 128 threads (per thread e = tid + 128 i in order, a xor butterfly per warp, warp sums in warp
// order: elementwise.cu's block_sum) then rms_inv / rms_apply, times the residual scale and
// added; equals backend_cpu's rmsnorm of one row, scale() and axpy to within its summation order.
TEST(DeviceMathQkNorm, WholeProjectionNormAndResidualAddMatchBackendCpu) {
  for (const int d : {96, 128, 576, 2304}) {
    const auto x = randn(static_cast<size_t>(d), 95 + d, 3.0f);
    const auto w = randn(static_cast<size_t>(d), 96);
    auto resid = randn(static_cast<size_t>(d), 97);
    const float rs = 0.22f;  // granite-like residual_multiplier
    std::vector<float> want(x.size());
    plinth::cpu::rmsnorm(x.data(), w.data(), 1, d, 1e-6f, want.data());
    plinth::cpu::scale(want.data(), rs, d);
    std::vector<float> want_x = resid;
    plinth::cpu::axpy(1.0f, want.data(), want_x.data(), d);
    constexpr int kThreads = 128;
    float part[kThreads];
    for (int t = 0; t < kThreads; ++t) {
      part[t] = 0.0f;
      for (int e = t; e < d; e += kThreads) part[t] = m::add_rn(part[t], m::mul_rn(x[e], x[e]));
    }
    float total = 0.0f;
    for (int wp = 0; wp < kThreads / 32; ++wp) {
      float lane[32];
      std::copy(part + wp * 32, part + wp * 32 + 32, lane);
      for (int off = 16; off > 0; off >>= 1) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ off];
        std::copy(next, next + 32, lane);
      }
      total = m::add_rn(total, lane[0]);
    }
    const float inv = m::rms_inv(total, d, 1e-6f);
    for (int e = 0; e < d; ++e) {
      const float got = m::add_rn(resid[e], m::mul_rn(m::rms_apply(x[e], inv, w[e]), rs));
      ASSERT_NEAR(got, want_x[e], 1e-6f * (std::fabs(want_x[e]) + std::fabs(want[e])) + 1e-7f)
          << d << " " << e;
    }
  }
}

TEST(DeviceMathWindow, FirstKeyRule) {
  EXPECT_EQ(m::attn_first_key(0, 0), 0);
  EXPECT_EQ(m::attn_first_key(5000, 0), 0);  // no window: full causal
  EXPECT_EQ(m::attn_first_key(3, 8), 0);     // fewer than w keys so far
  EXPECT_EQ(m::attn_first_key(7, 8), 0);     // exactly w keys: 0..7
  EXPECT_EQ(m::attn_first_key(8, 8), 1);     // p - w < j <= p
  EXPECT_EQ(m::attn_first_key(20, 8), 13);
  EXPECT_EQ(m::attn_first_key(20, 1), 20);  // a window of one: the token itself
  for (int32_t p = 0; p < 600; ++p) {
    for (const int32_t w : {1, 2, 8, 512}) {
      const int32_t j0 = m::attn_first_key(p, w);
      EXPECT_EQ(p - j0 + 1, std::min(p + 1, w)) << p << " " << w;  // w keys once p >= w - 1
    }
  }
}

// The windowed attention of a sliding-window layer with the model's attention scale: the
// kernel's reduction from attn_first_key over the paged cache equals backend_cpu's
// paged_attention with the same window (masking, whatever the cache still holds).
TEST(DeviceMathAttention, SlidingWindowAndScaleMatchBackendCpu) {
  const int hd = 32, n_heads = 4, n_kv = 1, bs = 16, ctx_len = 45, window = 8;
  const float attn_scale = 0.0625f;  // not 1 / sqrt(32)
  plinth::cpu::PagedKvStorage kv(1, n_kv, hd, plinth::cpu::KvDtype::kF32);
  kv.allocate(6, bs);
  const std::vector<int32_t> table = {4, 0, 3};
  std::vector<std::vector<float>> krows, vrows;
  for (int j = 0; j < ctx_len; ++j) {
    krows.push_back(randn(n_kv * hd, 1500 + j));
    vrows.push_back(randn(n_kv * hd, 1900 + j));
    const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
    kv.write(0, slot, krows.back().data(), vrows.back().data());
  }
  // A prefill chunk over positions 3..44: early ones see fewer than `window` keys.
  const int n = ctx_len - 3;
  std::vector<int32_t> pos(n), slots(n);
  for (int t = 0; t < n; ++t) {
    pos[t] = 3 + t;
    slots[t] = table[pos[t] / bs] * bs + pos[t] % bs;
  }
  const OneSequence one(pos, slots, table, ctx_len, bs);
  const plinth_batch& b = one.batch();
  const auto q = randn(static_cast<size_t>(n * n_heads * hd), 177, 2.0f);
  std::vector<float> want(q.size());
  plinth::cpu::ThreadPool pool(1);
  plinth::cpu::paged_attention(b, kv, 0, {n_heads, n_kv, hd, attn_scale, window}, q.data(),
                               want.data(), pool);
  expect_kernel_attention({n_heads, n_kv, hd}, q, krows, vrows, pos, attn_scale, window, want);
}

TEST(DeviceMathArgmax, LowestIdWinsTiesAndNaNNeverWins) {
  EXPECT_TRUE(m::argmax_better(2.0f, 9, 1.0f, 0));
  EXPECT_TRUE(m::argmax_better(1.0f, 3, 1.0f, 7));  // tie: lower id
  EXPECT_FALSE(m::argmax_better(1.0f, 7, 1.0f, 3));
  EXPECT_FALSE(m::argmax_better(std::nanf(""), 0, -1.0f, 5));
  EXPECT_TRUE(m::argmax_better(-INFINITY, 0, -INFINITY, INT32_MAX));
  // The kernel's reduction (256 strided threads, then a halving tree) on rows with planted ties
  // gives the host's argmax (strict >, first index).
  std::mt19937 rng(5);
  for (int row = 0; row < 50; ++row) {
    std::vector<float> x(49152);
    for (float& v : x) v = static_cast<float>(rng() % 1000) * 0.01f;  // many ties
    size_t want = 0;
    for (size_t i = 1; i < x.size(); ++i) {
      if (x[i] > x[want]) want = i;
    }
    std::vector<float> bv(256, -INFINITY);
    std::vector<int32_t> bi(256, INT32_MAX);
    for (int th = 0; th < 256; ++th) {
      for (int i = th; i < static_cast<int>(x.size()); i += 256) {
        if (m::argmax_better(x[i], i, bv[th], bi[th])) {
          bv[th] = x[i];
          bi[th] = i;
        }
      }
    }
    for (int stride = 128; stride > 0; stride >>= 1) {
      for (int th = 0; th < stride; ++th) {
        if (m::argmax_better(bv[th + stride], bi[th + stride], bv[th], bi[th])) {
          bv[th] = bv[th + stride];
          bi[th] = bi[th + stride];
        }
      }
    }
    ASSERT_EQ(bi[0], static_cast<int32_t>(want)) << row;
  }
}
