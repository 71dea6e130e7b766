// Internal: the library baseline of matmul (dequantize to f32 + OpenBLAS sgemm).
#pragma once

#include <cstdint>

#include "thread_pool.hpp"
#include "weight_types.hpp"

namespace plinth::cpu::detail {

/// y[n, w.rows] = x[n, w.cols] · Wᵀ: each pool participant dequantizes its output rows in chunks
/// of ≤ 1 MiB of f32 and calls cblas_sgemm on them; OpenBLAS itself runs single-threaded.
void matmul_blas(const WeightView& w, const float* x, int64_t n, float* y, ThreadPool& pool);

}  // namespace plinth::cpu::detail
