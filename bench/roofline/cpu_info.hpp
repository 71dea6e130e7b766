// The CPU's name and the instruction sets the roofline kernels may use, checked at run time.
#pragma once

#include <string>

namespace plinth::roofline {

/// Kernel family a peak measurement runs.
enum class Isa {
  kScalar,     // portable C++ (non-x86, or an x86 without AVX2 + FMA)
  kAvx2,       // 256-bit: int8 vpmaddubsw + vpmaddwd + vpaddd, f32 vfmadd231ps ymm
  kAvx512,     // 512-bit f32 vfmadd231ps zmm (avx512f)
  kAvx512Vnni  // 512-bit int8 vpdpbusd zmm (avx512f + avx512bw + avx512vnni)
};

/// What this CPU offers. Thread-safe (reads /proc/cpuinfo and cpuid on each call).
struct CpuInfo {
  std::string model;            // /proc/cpuinfo "model name" of the first CPU, or "unknown"
  Isa int8_isa = Isa::kScalar;  // best int8 dot-product path: Avx512Vnni, Avx2 or Scalar
  Isa f32_isa = Isa::kScalar;   // best f32 FMA path: Avx512, Avx2 or Scalar
};

/// Detects the CPU (GCC/Clang __builtin_cpu_supports, as plugins/backend_cpu/kernels/isa.cpp).
CpuInfo cpu_info();

/// "scalar", "avx2", "avx512", "avx512-vnni".
const char* isa_name(Isa isa);

}  // namespace plinth::roofline
