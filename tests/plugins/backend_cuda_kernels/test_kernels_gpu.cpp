// backend_cuda's kernels on a real GPU against CPU references: the GEMM and argmax, and the
// generic block's feature kernels (prepare_qkv: bias, q/k norm, partial RoPE with a position scale
// and frequency factors, KV store; attention with a sliding window and an attention scale; the
// GELU-tanh gated FFN; the logit scale and softcap) against backend_cpu's functions. Every
// architecture end to end is test_arch_gpu.cpp; the whole-pipeline comparisons live in
// tests/gpu. Every test skips with one line when no CUDA device is present (this machine and CI
// have none).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "activation.hpp"
#include "attention.hpp"
#include "device_math.cuh"
#include "float_ops.hpp"
#include "kernel_test_data.hpp"
#include "kernels.hpp"
#include "kv_storage.hpp"
#include "rope.hpp"
#include "thread_pool.hpp"

namespace k = plinth::cuda::kernels;
namespace m = plinth::cuda::math;
using plinth::cuda::test::OneSequence;
using plinth::cuda::test::randn;

namespace {

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed or returned 0)"

template <class T>
T* dev(const std::vector<T>& h) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, h.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return static_cast<T*>(p);
}

template <class T>
std::vector<T> host(const T* d, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = m::f32_to_bf16(d(rng));
  return v;
}

}  // namespace

// A row's result is bit-identical whatever M (1, 3, 16, 17, 64, 200) it is computed in, and
// agrees with a double-precision CPU product.
TEST(CudaGemm, InvariantRowsDoNotDependOnM) {
  SKIP_WITHOUT_GPU();
  const int K = 576, N = 960, Mmax = 200;
  const auto x = random_bf16(static_cast<size_t>(Mmax) * K, 1);
  const auto w = random_bf16(static_cast<size_t>(N) * K, 2);
  uint16_t* dx = dev(x);
  uint16_t* dw = dev(w);
  float* dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dy, sizeof(float) * Mmax * N), cudaSuccess);
  ASSERT_EQ(k::gemm(k::GemmMode::kInvariant, nullptr, dx, dw, dy, Mmax, N, K, false, nullptr),
            cudaSuccess);
  const auto full = host(dy, static_cast<size_t>(Mmax) * N);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < N; c += 97) {
      double ref = 0;
      for (int i = 0; i < K; ++i) {
        ref += static_cast<double>(m::bf16_to_f32(x[r * K + i])) * m::bf16_to_f32(w[c * K + i]);
      }
      ASSERT_NEAR(full[r * N + c], ref, 1e-3 * (1 + std::fabs(ref))) << r << "," << c;
    }
  }
  for (int M : {1, 3, 16, 17, 64}) {
    ASSERT_EQ(cudaMemset(dy, 0, sizeof(float) * Mmax * N), cudaSuccess);
    ASSERT_EQ(k::gemm(k::GemmMode::kInvariant, nullptr, dx, dw, dy, M, N, K, false, nullptr),
              cudaSuccess);
    const auto part = host(dy, static_cast<size_t>(M) * N);
    ASSERT_EQ(std::memcmp(part.data(), full.data(), part.size() * sizeof(float)), 0) << "M=" << M;
  }
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
}

// Lowest id on ties, -1 for a row with NaN or +inf, as the host's greedy rule.
TEST(CudaArgmax, MatchesHostRule) {
  SKIP_WITHOUT_GPU();
  const int rows = 5, vocab = 49152;
  std::mt19937 rng(3);
  std::vector<float> x(static_cast<size_t>(rows) * vocab);
  for (float& v : x) v = static_cast<float>(rng() % 500) * 0.01f;
  x[2 * vocab + 100] = 9.0f;
  x[2 * vocab + 40000] = 9.0f;  // tie: 100 wins
  x[3 * vocab + 7] = std::nanf("");
  x[4 * vocab + 9] = INFINITY;
  float* dl = dev(x);
  int32_t* di = nullptr;
  ASSERT_EQ(cudaMalloc(&di, sizeof(int32_t) * rows), cudaSuccess);
  ASSERT_EQ(k::argmax_rows(dl, rows, vocab, di, nullptr), cudaSuccess);
  const auto ids = host(di, rows);
  for (int r = 0; r < 3; ++r) {
    int want = 0;
    for (int i = 1; i < vocab; ++i) {
      if (x[r * vocab + i] > x[r * vocab + want]) want = i;
    }
    EXPECT_EQ(ids[r], want) << r;
  }
  EXPECT_EQ(ids[2], 100);
  EXPECT_EQ(ids[3], -1);
  EXPECT_EQ(ids[4], -1);
  cudaFree(dl);
  cudaFree(di);
}

