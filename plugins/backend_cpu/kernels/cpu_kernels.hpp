// The CPU kernels of backend_cpu in one include: weight formats, dispatch, pool, matmul,
// dequantize and the f32 helpers.
#pragma once

#include "dequantize.hpp"    // IWYU pragma: export
#include "float_ops.hpp"     // IWYU pragma: export
#include "isa.hpp"           // IWYU pragma: export
#include "matmul.hpp"        // IWYU pragma: export
#include "thread_pool.hpp"   // IWYU pragma: export
#include "weight_types.hpp"  // IWYU pragma: export
