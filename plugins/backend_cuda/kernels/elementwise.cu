// Row-wise kernels of backend_cuda: embedding gather, RMSNorm (and the post-norm residual add),
// the Q/K/V preparation (bias, q/k norm, RoPE) + KV store, the gated FFN activations, the final
// logit scale / softcap, argmax.
// The per-element arithmetic is device_math.cuh's (unit-tested on the CPU against backend_cpu).
#include <cmath>

#include "device_math.cuh"
#include "kernels.hpp"

namespace plinth::cuda::kernels {
namespace {

namespace m = plinth::cuda::math;

constexpr int kRowThreads = 256;  // threads of the row kernels (8 warps)
constexpr int kWarpSize = 32;
constexpr int kMaxHalf = 128;  // rope_dims / 2 bound of the RoPE table in shared memory
// Threads of prepare_qkv: 4 warps, each normalizing one head at a time for the q/k norm.
constexpr int kQkvThreads = 128;

__global__ void embed_kernel(const uint16_t* table, const int32_t* tokens, int hidden, float scale,
                             float* x) {
  const int64_t t = blockIdx.x;
  const uint16_t* src = table + static_cast<int64_t>(tokens[t]) * hidden;
  float* dst = x + t * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = m::embed_scaled(src[i], scale);
}

// Sum of `v` over the block in a fixed order: a xor butterfly inside each warp, then warp sums
// added in warp order by thread 0; every thread gets the result.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kRowThreads / kWarpSize];
  __shared__ float total;
  for (int off = kWarpSize / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int warp = threadIdx.x / kWarpSize;
  if (threadIdx.x % kWarpSize == 0) warp_sums[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x) / kWarpSize; ++w)
      s = m::add_rn(s, warp_sums[w]);
    total = s;
  }
  __syncthreads();
  return total;
}

__global__ void rmsnorm_kernel(const float* x, const int32_t* rows, const float* w, int d,
                               float eps, uint16_t* out) {
  const int64_t r = blockIdx.x;
  const int64_t src = rows != nullptr ? rows[r] : r;
  const float* xr = x + src * d;
  float sq = 0.0f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) sq = m::add_rn(sq, m::mul_rn(xr[i], xr[i]));
  const float inv = m::rms_inv(block_sum(sq), d, eps);
  uint16_t* o = out + r * d;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    o[i] = m::f32_to_bf16(m::rms_apply(xr[i], inv, w[i]));
  }
}

__global__ void residual_add_kernel(const float* y, const float* w, int d, float eps, float scale,
                                    float* x) {
  const int64_t r = blockIdx.x;
  const float* yr = y + r * d;
  float inv = 1.0f;
  if (w != nullptr) {
    float sq = 0.0f;
    for (int i = threadIdx.x; i < d; i += blockDim.x) sq = m::add_rn(sq, m::mul_rn(yr[i], yr[i]));
    inv = m::rms_inv(block_sum(sq), d, eps);
  }
  float* xr = x + r * d;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    const float v = w != nullptr ? m::rms_apply(yr[i], inv, w[i]) : yr[i];
    xr[i] = m::add_rn(xr[i], m::mul_rn(v, scale));
  }
}

__global__ void to_bf16_kernel(const float* x, int d, uint16_t* out) {
  const int64_t r = blockIdx.x;
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[r * d + i] = m::f32_to_bf16(x[r * d + i]);
}

// RMSNorm of `count` elements of `x` with weights w[count] over the whole block: per thread in
// index order, then block_sum's fixed tree (qk_norm_full: all q heads as one vector).
__device__ void norm_block(float* x, int count, const float* w, float eps) {
  float sq = 0.0f;
  for (int e = threadIdx.x; e < count; e += blockDim.x) sq = m::add_rn(sq, m::mul_rn(x[e], x[e]));
  const float inv = m::rms_inv(block_sum(sq), count, eps);
  for (int e = threadIdx.x; e < count; e += blockDim.x) x[e] = m::rms_apply(x[e], inv, w[e]);
}

