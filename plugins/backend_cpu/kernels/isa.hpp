// Which instruction set the kernels use, chosen at run time (gemma.cpp-style dynamic dispatch).
#pragma once

namespace plinth::cpu {

/// Kernel families, each a superset of the one before. `Avx2` needs AVX2 + FMA + F16C; `Avx512`
/// also AVX-512F (only the Float path's panel kernels have an AVX-512 version; every other kernel
/// runs its AVX2 version there); `Scalar` runs on any x86-64 (or other) CPU.
enum class Isa { Scalar, Avx2, Avx512 };

/// True for Avx2 and Avx512 (the AVX2 kernels may run).
inline bool has_avx2(Isa isa) {
  return isa != Isa::Scalar;
}

/// True when the CPU has AVX-512F, BW and VNNI (vpdpbusd), which the Int8 path's vector kernel
/// needs on top of `Isa::Avx512` (checked once).
bool cpu_has_avx512_vnni();

/// "scalar" / "avx2" / "avx512".
const char* isa_name(Isa isa);
/// The best family this CPU supports (checked once with __builtin_cpu_supports).
Isa best_isa();
/// The family every kernel call uses now; starts as best_isa().
Isa active_isa();
/// Selects the family for all later calls (tests force `Scalar` to check the fallback).
/// Throws std::invalid_argument when this CPU lacks it. Not to be called while kernels run on
/// other threads.
void set_active_isa(Isa isa);

}  // namespace plinth::cpu
