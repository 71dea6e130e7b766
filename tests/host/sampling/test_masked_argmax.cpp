// masked_argmax (the greedy fast path of structured outputs) against the Sampler it replaces:
// Sampler::sample() at temperature 0 with the same mask gives the same token on random rows and
// masks (vocabularies not a multiple of 32, ties, -inf logits, sparse and dense masks), and the
// same errors (NaN / +inf in a masked-out token, every allowed token -inf).
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "sampling/masked_argmax.hpp"
#include "sampling/non_finite_logits.hpp"
#include "sampling/sampler.hpp"

namespace plinth {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

int32_t sampler_greedy(const std::vector<float>& logits, const std::vector<uint32_t>& mask) {
  SamplingParams p;
  p.temperature = 0.0f;
  Sampler s(p);
  s.set_allowed(mask.empty() ? nullptr : mask.data());
  const std::vector<int32_t> none;
  return s.sample(logits, none, none).token;
}

TEST(MaskedArgmax, EqualsTheSamplersGreedyTokenOnRandomRowsAndMasks) {
  std::mt19937 rng(7);
  for (int round = 0; round < 600; ++round) {
    const size_t vocab = 1 + rng() % 300;
    // Few distinct values: ties are common; some -inf.
    std::vector<float> logits(vocab);
    for (float& l : logits) {
      const uint32_t r = rng() % 12;
      l = r == 0 ? -kInf : static_cast<float>(r % 5) - 2.0f;
    }
    std::vector<uint32_t> mask((vocab + 31) / 32 + rng() % 2);  // sometimes a spare word
    const uint32_t density = rng() % 4;                         // sparse .. all allowed
    for (uint32_t& w : mask) {
      for (uint32_t b = 0; b < 32; ++b) {
        if (density == 3 || rng() % 8 < 2 * density) w |= 1u << b;
      }
    }
    for (size_t t = vocab; t < mask.size() * 32; ++t) {
      mask[t / 32] |= 1u << (t % 32);  // bits past the vocabulary: ignored by both
    }
    bool any_finite = false;
    for (size_t t = 0; t < vocab; ++t) {
      any_finite = any_finite || (((mask[t / 32] >> (t % 32)) & 1u) != 0 && logits[t] > -kInf);
    }
    SCOPED_TRACE("round " + std::to_string(round) + ", vocab " + std::to_string(vocab));
    if (!any_finite) {
      EXPECT_THROW(sampler_greedy(logits, mask), NonFiniteLogits);
      EXPECT_THROW(masked_argmax(logits, mask), NonFiniteLogits);
      continue;
    }
    EXPECT_EQ(masked_argmax(logits, mask), sampler_greedy(logits, mask));
    bool unmasked_finite = false;
    for (float l : logits) unmasked_finite = unmasked_finite || l > -kInf;
    if (unmasked_finite) {
      EXPECT_EQ(masked_argmax(logits, {}), sampler_greedy(logits, {}));
    }
  }
}

TEST(MaskedArgmax, LowestIdWinsTiesAndMaskedTokensNeverWin) {
  const std::vector<float> logits = {1.0f, 5.0f, 5.0f, 2.0f, 5.0f};
  EXPECT_EQ(masked_argmax(logits, {}), 1);
  EXPECT_EQ(masked_argmax(logits, std::vector<uint32_t>{0b11100u}), 2);
  EXPECT_EQ(masked_argmax(logits, std::vector<uint32_t>{0b01001u}), 3);
  EXPECT_EQ(masked_argmax(logits, std::vector<uint32_t>{0b00001u}), 0);
}

TEST(MaskedArgmax, RefusesWhatTheSamplerRefuses) {
  std::vector<float> logits(40, 0.0f);
  std::vector<uint32_t> only_0(2, 0);
  only_0[0] = 1;
  // NaN or +inf in a token the mask excludes: the row is the model's fault all the same.
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), kInf}) {
    logits[37] = bad;
    try {
      masked_argmax(logits, only_0);
      FAIL() << "no NonFiniteLogits";
    } catch (const NonFiniteLogits& e) {
      EXPECT_EQ(e.param(), "");
      EXPECT_NE(std::string(e.what()).find("logits[37]"), std::string::npos) << e.what();
    }
    EXPECT_THROW(sampler_greedy(logits, only_0), NonFiniteLogits);
  }
  logits[37] = 0.0f;
  // Every allowed token -inf: the grammar's ("response_format"), as the sampler says.
  logits[0] = -kInf;
  try {
    masked_argmax(logits, only_0);
    FAIL() << "no NonFiniteLogits";
  } catch (const NonFiniteLogits& e) {
    EXPECT_EQ(e.param(), "response_format");
  }
  std::vector<float> all_minus_inf(40, -kInf);
  try {
    masked_argmax(all_minus_inf, {});
    FAIL() << "no NonFiniteLogits";
  } catch (const NonFiniteLogits& e) {
    EXPECT_EQ(e.param(), "");
  }
  EXPECT_THROW(masked_argmax(logits, std::vector<uint32_t>{1u}), std::invalid_argument)
      << "one word for 40 tokens";
  EXPECT_THROW(masked_argmax(std::vector<float>{}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace plinth
