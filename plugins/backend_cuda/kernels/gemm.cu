// bf16 GEMM of backend_cuda (kernels.hpp: gemm): the batch-invariant tiled kernel and the cuBLAS
// path. The invariant kernel computes every output y[r, c] as one thread's chain
// acc = fmaf(x[r, k], w[c, k], acc) for k = 0, 1, ..., K-1 (no split-K, no tree), so the result
// depends only on row r of x and row c of w: neither on M nor on the tile shape chosen for M,
// which is why the small-M shape (more blocks along N for decode) may differ from the large one.
#include "device_math.cuh"
#include "kernels.hpp"

namespace plinth::cuda::kernels {
namespace {

namespace m = plinth::cuda::math;

constexpr int kThreadsX = 16, kThreadsY = 16;  // 256 threads: (ty, tx)
constexpr int kBK = 32;                        // k per shared-memory stage

// Tile BM = 16 * TM rows of x by BN = 16 * TN rows of w; thread (ty, tx) owns rows ty + 16 i
// and columns tx + 16 j of the tile.
template <int TM, int TN>
__global__ void __launch_bounds__(kThreadsX* kThreadsY)
    gemm_kernel(const uint16_t* __restrict__ x, const uint16_t* __restrict__ w,
                float* __restrict__ y, int M, int N, int K, bool accumulate) {
  constexpr int BM = kThreadsY * TM, BN = kThreadsX * TN;
  __shared__ float xs[kBK][BM + 1];
  __shared__ float ws[kBK][BN + 1];
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }
  for (int k0 = 0; k0 < K; k0 += kBK) {
    const int kn = K - k0 < kBK ? K - k0 : kBK;  // bounded, not zero-padded: the chain is exact
    for (int idx = tid; idx < BM * kBK; idx += kThreadsX * kThreadsY) {
      const int r = idx / kBK, c = idx % kBK;
      const int gr = m0 + r;
      xs[c][r] =
          (gr < M && c < kn) ? m::bf16_to_f32(x[static_cast<int64_t>(gr) * K + k0 + c]) : 0.0f;
    }
    for (int idx = tid; idx < BN * kBK; idx += kThreadsX * kThreadsY) {
      const int r = idx / kBK, c = idx % kBK;
      const int gr = n0 + r;
      ws[c][r] =
          (gr < N && c < kn) ? m::bf16_to_f32(w[static_cast<int64_t>(gr) * K + k0 + c]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kn; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = xs[kk][threadIdx.y + kThreadsY * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = ws[kk][threadIdx.x + kThreadsX * j];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = m0 + threadIdx.y + kThreadsY * i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int c = n0 + threadIdx.x + kThreadsX * j;
      if (c >= N) continue;
      float* dst = y + static_cast<int64_t>(r) * N + c;
      *dst = accumulate ? m::add_rn(*dst, acc[i][j]) : acc[i][j];
    }
  }
}

template <int TM, int TN>
void launch(const uint16_t* x, const uint16_t* w, float* y, int M, int N, int K, bool accumulate,
            cudaStream_t stream) {
  constexpr int BM = kThreadsY * TM, BN = kThreadsX * TN;
  const dim3 grid(static_cast<unsigned>((N + BN - 1) / BN),
                  static_cast<unsigned>((M + BM - 1) / BM));
  gemm_kernel<TM, TN>
      <<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(x, w, y, M, N, K, accumulate);
}

}  // namespace

cudaError_t gemm(GemmMode mode, cublasHandle_t blas, const uint16_t* x, const uint16_t* w, float* y,
                 int M, int N, int K, bool accumulate, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return cudaGetLastError();
  if (mode == GemmMode::kInvariant) {
    // Decode-sized M: 16-row tiles, 32 outputs wide (more blocks along N); else 64 x 64.
    if (M <= 16) {
      launch<1, 2>(x, w, y, M, N, K, accumulate, stream);
    } else {
      launch<4, 4>(x, w, y, M, N, K, accumulate, stream);
    }
    return cudaGetLastError();
  }
  // Column-major view: y^T [N, M] = w [K, N]^T * x^T [K, M] (both row-major inputs are their
  // transposes' column-major storage).
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const cublasStatus_t st = cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, w,
                                         CUDA_R_16BF, K, x, CUDA_R_16BF, K, &beta, y, CUDA_R_32F, N,
                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
}

}  // namespace plinth::cuda::kernels