// prepare_qkv with every step on (bias, q/k norm, partial NeoX / normal RoPE at a position scale
// with frequency factors) against backend_cpu's steps in its order (axpy, rmsnorm per head,
// Rope); the KV rows stored are the bf16 of the device's own k and v.
// Parameter: bit 0 NeoX, bit 1 the whole-projection q/k norm (qk_norm_full) instead of per head.
class CudaPrepareQkv : public ::testing::TestWithParam<int> {};

TEST_P(CudaPrepareQkv, BiasQkNormPartialRopeMatchBackendCpu) {
  SKIP_WITHOUT_GPU();
  const bool neox = (GetParam() & 1) != 0, full = (GetParam() & 2) != 0;
  const int nh = 4, nkv = 2, hd = 64, rope_dims = 32, n = 5;
  const int qd = nh * hd, kvd = nkv * hd, stride = qd + 2 * kvd;
  const double theta = 10000.0, scale = 0.5;
  const float eps = 1e-6f;
  const auto qkv = randn(static_cast<size_t>(n) * stride, 200, 2.0f);
  const auto bias = randn(stride, 201, 0.1f);
  const auto qn = randn(full ? nh * hd : hd, 202), kn = randn(full ? nkv * hd : hd, 203);
  std::vector<float> factors(rope_dims / 2);
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 0.5f * static_cast<float>(i);
  std::vector<int32_t> pos = {0, 1, 9, 300, 4000}, slots = {3, -1, 0, 7, 5};
  float* d_qkv = dev(qkv);
  float* d_bias = dev(bias);
  float* d_qn = dev(qn);
  float* d_kn = dev(kn);
  float* d_f = dev(factors);
  int32_t* d_pos = dev(pos);
  int32_t* d_slots = dev(slots);
  std::vector<uint16_t> zero(8 * static_cast<size_t>(kvd), 0);
  uint16_t* d_k = dev(zero);
  uint16_t* d_v = dev(zero);
  k::QkvPrep p;
  p.bias = d_bias;
  p.q_norm = d_qn;
  p.k_norm = d_kn;
  p.qk_full = full;
  p.eps = eps;
  p.neox = neox;
  p.rope_dims = rope_dims;
  p.theta = theta;
  p.scale = scale;
  p.freq_factors = d_f;
  ASSERT_EQ(k::prepare_qkv(d_qkv, n, {nh, nkv, hd, stride}, p, d_pos, d_slots, d_k, d_v, nullptr),
            cudaSuccess);
  const auto got = host(d_qkv, qkv.size());
  const auto kc = host(d_k, zero.size()), vc = host(d_v, zero.size());
  const plinth::cpu::Rope rope(hd, rope_dims, theta, neox, scale, factors);
  for (int t = 0; t < n; ++t) {
    std::vector<float> want(qkv.begin() + t * stride, qkv.begin() + (t + 1) * stride);
    plinth::cpu::axpy(1.0f, bias.data(), want.data(), stride);
    plinth::cpu::rmsnorm(want.data(), qn.data(), full ? 1 : nh, full ? qd : hd, eps, want.data());
    plinth::cpu::rmsnorm(want.data() + qd, kn.data(), full ? 1 : nkv, full ? kvd : hd, eps,
                         want.data() + qd);
    std::vector<float> table(rope_dims);
    rope.tables(&pos[t], 1, table.data());
    rope.apply(want.data(), nh, table.data());
    rope.apply(want.data() + qd, nkv, table.data());
    for (int e = 0; e < stride; ++e) {
      const float g = got[t * stride + e], w = want[e];
      ASSERT_NEAR(g, w, 2e-6f * (1.0f + std::fabs(w))) << "token " << t << " column " << e;
    }
    if (slots[t] < 0) continue;
    for (int e = 0; e < kvd; ++e) {
      ASSERT_EQ(kc[slots[t] * kvd + e], m::f32_to_bf16(got[t * stride + qd + e])) << t << " " << e;
      ASSERT_EQ(vc[slots[t] * kvd + e], m::f32_to_bf16(got[t * stride + qd + kvd + e]));
    }
  }
  for (void* d : {static_cast<void*>(d_qkv), static_cast<void*>(d_bias), static_cast<void*>(d_qn),
                  static_cast<void*>(d_kn), static_cast<void*>(d_f), static_cast<void*>(d_pos),
                  static_cast<void*>(d_slots), static_cast<void*>(d_k), static_cast<void*>(d_v)}) {
    cudaFree(d);
  }
}

