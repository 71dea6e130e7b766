// verify_item: greedy verification (the target's argmax tokens), and modified rejection sampling
// proved lossless by a chi-square test. A fake "language model" over 10 tokens whose next-token
// distribution p depends on the position and the previous token is decoded speculatively: drafts
// drawn from a q far from p (q puts most of its mass on the tokens p gives least), verified by
// verify_item, accepted tokens + the correction / bonus token appended, repeated until k + 1
// tokens are out. The emitted tokens must be distributed as sampling from p directly: the
// marginal of every position 0..k and the joint of the first two tokens, each against its exact
// distribution, at significance 0.001. The same harness with a wrong acceptance rule (accept with
// probability p(x), ignoring q; residual p) must fail the same test, so the test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "chi_square.hpp"
#include "rejection_sampler.hpp"

using plinth::spec_decode::Verdict;
using plinth::spec_decode::verify_item;
using plinth::test::chi_square_critical;
using plinth::test::chi_square_statistic;

namespace {

constexpr double kAlpha = 0.001;  // significance of every distribution test

// ---- greedy ------------------------------------------------------------------------------------

double never() {
  ADD_FAILURE() << "the fallback source was drawn from";
  return 0.5;
}

plinth_spec_verify greedy_item(const std::vector<int32_t>& drafts,
                               const std::vector<int32_t>& targets) {
  plinth_spec_verify v{};
  v.seq = 1;
  v.num_draft = static_cast<uint32_t>(drafts.size());
  v.draft_tokens = drafts.empty() ? nullptr : drafts.data();
  v.target_tokens = targets.data();
  return v;
}

TEST(RejectionSamplerGreedy, AllAcceptedTakesTheBonusToken) {
  const std::vector<int32_t> drafts{3, 5, 7}, targets{3, 5, 7, 9};
  const Verdict v = verify_item(greedy_item(drafts, targets), never);
  EXPECT_EQ(v.accepted, 3u);
  EXPECT_EQ(v.next_token, 9);  // target_tokens[k]
}

TEST(RejectionSamplerGreedy, FirstMismatchStops) {
  const std::vector<int32_t> targets{3, 6, 7, 9};
  // Mismatch at 1: draft 2 equals its target but comes after the rejection.
  Verdict v = verify_item(greedy_item({3, 5, 7}, targets), never);
  EXPECT_EQ(v.accepted, 1u);
  EXPECT_EQ(v.next_token, 6);
  v = verify_item(greedy_item({4, 6, 7}, targets), never);  // mismatch at 0
  EXPECT_EQ(v.accepted, 0u);
  EXPECT_EQ(v.next_token, 3);
  v = verify_item(greedy_item({3, 6, 8}, targets), never);  // mismatch at the last draft
  EXPECT_EQ(v.accepted, 2u);
  EXPECT_EQ(v.next_token, 7);
}

TEST(RejectionSamplerGreedy, NoDraftsEmitsTheTargetToken) {
  const std::vector<int32_t> targets{4};
  const Verdict v = verify_item(greedy_item({}, targets), never);
  EXPECT_EQ(v.accepted, 0u);
  EXPECT_EQ(v.next_token, 4);
}

TEST(RejectionSamplerGreedy, MissingArraysAreRefused) {
  const std::vector<int32_t> drafts{1, 2}, targets{1, 2, 3};
  plinth_spec_verify v = greedy_item(drafts, targets);
  v.target_tokens = nullptr;
  EXPECT_THROW(verify_item(v, never), std::invalid_argument);
  v = greedy_item(drafts, targets);
  v.draft_tokens = nullptr;
  EXPECT_THROW(verify_item(v, never), std::invalid_argument);
}

// ---- sampling: deterministic checks -----------------------------------------------------------

TEST(RejectionSamplerSampling, UsesTheGivenUniformsInTheirSlots) {
  // vocab 4, k = 1. p0 = (.1 .2 .3 .4), q0 = (0 .5 .5 0), draft 1: p/q = 0.4.
  const std::vector<float> p{.1f, .2f, .3f, .4f, /* bonus row */ .25f, .25f, .25f, .25f};
  const std::vector<float> q{0, .5f, .5f, 0};
  const std::vector<int32_t> drafts{1}, targets{3, 0};
  plinth_spec_verify v{};
  v.num_draft = 1;
  v.draft_tokens = drafts.data();
  v.target_tokens = targets.data();
  v.target_probs = p.data();
  v.draft_probs = q.data();
  v.vocab_size = 4;
  // uniforms[0] < 0.4 accepts; the bonus token is drawn from p1 with uniforms[3].
  const std::array<double, 4> u_accept{0.39, 0.99, 0.0, 0.6};
  v.uniforms = u_accept.data();
  Verdict r = verify_item(v, never);
  EXPECT_EQ(r.accepted, 1u);
  EXPECT_EQ(r.next_token, 2);  // inverse CDF of (.25 .25 .25 .25) at 0.6
  // uniforms[0] >= 0.4 rejects; residual max(0, p - q) = (.1 0 0 .4) / .5 drawn with uniforms[1].
  const std::array<double, 4> u_reject{0.41, 0.15, 0.0, 0.0};
  v.uniforms = u_reject.data();
  r = verify_item(v, never);
  EXPECT_EQ(r.accepted, 0u);
  EXPECT_EQ(r.next_token, 0);  // 0.15 < 0.2
  const std::array<double, 4> u_reject_later{0.41, 0.25, 0.0, 0.0};
  v.uniforms = u_reject_later.data();
  EXPECT_EQ(verify_item(v, never).next_token, 3);
  // Without uniforms the fallback is drawn, in the same order (accept, then correction).
  v.uniforms = nullptr;
  std::vector<double> seq{0.41, 0.25};
  size_t calls = 0;
  r = verify_item(v, [&] { return seq.at(calls++); });
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(r.accepted, 0u);
  EXPECT_EQ(r.next_token, 3);
}

TEST(RejectionSamplerSampling, DeterministicDraftResidualExcludesTheDraft) {
  // draft_probs NULL: q is one-hot on the draft. Rejected: p without the draft, renormalized.
  const std::vector<float> p{.5f, .5f, 0, 0, /* bonus */ 0, 0, 0, 1};
  const std::vector<int32_t> drafts{0}, targets{0, 0};
  plinth_spec_verify v{};
  v.num_draft = 1;
  v.draft_tokens = drafts.data();
  v.target_tokens = targets.data();
  v.target_probs = p.data();
  v.vocab_size = 4;
  for (double c : {0.0, 0.3, 0.999}) {
    std::vector<double> u{0.7, c, 0, 0};  // 0.7 >= p(0) = 0.5: rejected
    v.uniforms = u.data();
    const Verdict r = verify_item(v, never);
    EXPECT_EQ(r.accepted, 0u);
    EXPECT_EQ(r.next_token, 1) << "correction drawn with u = " << c;
  }
  std::vector<double> u{0.49, 0.0, 0.0, 0.2};
  v.uniforms = u.data();
  const Verdict r = verify_item(v, never);
  EXPECT_EQ(r.accepted, 1u);
  EXPECT_EQ(r.next_token, 3);  // the bonus row's only live token
}

TEST(RejectionSamplerSampling, DraftTokenOutsideTheVocabularyIsRefused) {
  const std::vector<float> p(8, .25f);
  const std::vector<int32_t> targets{0, 0};
  const std::vector<double> u{0.5, 0.5, 0.5, 0.5};
  for (int32_t bad : {4, -1}) {
    const std::vector<int32_t> drafts{bad};
    plinth_spec_verify v{};
    v.num_draft = 1;
    v.draft_tokens = drafts.data();
    v.target_tokens = targets.data();
    v.target_probs = p.data();
    v.vocab_size = 4;
    v.uniforms = u.data();
    EXPECT_THROW(verify_item(v, never), std::invalid_argument) << "draft token " << bad;
  }
}

// ---- sampling: the distribution ----------------------------------------------------------------

constexpr uint32_t kVocab = 10;
constexpr int32_t kStartToken = 3;
using Dist = std::array<float, kVocab>;

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double hash01(uint64_t a, uint64_t b, uint64_t c) {
  return static_cast<double>(mix(mix(mix(a) ^ b) ^ c) >> 11) * 0x1.0p-53;
}

Dist normalized(const std::array<double, kVocab>& w) {
  double total = 0;
  for (double x : w) total += x;
  Dist d{};
  for (uint32_t i = 0; i < kVocab; ++i) d[i] = static_cast<float>(w[i] / total);
  return d;
}

/// The target: p(· | position, previous token), uneven and different for every context; every
/// token keeps at least ~2% so that every chi-square cell expects enough counts.
Dist target(uint32_t pos, int32_t prev) {
  std::array<double, kVocab> w{};
  for (uint32_t i = 0; i < kVocab; ++i) {
    const double h = hash01(pos, static_cast<uint64_t>(prev), i);
    w[i] = 0.15 + 2.0 * h * h;
  }
  return normalized(w);
}

/// The draft: far from the target — 60% on the token p likes least, 30% on the next least, 10%
/// spread over all.
Dist draft(uint32_t pos, int32_t prev) {
  const Dist p = target(pos, prev);
  std::array<uint32_t, kVocab> order{};
  for (uint32_t i = 0; i < kVocab; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return p[a] < p[b]; });
  std::array<double, kVocab> w{};
  w.fill(0.1 / kVocab);
  w[order[0]] += 0.6;
  w[order[1]] += 0.3;
  return normalized(w);
}

