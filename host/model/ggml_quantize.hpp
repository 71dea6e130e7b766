// Encoding f32 values into the ggml tensor types GGUF stores (ggml_type.hpp), bit for bit as
// ggml's reference quantizers write them (ggml/src/ggml-quants.c quantize_row_q4_0_ref,
// quantize_row_q4_1_ref, quantize_row_q8_0_ref; ggml/src/ggml-impl.h fp32 <-> fp16 / bf16), and the
// matching decoders (dequantize_row_*). For writing synthetic models (synthetic_model.hpp) and for
// tests. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/ggml_type.hpp"

namespace plinth {

/// IEEE 754 binary16 bits of `f`, rounded to nearest even; overflow -> inf, NaN stays NaN.
uint16_t f32_to_f16_bits(float f);
/// The value of binary16 bits `h` (exact).
float f16_bits_to_f32(uint16_t h);
/// bfloat16 bits of `f` (the top 16 bits of the f32, rounded to nearest even; NaN stays NaN).
uint16_t f32_to_bf16_bits(float f);
/// The value of bfloat16 bits `b` (exact).
float bf16_bits_to_f32(uint16_t b);

/// `values` encoded as `type`, in ggml's byte layout: [values.size() / block_size blocks].
/// Q4_0: d = v/-8 of the value v of largest magnitude, q = min(15, trunc(x/d + 8.5));
/// Q4_1: d = (max-min)/15, m = min, q = min(15, trunc((x-m)/d + 0.5)); Q8_0: d = amax/127,
/// q = round(x/d); element j of a 4-bit block is the low nibble of byte j (j < 16), else the high
/// nibble of byte j-16. Throws std::invalid_argument when values.size() is not a multiple of the
/// type's block size, or for a type plinth only reads (Q5_0, the K-quants, IQ4).
std::vector<std::byte> ggml_quantize(GgmlType type, std::span<const float> values);

/// The f32 values of `data` (`count` elements of any type of the format table), as gguf-py
/// dequantizes them (the SDK's one decoder, plinth/ggml_format.hpp). Throws
/// std::invalid_argument when data.size() is not the byte size of `count` elements.
std::vector<float> ggml_dequantize(GgmlType type, std::span<const std::byte> data, size_t count);

}  // namespace plinth
