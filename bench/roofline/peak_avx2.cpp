// AVX2 peak kernels; this file is compiled with -mavx2 -mfma. Inline assembly with fixed
// registers, as peak_avx512.cpp (and so that the compiler cannot hoist the loop-invariant
// vpmaddubsw / vpmaddwd of the int8 kernel out of the loop).
#include <immintrin.h>

#include "peaks.hpp"

namespace plinth::roofline {

double int8_avx2(uint64_t iters) {
  // The int8 dot product without VNNI (llama.cpp's AVX2 path): vpmaddubsw (u8 x s8, pairs summed
  // to s16), vpmaddwd by ones (to s32), vpaddd; 32 MACs per ymm, 11 chains (ymm5..ymm15).
  if (iters == 0) return 0;
  alignas(32) int8_t a[32], b[32];
  alignas(32) int16_t ones[16];
  alignas(32) int32_t out[8];
  for (int i = 0; i < 32; ++i) a[i] = 3, b[i] = -2;
  for (int16_t& x : ones) x = 1;
  asm volatile(
      "vmovdqu (%[a]), %%ymm0\n\t"
      "vmovdqu (%[b]), %%ymm1\n\t"
      "vmovdqu (%[ones]), %%ymm2\n\t"
      "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
      "vpxor %%ymm6, %%ymm6, %%ymm6\n\t"
      "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
      "vpxor %%ymm8, %%ymm8, %%ymm8\n\t"
      "vpxor %%ymm9, %%ymm9, %%ymm9\n\t"
      "vpxor %%ymm10, %%ymm10, %%ymm10\n\t"
      "vpxor %%ymm11, %%ymm11, %%ymm11\n\t"
      "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
      "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpxor %%ymm15, %%ymm15, %%ymm15\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm5, %%ymm5\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm2, %%ymm4, %%ymm4\n\t"
      "vpaddd %%ymm4, %%ymm6, %%ymm6\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm7, %%ymm7\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm2, %%ymm4, %%ymm4\n\t"
      "vpaddd %%ymm4, %%ymm8, %%ymm8\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm9, %%ymm9\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm2, %%ymm4, %%ymm4\n\t"
      "vpaddd %%ymm4, %%ymm10, %%ymm10\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm11, %%ymm11\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm2, %%ymm4, %%ymm4\n\t"
      "vpaddd %%ymm4, %%ymm12, %%ymm12\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm13, %%ymm13\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm2, %%ymm4, %%ymm4\n\t"
      "vpaddd %%ymm4, %%ymm14, %%ymm14\n\t"
      "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\t"
      "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\t"
      "vpaddd %%ymm3, %%ymm15, %%ymm15\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vpaddd %%ymm6, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm7, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm8, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm9, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm10, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm11, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm12, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm13, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm14, %%ymm5, %%ymm5\n\t"
      "vpaddd %%ymm15, %%ymm5, %%ymm5\n\t"
      "vmovdqu %%ymm5, (%[out])\n\t"
      "vzeroupper\n\t"
      : [n] "+r"(iters)
      : [a] "r"(a), [b] "r"(b), [ones] "r"(ones), [out] "r"(out)
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  double r = 0;
  for (int32_t x : out) r += x;
  return r;
}

double f32_avx2(uint64_t iters) {
  // vfmadd213ps ymm, 12 chains (ymm4..ymm15); bounded as f32_avx512.
  if (iters == 0) return 0;
  alignas(32) float m[8], c[8], out[8];
  for (int i = 0; i < 8; ++i) m[i] = 0.999f, c[i] = 0.001f;
  asm volatile(
      "vmovups (%[m]), %%ymm0\n\t"
      "vmovups (%[c]), %%ymm1\n\t"
      "vmovaps %%ymm1, %%ymm4\n\t"
      "vmovaps %%ymm1, %%ymm5\n\t"
      "vmovaps %%ymm1, %%ymm6\n\t"
      "vmovaps %%ymm1, %%ymm7\n\t"
      "vmovaps %%ymm1, %%ymm8\n\t"
      "vmovaps %%ymm1, %%ymm9\n\t"
      "vmovaps %%ymm1, %%ymm10\n\t"
      "vmovaps %%ymm1, %%ymm11\n\t"
      "vmovaps %%ymm1, %%ymm12\n\t"
      "vmovaps %%ymm1, %%ymm13\n\t"
      "vmovaps %%ymm1, %%ymm14\n\t"
      "vmovaps %%ymm1, %%ymm15\n\t"
      "1:\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm4\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm5\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm6\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm7\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm8\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm9\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm10\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm11\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm12\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm13\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm14\n\t"
      "vfmadd213ps %%ymm1, %%ymm0, %%ymm15\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vaddps %%ymm5, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm6, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm7, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm8, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm9, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm10, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm11, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm12, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm13, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm14, %%ymm4, %%ymm4\n\t"
      "vaddps %%ymm15, %%ymm4, %%ymm4\n\t"
      "vmovups %%ymm4, (%[out])\n\t"
      "vzeroupper\n\t"
      : [n] "+r"(iters)
      : [m] "r"(m), [c] "r"(c), [out] "r"(out)
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  double r = 0;
  for (float x : out) r += x;
  return r;
}

}  // namespace plinth::roofline