// Per-head RMSNorm of the q and k heads of one row (heads [0, n_heads) read q_norm, the next
// n_kv_heads k_norm): warp w takes heads w, w + warps, ...; each lane its elements e = lane + 32 i;
// the sum of squares per lane in index order, then a xor butterfly (a fixed order).
__device__ void qk_norm_row(float* row, const QkvShape& s, const QkvPrep& p) {
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const int hd = s.head_dim;
  for (int h = warp; h < s.n_heads + s.n_kv_heads; h += warps) {
    float* x = row + h * hd;
    const float* w = h < s.n_heads ? p.q_norm : p.k_norm;
    float sq = 0.0f;
    for (int e = lane; e < hd; e += kWarpSize) sq = m::add_rn(sq, m::mul_rn(x[e], x[e]));
    for (int off = kWarpSize / 2; off > 0; off >>= 1) {
      sq = m::add_rn(sq, __shfl_xor_sync(0xffffffffu, sq, off));
    }
    const float inv = m::rms_inv(sq, hd, p.eps);
    for (int e = lane; e < hd; e += kWarpSize) x[e] = m::rms_apply(x[e], inv, w[e]);
  }
}

__global__ void prepare_qkv_kernel(float* qkv, QkvShape s, QkvPrep p, const int32_t* positions,
                                   const int32_t* slots, uint16_t* kc, uint16_t* vc) {
  __shared__ float cs[2 * kMaxHalf];
  const int64_t t = blockIdx.x;
  const int hd = s.head_dim;
  float* row = qkv + t * s.row_stride;
  if (p.bias != nullptr) {
    for (int e = threadIdx.x; e < s.row_stride; e += blockDim.x)
      row[e] = m::add_rn(row[e], p.bias[e]);
    __syncthreads();
  }
  if (p.q_norm != nullptr && p.qk_full) {
    norm_block(row, s.n_heads * hd, p.q_norm, p.eps);
    norm_block(row + s.n_heads * hd, s.n_kv_heads * hd, p.k_norm, p.eps);
    __syncthreads();
  } else if (p.q_norm != nullptr) {
    qk_norm_row(row, s, p);
    __syncthreads();
  }
  if (p.rope) {
    const int half = p.rope_dims / 2;
    const int32_t pos = positions[t];
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
      const float factor = p.freq_factors != nullptr ? p.freq_factors[i] : 1.0f;
      m::rope_cos_sin(pos, m::rope_inv_freq(i, p.rope_dims, p.theta, p.scale, factor), &cs[2 * i],
                      &cs[2 * i + 1]);
    }
    __syncthreads();
    // The k heads follow the q heads in the fused row, so head index h < n_heads + n_kv_heads
    // starts at h * head_dim for both; elements at rope_dims and beyond pass through.
    const int pairs = (s.n_heads + s.n_kv_heads) * half;
    for (int q = threadIdx.x; q < pairs; q += blockDim.x) {
      const int h = q / half, i = q % half;
      int ia = 0, ib = 0;
      m::rope_pair(i, p.rope_dims, p.neox, &ia, &ib);
      m::rope_rotate(&row[h * hd + ia], &row[h * hd + ib], cs[2 * i], cs[2 * i + 1]);
    }
    __syncthreads();
  }
  const int32_t slot = slots[t];
  if (slot < 0) return;  // a padding row of a captured batch
  const int kv_dim = s.n_kv_heads * hd;
  const int q_dim = s.n_heads * hd;
  uint16_t* kd = kc + static_cast<int64_t>(slot) * kv_dim;
  uint16_t* vd = vc + static_cast<int64_t>(slot) * kv_dim;
  for (int e = threadIdx.x; e < kv_dim; e += blockDim.x) {
    kd[e] = m::f32_to_bf16(row[q_dim + e]);
    vd[e] = m::f32_to_bf16(row[q_dim + kv_dim + e]);
  }
}

__global__ void gated_ffn_kernel(const float* gu, int64_t total, int ffn, bool gelu,
                                 uint16_t* out) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / ffn, c = idx % ffn;
    const float* g = gu + r * 2 * ffn;
    out[idx] =
        m::f32_to_bf16(gelu ? m::gelu_tanh_mul(g[c], g[ffn + c]) : m::silu_mul(g[c], g[ffn + c]));
  }
}

__global__ void finish_logits_kernel(float* logits, int64_t total, float scale, float cap) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    logits[idx] = m::finish_logit(logits[idx], scale, cap);
  }
}

