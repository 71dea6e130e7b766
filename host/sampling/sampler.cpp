#include "sampling/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace plinth {
namespace {

/// First step of the incremental sort for top-p: enough for typical nuclei (p ≈ 0.9 over a peaked
/// distribution) at a fraction of a full sort; doubled while the nucleus is not yet complete.
constexpr size_t kTopPFirstChunk = 64;

uint64_t seed_from(const SamplingParams& p) {
  if (p.seed) return *p.seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

void check_tokens(std::span<const int32_t> tokens, size_t vocab, const char* what) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= vocab) {
      throw std::out_of_range(std::string("Sampler: ") + what + "[" + std::to_string(i) +
                              "] = " + std::to_string(tokens[i]) +
                              " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params) {
  validate(params_);
  rng_.seed(seed_from(params_));
}

bool Sampler::before(int32_t a, int32_t b) const {
  const float la = scratch_[static_cast<size_t>(a)], lb = scratch_[static_cast<size_t>(b)];
  return la > lb || (la == lb && a < b);
}

double Sampler::weight(int32_t id) const {
  return std::exp((static_cast<double>(scratch_[static_cast<size_t>(id)]) - max_logit_) /
                  static_cast<double>(params_.temperature));
}

void Sampler::apply_penalties(std::span<const float> logits, std::span<const int32_t> prompt,
                              std::span<const int32_t> output) {
  const size_t vocab = logits.size();
  if (vocab == 0) throw std::invalid_argument("Sampler: logits are empty (expected [vocab])");
  check_tokens(prompt, vocab, "prompt");
  check_tokens(output, vocab, "output");
  scratch_.assign(logits.begin(), logits.end());

  if (params_.repetition_penalty != 1.0f) {
    // Each distinct token of prompt + output is penalized once (HF
    // RepetitionPenaltyLogitsProcessor).
    const float p = params_.repetition_penalty;
    seen_.resize(vocab, 0);
    for (auto tokens : {prompt, output}) {
      for (int32_t t : tokens) {
        auto& mark = seen_[static_cast<size_t>(t)];
        if (mark) continue;
        mark = 1;
        float& l = scratch_[static_cast<size_t>(t)];
        l = l > 0.0f ? l / p : l * p;
      }
    }
    for (auto tokens : {prompt, output}) {
      for (int32_t t : tokens) seen_[static_cast<size_t>(t)] = 0;
    }
  }
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) {
    counts_.resize(vocab, 0);
    for (int32_t t : output) ++counts_[static_cast<size_t>(t)];
    for (int32_t t : output) {
      int32_t& c = counts_[static_cast<size_t>(t)];
      if (c == 0) continue;  // already applied for an earlier occurrence
      float& l = scratch_[static_cast<size_t>(t)];
      l = l - params_.frequency_penalty * static_cast<float>(c);
      l = l - params_.presence_penalty;
      c = 0;  // applied, and the buffer is clean for the next call
    }
  }

  float mx = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < vocab; ++i) {
    const float l = scratch_[i];
    if (std::isnan(l) || l == std::numeric_limits<float>::infinity()) {
      throw std::invalid_argument("Sampler: logits[" + std::to_string(i) + "] is " +
                                  (std::isnan(l) ? "NaN" : "+inf") +
                                  "; the model produced a non-finite value");
    }
    mx = std::max(mx, l);
  }
  if (mx == -std::numeric_limits<float>::infinity()) {
    throw std::invalid_argument("Sampler: every logit is -inf; no token can be sampled");
  }
  max_logit_ = static_cast<double>(mx);
}

int32_t Sampler::argmax() const {
  size_t best = 0;
  for (size_t i = 1; i < scratch_.size(); ++i) {
    if (scratch_[i] > scratch_[best]) best = i;  // strict: the lowest id wins ties
  }
  return static_cast<int32_t>(best);
}

void Sampler::sort_head(size_t& sorted, size_t need, size_t n) {
  need = std::min(need, n);
  if (need <= sorted) return;
  auto cmp = [this](int32_t a, int32_t b) { return before(a, b); };
  const auto first = ids_.begin() + static_cast<std::ptrdiff_t>(sorted);
  const auto mid = ids_.begin() + static_cast<std::ptrdiff_t>(need);
  const auto last = ids_.begin() + static_cast<std::ptrdiff_t>(n);
  // Everything in [sorted, n) already orders after [0, sorted), so ordering the next slice only
  // needs a selection inside the unsorted tail.
  if (mid != last) std::nth_element(first, mid, last, cmp);
  std::sort(first, mid, cmp);
  sorted = need;
}

