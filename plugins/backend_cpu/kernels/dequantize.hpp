// Weight → float conversion (embedding lookup, the BLAS baseline, tests).
#pragma once

#include <cstdint>

#include "weight_types.hpp"

namespace plinth::cpu {

/// Dequantizes `count` elements starting at element index `first` of a row-major weight stored
/// in `data` (element index = row * cols + col, so one embedding row is first = token * cols,
/// count = cols). For the block types `first` and `count` must be multiples of the block size
/// (32, or 256 for the K-quants and IQ4_XS).
/// Results are bit-identical to gguf-py `gguf.quants.dequantize` (the SDK's decoder,
/// plinth/ggml_format.hpp: `d*q + m` types with two float roundings, no fused multiply-add). Writes
/// out[count]. Throws std::invalid_argument on a null pointer, negative range or misaligned block
/// range. Thread-safe; no allocation.
void dequantize(WeightType type, const void* data, int64_t first, int64_t count, float* out);

/// Dequantizes rows [row_begin, row_end) of `w` into out[(row_end - row_begin), w.cols].
void dequantize_rows(const WeightView& w, int64_t row_begin, int64_t row_end, float* out);

}  // namespace plinth::cpu
