#include "sampling/masked_argmax.hpp"

#include <bit>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "sampling/non_finite_logits.hpp"

namespace plinth {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Throws the sampler's error for the first NaN or +inf of `logits`, if any. The count is one
// branch-free pass the compiler vectorizes; the slow search runs only on a bad row.
void check_finite_or_minus_inf(std::span<const float> logits) {
  size_t bad = 0;
  for (const float v : logits) bad += !(v < kInf) ? 1u : 0u;  // NaN compares false
  if (bad == 0) return;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] < kInf) continue;
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(logits[i]));
    throw NonFiniteLogits({}, "logits[" + std::to_string(i) + "] is " + value +
                                  " as the model produced it; the model produced a "
                                  "non-finite value");
  }
}

}  // namespace

int32_t masked_argmax(std::span<const float> logits, std::span<const uint32_t> mask) {
  const size_t vocab = logits.size();
  if (vocab == 0) throw std::invalid_argument("masked_argmax: logits are empty (expected [vocab])");
  const size_t words = (vocab + 31) / 32;
  if (!mask.empty() && mask.size() < words) {
    throw std::invalid_argument("masked_argmax: the mask has " + std::to_string(mask.size()) +
                                " words for a vocabulary of " + std::to_string(vocab) +
                                " tokens (expected " + std::to_string(words) + ")");
  }
  check_finite_or_minus_inf(logits);
  float best = -kInf;
  int64_t best_id = -1;
  if (mask.empty()) {
    for (size_t i = 0; i < vocab; ++i) {
      if (logits[i] > best) {  // strict: the lowest id wins ties
        best = logits[i];
        best_id = static_cast<int64_t>(i);
      }
    }
  } else {
    for (size_t w = 0; w < words; ++w) {
      uint32_t bits = mask[w];
      const size_t base = w * 32;
      if (vocab - base < 32) bits &= (1u << (vocab - base)) - 1u;  // bits past vocab
      while (bits != 0) {
        const size_t i = base + static_cast<size_t>(std::countr_zero(bits));
        bits &= bits - 1u;
        if (logits[i] > best) {  // ascending ids, strict: the lowest id wins ties
          best = logits[i];
          best_id = static_cast<int64_t>(i);
        }
      }
    }
  }
  if (best_id >= 0) return static_cast<int32_t>(best_id);
  if (!mask.empty()) {
    throw NonFiniteLogits("response_format",
                          "every token the output's grammar allows next has a -inf logit (after "
                          "the min_tokens mask and the penalties); no token can be sampled");
  }
  throw NonFiniteLogits({},
                        "every logit is -inf as the model produced it; no token can be "
                        "sampled (the model produced a non-finite row)");
}

}  // namespace plinth