double Sampler::filter() {
  const size_t vocab = scratch_.size();
  ids_.resize(vocab);
  std::iota(ids_.begin(), ids_.end(), 0);
  size_t n = vocab;
  size_t sorted = 0;  // ids_[0, sorted) is in final order, and precedes everything after it

  const auto k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < n) {
    std::nth_element(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(k), ids_.end(),
                     [this](int32_t a, int32_t b) { return before(a, b); });
    n = k;
  }

  if (params_.top_p < 1.0f) {
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) total += weight(ids_[i]);
    const double budget = static_cast<double>(params_.top_p) * total;
    double mass_before = 0.0;
    size_t i = 0;
    for (; i < n; ++i) {
      if (i > 0 && mass_before >= budget) break;  // the nucleus already reaches top_p
      if (i == sorted) sort_head(sorted, std::max(kTopPFirstChunk, 2 * sorted), n);
      mass_before += weight(ids_[i]);
    }
    n = i;
  }

  if (params_.min_p > 0.0f) {
    // p / p_max = exp((x - x_max) / T) = weight, whatever the normalization; the top token
    // (weight 1) always survives top-k and top-p, so the threshold is the same at this point.
    const auto min_p = static_cast<double>(params_.min_p);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (weight(ids_[i]) >= min_p) ids_[kept++] = ids_[i];
    }
    n = kept;
  }

  num_kept_ = n;
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) total += weight(ids_[i]);
  return total;
}

std::vector<float> Sampler::probabilities(std::span<const float> logits,
                                          std::span<const int32_t> prompt,
                                          std::span<const int32_t> output) {
  apply_penalties(logits, prompt, output);
  std::vector<float> probs(logits.size(), 0.0f);
  if (params_.temperature == 0.0f) {
    probs[static_cast<size_t>(argmax())] = 1.0f;
    return probs;
  }
  const double total = filter();
  for (size_t i = 0; i < num_kept_; ++i) {
    const int32_t id = ids_[i];
    probs[static_cast<size_t>(id)] = static_cast<float>(weight(id) / total);
  }
  return probs;
}

Sampler::Result Sampler::sample(std::span<const float> logits, std::span<const int32_t> prompt,
                                std::span<const int32_t> output) {
  apply_penalties(logits, prompt, output);
  Result result{};
  if (params_.temperature == 0.0f) {
    result.token = argmax();
  } else {
    const double total = filter();
    // 53 random bits → uniform in [0, 1), the same on every platform (unlike
    // std::uniform_real_distribution, whose algorithm is implementation-defined).
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * total;
    double cum = 0.0;
    int32_t chosen = -1;
    for (size_t i = 0; i < num_kept_; ++i) {
      const double w = weight(ids_[i]);
      if (w > 0.0)
        chosen = ids_[i];  // falls back to the last live token if rounding leaves u >= cum
      cum += w;
      if (u < cum) break;
    }
    result.token = chosen;
  }

  // Logprobs: log-softmax of the penalized logits, before temperature (see the class comment).
  double sum = 0.0;
  for (float l : scratch_) sum += std::exp(static_cast<double>(l) - max_logit_);
  const double log_z = max_logit_ + std::log(sum);
  auto logprob = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(scratch_[static_cast<size_t>(id)]) - log_z);
  };
  result.logprob = logprob(result.token);
  if (params_.logprobs > 0) {
    const size_t m = std::min(static_cast<size_t>(params_.logprobs), scratch_.size());
    ids_.resize(scratch_.size());
    std::iota(ids_.begin(), ids_.end(), 0);
    std::partial_sort(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(m), ids_.end(),
                      [this](int32_t a, int32_t b) { return before(a, b); });
    result.top_logprobs.reserve(m);
    for (size_t i = 0; i < m; ++i) result.top_logprobs.emplace_back(ids_[i], logprob(ids_[i]));
  }
  return result;
}

}  // namespace plinth
