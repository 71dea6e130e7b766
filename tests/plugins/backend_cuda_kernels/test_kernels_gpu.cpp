// backend_cuda's GEMM and argmax kernels on a real GPU against CPU references (the full-model
// GPU comparisons live in tests/gpu). Every test skips with one line when no CUDA device is
// present (this machine and CI have none).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "device_math.cuh"
#include "kernels.hpp"

namespace k = plinth::cuda::kernels;
namespace m = plinth::cuda::math;

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
