// Portable kernels: the reference the AVX2 ones are tested against, and the fallback for CPUs
// without AVX2. Plain loops; the compiler may vectorize them for the baseline ISA.
#include <cmath>

#include <vector>

#include "kernel_table.hpp"

namespace plinth::cpu::detail {
namespace {

// roundf semantics (half away from zero) as gguf-py np_roundf and ggml's quantize_row_q8_0_ref.
void quantize_row_q8a(const float* x, int64_t cols, BlockQ8A* out) {
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQuantBlock; ++j) {
      const int q = static_cast<int>(std::roundf(xb[j] * id));
      out[b].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    out[b].d = d;
    out[b].s = d * static_cast<float>(sum);
  }
}

template <typename Block, typename BlockDot>
void quant_dot(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t x_stride, int nx,
               float* out, BlockDot block_dot) {
  const auto* wb = static_cast<const Block*>(w);
  for (int r = 0; r < nx; ++r) {
    const BlockQ8A* xr = x + r * x_stride;
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; ++b) acc += block_dot(wb[b], xr[b]);
    out[r] = acc;
  }
}

void dot_q8_0(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t x_stride, int nx,
              float* out) {
  quant_dot<BlockQ8_0>(nblocks, w, x, x_stride, nx, out,
                       [](const BlockQ8_0& wb, const BlockQ8A& xb) {
                         int sum = 0;
                         for (int j = 0; j < kQuantBlock; ++j) sum += wb.qs[j] * xb.qs[j];
                         return fp16_to_fp32(wb.d) * xb.d * static_cast<float>(sum);
                       });
}

// Σ (q-8)·d·x = d·(Σ q·xq·dx) - 8·d·s with s = dx·Σ xq.
void dot_q4_0(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t x_stride, int nx,
              float* out) {
  quant_dot<BlockQ4_0>(
      nblocks, w, x, x_stride, nx, out, [](const BlockQ4_0& wb, const BlockQ8A& xb) {
        int sum = 0;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          sum += (wb.qs[j] & 0x0f) * xb.qs[j] + (wb.qs[j] >> 4) * xb.qs[j + kQuantBlock / 2];
        }
        const float d = fp16_to_fp32(wb.d);
        return d * xb.d * static_cast<float>(sum) - 8.0f * d * xb.s;
      });
}

// Σ (q·d + m)·x = d·dx·Σ q·xq + m·s.
void dot_q4_1(int64_t nblocks, const void* w, const BlockQ8A* x, int64_t x_stride, int nx,
              float* out) {
  quant_dot<BlockQ4_1>(
      nblocks, w, x, x_stride, nx, out, [](const BlockQ4_1& wb, const BlockQ8A& xb) {
        int sum = 0;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          sum += (wb.qs[j] & 0x0f) * xb.qs[j] + (wb.qs[j] >> 4) * xb.qs[j + kQuantBlock / 2];
        }
        return fp16_to_fp32(wb.d) * xb.d * static_cast<float>(sum) + fp16_to_fp32(wb.m) * xb.s;
      });
}

template <typename Convert>
void float_dot(int64_t cols, const void* w, const float* x, int64_t x_stride, int nx, float* out,
               Convert convert) {
  for (int r = 0; r < nx; ++r) {
    const float* xr = x + r * x_stride;
    float acc = 0.0f;
    for (int64_t j = 0; j < cols; ++j) acc += convert(w, j) * xr[j];
    out[r] = acc;
  }
}

void dot_f32(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(cols, w, x, xs, nx, out,
            [](const void* p, int64_t j) { return static_cast<const float*>(p)[j]; });
}
void dot_f16(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(cols, w, x, xs, nx, out, [](const void* p, int64_t j) {
    return fp16_to_fp32(static_cast<const uint16_t*>(p)[j]);
  });
}
void dot_bf16(int64_t cols, const void* w, const float* x, int64_t xs, int nx, float* out) {
  float_dot(cols, w, x, xs, nx, out, [](const void* p, int64_t j) {
    return bf16_to_fp32(static_cast<const uint16_t*>(p)[j]);
  });
}

float dot(const float* a, const float* b, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}
void axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void dots(const float* q, const float* const* rows, int64_t count, int64_t dim, float* out) {
  for (int64_t j = 0; j < count; ++j) out[j] = dot(q, rows[j], dim);
}
void weighted_sum(const float* p, const float* const* rows, int64_t count, int64_t dim,
                  float* out) {
  for (int64_t e = 0; e < dim; ++e) out[e] = 0.0f;
  for (int64_t j = 0; j < count; ++j) axpy(p[j], rows[j], out, dim);
}
void dots_heads(const float* const* q, int nh, const float* const* rows, int64_t count, int64_t dim,
                float* const* out) {
  for (int h = 0; h < nh; ++h) dots(q[h], rows, count, dim, out[h]);
}
void weighted_sum_heads(const float* const* p, int nh, const float* const* rows, int64_t count,
                        int64_t dim, float* const* out) {
  for (int h = 0; h < nh; ++h) weighted_sum(p[h], rows, count, dim, out[h]);
}
// f16 rows: each converted exactly to f32, then the f32 kernels' arithmetic.
void dots_heads_f16(const float* const* q, int nh, const uint16_t* const* rows, int64_t count,
                    int64_t dim, float* const* out) {
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(dim));
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t e = 0; e < dim; ++e) row[static_cast<size_t>(e)] = fp16_to_fp32(rows[j][e]);
    for (int h = 0; h < nh; ++h) out[h][j] = dot(q[h], row.data(), dim);
  }
}
void weighted_sum_heads_f16(const float* const* p, int nh, const uint16_t* const* rows,
                            int64_t count, int64_t dim, float* const* out) {
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(dim));
  for (int h = 0; h < nh; ++h)
    for (int64_t e = 0; e < dim; ++e) out[h][e] = 0.0f;
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t e = 0; e < dim; ++e) row[static_cast<size_t>(e)] = fp16_to_fp32(rows[j][e]);
    for (int h = 0; h < nh; ++h) axpy(p[h][j], row.data(), out[h], dim);
  }
}
float sum_squares(const float* x, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += x[i] * x[i];
  return acc;
}
void scale_mul(const float* x, float s, const float* w, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s * w[i];
}
void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}
float max(const float* x, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::fmax(m, x[i]);
  return m;
}
float exp_sub_sum(float* x, float m, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  return sum;
}
void scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace

const KernelTable& scalar_kernels() {
  static const KernelTable table{quantize_row_q8a,
                                 dot_q8_0,
                                 dot_q4_0,
                                 dot_q4_1,
                                 dot_f32,
                                 dot_f16,
                                 dot_bf16,
                                 dot,
                                 axpy,
                                 sum_squares,
                                 scale_mul,
                                 silu_mul,
                                 max,
                                 exp_sub_sum,
                                 scale,
                                 dots,
                                 weighted_sum,
                                 dots_heads,
                                 weighted_sum_heads,
                                 dots_heads_f16,
                                 weighted_sum_heads_f16};
  return table;
}

}  // namespace plinth::cpu::detail
