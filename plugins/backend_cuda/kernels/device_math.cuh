// Per-element arithmetic of backend_cuda's kernels as __host__ __device__ inline functions, so
// the CPU tests (tests/plugins/backend_cuda_kernels) run the very code the GPU runs and compare it
// with backend_cpu's numbers. Compiled by g++ (no __CUDACC__) the qualifiers expand to nothing.
//
// Rounding: the products and sums that backend_cpu computes as separate IEEE operations (RoPE's
// rotation, RMSNorm's scaling, SwiGLU) are written with mul_rn / add_rn, which nvcc never fuses
// into an FMA (__fmul_rn / __fadd_rn), so the device rounds like the CPU (built without FMA
// contraction: -std=c++20 implies -ffp-contract=off). exp / pow / cos / sin may differ from the
// host's libm by an ulp or two (CUDA Programming Guide, "Mathematical Functions", max ulp error).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define PLINTH_HD __host__ __device__ __forceinline__
#else
#define PLINTH_HD inline
#endif

namespace plinth::cuda::math {

// ---- IEEE operations that are never contracted -------------------------------------------------

PLINTH_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

PLINTH_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

PLINTH_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

PLINTH_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

PLINTH_HD float exp_f(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  return std::exp(x);
#endif
}

PLINTH_HD double dmul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

PLINTH_HD double dadd_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

PLINTH_HD float tanh_f(float x) {
#if defined(__CUDA_ARCH__)
  return tanhf(x);
#else
  return std::tanh(x);
#endif
}

// ---- bf16 <-> f32 (bfloat16: the top 16 bits of an IEEE binary32) -----------------------------

PLINTH_HD float bits_to_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

PLINTH_HD uint32_t f32_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/// bf16 bits -> f32, exact.
PLINTH_HD float bf16_to_f32(uint16_t h) {
  return bits_to_f32(static_cast<uint32_t>(h) << 16);
}

/// f32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet bit set), +-inf stays inf,
/// overflow rounds to inf.
PLINTH_HD uint16_t f32_to_bf16(float f) {
  const uint32_t u = f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t lsb = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7fffu + lsb) >> 16);
}

// ---- RMSNorm (Zhang & Sennrich 2019, as LLaMA) -------------------------------------------------

/// The factor 1 / sqrt(sum_sq / d + eps) of a row of d elements whose squares sum to sum_sq
/// (backend_cpu's rmsnorm: mean = sum / d, then 1 / sqrt(mean + eps)).
PLINTH_HD float rms_inv(float sum_sq, int d, float eps) {
  const float mean = div_rn(sum_sq, static_cast<float>(d));
  return div_rn(1.0f, sqrtf(add_rn(mean, eps)));
}

/// One normalized element: x * inv * w, in that order (backend_cpu's scale_mul).
PLINTH_HD float rms_apply(float x, float inv, float w) {
  return mul_rn(mul_rn(x, inv), w);
}

// ---- RoPE (Su et al. 2021, RoFormer §3.4), as ggml and backend_cpu's Rope apply it ------------

/// The inverse frequency of pair i (i < rope_dims / 2) of one layer's RoPE, in double as
/// backend_cpu's Rope constructor: scale * theta^(-2i / rope_dims) / factor, where scale is the
/// layer's position multiplier (llama.cpp's freq_scale; 1 without RoPE scaling) and factor the
/// pair's RoPE frequency factor (rope_freqs.weight, Llama 3.1/3.2; 1 without). Partial rotary:
/// rope_dims < head_dim, the exponent's denominator is rope_dims (ggml's n_dims).
PLINTH_HD double rope_inv_freq(int i, int rope_dims, double theta, double scale, float factor) {
  const double f =
      dmul_rn(scale, pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims)));
  return f / static_cast<double>(factor);  // factor 1: exact, as backend_cpu's skipped division
}

/// (cos, sin) at position pos of the pair whose inverse frequency is inv_freq (rope_inv_freq):
/// angle = pos * inv_freq in double, rounded to float once (backend_cpu's Rope::tables).
PLINTH_HD void rope_cos_sin(int32_t pos, double inv_freq, float* c, float* s) {
  const double angle = dmul_rn(static_cast<double>(pos), inv_freq);
  *c = static_cast<float>(cos(angle));
  *s = static_cast<float>(sin(angle));
}

/// Element indices of pair i (i < rope_dims / 2) inside a head: normal (GGML mode 0, LLaMA
/// GGUFs) rotates adjacent elements (2i, 2i + 1); NeoX rotates (i, i + rope_dims / 2). Elements
/// at rope_dims and beyond (partial rotary) are no pair's and pass through.
PLINTH_HD void rope_pair(int i, int rope_dims, bool neox, int* ia, int* ib) {
  *ia = neox ? i : 2 * i;
  *ib = neox ? i + rope_dims / 2 : 2 * i + 1;
}

/// Rotates (a, b) by the angle whose cosine and sine are c and s: a' = a c - b s, b' = a s + b c.
PLINTH_HD void rope_rotate(float* a, float* b, float c, float s) {
  const float a0 = *a, b0 = *b;
  *a = sub_rn(mul_rn(a0, c), mul_rn(b0, s));
  *b = add_rn(mul_rn(a0, s), mul_rn(b0, c));
}

// ---- Gated FFN activations -------------------------------------------------------------------

