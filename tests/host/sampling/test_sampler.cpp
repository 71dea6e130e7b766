// Sampler: filtered distributions against the NumPy reference, empirical frequencies, seeding,
// greedy ties, penalties, logprobs, bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sampling/sampler.hpp"

namespace plinth {
namespace {

using nlohmann::json;

json load_fixture() {
  // Regenerate: python3 tools/reference/sampling_fixture.py >
  // tests/fixtures/sampling/sampling_fixture.json
  const std::string path =
      std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/sampling/sampling_fixture.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

SamplingParams params_from(const json& j, uint64_t seed) {
  SamplingParams p;
  p.temperature = j.value("temperature", 1.0f);
  p.top_k = j.value("top_k", 0);
  p.top_p = j.value("top_p", 1.0f);
  p.min_p = j.value("min_p", 0.0f);
  p.repetition_penalty = j.value("repetition_penalty", 1.0f);
  p.presence_penalty = j.value("presence_penalty", 0.0f);
  p.frequency_penalty = j.value("frequency_penalty", 0.0f);
  p.seed = seed;
  return p;
}

struct Case {
  std::string name;
  SamplingParams params;
  std::vector<float> logits;
  std::vector<int32_t> prompt, output;
  std::vector<double> probs;
};

std::vector<Case> fixture_cases() {
  std::vector<Case> cases;
  const json fixture = load_fixture();
  for (const auto& c : fixture.at("cases")) {
    cases.push_back(
        {c.at("name").get<std::string>(), params_from(c.at("params"), 1234),
         c.at("logits").get<std::vector<float>>(), c.at("prompt").get<std::vector<int32_t>>(),
         c.at("output").get<std::vector<int32_t>>(), c.at("probs").get<std::vector<double>>()});
  }
  return cases;
}

/// Upper chi-square quantile at p = 1e-4 (Wilson–Hilferty); loose enough that a correct sampler
/// never trips it with these fixed seeds, tight enough that a wrong distribution always does.
double chi2_critical(int df) {
  const double z = 3.719;  // standard normal quantile at 1 - 1e-4
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

TEST(Sampler, FilteredDistributionMatchesNumpyReference) {
  const auto cases = fixture_cases();
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    Sampler s(c.params);
    const auto probs = s.probabilities(c.logits, c.prompt, c.output);
    ASSERT_EQ(probs.size(), c.probs.size()) << c.name;
    for (size_t i = 0; i < probs.size(); ++i) {
      EXPECT_NEAR(probs[i], c.probs[i], 1e-6) << c.name << " token " << i;
      // Filtered-out tokens are exactly zero, survivors strictly positive.
      EXPECT_EQ(probs[i] == 0.0f, c.probs[i] == 0.0) << c.name << " token " << i;
    }
  }
}

TEST(Sampler, EmpiricalFrequenciesPassChiSquare) {
  constexpr int kDraws = 20000;
  for (const auto& c : fixture_cases()) {
    // Greedy is one-hot; the 1000-token cases (hundreds of bins of < 5 draws) add run time but no
    // power: their filtered distributions are checked exactly above.
    if (c.params.temperature == 0.0f || c.logits.size() > 64) continue;
    Sampler s(c.params);
    std::vector<int> counts(c.logits.size(), 0);
    for (int i = 0; i < kDraws; ++i) {
      const auto r = s.sample(c.logits, c.prompt, c.output);
      ASSERT_GE(r.token, 0);
      ASSERT_LT(static_cast<size_t>(r.token), c.logits.size());
      ++counts[static_cast<size_t>(r.token)];
    }
    // Bins: every token expected >= 5 times on its own, the rest pooled into one bin.
    double chi2 = 0.0, pooled_obs = 0.0, pooled_exp = 0.0;
    int bins = 0;
    for (size_t t = 0; t < counts.size(); ++t) {
      const double expected = c.probs[t] * kDraws;
      if (c.probs[t] == 0.0) {
        EXPECT_EQ(counts[t], 0) << c.name << ": drew filtered-out token " << t;
        continue;
      }
      if (expected < 5.0) {
        pooled_obs += counts[t];
        pooled_exp += expected;
        continue;
      }
      chi2 += (counts[t] - expected) * (counts[t] - expected) / expected;
      ++bins;
    }
    if (pooled_exp > 0.0) {
      chi2 += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / pooled_exp;
      ++bins;
    }
    if (bins < 2) continue;  // a single bin has no freedom
    EXPECT_LT(chi2, chi2_critical(bins - 1)) << c.name << " with " << bins << " bins";
  }
}

TEST(Sampler, ChiSquareRejectsAWrongDistribution) {
  // The same statistic against a distorted reference must fail: guards the test above.
  const auto cases = fixture_cases();
  const auto& c = cases.front();  // "plain"
  Sampler s(c.params);
  constexpr int kDraws = 20000;
  std::vector<int> counts(c.logits.size(), 0);
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(s.sample(c.logits, {}, {}).token)];
  // Reference at temperature 1.2 instead of 1.
  std::vector<double> wrong(c.logits.size());
  double z = 0.0;
  for (size_t t = 0; t < wrong.size(); ++t) z += wrong[t] = std::exp(c.logits[t] / 1.2);
  double chi2 = 0.0;
  int bins = 0;
  for (size_t t = 0; t < wrong.size(); ++t) {
    const double e = wrong[t] / z * kDraws;
    if (e < 5.0) continue;
    chi2 += (counts[t] - e) * (counts[t] - e) / e;
    ++bins;
  }
  EXPECT_GT(chi2, chi2_critical(bins - 1));
}

std::vector<int32_t> draw_sequence(uint64_t seed, int n) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = seed;
  Sampler s(p);
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i)) * 0.5f;
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.sample(logits, {}, out).token);
  return out;
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDiffers) {
  const auto a = draw_sequence(42, 200);
  EXPECT_EQ(a, draw_sequence(42, 200));
  EXPECT_NE(a, draw_sequence(43, 200));
}

