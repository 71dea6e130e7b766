// The roofline bounds of bench_forward's and bench_generate's figures, and their text.
#pragma once

#include <string>
#include <vector>

#include "model_cost.hpp"
#include "roofline.hpp"

namespace plinth::roofline {

/// Which compute peak bounds a backend_cpu matmul path: "int8" and "simd" quantize activations to
/// int8 (int8 dot-product peak), as "auto" does where this CPU has AVX2 (backend_cpu's
/// matmul_choice.hpp: int8 with AVX2, AVX-VNNI or AVX-512 VNNI); every other path multiplies in
/// f32 (FMA peak).
bool matmul_is_int8(const std::string& matmul);

/// The shape of a bench's measurements.
struct BenchShape {
  int prompt_tokens = 512;    // prefill: one prompt, logits of its last token only
  double decode_context = 0;  // mean positions a decode token attends to
  int batch = 16;             // sequences of the batched decode
};

/// Bounds (tokens/s) of the three figures at `threads` threads.
struct FigureBounds {
  double prefill = 0;    // compute-bound: int8 or f32 peak, attention at the f32 peak
  double decode_b1 = 0;  // the whole model's GGUF bytes per token at the DRAM triad rate
  double decode_bn = 0;  // batch decode: weights once per step (DRAM) vs the compute peak
};

/// step_bound_tps for each figure. Throws std::out_of_range when `b` lacks a figure it needs.
FigureBounds figure_bounds(const Bounds& b, const ModelCost& cost, bool int8, int threads,
                           const BenchShape& shape);

/// Lines (each ending in '\n') that name the bounds' source, the CPU, the peaks and bandwidths at
/// `threads`, the model's per-token costs, and that the bounds use the GGUF bytes (which
/// backend_cpu's packed panel copies equal, plugins/backend_cpu/README.md).
std::string describe_bounds(const Bounds& b, const ModelCost& cost, bool int8,
                            const std::vector<int>& threads);

/// "0.42 of 1234.5" (value / bound and the bound), or "n/a" when bound ≤ 0.
std::string of_bound(double value, double bound);

}  // namespace plinth::roofline
