// Random but well-formed blocks of the quantized types plinth reads and cannot encode (Q5_0,
// Q5_1, the K-quants, IQ4_NL, IQ4_XS), for synthetic test models: every bit pattern of a block's
// quants and scale codes is a valid block, so random bytes with sane f16 scale fields are one.
// Deterministic (the bytes come from the values' bits), platform-independent. Pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "model/ggml_type.hpp"

namespace plinth {

/// `values.size() / block size` blocks of `type` (any quantized type of the format table): the
/// quants and scale codes pseudo-random bytes seeded by the block's values (SplitMix64 over their
/// FNV-1a hash), the f16 scale field d (and the minimum field: dmin, or Q4_1 / Q5_1's m) set so
/// that the decoded block has mean ~0 and the root mean square of its `values` (rounded to f16).
/// The decoded weights have no relation to `values` beyond that scale: a random matrix of the
/// same magnitude. Throws std::invalid_argument for a float type or a count that is not a
/// multiple of the block size.
std::vector<std::byte> ggml_random_blocks(GgmlType type, std::span<const float> values);

}  // namespace plinth