TEST(Sampler, TokensDoNotDependOnLogprobsRequested) {
  SamplingParams p;
  p.seed = 9;
  p.top_p = 0.95f;
  SamplingParams q = p;
  q.logprobs = 5;
  Sampler a(p), b(q);
  std::vector<float> logits(300);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::cos(static_cast<float>(i) * 0.37f);
  for (int i = 0; i < 100; ++i) {
    const auto ra = a.sample(logits, {}, {});
    const auto rb = b.sample(logits, {}, {});
    EXPECT_EQ(ra.token, rb.token);
    EXPECT_EQ(ra.logprob, rb.logprob);
    EXPECT_TRUE(ra.top_logprobs.empty());
    EXPECT_EQ(rb.top_logprobs.size(), 5u);
  }
}

TEST(Sampler, ProbabilitiesDoesNotAdvanceTheRng) {
  SamplingParams p;
  p.seed = 7;
  Sampler a(p), b(p);
  const std::vector<float> logits{0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  for (int i = 0; i < 50; ++i) {
    (void)b.probabilities(logits, {}, {});
    EXPECT_EQ(a.sample(logits, {}, {}).token, b.sample(logits, {}, {}).token);
  }
}

TEST(Sampler, GreedyTakesLowestIdOnTies) {
  SamplingParams p;
  p.temperature = 0.0f;
  Sampler s(p);
  EXPECT_EQ(s.sample(std::vector<float>{1.0f, 5.0f, 5.0f, 2.0f}, {}, {}).token, 1);
  EXPECT_EQ(s.sample(std::vector<float>(7, 0.25f), {}, {}).token, 0);
  EXPECT_EQ(s.sample(std::vector<float>{-3.0f, -1.0f, -2.0f, -1.0f}, {}, {}).token, 1);
  // Tiny temperatures are greedy too (1/T would overflow).
  p.temperature = 1e-30f;
  Sampler tiny(p);
  EXPECT_EQ(tiny.sample(std::vector<float>{0.0f, 3.0f, 3.0f}, {}, {}).token, 1);
  EXPECT_EQ(tiny.probabilities(std::vector<float>{0.0f, 3.0f, 3.0f}, {}, {}),
            (std::vector<float>{0.0f, 1.0f, 0.0f}));
  p.temperature = 0.0f;
  // Greedy ignores the truncation knobs.
  p.top_k = 1;
  p.top_p = 0.1f;
  Sampler t(p);
  EXPECT_EQ(t.sample(std::vector<float>{0.0f, 9.0f, 9.0f}, {}, {}).token, 1);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.repetition_penalty = 2.0f;
  p.logprobs = 4;
  Sampler s(p);
  const std::vector<float> logits{2.0f, -2.0f, 1.5f, 0.0f};
  const std::vector<int32_t> prompt{0, 1, 0};  // token 0 twice: penalized once
  const auto r = s.sample(logits, prompt, {});
  // Penalized: {1, -4, 1.5, 0}.
  EXPECT_EQ(r.token, 2);
  const std::vector<double> pen{1.0, -4.0, 1.5, 0.0};
  double z = 0.0;
  for (double v : pen) z += std::exp(v);
  ASSERT_EQ(r.top_logprobs.size(), 4u);
  const int32_t order[] = {2, 0, 3, 1};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.top_logprobs[i].first, order[i]);
    EXPECT_NEAR(r.top_logprobs[i].second, pen[static_cast<size_t>(order[i])] - std::log(z), 1e-6);
  }
}

