// Portable kernels of the Float path (f32 activations × quantized weights): the fallback for CPUs
// without AVX2 and the reference the AVX2 kernels are tested against. Same formula and order as
// matmul_float.hpp, on eight scalar lanes; products and sums are rounded separately (the library
// builds with -ffp-contract=off, so the compiler cannot fuse some of them and not others).
#include "kernel_table.hpp"

namespace plinth::cpu::detail {
namespace {

constexpr int kLanes = 8;

// One block unpacked to exact f32 integers q[32] and the scale d.
struct Unpacked {
  float q[kQuantBlock];
  float d;
};

void unpack(const BlockQ8_0& blk, Unpacked& u) {
  for (int j = 0; j < kQuantBlock; ++j) u.q[j] = static_cast<float>(blk.qs[j]);
  u.d = fp16_to_fp32(blk.d);
}

void unpack(const BlockQ4_0& blk, Unpacked& u) {
  for (int j = 0; j < kQuantBlock / 2; ++j) {
    u.q[j] = static_cast<float>((blk.qs[j] & 0x0f) - 8);
    u.q[j + kQuantBlock / 2] = static_cast<float>((blk.qs[j] >> 4) - 8);
  }
  u.d = fp16_to_fp32(blk.d);
}

void unpack(const BlockQ4_1& blk, Unpacked& u) {
  for (int j = 0; j < kQuantBlock / 2; ++j) {
    u.q[j] = static_cast<float>(blk.qs[j] & 0x0f);
    u.q[j + kQuantBlock / 2] = static_cast<float>(blk.qs[j] >> 4);
  }
  u.d = fp16_to_fp32(blk.d);
}

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)), as the AVX2 horizontal sum.
float lane_sum(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

template <typename Block, bool kHasMin>
void dot(int64_t nblocks, const uint8_t* w, const float* mins, const float* x, int64_t x_stride,
         const float* sx, int64_t sx_stride, int nx, float* out) {
  const auto* row = reinterpret_cast<const Block*>(w);
  Unpacked u;
  float acc[2][kMaxFloatTile][kLanes] = {};  // [block parity][activation row][lane]
  for (int64_t b = 0; b < nblocks; ++b) {
    unpack(row[b], u);  // once per block, shared by the nx activation rows
    const int64_t p = b & 1;
    for (int i = 0; i < nx; ++i) {
      const float* xb = x + i * x_stride + b * kQuantBlock;
      for (int l = 0; l < kLanes; ++l) {
        float s = u.q[l] * xb[l];
        s += u.q[8 + l] * xb[8 + l];
        s += u.q[16 + l] * xb[16 + l];
        s += u.q[24 + l] * xb[24 + l];
        acc[p][i][l] += u.d * s;
      }
    }
  }
  for (int i = 0; i < nx; ++i) {
    float a[kLanes];
    for (int l = 0; l < kLanes; ++l) a[l] = acc[0][i][l] + acc[1][i][l];
    if constexpr (kHasMin) {
      float macc[kLanes] = {};
      for (int64_t g = 0; g < nblocks; g += kLanes) {
        for (int l = 0; l < kLanes; ++l) macc[l] += mins[g + l] * sx[i * sx_stride + g + l];
      }
      for (int l = 0; l < kLanes; ++l) a[l] += macc[l];
    }
    out[i] = lane_sum(a);
  }
}

void q4_1_mins(const uint8_t* w, int64_t nblocks, float* out) {
  const auto* blk = reinterpret_cast<const BlockQ4_1*>(w);
  for (int64_t b = 0; b < nblocks; ++b) out[b] = fp16_to_fp32(blk[b].m);
}

}  // namespace

const FloatQuantKernels& scalar_float_kernels() {
  static const FloatQuantKernels table{dot<BlockQ8_0, false>, dot<BlockQ4_0, false>,
                                       dot<BlockQ4_1, true>, q4_1_mins};
  return table;
}

}  // namespace plinth::cpu::detail