/// A deterministic draft (q one-hot): a fixed function of the context, unrelated to p.
int32_t deterministic_draft(uint32_t pos, int32_t prev) {
  return static_cast<int32_t>((static_cast<uint32_t>(prev) * 7 + pos * 3 + 1) % kVocab);
}

double u01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

int32_t sample(const Dist& d, double u) {
  double cum = 0;
  for (uint32_t i = 0; i < kVocab; ++i) {
    cum += d[i];
    if (u < cum) return static_cast<int32_t>(i);
  }
  return kVocab - 1;
}

/// The emitted distributions implied by p: the marginal of each position (forward recursion over
/// the chain) and the joint of positions 0 and 1.
struct Expected {
  std::vector<std::vector<double>> marginal;  // [position][token]
  std::vector<double> joint01;                // [t0 * kVocab + t1]
};

Expected expected(uint32_t positions) {
  Expected e;
  std::vector<double> pi(kVocab, 0.0);
  pi[kStartToken] = 1.0;
  for (uint32_t m = 0; m < positions; ++m) {
    std::vector<double> next(kVocab, 0.0);
    for (uint32_t a = 0; a < kVocab; ++a) {
      if (pi[a] == 0) continue;
      const Dist p = target(m, static_cast<int32_t>(a));
      for (uint32_t b = 0; b < kVocab; ++b) next[b] += pi[a] * p[b];
    }
    pi = next;
    e.marginal.push_back(pi);
  }
  const Dist p0 = target(0, kStartToken);
  e.joint01.resize(kVocab * kVocab);
  for (uint32_t a = 0; a < kVocab; ++a) {
    const Dist p1 = target(1, static_cast<int32_t>(a));
    for (uint32_t b = 0; b < kVocab; ++b) e.joint01[a * kVocab + b] = double(p0[a]) * p1[b];
  }
  return e;
}