TEST(Sampler, PresenceAndFrequencyCountOutputOnly) {
  SamplingParams p;
  p.presence_penalty = 0.25f;
  p.frequency_penalty = 0.5f;
  Sampler s(p);
  const std::vector<float> logits{1.0f, 1.0f, 1.0f, 1.0f};
  // Token 1 is only in the prompt: untouched. Token 2 twice in the output: 1 - 2*0.5 - 0.25.
  const auto probs =
      s.probabilities(logits, std::vector<int32_t>{1, 1}, std::vector<int32_t>{2, 3, 2});
  const double l[] = {1.0, 1.0, -0.25, 0.25};
  double z = 0.0;
  for (double v : l) z += std::exp(v);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(probs[i], std::exp(l[i]) / z, 1e-6) << i;
}

TEST(Sampler, LogprobsArePreTemperatureLogSoftmax) {
  SamplingParams p;
  p.temperature = 0.3f;
  p.top_k = 2;
  p.logprobs = 3;
  p.seed = 3;
  Sampler s(p);
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 1.0f, 1.0f};
  double z = 0.0;
  for (float v : logits) z += std::exp(static_cast<double>(v));
  for (int i = 0; i < 20; ++i) {
    const auto r = s.sample(logits, {}, {});
    EXPECT_TRUE(r.token == 1 || r.token == 3) << r.token;  // top-2; tie 3/4 → lower id
    EXPECT_NEAR(r.logprob, logits[static_cast<size_t>(r.token)] - std::log(z), 1e-6);
    ASSERT_EQ(r.top_logprobs.size(), 3u);
    EXPECT_EQ(r.top_logprobs[0].first, 1);
    EXPECT_EQ(r.top_logprobs[1].first, 3);
    EXPECT_EQ(r.top_logprobs[2].first, 4);
  }
}

