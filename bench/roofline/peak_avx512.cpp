// AVX-512 peak kernels; this file is compiled with -mavx512f -mavx512bw -mavx512vnni.
// The loops are inline assembly with the accumulators in fixed registers (zmm16..zmm31): written
// with intrinsics, GCC 12 shuffles an accumulator array through moves and a stack spill each
// iteration, which measures the compiler rather than the core.
#include <immintrin.h>

#include "peaks.hpp"

namespace plinth::roofline {

double int8_avx512_vnni(uint64_t iters) {
  // vpdpbusd: u8 x s8, 4 products summed into each int32 lane, 64 MACs per zmm. Latency ~5
  // cycles, up to 2 per cycle: 16 independent accumulators keep both ports busy.
  if (iters == 0) return 0;
  alignas(64) int8_t a[64], b[64];
  alignas(64) int32_t out[16];
  for (int i = 0; i < 64; ++i) a[i] = 3, b[i] = -2;
  asm volatile(
      "vmovdqu64 (%[a]), %%zmm0\n\t"
      "vmovdqu64 (%[b]), %%zmm1\n\t"
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"
      "vpxord %%zmm19, %%zmm19, %%zmm19\n\t"
      "vpxord %%zmm20, %%zmm20, %%zmm20\n\t"
      "vpxord %%zmm21, %%zmm21, %%zmm21\n\t"
      "vpxord %%zmm22, %%zmm22, %%zmm22\n\t"
      "vpxord %%zmm23, %%zmm23, %%zmm23\n\t"
      "vpxord %%zmm24, %%zmm24, %%zmm24\n\t"
      "vpxord %%zmm25, %%zmm25, %%zmm25\n\t"
      "vpxord %%zmm26, %%zmm26, %%zmm26\n\t"
      "vpxord %%zmm27, %%zmm27, %%zmm27\n\t"
      "vpxord %%zmm28, %%zmm28, %%zmm28\n\t"
      "vpxord %%zmm29, %%zmm29, %%zmm29\n\t"
      "vpxord %%zmm30, %%zmm30, %%zmm30\n\t"
      "vpxord %%zmm31, %%zmm31, %%zmm31\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm16\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm17\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm18\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm19\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm20\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm21\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm22\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm23\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm24\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm25\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm26\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm27\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm28\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm29\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm30\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm31\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vpaddd %%zmm17, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm18, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm19, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm20, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm21, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm22, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm23, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm24, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm25, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm26, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm27, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm28, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm29, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm30, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm31, %%zmm16, %%zmm16\n\t"
      "vmovdqu64 %%zmm16, (%[out])\n\t"
      : [n] "+r"(iters)
      : [a] "r"(a), [b] "r"(b), [out] "r"(out)
      : "cc", "memory", "xmm0", "xmm1", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
        "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
  double r = 0;
  for (int32_t x : out) r += x;
  return r;
}

double f32_avx512(uint64_t iters) {
  // vfmadd213ps zmm: acc = acc * m + c; latency 4, up to 2 per cycle: 16 chains. The fixed point
  // c / (1 - m) keeps every value bounded (no overflow, no denormals).
  if (iters == 0) return 0;
  alignas(64) float m[16], c[16], out[16];
  for (int i = 0; i < 16; ++i) m[i] = 0.999f, c[i] = 0.001f;
  asm volatile(
      "vmovups (%[m]), %%zmm0\n\t"
      "vmovups (%[c]), %%zmm1\n\t"
      "vmovaps %%zmm1, %%zmm16\n\t"
      "vmovaps %%zmm1, %%zmm17\n\t"
      "vmovaps %%zmm1, %%zmm18\n\t"
      "vmovaps %%zmm1, %%zmm19\n\t"
      "vmovaps %%zmm1, %%zmm20\n\t"
      "vmovaps %%zmm1, %%zmm21\n\t"
      "vmovaps %%zmm1, %%zmm22\n\t"
      "vmovaps %%zmm1, %%zmm23\n\t"
      "vmovaps %%zmm1, %%zmm24\n\t"
      "vmovaps %%zmm1, %%zmm25\n\t"
      "vmovaps %%zmm1, %%zmm26\n\t"
      "vmovaps %%zmm1, %%zmm27\n\t"
      "vmovaps %%zmm1, %%zmm28\n\t"
      "vmovaps %%zmm1, %%zmm29\n\t"
      "vmovaps %%zmm1, %%zmm30\n\t"
      "vmovaps %%zmm1, %%zmm31\n\t"
      "1:\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm16\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm17\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm18\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm19\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm20\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm21\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm22\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm23\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm24\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm25\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm26\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm27\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm28\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm29\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm30\n\t"
      "vfmadd213ps %%zmm1, %%zmm0, %%zmm31\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vaddps %%zmm17, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm18, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm19, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm20, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm21, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm22, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm23, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm24, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm25, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm26, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm27, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm28, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm29, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm30, %%zmm16, %%zmm16\n\t"
      "vaddps %%zmm31, %%zmm16, %%zmm16\n\t"
      "vmovups %%zmm16, (%[out])\n\t"
      : [n] "+r"(iters)
      : [m] "r"(m), [c] "r"(c), [out] "r"(out)
      : "cc", "memory", "xmm0", "xmm1", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
        "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
  double r = 0;
  for (float x : out) r += x;
  return r;
}

}  // namespace plinth::roofline
