// spec_decode — prompt lookup (n-gram) proposals, as vLLM's n-gram proposer: the longest suffix
// n-gram of the sequence (max_n down to min_n tokens) that also occurs earlier in its prompt +
// output proposes the tokens that followed its most recent earlier occurrence. No model runs;
// strongest where the output copies the input (rewriting, extraction, code edits).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace plinth::spec_decode {

/// Up to `k` tokens following the most recent earlier occurrence of the longest matching suffix
/// n-gram of `tokens` (sizes max_n .. min_n). Empty when nothing matches. O(len · max_n).
std::vector<int32_t> ngram_propose(std::span<const int32_t> tokens, uint32_t min_n, uint32_t max_n,
                                   uint32_t k);

}  // namespace plinth::spec_decode
