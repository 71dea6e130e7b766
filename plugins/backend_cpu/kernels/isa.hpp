// Which instruction set the kernels use, chosen at run time (gemma.cpp-style dynamic dispatch).
#pragma once

namespace plinth::cpu {

/// Kernel families, each a superset of the one before. `Avx2` needs AVX2 + FMA + F16C; `Avx512`
/// also AVX-512F (only the Float path's panel kernels have an AVX-512 version; every other kernel
/// runs its AVX2 version there); `Scalar` runs on any x86-64 (or other) CPU.
enum class Isa { kScalar, kAvx2, kAvx512 };

/// True for Avx2 and Avx512 (the AVX2 kernels may run).
inline bool has_avx2(Isa isa) {
  return isa != Isa::kScalar;
}

/// True when the CPU has AVX-512F, BW and VNNI (vpdpbusd), which the Int8 path's vector kernel
/// needs on top of `Isa::kAvx512` (checked once).
bool cpu_has_avx512_vnni();

/// The Int8 path's kernels (matmul_int8.hpp), each faster than the one before; all give the same
/// bits. `Avx2`: vpmaddubsw + vpmaddwd (AVX2 + FMA + F16C); `AvxVnni`: the VEX-encoded 256-bit
/// vpdpbusd (AVX-VNNI, e.g. Alder Lake, Zen 5); `Avx512Vnni`: AVX-512F + BW + VNNI; `Scalar`: any
/// CPU.
enum class Int8Kernel { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

/// "scalar" / "avx2" / "avx-vnni" / "avx512-vnni".
const char* int8_kernel_name(Int8Kernel k);
/// True when this CPU has the instructions of `k` (checked once).
bool int8_kernel_supported(Int8Kernel k);
/// The fastest Int8 kernel this CPU runs.
Int8Kernel best_int8_kernel();
/// The Int8 kernel every int8 matmul call uses now: the fastest one this CPU supports that is
/// neither above the limit set_int8_kernel() set (initially best_int8_kernel(), or the kernel the
/// environment variable PLINTH_INT8_KERNEL names, read once, for benchmarks) nor above what
/// active_isa() allows (Scalar: scalar; Avx2: up to AvxVnni, which needs no AVX-512; Avx512: any),
/// so forcing `Isa::kScalar` also forces the scalar Int8 kernel.
Int8Kernel int8_kernel();
/// Sets the limit above (tests force each lower kernel to compare it with the others). Throws
/// std::invalid_argument when this CPU lacks `k`. Not to be called while kernels run on other
/// threads.
void set_int8_kernel(Int8Kernel k);

/// "scalar" / "avx2" / "avx512".
const char* isa_name(Isa isa);
/// The best family this CPU supports (checked once with __builtin_cpu_supports).
Isa best_isa();
/// The family every kernel call uses now; starts as best_isa(), or, for benchmarks, the family
/// the environment variable PLINTH_ISA names (scalar / avx2 / avx512, read once; capped at
/// best_isa(); another value is ignored with a warning on stderr). PLINTH_ISA=avx2 on an AVX-512
/// CPU runs what an AVX2-only CPU runs (the Float path's AVX2 panel kernels; the Int8 kernel at
/// most AvxVnni, see int8_kernel()).
Isa active_isa();
/// Selects the family for all later calls (tests force `Scalar` to check the fallback).
/// Throws std::invalid_argument when this CPU lacks it. Not to be called while kernels run on
/// other threads.
void set_active_isa(Isa isa);

}  // namespace plinth::cpu
