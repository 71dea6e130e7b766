// Host-side launchers of backend_cuda's kernels (elementwise.cu, attention.cu, gemm.cu). Every
// launcher only enqueues work on `stream` (no allocation, no synchronisation), so each may run
// inside CUDA Graph capture, and returns cudaGetLastError() of the launch. Pointers are device
// memory; bf16 tensors are uint16_t bit patterns (device_math.cuh's bf16_to_f32). Row-major
// shapes are written [rows, cols]. Launch grids depend only on the token count and the model
// shape, never on sequence lengths (those are read from device memory), so one capture serves
// every step of that token count.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace plinth::cuda::kernels {

/// x[t, :] = f32(table[tokens[t], :]) for t < n. table: [vocab, hidden] bf16; x: [n, hidden] f32.
cudaError_t embed(const uint16_t* table, const int32_t* tokens, int n, int hidden, float* x,
                  cudaStream_t stream);

/// RMSNorm (as backend_cpu's rmsnorm): out[r, :] = bf16(x[src, :] * inv * w[:]) with src =
/// rows ? rows[r] : r and inv = 1 / sqrt(mean(x[src, :]^2) + eps), r < n. x: [*, d] f32,
/// w: [d] f32, out: [n, d] bf16. The sum of squares is reduced in a fixed order (per thread in
/// index order, then a fixed tree), so a row's result does not depend on n or on the other rows.
cudaError_t rmsnorm(const float* x, const int32_t* rows, const float* w, int n, int d, float eps,
                    uint16_t* out, cudaStream_t stream);

/// Geometry of the fused QKV rows and the KV cache of one layer.
struct QkvShape {
  int n_heads;     // query heads
  int n_kv_heads;  // key/value heads (n_heads % n_kv_heads == 0)
  int head_dim;    // elements per head, even, <= 256, multiple of 32 for attention
  int row_stride;  // elements per token row of qkv: (n_heads + 2 * n_kv_heads) * head_dim
};

/// For each token t < n: rotates the q heads (columns [0, n_heads * head_dim)) and k heads (the
/// next n_kv_heads * head_dim) of qkv[t, :] in place by RoPE at positions[t] (normal adjacent
/// pairs, or NeoX halves when neox; angles in double as backend_cpu's Rope), then, when
/// slots[t] >= 0, stores the rotated k and the v (last n_kv_heads * head_dim columns) as bf16
/// at row slots[t] of k_cache / v_cache ([num_slots, n_kv_heads * head_dim], i.e. one layer of
/// [num_blocks, block_size, n_kv_heads, head_dim]). slots[t] < 0 (graph padding) writes nothing.
cudaError_t rope_store_kv(float* qkv, int n, const QkvShape& shape, const int32_t* positions,
                          const int32_t* slots, double theta, bool neox, uint16_t* k_cache,
                          uint16_t* v_cache, cudaStream_t stream);

/// Paged KV of one layer as attention reads it.
struct PagedKv {
  const uint16_t* k;            // [num_blocks * block_size, n_kv_heads * head_dim] bf16
  const uint16_t* v;            // same
  const int32_t* block_tables;  // [num_seqs, max_blocks_per_seq]; an id < 0 is read as block 0
  int max_blocks_per_seq;
  int block_size;
};

/// Causal grouped-query attention over paged KV (PagedAttention, Kwon et al. 2023; GQA, Ainslie
/// et al. 2023), one kernel for decode and prefill: token t of sequence token_seq[t] at position
/// p = positions[t] attends to positions 0..p of its block table (cached tokens of earlier steps
/// included, so chunked prefill and prefix-cache hits work; the K/V of this step must already be
/// stored). out[t, h * head_dim + e] = bf16(sum_j softmax_j(q . K_j / sqrt(head_dim)) V_j[e]),
/// KV head g = h / (n_heads / n_kv_heads). q is read from qkv [n, row_stride] f32; out is [n,
/// n_heads * head_dim] bf16. Grid (n, n_heads): each block's 4 warps take the keys j = w mod 4
/// in order with an online softmax each, merged in warp order, so a query's arithmetic depends
/// only on its own position and cache contents, never on the rest of the batch.
cudaError_t attention(const float* qkv, int n, const QkvShape& shape, const int32_t* positions,
                      const int32_t* token_seq, const PagedKv& kv, uint16_t* out,
                      cudaStream_t stream);

/// SwiGLU: out[r, c] = bf16(silu(gu[r, c]) * gu[r, ffn + c]) for r < n, c < ffn. gu: [n, 2 ffn]
/// f32 (gate columns then up columns, the fused projection), out: [n, ffn] bf16.
cudaError_t swiglu(const float* gu, int n, int ffn, uint16_t* out, cudaStream_t stream);

/// ids[r] = argmax of logits[r, :] (vocab entries), the lowest id on ties (the host's greedy
/// rule); -1 when the row holds a NaN or +inf. logits: [m, vocab] f32; ids: [m] int32.
cudaError_t argmax_rows(const float* logits, int m, int vocab, int32_t* ids, cudaStream_t stream);

/// How gemm multiplies.
enum class GemmMode {
  kInvariant,  // own tiled kernel: each output is one thread's f32 FMA chain over k = 0..K-1
  kFast        // cuBLAS cublasGemmEx, bf16 in, CUBLAS_COMPUTE_32F, algorithm by heuristics
};

/// y[M, N] (+)= x[M, K] * w[N, K]^T: x bf16 row-major activations, w bf16 row-major weights
/// (a linear layer's [out, in]), y f32 row-major; accumulate adds to y (the residual stream).
/// Invariant: a row's result is bit-identical for every M (no split-K, fixed K order, the same
/// per-output arithmetic in both tile shapes). Fast: `blas` must be bound to `stream` with a
/// workspace set (cublasSetWorkspace) so it can be captured; returns cudaErrorUnknown when
/// cuBLAS fails.
cudaError_t gemm(GemmMode mode, cublasHandle_t blas, const uint16_t* x, const uint16_t* w, float* y,
                 int M, int N, int K, bool accumulate, cudaStream_t stream);

}  // namespace plinth::cuda::kernels
