// Compute-peak kernels: independent chains of one multiply-add instruction on registers, enough
// chains to cover the instruction's latency, so the loop runs at the instruction's throughput.
// Each kernel runs `iters` iterations and returns a value derived from every accumulator (the
// caller sinks it, so the compiler cannot drop the work). Thread-safe; no memory traffic.
#pragma once

#include <cstdint>

#include "cpu_info.hpp"

namespace plinth::roofline {

/// A peak kernel and the multiply-adds one iteration performs.
struct PeakKernel {
  Isa isa = Isa::kScalar;
  uint64_t macs_per_iter = 0;  // int8 × int8 → int32 MACs, or f32 FMAs (1 MAC = 2 ops)
  double (*run)(uint64_t iters) = nullptr;
};

/// The int8 dot-product kernel for `isa` (Avx512Vnni: 16 chains of vpdpbusd zmm, 64 MACs each;
/// Avx2: 11 chains of vpmaddubsw + vpmaddwd + vpaddd ymm, 32 MACs each; Scalar: int32 loops).
/// Throws std::invalid_argument for Isa::kAvx512 (no int8 kernel of its own: use Avx2).
PeakKernel int8_kernel(Isa isa);

/// The f32 FMA kernel for `isa` (Avx512: 16 chains of vfmadd zmm, 16 FMAs each; Avx2: 12 chains
/// of vfmadd ymm, 8 each; Scalar: 8 chains of std::fma). Isa::kAvx512Vnni runs the Avx512 kernel.
PeakKernel f32_kernel(Isa isa);

// Per-ISA entry points (peak_avx512.cpp, peak_avx2.cpp, peak_scalar.cpp); call only on a CPU that
// has the ISA (cpu_info()).
double int8_avx512_vnni(uint64_t iters);
double f32_avx512(uint64_t iters);
double int8_avx2(uint64_t iters);
double f32_avx2(uint64_t iters);
double int8_scalar(uint64_t iters);
double f32_scalar(uint64_t iters);

inline constexpr uint64_t kInt8Avx512VnniMacs = uint64_t{16} * 64;
inline constexpr uint64_t kF32Avx512Macs = uint64_t{16} * 16;
inline constexpr uint64_t kInt8Avx2Macs = uint64_t{11} * 32;
inline constexpr uint64_t kF32Avx2Macs = uint64_t{12} * 8;
inline constexpr uint64_t kInt8ScalarMacs = 8;
inline constexpr uint64_t kF32ScalarMacs = 8;

}  // namespace plinth::roofline
