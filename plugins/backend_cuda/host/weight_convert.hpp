// GGUF tensors to bfloat16 for the device: every tensor type backend_cpu reads (the SDK's format
// table, plinth/ggml_format.hpp: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K .. Q6_K,
// IQ4_NL, IQ4_XS) is dequantized to f32 by the SDK's one decoder, exactly as gguf-py does, then
// rounded to bf16. The conversions f32 <-> bf16 / f16 are the SDK's too. Pure C++.
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

/// Checks that `t` can be converted: struct_size covers the view, dtype is a row of the format
/// table, dims are valid (tensor_elements), dims[0] (ne0, the contiguous row) is a multiple of
/// the block size (32, or 256 for the K-quants and IQ4_XS), nbytes == elements / block elements *
/// block bytes (the table's) and data is not NULL.
/// Throws std::invalid_argument "weight <name> (<dtype>, dims [...]): <what> ; <fix>".
void check_convertible(const plinth_tensor_view& t);

/// Converts `t` to bf16, element order unchanged (ggml order: dims[0] contiguous, so a linear
/// layer's weight [in = ne0, out = ne1] becomes a row-major bf16 [out, in] matrix).
/// Dequantization: ggml::decode_blocks (per 16 elements D·q, + M for the types with a minimum,
/// each in f32 as gguf-py computes), bit-identical to backend_cpu's dequantize(), then
/// f32_to_bf16. F16 and F32 round through f32 (exact) to bf16; BF16 is copied. Errors: as
/// check_convertible. Thread-safe.
std::vector<uint16_t> to_bf16(const plinth_tensor_view& t);

/// As to_bf16, writing into caller memory (e.g. pinned staging memory): out[out_elements],
/// out_elements must equal tensor_elements(t), else std::invalid_argument naming the tensor.
void to_bf16_into(const plinth_tensor_view& t, uint16_t* out, uint64_t out_elements);

/// The format table's name ("Q4_K" ...), or "type id <n> (unsupported)" for messages.
std::string dtype_name(int32_t dtype);

}  // namespace plinth::cuda
