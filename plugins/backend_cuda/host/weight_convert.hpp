// GGUF tensors to bfloat16 for the device: every tensor type backend_cpu reads (F32, F16, BF16,
// Q8_0, Q4_0, Q4_1) is dequantized to f32 exactly as ggml / gguf-py do, then rounded to bf16.
// Sources: the GGUF spec (ggml docs/gguf.md) and ggml/src/ggml-common.h + ggml-quants.c
// (block_q8_0, block_q4_0, block_q4_1 and their dequantize_row_* functions). Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plinth/model.h"

namespace plinth::cuda {

/// float → bfloat16 bits, IEEE round-to-nearest-even on the 16 dropped mantissa bits (ties to
/// the even bf16); finite values too large round to ±inf as IEEE prescribes; ±inf stay ±inf;
/// every NaN stays a NaN (sign kept, quiet bit set) instead of rounding into inf. Denormals are
/// rounded like any other value (no flush to zero). Thread-safe, no allocation.
uint16_t f32_to_bf16(float x);

/// bfloat16 bits → float, exact (the bits become the high half of the float).
float bf16_to_f32(uint16_t b);

/// IEEE binary16 bits → float, exact for every input (subnormals, ±inf, NaN payloads kept).
float f16_to_f32(uint16_t h);

/// Elements of `t`: the product of dims[0 .. n_dims). Throws std::invalid_argument naming the
/// tensor when n_dims is outside 1..4, a dim is 0 or the product overflows.
uint64_t tensor_elements(const plinth_tensor_view& t);

/// Checks that `t` can be converted: struct_size covers the view, dtype is one of F32, F16,
/// BF16, Q8_0, Q4_0, Q4_1, dims are valid (tensor_elements), dims[0] (ne0, the contiguous row)
/// is a multiple of 32 for the block types, nbytes == elements / block elements * block bytes
/// (4, 2, 2 bytes per element; 34, 18, 20 bytes per 32-element block) and data is not NULL.
/// Throws std::invalid_argument "weight <name> (<dtype>, dims [...]): <what> ; <fix>".
void check_convertible(const plinth_tensor_view& t);

/// Converts `t` to bf16, element order unchanged (ggml order: dims[0] contiguous, so a linear
/// layer's weight [in = ne0, out = ne1] becomes a row-major bf16 [out, in] matrix).
/// Dequantization, per 32-element block with d, m the block's f16 scale and min as f32:
///   Q8_0: x[j] = q[j] * d                     (q int8)
///   Q4_0: x[j] = ((qs[j] & 15) - 8) * d,  x[j + 16] = ((qs[j] >> 4) - 8) * d,  j < 16
///   Q4_1: x[j] = (qs[j] & 15) * d + m,    x[j + 16] = (qs[j] >> 4) * d + m   (two roundings)
/// each in f32, bit-identical to backend_cpu's dequantize(), then f32_to_bf16. F16 and F32
/// round through f32 (exact) to bf16; BF16 is copied. Errors: as check_convertible. Thread-safe.
std::vector<uint16_t> to_bf16(const plinth_tensor_view& t);

/// As to_bf16, writing into caller memory (e.g. pinned staging memory): out[out_elements],
/// out_elements must equal tensor_elements(t), else std::invalid_argument naming the tensor.
void to_bf16_into(const plinth_tensor_view& t, uint16_t* out, uint64_t out_elements);

/// "F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", or "type id <n> (unsupported)" for messages.
std::string dtype_name(int32_t dtype);

}  // namespace plinth::cuda
