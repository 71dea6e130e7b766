// backend_cuda's per-element arithmetic (plugins/backend_cuda/kernels/device_math.cuh), compiled
// by g++ as plain inline functions, against backend_cpu's own functions (Rope, rmsnorm,
// silu_mul, softmax, paged_attention), H2's bf16 conversion and hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "attention.hpp"
#include "device_math.cuh"
#include "float_ops.hpp"
#include "kv_storage.hpp"
#include "rope.hpp"
#include "thread_pool.hpp"
#include "weight_convert.hpp"

namespace m = plinth::cuda::math;

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

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
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
        m::rope_cos_sin(pos, i, hd, theta, &c, &s);
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
  m::rope_cos_sin(0, 3, 64, 10000.0, &c, &s);  // position 0: identity
  EXPECT_EQ(c, 1.0f);
  EXPECT_EQ(s, 0.0f);
  m::rope_cos_sin(1, 0, 64, 10000.0, &c, &s);  // pair 0 turns 1 rad per position
  EXPECT_FLOAT_EQ(c, static_cast<float>(std::cos(1.0)));
  EXPECT_FLOAT_EQ(s, static_cast<float>(std::sin(1.0)));
  m::rope_cos_sin(2, 16, 64, 10000.0, &c, &s);  // 2 * 10000^(-1/2) = 0.02 rad
  EXPECT_FLOAT_EQ(c, static_cast<float>(std::cos(0.02)));
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
  std::vector<int32_t> tokens(n, 0), pos = {37, 38, 39}, qs = {0, n}, lens = {ctx_len}, slots(n);
  for (int t = 0; t < n; ++t) slots[t] = table[pos[t] / bs] * bs + pos[t] % bs;
  plinth_batch b{};
  b.struct_size = sizeof b;
  b.num_tokens = n;
  b.num_seqs = 1;
  b.token_ids = tokens.data();
  b.positions = pos.data();
  b.query_start = qs.data();
  b.seq_lens = lens.data();
  b.block_tables = table.data();
  b.max_blocks_per_seq = 3;
  b.block_size = bs;
  b.slot_mapping = slots.data();
  const auto q = randn(static_cast<size_t>(n * n_heads * hd), 77);
  std::vector<float> want(q.size());
  plinth::cpu::ThreadPool pool(1);
  plinth::cpu::paged_attention(b, kv, 0, {n_heads, n_kv, hd}, q.data(), want.data(), pool);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int t = 0; t < n; ++t) {
    for (int h = 0; h < n_heads; ++h) {
      const int g = h / (n_heads / n_kv);
      std::vector<float> sc;
      std::vector<std::vector<float>> vv;
      for (int j = 0; j <= pos[t]; ++j) {
        float d = 0;
        for (int e = 0; e < hd; ++e)
          d = std::fma(q[(t * n_heads + h) * hd + e], krows[j][g * hd + e], d);
        sc.push_back(m::scaled_score(d, scale));
        vv.emplace_back(vrows[j].begin() + g * hd, vrows[j].begin() + (g + 1) * hd);
      }
      const auto got = online_attention(sc, vv, 4);
      for (int e = 0; e < hd; ++e) {
        const float w = want[(t * n_heads + h) * hd + e];
        ASSERT_NEAR(got[e], w, 2e-5f * (1.0f + std::fabs(w))) << t << " " << h << " " << e;
      }
    }
  }
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
