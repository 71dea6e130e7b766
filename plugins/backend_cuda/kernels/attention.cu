// Causal grouped-query attention over the paged KV cache, decode and prefill in one kernel
// (kernels.hpp: attention), with the layer's scale and sliding window (masking). Online softmax
// (Milakov & Gimelshein 2018, as FlashAttention) per warp over a fixed key partition, merged in a
// fixed order.
#include <cmath>

#include "device_math.cuh"
#include "kernels.hpp"

namespace plinth::cuda::kernels {
namespace {

namespace m = plinth::cuda::math;

constexpr int kWarps = 4;
constexpr int kWarpSize = 32;
constexpr int kMaxPerLane = 8;  // head_dim <= 256
constexpr int kMaxHeadDim = kWarpSize * kMaxPerLane;

struct AttnArgs {
  const float* qkv;
  QkvShape shape;
  const int32_t* positions;
  const int32_t* token_seq;
  PagedKv kv;
  uint16_t* out;
  float scale;
  int window;
};

__global__ void __launch_bounds__(kWarps* kWarpSize) attention_kernel(AttnArgs a) {
  __shared__ float sm_m[kWarps];
  __shared__ float sm_l[kWarps];
  __shared__ float sm_acc[kWarps][kMaxHeadDim];
  const int64_t t = blockIdx.x;
  const int h = blockIdx.y;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int hd = a.shape.head_dim;
  const int epl = hd / kWarpSize;  // elements per lane, contiguous: [lane * epl, +epl)
  const int g = h / (a.shape.n_heads / a.shape.n_kv_heads);
  const int64_t kv_row = static_cast<int64_t>(a.shape.n_kv_heads) * hd;
  const int ctx = a.positions[t] + 1;  // positions j0..p are visible
  const int j0 = m::attn_first_key(a.positions[t], a.window);
  const int32_t* table =
      a.kv.block_tables + static_cast<int64_t>(a.token_seq[t]) * a.kv.max_blocks_per_seq;
  const int bs = a.kv.block_size;

  float q[kMaxPerLane], acc[kMaxPerLane];
  const float* qrow = a.qkv + t * a.shape.row_stride + h * hd + lane * epl;
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    q[e] = e < epl ? qrow[e] : 0.0f;
    acc[e] = 0.0f;
  }
  m::SoftmaxState st = m::softmax_empty();
  for (int j = j0 + warp; j < ctx; j += kWarps) {
    int32_t blk = table[j / bs];
    if (blk < 0) blk = 0;  // padding rows: any in-bounds block, the value is never used
    const int64_t base = (static_cast<int64_t>(blk) * bs + j % bs) * kv_row + g * hd + lane * epl;
    const uint16_t* krow = a.kv.k + base;
    float d = 0.0f;
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e) {
      if (e < epl) d = fmaf(q[e], m::bf16_to_f32(krow[e]), d);
    }
    for (int off = kWarpSize / 2; off > 0; off >>= 1) d += __shfl_xor_sync(0xffffffffu, d, off);
    float alpha = 0.0f, p = 0.0f;
    m::softmax_step(&st, m::scaled_score(d, a.scale), &alpha, &p);
    const uint16_t* vrow = a.kv.v + base;
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e) {
      if (e < epl) acc[e] = fmaf(p, m::bf16_to_f32(vrow[e]), acc[e] * alpha);
    }
  }
  if (lane == 0) {
    sm_m[warp] = st.m;
    sm_l[warp] = st.l;
  }
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    if (e < epl) sm_acc[warp][lane * epl + e] = acc[e];
  }
  __syncthreads();
  if (warp != 0) return;
  for (int w = 1; w < kWarps; ++w) {
    float fa = 0.0f, fb = 0.0f;
    m::softmax_merge(&st, m::SoftmaxState{sm_m[w], sm_l[w]}, &fa, &fb);
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e) {
      if (e < epl) acc[e] = fmaf(sm_acc[w][lane * epl + e], fb, acc[e] * fa);
    }
  }
  uint16_t* o = a.out + t * (static_cast<int64_t>(a.shape.n_heads) * hd) + h * hd + lane * epl;
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    if (e < epl) o[e] = m::f32_to_bf16(m::div_rn(acc[e], st.l));
  }
}

}  // namespace

cudaError_t attention(const float* qkv, int n, const QkvShape& shape, const AttnParams& params,
                      const int32_t* positions, const int32_t* token_seq, const PagedKv& kv,
                      uint16_t* out, cudaStream_t stream) {
  if (shape.head_dim % kWarpSize != 0 || shape.head_dim > kMaxHeadDim || shape.n_kv_heads < 1 ||
      shape.n_heads % shape.n_kv_heads != 0 || kv.block_size < 1) {
    return cudaErrorInvalidValue;
  }
  if (n > 0) {
    const float scale =
        params.scale != 0.0f ? params.scale : 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    AttnArgs a{qkv, shape, positions, token_seq, kv, out, scale, params.window};
    attention_kernel<<<dim3(static_cast<unsigned>(n), static_cast<unsigned>(shape.n_heads)),
                       kWarps * kWarpSize, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

}  // namespace plinth::cuda::kernels