enum class Rule {
  kUniforms,  // verify_item with item.uniforms
  kFallback,  // verify_item with uniforms NULL: the fallback source
  kWrong,     // accept with probability p(x) ignoring q, residual p: not lossless
};

/// The wrong rule, for showing that the test rejects a sampler that is not lossless.
Verdict wrong_verify(const plinth_spec_verify& v) {
  for (uint32_t j = 0; j < v.num_draft; ++j) {
    const float* p = v.target_probs + size_t{j} * kVocab;
    if (v.uniforms[2 * j] < p[v.draft_tokens[j]]) continue;
    Dist row{};
    std::copy_n(p, kVocab, row.begin());
    return {j, sample(row, v.uniforms[2 * j + 1])};
  }
  Dist row{};
  std::copy_n(v.target_probs + size_t{v.num_draft} * kVocab, kVocab, row.begin());
  return {v.num_draft, sample(row, v.uniforms[2 * v.num_draft + 1])};
}

struct Observed {
  std::vector<std::vector<double>> marginal;
  std::vector<double> joint01;
};

/// `trials` speculative decodes of k + 1 tokens from kStartToken with k drafts per step.
Observed simulate(uint32_t k, bool sampled_drafts, Rule rule, int trials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t positions = k + 1;
  Observed o{std::vector<std::vector<double>>(positions, std::vector<double>(kVocab, 0.0)),
             std::vector<double>(kVocab * kVocab, 0.0)};
  std::vector<int32_t> drafts(k), targets(k + 1, 0), out;
  std::vector<float> p_rows((k + 1) * kVocab), q_rows(k * kVocab);
  std::vector<double> uniforms(2 * (k + 1));
  for (int t = 0; t < trials; ++t) {
    out.clear();
    int32_t prev = kStartToken;
    while (out.size() < positions) {
      const auto at = static_cast<uint32_t>(out.size());
      int32_t ctx = prev;
      for (uint32_t j = 0; j <= k; ++j) {
        const Dist p = target(at + j, ctx);
        std::copy(p.begin(), p.end(), p_rows.begin() + j * kVocab);
        if (j == k) break;
        if (sampled_drafts) {
          const Dist q = draft(at + j, ctx);
          std::copy(q.begin(), q.end(), q_rows.begin() + j * kVocab);
          drafts[j] = sample(q, u01(rng));
        } else {
          drafts[j] = deterministic_draft(at + j, ctx);
        }
        ctx = drafts[j];
      }
      plinth_spec_verify v{};
      v.seq = 1;
      v.num_draft = k;
      v.draft_tokens = drafts.data();
      v.target_tokens = targets.data();  // unused when target_probs is given
      v.target_probs = p_rows.data();
      v.draft_probs = sampled_drafts ? q_rows.data() : nullptr;
      v.vocab_size = kVocab;
      Verdict r{};
      if (rule == Rule::kFallback) {
        r = verify_item(v, [&] { return u01(rng); });
      } else {
        for (double& u : uniforms) u = u01(rng);
        v.uniforms = uniforms.data();
        r = rule == Rule::kWrong ? wrong_verify(v) : verify_item(v, never);
      }
      EXPECT_LE(r.accepted, k);
      EXPECT_GE(r.next_token, 0);
      EXPECT_LT(r.next_token, static_cast<int32_t>(kVocab));
      out.insert(out.end(), drafts.begin(), drafts.begin() + r.accepted);
      out.push_back(r.next_token);
      prev = out.back();
    }
    for (uint32_t m = 0; m < positions; ++m) o.marginal[m][out[m]] += 1;
    // cppcheck-suppress containerOutOfBounds ; out holds >= positions >= 2 tokens (the loop above)
    o.joint01[out[0] * kVocab + out[1]] += 1;
  }
  return o;
}

