// What backend_cpu's `"matmul": "auto"` (the default) runs on this CPU, and why.
#pragma once

#include <string>

#include "isa.hpp"
#include "matmul.hpp"

namespace plinth::cpu {

/// The CPU features the choice looks at (CpuFeatures::detect() reads this CPU's).
struct CpuFeatures {
  Isa isa = Isa::Scalar;     // best_isa(): the widest kernel family the CPU runs
  bool avx512_vnni = false;  // cpu_has_avx512_vnni(): AVX-512F + BW + VNNI (vpdpbusd)
  bool avx_vnni = false;     // AVX-VNNI (the VEX-encoded vpdpbusd of Alder Lake / Zen 5)

  /// This CPU's features, read once with __builtin_cpu_supports (no ISA forced by a test counts:
  /// best_isa(), not active_isa()). Thread-safe.
  static CpuFeatures detect();
};

/// A resolved `auto`: the path and the reason shown in the start-up log.
struct MatmulChoice {
  MatmulPath path = MatmulPath::Float;
  std::string reason;  // e.g. "AVX-512 VNNI", "no AVX2: the int8 path has only its scalar kernel"
};

/// `auto`: `Int8` (int8 activations, llama.cpp's numerics; batch-invariant) where the CPU runs the
/// int8 path with a vector kernel — AVX-512 VNNI, AVX-VNNI or AVX2 (`has_avx2(f.isa)`), reason
/// naming the best of the three the CPU has — and `Float` (f32 activations, greedy output equal to
/// the float reference; batch-invariant) elsewhere, where the int8 path would run its portable
/// scalar kernel, an order of magnitude slower. Both are batch-invariant, so `auto` keeps the
/// temperature-0 promise of docs/architecture.md ('Batch invariance'). Pure; never throws.
MatmulChoice choose_auto_matmul(const CpuFeatures& f);

}  // namespace plinth::cpu