/// SwiGLU (Shazeer 2020): silu(gate) * up with silu(g) = g / (1 + e^-g) (backend_cpu's silu_mul).
PLINTH_HD float silu_mul(float gate, float up) {
  return mul_rn(div_rn(gate, add_rn(1.0f, exp_f(-gate))), up);
}

/// GeGLU with the tanh approximation (Hendrycks & Gimpel 2016; Gemma's gelu_pytorch_tanh):
/// gelu_tanh(gate) * up, gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in
/// double and rounded once, operation for operation as backend_cpu's gelu_tanh_mul (the device's
/// double tanh is within 1 ulp of the host's, which the final rounding to float absorbs but for
/// rare ties; llama.cpp's CPU reads an f16 table instead).
PLINTH_HD float gelu_tanh_mul(float gate, float up) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  const double x = gate;
  const double cube = dmul_rn(dmul_rn(dmul_rn(0.044715, x), x), x);
  const double inner = dmul_rn(kSqrt2OverPi, dadd_rn(x, cube));
  const double g = dmul_rn(dmul_rn(0.5, x), dadd_rn(1.0, tanh(inner)));
  return static_cast<float>(dmul_rn(g, static_cast<double>(up)));
}

// ---- Scales ------------------------------------------------------------------------------------

/// An embedding element scaled (embed_scale, Gemma's sqrt(hidden); 1 when the model has none:
/// exact): bf16 table value * scale, as backend_cpu's scale() after its dequantize.
PLINTH_HD float embed_scaled(uint16_t h, float scale) {
  return mul_rn(bf16_to_f32(h), scale);
}

/// A final logit after the model's logit scale (1: none) and softcap (cap <= 0: none), as
/// backend_cpu's finish_logits: v * scale, then tanh(v * (1 / cap)) * cap (gemma's
/// final_logit_softcapping; 1 / cap rounded to float first). The device's tanhf is within 2 ulp
/// of the host's (CUDA Programming Guide, "Mathematical Functions").
PLINTH_HD float finish_logit(float v, float scale, float cap) {
  v = mul_rn(v, scale);
  if (cap > 0.0f) v = mul_rn(tanh_f(mul_rn(v, div_rn(1.0f, cap))), cap);
  return v;
}

// ---- Attention: scaled dot and online softmax (Milakov & Gimelshein 2018) ----------------------

/// q·k * scale given the dot product; scale is 1 / sqrt(head_dim) or the model's attn_scale.
PLINTH_HD float scaled_score(float dot, float scale) {
  return mul_rn(dot, scale);
}

/// The first key position a query at position pos sees: with a sliding window w > 0 the keys
/// p - w < j <= p (llama.cpp's standard SWA, plinth_arch_layer.sliding_window; backend_cpu's
/// paged_attention j0 = max(0, p + 1 - w)), else 0 (full causal). Exact by masking: keys before
/// it are skipped whatever the cache still holds.
PLINTH_HD int32_t attn_first_key(int32_t pos, int32_t window) {
  if (window <= 0) return 0;
  const int32_t j0 = pos + 1 - window;
  return j0 > 0 ? j0 : 0;
}

/// Running max m and running sum l of e^(s - m) over the scores seen so far. Empty: m = -inf,
/// l = 0.
struct SoftmaxState {
  float m;
  float l;
};

PLINTH_HD SoftmaxState softmax_empty() {
  return SoftmaxState{-INFINITY, 0.0f};
}

/// Adds score s: returns in *alpha the factor that rescales the accumulated weighted sum of V
/// (e^(m_old - m_new), 0 when the state was empty) and in *p the weight of the new value
/// (e^(s - m_new)); the caller updates acc = acc * alpha + p * v. After the last score the
/// softmax-weighted sum is acc / l.
PLINTH_HD void softmax_step(SoftmaxState* st, float s, float* alpha, float* p) {
  const float m_new = fmaxf(st->m, s);
  *alpha = st->l == 0.0f ? 0.0f : exp_f(sub_rn(st->m, m_new));
  *p = exp_f(sub_rn(s, m_new));
  st->l = add_rn(mul_rn(st->l, *alpha), *p);
  st->m = m_new;
}

/// Merges state b into a (two disjoint sets of scores): returns in *fa and *fb the factors for
/// their accumulators (acc = acc_a * fa + acc_b * fb). An empty side gets factor 0.
PLINTH_HD void softmax_merge(SoftmaxState* a, const SoftmaxState& b, float* fa, float* fb) {
  const float m = fmaxf(a->m, b.m);
  *fa = a->l == 0.0f ? 0.0f : exp_f(sub_rn(a->m, m));
  *fb = b.l == 0.0f ? 0.0f : exp_f(sub_rn(b.m, m));
  a->l = add_rn(mul_rn(a->l, *fa), mul_rn(b.l, *fb));
  a->m = m;
}

// ---- Greedy choice -----------------------------------------------------------------------------

/// True when (v, i) beats (best_v, best_i) under the host's greedy rule: larger logit, the lower
/// id on ties (host/sampling Sampler::argmax). NaN never wins.
PLINTH_HD bool argmax_better(float v, int32_t i, float best_v, int32_t best_i) {
  return v > best_v || (v == best_v && i < best_i);
}

}  // namespace plinth::cuda::math