struct Figures {
  std::vector<double> marginal;  // statistic per position, df = kVocab - 1
  double joint01;                // df = kVocab² - 1
};

Figures figures(const Observed& o, const Expected& e, const std::string& name) {
  Figures f{};
  const double crit_m = chi_square_critical(kAlpha, kVocab - 1);
  const double crit_j = chi_square_critical(kAlpha, kVocab * kVocab - 1);
  for (size_t m = 0; m < o.marginal.size(); ++m) {
    f.marginal.push_back(chi_square_statistic(o.marginal[m], e.marginal[m]));
    std::cout << "[chi2] " << name << " position " << m << ": " << f.marginal.back() << " (df "
              << kVocab - 1 << ", critical " << crit_m << ")\n";
  }
  f.joint01 = chi_square_statistic(o.joint01, e.joint01);
  std::cout << "[chi2] " << name << " joint(0,1): " << f.joint01 << " (df " << kVocab * kVocab - 1
            << ", critical " << crit_j << ")\n";
  return f;
}

constexpr int kTrials = 20000;

void expect_lossless(uint32_t k, bool sampled_drafts, Rule rule, uint64_t seed,
                     const std::string& name) {
  const Expected e = expected(k + 1);
  const Figures f = figures(simulate(k, sampled_drafts, rule, kTrials, seed), e, name);
  const double crit_m = chi_square_critical(kAlpha, kVocab - 1);
  const double crit_j = chi_square_critical(kAlpha, kVocab * kVocab - 1);
  for (size_t m = 0; m < f.marginal.size(); ++m) {
    EXPECT_LT(f.marginal[m], crit_m) << name << ": position " << m << " is not distributed as p";
  }
  EXPECT_LT(f.joint01, crit_j) << name << ": the first two tokens are not distributed as p";
}