// Blocks of kRowThreads covering `total` elements, at most 65535 (grid-stride loops do the rest).
int stride_grid(int64_t total) {
  const int64_t blocks = (total + kRowThreads - 1) / kRowThreads;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

__global__ void argmax_kernel(const float* logits, int vocab, int32_t* ids) {
  __shared__ float best_v[kRowThreads];
  __shared__ int32_t best_i[kRowThreads];
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  const float* row = logits + static_cast<int64_t>(blockIdx.x) * vocab;
  float bv = -INFINITY;
  int32_t bi = INT32_MAX;
  bool my_bad = false;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = row[i];
    if (isnan(v) || v == INFINITY) my_bad = true;
    if (m::argmax_better(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
  if (my_bad) atomicOr(&bad, 1);
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const int o = threadIdx.x + stride;
      if (m::argmax_better(best_v[o], best_i[o], best_v[threadIdx.x], best_i[threadIdx.x])) {
        best_v[threadIdx.x] = best_v[o];
        best_i[threadIdx.x] = best_i[o];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    // Every entry -inf: (-inf, 0) wins by the lower id, as the host's argmax starts at id 0.
    ids[blockIdx.x] = bad != 0 ? -1 : (best_i[0] == INT32_MAX ? 0 : best_i[0]);
  }
}

}  // namespace

cudaError_t embed(const uint16_t* table, const int32_t* tokens, int n, int hidden, float scale,
                  float* x, cudaStream_t stream) {
  if (n > 0) embed_kernel<<<n, kRowThreads, 0, stream>>>(table, tokens, hidden, scale, x);
  return cudaGetLastError();
}

cudaError_t rmsnorm(const float* x, const int32_t* rows, const float* w, int n, int d, float eps,
                    uint16_t* out, cudaStream_t stream) {
  if (n > 0) rmsnorm_kernel<<<n, kRowThreads, 0, stream>>>(x, rows, w, d, eps, out);
  return cudaGetLastError();
}

cudaError_t residual_add(const float* y, const float* w, int n, int d, float eps, float scale,
                         float* x, cudaStream_t stream) {
  if (n > 0) residual_add_kernel<<<n, kRowThreads, 0, stream>>>(y, w, d, eps, scale, x);
  return cudaGetLastError();
}

cudaError_t to_bf16_rows(const float* x, int n, int d, uint16_t* out, cudaStream_t stream) {
  if (n > 0) to_bf16_kernel<<<n, kRowThreads, 0, stream>>>(x, d, out);
  return cudaGetLastError();
}

cudaError_t prepare_qkv(float* qkv, int n, const QkvShape& shape, const QkvPrep& prep,
                        const int32_t* positions, const int32_t* slots, uint16_t* k_cache,
                        uint16_t* v_cache, cudaStream_t stream) {
  if (prep.rope && (prep.rope_dims < 2 || prep.rope_dims % 2 != 0 ||
                    prep.rope_dims > shape.head_dim || prep.rope_dims / 2 > kMaxHalf)) {
    return cudaErrorInvalidValue;
  }
  if ((prep.q_norm == nullptr) != (prep.k_norm == nullptr)) return cudaErrorInvalidValue;
  if (n > 0) {
    prepare_qkv_kernel<<<n, kQkvThreads, 0, stream>>>(qkv, shape, prep, positions, slots, k_cache,
                                                      v_cache);
  }
  return cudaGetLastError();
}

cudaError_t gated_ffn(const float* gu, int n, int ffn, bool gelu, uint16_t* out,
                      cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(n) * ffn;
  if (total > 0) {
    gated_ffn_kernel<<<stride_grid(total), kRowThreads, 0, stream>>>(gu, total, ffn, gelu, out);
  }
  return cudaGetLastError();
}

cudaError_t finish_logits(float* logits, int m_rows, int vocab, float scale, float cap,
                          cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(m_rows) * vocab;
  if (total > 0) {
    finish_logits_kernel<<<stride_grid(total), kRowThreads, 0, stream>>>(logits, total, scale, cap);
  }
  return cudaGetLastError();
}

cudaError_t argmax_rows(const float* logits, int m_rows, int vocab, int32_t* ids,
                        cudaStream_t stream) {
  if (m_rows > 0) argmax_kernel<<<m_rows, kRowThreads, 0, stream>>>(logits, vocab, ids);
  return cudaGetLastError();
}

}  // namespace plinth::cuda::kernels