INSTANTIATE_TEST_SUITE_P(NormalNeoxPerHeadFull, CudaPrepareQkv, ::testing::Values(0, 1, 2, 3));

// residual_add (post norm and residual scale; scale alone) and to_bf16_rows against backend_cpu's
// rmsnorm, scale and axpy.
TEST(CudaResidualAdd, PostNormScaleAndPlainInputMatchBackendCpu) {
  SKIP_WITHOUT_GPU();
  const int n = 6, d = 640;
  const auto y = randn(static_cast<size_t>(n) * d, 800, 2.0f), w = randn(d, 801);
  const auto x0 = randn(y.size(), 802);
  float* d_y = dev(y);
  float* d_w = dev(w);
  float* d_x = dev(x0);
  for (const bool norm : {true, false}) {
    ASSERT_EQ(cudaMemcpy(d_x, x0.data(), x0.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(k::residual_add(d_y, norm ? d_w : nullptr, n, d, 1e-5f, 0.22f, d_x, nullptr),
              cudaSuccess);
    const auto got = host(d_x, x0.size());
    std::vector<float> p = y, want = x0;
    if (norm) plinth::cpu::rmsnorm(p.data(), w.data(), n, d, 1e-5f, p.data());
    plinth::cpu::scale(p.data(), 0.22f, static_cast<int64_t>(p.size()));
    plinth::cpu::axpy(1.0f, p.data(), want.data(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6f * (std::fabs(want[i]) + std::fabs(p[i])) + 1e-7f)
          << (norm ? "norm " : "plain ") << i;
    }
  }
  uint16_t* d_o = nullptr;
  ASSERT_EQ(cudaMalloc(&d_o, y.size() * 2), cudaSuccess);
  ASSERT_EQ(k::to_bf16_rows(d_y, n, d, d_o, nullptr), cudaSuccess);
  const auto o = host(d_o, y.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(o[i], m::f32_to_bf16(y[i])) << i;
  cudaFree(d_y);
  cudaFree(d_w);
  cudaFree(d_x);
  cudaFree(d_o);
}

// Attention of a sliding-window layer with an attention scale over a paged bf16 cache, against
// backend_cpu's paged_attention over the same (bf16-valued) keys and values with the same window;
// out is bf16, so the bound is bf16's rounding (2^-8 relative) plus the summation order.
TEST(CudaAttention, SlidingWindowAndScaleMatchBackendCpu) {
  SKIP_WITHOUT_GPU();
  const int nh = 4, nkv = 2, hd = 64, bs = 16, n = 40, window = 7;
  const float attn_scale = 0.09f;
  const int qd = nh * hd, kvd = nkv * hd, stride = qd + 2 * kvd;
  const std::vector<int32_t> table = {2, 0, 3};
  std::vector<int32_t> pos(n), slots(n), seq(n, 0);
  plinth::cpu::PagedKvStorage kv(1, nkv, hd, plinth::cpu::KvDtype::kF32);
  kv.allocate(4, bs);
  std::vector<uint16_t> kc(4 * bs * static_cast<size_t>(kvd), 0), vc(kc.size(), 0);
  for (int t = 0; t < n; ++t) {
    pos[t] = t;
    slots[t] = table[t / bs] * bs + t % bs;
    std::vector<float> kr = randn(kvd, 300 + t), vr = randn(kvd, 400 + t);
    for (int e = 0; e < kvd; ++e) {
      kc[slots[t] * kvd + e] = m::f32_to_bf16(kr[e]);
      vc[slots[t] * kvd + e] = m::f32_to_bf16(vr[e]);
      kr[e] = m::bf16_to_f32(kc[slots[t] * kvd + e]);
      vr[e] = m::bf16_to_f32(vc[slots[t] * kvd + e]);
    }
    kv.write(0, slots[t], kr.data(), vr.data());
  }
  const auto qkv = randn(static_cast<size_t>(n) * stride, 500, 2.0f);
  std::vector<float> q(static_cast<size_t>(n) * qd);
  for (int t = 0; t < n; ++t) {
    std::copy(qkv.begin() + t * stride, qkv.begin() + t * stride + qd, q.begin() + t * qd);
  }
  const OneSequence one(pos, slots, table, n, bs);
  const plinth_batch& b = one.batch();
  std::vector<float> want(q.size());
  plinth::cpu::ThreadPool pool(1);
  plinth::cpu::paged_attention(b, kv, 0, {nh, nkv, hd, attn_scale, window}, q.data(), want.data(),
                               pool);
  float* d_qkv = dev(qkv);
  int32_t* d_pos = dev(pos);
  int32_t* d_seq = dev(seq);
  int32_t* d_table = dev(table);
  uint16_t* d_k = dev(kc);
  uint16_t* d_v = dev(vc);
  uint16_t* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, q.size() * 2), cudaSuccess);
  const k::PagedKv pk{d_k, d_v, d_table, 3, bs};
  ASSERT_EQ(k::attention(d_qkv, n, {nh, nkv, hd, stride}, {attn_scale, window}, d_pos, d_seq, pk,
                         d_out, nullptr),
            cudaSuccess);
  const auto out = host(d_out, q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const float g = m::bf16_to_f32(out[i]);
    ASSERT_NEAR(g, want[i], 8e-3f * std::fabs(want[i]) + 1e-4f) << i;
  }
  for (void* d : {static_cast<void*>(d_qkv), static_cast<void*>(d_pos), static_cast<void*>(d_seq),
                  static_cast<void*>(d_table), static_cast<void*>(d_k), static_cast<void*>(d_v),
                  static_cast<void*>(d_out)}) {
    cudaFree(d);
  }
}

// The gated FFN (SiLU and GELU-tanh) and the logit scale + softcap on the device against
// backend_cpu's functions: the bf16 of backend_cpu's value at 99.5% of the elements, else within
// one bf16 step (the device's exp / tanh moved an f32 value across a rounding boundary); logits
// within 4 f32 ulp of the cap.
TEST(CudaGatedFfnAndLogits, MatchBackendCpu) {
  SKIP_WITHOUT_GPU();
  const int n = 7, ffn = 1000;
  const auto gu = randn(static_cast<size_t>(n) * 2 * ffn, 600, 2.0f);
  float* d_gu = dev(gu);
  uint16_t* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, sizeof(uint16_t) * n * ffn), cudaSuccess);
  for (const bool gelu : {false, true}) {
    ASSERT_EQ(k::gated_ffn(d_gu, n, ffn, gelu, d_out, nullptr), cudaSuccess);
    const auto out = host(d_out, static_cast<size_t>(n) * ffn);
    size_t exact = 0;
    for (int r = 0; r < n; ++r) {
      std::vector<float> want(ffn);
      const float* g = gu.data() + r * 2 * ffn;
      if (gelu) {
        plinth::cpu::gelu_tanh_mul(g, g + ffn, ffn, want.data());
      } else {
        plinth::cpu::silu_mul(g, g + ffn, ffn, want.data());
      }
      for (int c = 0; c < ffn; ++c) {
        const uint16_t w = m::f32_to_bf16(want[c]), o = out[r * ffn + c];
        exact += o == w;
        // One bf16 step (2^-7 relative); absolutely 1e-12 where GELU's 1 + tanh cancels to
        // ~1e-17 and the device's tanh, an ulp of 1 away, changes the tiny value entirely.
        ASSERT_NEAR(m::bf16_to_f32(o), want[c], 8e-3f * std::fabs(want[c]) + 1e-12f)
            << (gelu ? "gelu" : "silu") << " " << r << " " << c;
      }
    }
    EXPECT_GE(exact, static_cast<size_t>(n) * ffn * 995 / 1000) << (gelu ? "gelu" : "silu");
  }
  const int vocab = 3000;
  const auto logits = randn(static_cast<size_t>(n) * vocab, 700, 30.0f);
  float* d_l = dev(logits);
  ASSERT_EQ(k::finish_logits(d_l, n, vocab, 0.5f, 10.0f, nullptr), cudaSuccess);
  const auto got = host(d_l, logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float want = std::tanh((logits[i] * 0.5f) * (1.0f / 10.0f)) * 10.0f;
    ASSERT_NEAR(got[i], want, 4.0f * 1.2e-7f * 10.0f) << i;
  }
  cudaFree(d_gu);
  cudaFree(d_out);
  cudaFree(d_l);
}