void expect_detected(uint32_t k, bool sampled_drafts, uint64_t seed, const std::string& name) {
  const Expected e = expected(k + 1);
  const Figures f = figures(simulate(k, sampled_drafts, Rule::kWrong, kTrials, seed), e, name);
  EXPECT_GT(f.marginal[0], chi_square_critical(kAlpha, kVocab - 1))
      << name << ": the test does not see a wrong acceptance rule in the first token";
  EXPECT_GT(f.joint01, chi_square_critical(kAlpha, kVocab * kVocab - 1))
      << name << ": the test does not see a wrong acceptance rule in the first two tokens";
}

}  // namespace

TEST(ChiSquare, CriticalValuesMatchTheTablesAndWilsonHilferty) {
  // Published 0.999 quantiles (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.4): df 9: 27.877,
  // df 100: 149.449.
  EXPECT_NEAR(chi_square_critical(0.001, 9), 27.877, 0.01);
  EXPECT_NEAR(chi_square_critical(0.001, 100), 149.449, 0.01);
  EXPECT_NEAR(plinth::test::normal_quantile(0.999), 3.0902, 1e-4);
  for (double df : {9.0, 99.0}) {
    const double exact = chi_square_critical(0.001, df);
    EXPECT_NEAR(plinth::test::wilson_hilferty_quantile(0.999, df), exact, 0.01 * exact);
    std::cout << "[chi2] critical value at p = 0.001, df " << df << ": " << exact
              << " (Wilson-Hilferty " << plinth::test::wilson_hilferty_quantile(0.999, df) << ")\n";
  }
  EXPECT_THROW(chi_square_statistic({1, 1}, {0.5, 0.5}), std::invalid_argument);  // too few
}

TEST(RejectionSamplerDistribution, TheHarnessIsAValidChiSquareSetup) {
  // Every cell of every test expects >= 5 counts (chi_square_statistic also throws otherwise); q
  // is far from p (total variation distance > 0.5 in every context); p differs per position.
  const Expected e = expected(5);
  for (const auto& m : e.marginal) {
    EXPECT_GE(*std::min_element(m.begin(), m.end()) * kTrials, 5.0);
  }
  EXPECT_GE(*std::min_element(e.joint01.begin(), e.joint01.end()) * kTrials, 5.0);
  for (uint32_t m = 0; m < 5; ++m) {
    for (uint32_t a = 0; a < kVocab; ++a) {
      const Dist p = target(m, static_cast<int32_t>(a)), q = draft(m, static_cast<int32_t>(a));
      double tv = 0;
      for (uint32_t i = 0; i < kVocab; ++i) tv += 0.5 * std::abs(double(p[i]) - q[i]);
      EXPECT_GT(tv, 0.5);
      EXPECT_NE(p, target(m + 1, static_cast<int32_t>(a)));
    }
  }
}

TEST(RejectionSamplerDistribution, SampledDraftsKeepTheTargetDistribution) {
  for (uint32_t k : {2u, 3u, 4u}) {
    expect_lossless(k, true, Rule::kUniforms, 1000 + k, "sampled q, k = " + std::to_string(k));
  }
}

TEST(RejectionSamplerDistribution, DeterministicDraftsKeepTheTargetDistribution) {
  for (uint32_t k : {2u, 4u}) {
    expect_lossless(k, false, Rule::kUniforms, 2000 + k,
                    "one-hot q (draft_probs NULL), k = " + std::to_string(k));
  }
}

TEST(RejectionSamplerDistribution, FallbackSourceKeepsTheTargetDistribution) {
  expect_lossless(3, true, Rule::kFallback, 3003, "uniforms NULL (fallback), k = 3");
}

TEST(RejectionSamplerDistribution, AWrongAcceptanceRuleFailsTheSameTest) {
  for (uint32_t k : {2u, 3u, 4u}) {
    expect_detected(k, true, 1000 + k, "WRONG rule, sampled q, k = " + std::to_string(k));
  }
  expect_detected(3, false, 2003, "WRONG rule, one-hot q, k = 3");
}