TEST(Sampler, NegativeInfinityIsNeverDrawn) {
  SamplingParams p;
  p.seed = 11;
  Sampler s(p);
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> logits{ninf, 0.0f, ninf, 0.0f, ninf};
  for (int i = 0; i < 500; ++i) {
    const int32_t t = s.sample(logits, {}, {}).token;
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, RejectsBadInputs) {
  SamplingParams p;
  p.repetition_penalty = 1.1f;
  Sampler s(p);
  const std::vector<float> logits{0.0f, 1.0f, 2.0f};
  EXPECT_THROW(s.sample(logits, std::vector<int32_t>{3}, {}), std::out_of_range);
  EXPECT_THROW(s.sample(logits, {}, std::vector<int32_t>{-1}), std::out_of_range);
  EXPECT_THROW(s.sample(std::vector<float>{}, {}, {}), std::invalid_argument);
  EXPECT_THROW(s.sample(std::vector<float>{0.0f, std::nanf("")}, {}, {}), std::invalid_argument);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THROW(s.sample(std::vector<float>{0.0f, inf}, {}, {}), std::invalid_argument);
  EXPECT_THROW(s.sample(std::vector<float>{-inf, -inf}, {}, {}), std::invalid_argument);
  // Still usable after an error.
  EXPECT_EQ(s.probabilities(logits, {}, {}).size(), 3u);
}

/// The NonFiniteLogits that `f` throws (fails the test when it throws none).
template <typename F>
NonFiniteLogits non_finite(F&& f) {
  try {
    f();
  } catch (const NonFiniteLogits& e) {
    return e;
  }
  ADD_FAILURE() << "no NonFiniteLogits thrown";
  return NonFiniteLogits("<none>", "");
}

TEST(Sampler, NonFiniteLogitsNameTheModelOrTheParameterAtFault) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<int32_t> prompt{1};
  using V = std::vector<float>;
  // The model's own row: no parameter to blame.
  {
    Sampler s(SamplingParams{});
    EXPECT_EQ(non_finite([&] {
                s.sample(std::vector<float>{0.0f, std::nanf("")}, {}, {});
              }).param(),
              "");
    EXPECT_EQ(non_finite([&] { s.sample(std::vector<float>{inf, 0.0f}, {}, {}); }).param(), "");
    EXPECT_EQ(non_finite([&] { s.sample(std::vector<float>{-inf, -inf}, {}, {}); }).param(), "");
  }
  // repetition_penalty: a positive logit divided by a tiny (valid, > 0) penalty overflows float:
  // 10 / 1e-38 = 1e39 > FLT_MAX.
  {
    SamplingParams p;
    p.repetition_penalty = 1e-38f;
    p.temperature = 0.0f;
    Sampler s(p);
    const NonFiniteLogits e = non_finite([&] { s.sample(V{0.5f, 10.0f, 0.0f}, prompt, {}); });
    EXPECT_EQ(e.param(), "repetition_penalty");
    EXPECT_NE(std::string(e.what()).find("token 1"), std::string::npos) << e.what();
    // A logit the division keeps finite is fine: the same sampler goes on.
    EXPECT_EQ(s.sample(V{0.5f, -10.0f, 0.0f}, prompt, {}).token, 0);
  }
  // ... and a huge one multiplies every (negative) logit of the history to -inf.
  {
    SamplingParams p;
    p.repetition_penalty = 1e38f;
    p.temperature = 0.0f;
    Sampler s(p);
    const std::vector<int32_t> all{0, 1};
    EXPECT_EQ(non_finite([&] {
                s.sample(V{-10.0f, -20.0f}, all, {});
              }).param(),
              "repetition_penalty");
  }
  // logit_bias (|bias| <= 100) and the OpenAI penalties (|penalty * count| <= 2 * context) are far
  // below half an ulp of FLT_MAX: they can never leave a finite logit non-finite.
  {
    SamplingParams p;
    p.logit_bias = {{0, 100.0f}};
    p.frequency_penalty = -2.0f;
    p.presence_penalty = -2.0f;
    p.temperature = 0.0f;
    Sampler s(p);
    const float big = std::numeric_limits<float>::max();
    EXPECT_EQ(s.sample(V{big, 0.0f}, {}, std::vector<int32_t>(100000, 0)).token, 0);
  }
  // min_tokens masks EOS, the only token the model leaves finite.
  {
    SamplingParams p;
    p.min_tokens = 2;
    p.max_tokens = 4;
    Sampler s(p, {1});
    EXPECT_EQ(non_finite([&] { s.sample(V{-inf, 3.0f, -inf}, {}, {}); }).param(), "min_tokens");
    EXPECT_EQ(s.sample(V{0.0f, 3.0f, -inf}, {}, {}).token, 0);  // usable after the error
  }
}

TEST(Sampler, FullVocabTopPMatchesBruteForce) {
  // 49152 tokens, top-p without top-k: the incremental partial sort must agree with a full sort.
  constexpr size_t kVocab = 49152;
  std::mt19937_64 gen(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(kVocab);
  for (auto& v : logits) v = normal(gen);
  SamplingParams p;
  p.top_p = 0.9f;
  p.temperature = 0.8f;
  p.seed = 1;
  Sampler s(p);
  const auto probs = s.probabilities(logits, {}, {});

  std::vector<int32_t> order(kVocab);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] ||
           (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
  });
  std::vector<double> w(kVocab);
  double z = 0.0;
  for (size_t i = 0; i < kVocab; ++i) z += w[i] = std::exp((logits[i] - logits[order[0]]) / 0.8);
  double before = 0.0;
  size_t kept = 0;
  while (kept < kVocab && (kept == 0 || before < 0.9 * z)) before += w[order[kept++]];
  EXPECT_GT(kept, 256u);  // the sort had to extend past its first chunk
  size_t nonzero = 0;
  for (float v : probs) nonzero += v > 0.0f;
  EXPECT_EQ(nonzero, kept);
  for (size_t i = 0; i < kept; ++i) {
    const auto t = static_cast<size_t>(order[i]);
    EXPECT_NEAR(probs[t], w[t] / before, 1e-6);
  }
  // And draws stay inside the nucleus.
  for (int i = 0; i < 200; ++i)
    EXPECT_GT(probs[static_cast<size_t>(s.sample(logits, {}, {}).token)], 0.0f);
}

