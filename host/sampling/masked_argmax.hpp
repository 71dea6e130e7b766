#pragma once
// The greedy choice straight from a logits row, under a grammar's token mask or none: what
// Sampler::sample() returns at temperature 0 without penalties, logit_bias or min_tokens, without
// the sampler's copy of the row and the logprob's softmax over the whole vocabulary (structured
// outputs' per-token cost, engine/sequence.hpp).

#include <cstdint>
#include <span>

namespace plinth {

/// The id of the largest logit of `logits` ([vocab] float32) among the tokens whose bit is set in
/// `mask` (bit t % 32 of word t / 32, at least ceil(vocab / 32) words; bits past vocab are
/// ignored), the lowest id on ties: Sampler::sample() at temperature 0 with
/// Sampler::set_allowed(mask). An empty `mask` allows every token (Sampler::sample() without a
/// mask).
///
/// Errors as the sampler's: NaN or +inf anywhere in the row, masked or not, throws
/// NonFiniteLogits with an empty param (the model produced it); every allowed logit -inf throws
/// NonFiniteLogits naming "response_format" with a mask, with an empty param without one.
/// std::invalid_argument for a mask shorter than ceil(vocab / 32) words. Pure; any thread.
int32_t masked_argmax(std::span<const float> logits, std::span<const uint32_t> mask);

}  // namespace plinth
