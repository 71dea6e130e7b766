// Portable peak kernels and the choice of kernel per ISA.
#include <cmath>
#include <stdexcept>
#include <string>

#include "peaks.hpp"

namespace plinth::roofline {

double int8_scalar(uint64_t iters) {
  int32_t acc[8] = {};
  volatile int8_t va = 3, vb = -2;  // unknown to the compiler, so the loop is not folded
  // NOLINTNEXTLINE(bugprone-signed-char-misuse): the int8 operands are signed on purpose
  const int32_t a = va, b = vb;
  for (uint64_t i = 0; i < iters; ++i) {
    for (int32_t& x : acc) x += a * b;
  }
  double s = 0;
  for (int32_t x : acc) s += x;
  return s;
}

double f32_scalar(uint64_t iters) {
  float acc[8];
  for (int k = 0; k < 8; ++k) acc[k] = static_cast<float>(k);
  volatile float vm = 0.999f, vc = 0.001f;
  const float m = vm, c = vc;
  for (uint64_t i = 0; i < iters; ++i) {
    for (float& x : acc) x = std::fma(x, m, c);
  }
  double s = 0;
  for (float x : acc) s += x;
  return s;
}

PeakKernel int8_kernel(Isa isa) {
  switch (isa) {
#if defined(PLINTH_ROOFLINE_X86)
    case Isa::kAvx512Vnni:
      return {isa, kInt8Avx512VnniMacs, &int8_avx512_vnni};
    case Isa::kAvx2:
      return {isa, kInt8Avx2Macs, &int8_avx2};
#endif
    case Isa::kScalar:
      return {isa, kInt8ScalarMacs, &int8_scalar};
    default:
      break;
  }
  throw std::invalid_argument(std::string("int8_kernel: no int8 kernel for ") + isa_name(isa) +
                              " in this build; use cpu_info().int8_isa");
}

PeakKernel f32_kernel(Isa isa) {
  switch (isa) {
#if defined(PLINTH_ROOFLINE_X86)
    case Isa::kAvx512:
    case Isa::kAvx512Vnni:
      return {Isa::kAvx512, kF32Avx512Macs, &f32_avx512};
    case Isa::kAvx2:
      return {isa, kF32Avx2Macs, &f32_avx2};
#endif
    case Isa::kScalar:
      return {isa, kF32ScalarMacs, &f32_scalar};
    default:
      break;
  }
  throw std::invalid_argument(std::string("f32_kernel: no f32 kernel for ") + isa_name(isa) +
                              " in this build; use cpu_info().f32_isa");
}

}  // namespace plinth::roofline
