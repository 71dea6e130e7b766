// What backend_cpu's `"matmul": "auto"` (the default) runs on this CPU, and why.
#pragma once

#include <string>

#include "isa.hpp"
#include "matmul.hpp"

namespace plinth::cpu {

/// A resolved `auto`: the path and the reason shown in the start-up log.
struct MatmulChoice {
  MatmulPath path = MatmulPath::kFloat;
  std::string reason;  // e.g. "AVX-512 VNNI", "no AVX2: the int8 path would run its scalar kernel"
};

/// `auto` given the fastest Int8 kernel the CPU runs (`best_int8_kernel()`, isa.hpp): `Int8`
/// (int8 activations, llama.cpp's numerics) for a vector kernel — AVX-512 VNNI, AVX-VNNI or AVX2,
/// the reason naming it — and `Float` (f32 activations, greedy output equal to the float
/// reference) for `Int8Kernel::kScalar`, which is an order of magnitude slower than `Float`. Both
/// paths are batch-invariant, so `auto` keeps the temperature-0 promise of docs/architecture.md
/// ('Batch invariance'). The CPU's best kernel, not int8_kernel(): a test forcing a lower ISA or
/// kernel does not change what `auto` means. Pure; never throws.
MatmulChoice choose_auto_matmul(Int8Kernel best = best_int8_kernel());

}  // namespace plinth::cpu