TEST(Sampler, LogitBiasIsAddedToTheLogits) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, 0.0f};
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = 2;
  p.logit_bias = {{0, -100.0f}};
  Sampler banned(p);
  auto r = banned.sample(logits, {}, {});
  EXPECT_EQ(r.token, 1);  // the runner-up
  // Logprobs are of the biased logits: log-softmax of {-98, 1, 0.5, 0} at token 1.
  const double z = std::log(std::exp(-98.0) + std::exp(1.0) + std::exp(0.5) + std::exp(0.0));
  EXPECT_NEAR(r.logprob, 1.0 - z, 1e-5);
  p.logit_bias = {{3, 100.0f}};
  Sampler forced(p);
  EXPECT_EQ(forced.sample(logits, {}, {}).token, 3);
  p.logit_bias = {{4, 1.0f}};
  Sampler outside(p);
  EXPECT_THROW(outside.sample(logits, {}, {}), std::out_of_range);
  p.logit_bias = {{1, 100.5f}};
  EXPECT_THROW(Sampler{p}, std::invalid_argument);
}

TEST(Sampler, MinTokensMasksEosAndStopTokenIds) {
  const std::vector<float> logits = {5.0f, 4.0f, 3.0f, 0.0f};  // EOS = 0, stop id 1
  SamplingParams p;
  p.temperature = 0;
  p.min_tokens = 2;
  p.max_tokens = 4;
  p.stop_token_ids = {1};
  Sampler s(p, {0});
  const std::vector<int32_t> none, one = {2}, two = {2, 2};
  EXPECT_EQ(s.sample(logits, {}, none).token, 2);
  EXPECT_EQ(s.sample(logits, {}, one).token, 2);
  EXPECT_EQ(s.sample(logits, {}, two).token, 0);  // min_tokens reached: EOS again
  p.ignore_eos = true;
  Sampler ignoring(p, {0});
  EXPECT_EQ(ignoring.sample(logits, {}, none).token, 0);  // EOS not a stop: not masked
}

TEST(Sampler, GrammarMaskAppliesAfterLogitBiasAndBeforeGreedyAndLogprobs) {
  // Token 0 would win after logit_bias; the mask allows only 2 and 3, so greedy picks 2 (the best
  // allowed), its logprob is the log-softmax over the allowed tokens only, and top_logprobs
  // list only allowed tokens.
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.5f};
  SamplingParams p;
  p.temperature = 0.0f;
  p.logprobs = 3;
  p.logit_bias = {{0, 5.0f}};
  Sampler s(p);
  const uint32_t mask[1] = {0b1100u};
  s.set_allowed(mask);
  const std::vector<int32_t> none;
  const Sampler::Result r = s.sample(logits, none, none);
  EXPECT_EQ(r.token, 2);
  const double z = std::log(std::exp(2.0) + std::exp(0.5));
  EXPECT_NEAR(r.logprob, 2.0 - z, 1e-5);
  ASSERT_EQ(r.top_logprobs.size(), 3u);
  EXPECT_EQ(r.top_logprobs[0].first, 2);
  EXPECT_EQ(r.top_logprobs[1].first, 3);
  EXPECT_EQ(r.top_logprobs[2].second, -std::numeric_limits<float>::infinity());
  // Sampling draws only allowed tokens.
  SamplingParams q;
  q.temperature = 1.0f;
  q.seed = 3;
  Sampler t(q);
  t.set_allowed(mask);
  for (int i = 0; i < 200; ++i) {
    const int32_t tok = t.sample(logits, none, none).token;
    EXPECT_TRUE(tok == 2 || tok == 3) << tok;
  }
  // A mask that leaves nothing finite names response_format.
  std::vector<float> partly = logits;
  partly[2] = partly[3] = -std::numeric_limits<float>::infinity();
  try {
    t.sample(partly, none, none);
    FAIL() << "no NonFiniteLogits";
  } catch (const NonFiniteLogits& e) {
    EXPECT_EQ(e.param(), "response_format");
  }
  t.set_allowed(nullptr);
  EXPECT_NE(t.sample(partly, none, none).token, 2);
}

}  // namespace
}  // namespace plinth
