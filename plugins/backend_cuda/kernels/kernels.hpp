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

/// x[t, :] = f32(table[tokens[t], :]) * scale for t < n (device_math's embed_scaled; scale 1
/// without an embedding scale). table: [vocab, hidden] bf16; x: [n, hidden] f32.
cudaError_t embed(const uint16_t* table, const int32_t* tokens, int n, int hidden, float scale,
                  float* x, cudaStream_t stream);

/// RMSNorm (as backend_cpu's rmsnorm): out[r, :] = bf16(x[src, :] * inv * w[:]) with src =
/// rows ? rows[r] : r and inv = 1 / sqrt(mean(x[src, :]^2) + eps), r < n. x: [*, d] f32,
/// w: [d] f32, out: [n, d] bf16. The sum of squares is reduced in a fixed order (per thread in
/// index order, then a fixed tree), so a row's result does not depend on n or on the other rows.
cudaError_t rmsnorm(const float* x, const int32_t* rows, const float* w, int n, int d, float eps,
                    uint16_t* out, cudaStream_t stream);

/// A sub-block's output added to the residual stream (post_norms, residual_scale), in f32 as
/// backend_cpu: y' = y[r, :] * inv * w[:] with inv = 1 / sqrt(mean(y[r, :]^2) + eps) when w is
/// not NULL (else y' = y), then x[r, :] += y' * scale (scale 1: exact), r < n. y, x: [n, d] f32;
/// w: [d] f32 or NULL. Reduction order as rmsnorm's.
cudaError_t residual_add(const float* y, const float* w, int n, int d, float eps, float scale,
                         float* x, cudaStream_t stream);

/// out[r, :] = bf16(x[r, :]) for r < n: the sub-block input of a model without pre-norms
/// (no_pre_norms). x: [n, d] f32; out: [n, d] bf16.
cudaError_t to_bf16_rows(const float* x, int n, int d, uint16_t* out, cudaStream_t stream);

/// Geometry of the fused QKV rows and the KV cache of one layer.
struct QkvShape {
  int n_heads;     // query heads
  int n_kv_heads;  // key/value heads (n_heads % n_kv_heads == 0)
  int head_dim;    // elements per head, even, <= 256, multiple of 32 for attention
  int row_stride;  // elements per token row of qkv: (n_heads + 2 * n_kv_heads) * head_dim
};

/// One layer's treatment of the fused Q/K/V rows before attention (the generic block's features;
/// a NULL pointer or false turns a step off).
struct QkvPrep {
  const float* bias = nullptr;    // [row_stride] f32: q, k, v biases (qkv_bias)
  const float* q_norm = nullptr;  // [head_dim] f32: per-head RMSNorm of q (qk_norm) ...
  const float* k_norm = nullptr;  // ... and of k; both set or both NULL
  bool qk_full = false;    // one RMSNorm over all q heads ([q_dim] q_norm), one over all k heads
                           // ([kv_dim] k_norm) instead (qk_norm_full)
  float eps = 1e-5f;       // RMSNorm epsilon of the q/k norms
  bool rope = true;        // the layer rotates q and k (layer_rope may turn it off)
  bool neox = false;       // NeoX halves, else adjacent pairs
  int rope_dims = 0;       // rotated elements per head (even, <= head_dim, <= 256)
  double theta = 10000.0;  // the layer's RoPE base
  double scale = 1.0;      // the layer's position multiplier (freq_scale)
  const float* freq_factors = nullptr;  // [rope_dims / 2] f32 (rope_freqs.weight) or NULL
};

/// For each token t < n, in backend_cpu's order, on qkv[t, :] in place: adds the bias to every
/// column; RMSNorms each q head and each k head with q_norm / k_norm (one warp per head, a fixed
/// xor-butterfly sum), or, with qk_full, the whole q part and the whole k part (a fixed-order
/// block sum each); rotates the first rope_dims elements of every q and k head by RoPE at
/// positions[t] (device_math's rope_inv_freq / rope_cos_sin / rope_pair / rope_rotate: angles
/// in double as backend_cpu's Rope, the layer's base, scale and frequency factors) unless
/// !prep.rope; then, when slots[t] >= 0, stores k and v (the last n_kv_heads * head_dim
/// columns) as bf16 at row slots[t] of k_cache / v_cache ([num_slots, n_kv_heads * head_dim],
/// i.e. one layer of [num_blocks, block_size, n_kv_heads, head_dim]). slots[t] < 0 (graph
/// padding) writes nothing. cudaErrorInvalidValue for rope_dims odd, above head_dim or above
/// 256.
cudaError_t prepare_qkv(float* qkv, int n, const QkvShape& shape, const QkvPrep& prep,
                        const int32_t* positions, const int32_t* slots, uint16_t* k_cache,
                        uint16_t* v_cache, cudaStream_t stream);

/// Paged KV of one layer as attention reads it.
struct PagedKv {
  const uint16_t* k;            // [num_blocks * block_size, n_kv_heads * head_dim] bf16
  const uint16_t* v;            // same
  const int32_t* block_tables;  // [num_seqs, max_blocks_per_seq]; an id < 0 is read as block 0
  int max_blocks_per_seq;
  int block_size;
};

/// One layer's attention parameters.
struct AttnParams {
  float scale = 0.0f;  // multiplies q . k: 1 / sqrt(head_dim) or the model's attn_scale
  int window = 0;      // sliding window w > 0: keys p - w < j <= p (device_math attn_first_key)
};

/// Causal grouped-query attention over paged KV (PagedAttention, Kwon et al. 2023; GQA, Ainslie
/// et al. 2023), one kernel for decode and prefill: token t of sequence token_seq[t] at position
/// p = positions[t] attends to positions j0..p of its block table, j0 = attn_first_key(p,
/// params.window) (0 without a window; cached tokens of earlier steps included, so chunked
/// prefill and prefix-cache hits work; the K/V of this step must already be stored).
/// out[t, h * head_dim + e] = bf16(sum_j softmax_j(params.scale * q . K_j) V_j[e]),
/// KV head g = h / (n_heads / n_kv_heads). q is read from qkv [n, row_stride] f32; out is [n,
/// n_heads * head_dim] bf16. Grid (n, n_heads): each block's 4 warps take the keys j = w mod 4
/// in order with an online softmax each, merged in warp order, so a query's arithmetic depends
/// only on its own position and cache contents, never on the rest of the batch.
cudaError_t attention(const float* qkv, int n, const QkvShape& shape, const AttnParams& params,
                      const int32_t* positions, const int32_t* token_seq, const PagedKv& kv,
                      uint16_t* out, cudaStream_t stream);

/// Gated FFN activation: out[r, c] = bf16(act(gu[r, c]) * gu[r, ffn + c]) for r < n, c < ffn,
/// act = silu (SwiGLU; device_math silu_mul) or, with gelu, gelu_tanh (GeGLU; gelu_tanh_mul).
/// gu: [n, 2 ffn] f32 (gate columns then up columns, the fused projection), out: [n, ffn] bf16.
cudaError_t gated_ffn(const float* gu, int n, int ffn, bool gelu, uint16_t* out,
                      cudaStream_t stream);

/// logits[r, :] = finish_logit(logits[r, :], scale, cap) for r < m (logit_scale, then the
/// softcap when cap > 0), in place. logits: [m, vocab] f32.
cudaError_t finish_logits(float* logits, int m, int vocab, float scale, float cap,
                          cudaStream_t stream);

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
