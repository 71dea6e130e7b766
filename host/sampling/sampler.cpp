#include "sampling/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace plinth {
namespace {

/// First step of the incremental sort for top-p: enough for typical nuclei (p ≈ 0.9 over a peaked
/// distribution) at a fraction of a full sort; quadrupled while the nucleus is not yet complete.
constexpr size_t kTopPFirstChunk = 256;

/// Below this temperature sampling is greedy (vLLM's _SAMPLING_EPS): 1/T would overflow float
/// for tiny T, and the distribution is one-hot for practical purposes long before.
constexpr float kGreedyBelow = 1e-5f;

uint64_t seed_from(const SamplingParams& p) {
  if (p.seed) return *p.seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

/// Order of likelihood: penalized logit descending, then token id ascending (a strict total order,
/// so selections and sorts are deterministic).
constexpr auto more_likely = [](const auto& a, const auto& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
};

/// True for a finite value or -inf (a token that can never be drawn); false for NaN and +inf.
bool finite_or_minus_inf(float v) {
  return v < std::numeric_limits<float>::infinity();  // NaN compares false
}

std::string show(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
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

Sampler::Sampler(const SamplingParams& params, std::vector<int32_t> eos_token_ids)
    : params_(params) {
  validate(params_);
  if (params_.min_tokens > 0) {
    suppressed_ = params_.stop_token_ids;
    if (!params_.ignore_eos) {
      suppressed_.insert(suppressed_.end(), eos_token_ids.begin(), eos_token_ids.end());
    }
  }
  rng_.seed(seed_from(params_));
}

void Sampler::apply_penalties(std::span<const float> logits, std::span<const int32_t> prompt,
                              std::span<const int32_t> output) {
  const size_t vocab = logits.size();
  if (vocab == 0) throw std::invalid_argument("Sampler: logits are empty (expected [vocab])");
  check_tokens(prompt, vocab, "prompt");
  check_tokens(output, vocab, "output");
  load_candidates(logits);
  if (params_.repetition_penalty != 1.0f) apply_repetition_penalty(prompt, output);
  // The OpenAI penalties (|penalty * count| <= 2 * context) and logit_bias (|bias| <= 100, both
  // validated) are far below half an ulp of FLT_MAX: they never turn a finite logit non-finite,
  // nor one into -inf. Only the repetition penalty's product or quotient can overflow.
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) {
    apply_count_penalties(output);
  }
  apply_logit_bias();
  const bool masking = output.size() < static_cast<size_t>(params_.min_tokens);
  if (masking) mask_suppressed();
  if (allowed_ != nullptr) apply_allowed();

  float mx = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < vocab; ++i) mx = std::max(mx, cand_[i].logit);
  if (mx == -std::numeric_limits<float>::infinity()) {
    if (allowed_ != nullptr) {
      throw NonFiniteLogits("response_format",
                            "every token the output's grammar allows next has a -inf logit (after "
                            "the min_tokens mask and the penalties); no token can be sampled");
    }
    throw_all_masked(logits, masking);
  }
  max_logit_ = static_cast<double>(mx);
}

void Sampler::load_candidates(std::span<const float> logits) {
  cand_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (!finite_or_minus_inf(l)) {
      throw NonFiniteLogits({}, "logits[" + std::to_string(i) + "] is " + show(l) +
                                    " as the model produced it; the model produced a "
                                    "non-finite value");
    }
    cand_[i] = {static_cast<int32_t>(i), l, 0.0f};
  }
}

void Sampler::apply_repetition_penalty(std::span<const int32_t> prompt,
                                       std::span<const int32_t> output) {
  // Each distinct token of prompt + output is penalized once (HF
  // RepetitionPenaltyLogitsProcessor).
  const float p = params_.repetition_penalty;
  seen_.resize(cand_.size(), 0);
  for (auto tokens : {prompt, output}) {
    for (int32_t t : tokens) {
      auto& mark = seen_[static_cast<size_t>(t)];
      if (mark) continue;
      mark = 1;
      float& l = cand_[static_cast<size_t>(t)].logit;
      const float before = l;
      l = l > 0.0f ? l / p : l * p;
      if (!finite_or_minus_inf(l)) {
        std::fill(seen_.begin(), seen_.end(), 0);
        throw NonFiniteLogits("repetition_penalty",
                              "repetition_penalty = " + show(p) + " turns the logit " +
                                  show(before) + " of token " + std::to_string(t) + " into " +
                                  show(l) +
                                  " (logit / repetition_penalty overflows float); use a "
                                  "repetition_penalty closer to 1");
      }
    }
  }
  for (auto tokens : {prompt, output}) {
    for (int32_t t : tokens) seen_[static_cast<size_t>(t)] = 0;
  }
}

void Sampler::apply_count_penalties(std::span<const int32_t> output) {
  counts_.resize(cand_.size(), 0);
  for (int32_t t : output) ++counts_[static_cast<size_t>(t)];
  for (int32_t t : output) {
    int32_t& c = counts_[static_cast<size_t>(t)];
    if (c == 0) continue;  // already applied for an earlier occurrence
    float& l = cand_[static_cast<size_t>(t)].logit;
    l = l - params_.frequency_penalty * static_cast<float>(c);
    l = l - params_.presence_penalty;
    c = 0;  // applied, and the buffer is clean for the next call
  }
}

void Sampler::apply_logit_bias() {
  const size_t vocab = cand_.size();
  for (const auto& [id, bias] : params_.logit_bias) {
    if (static_cast<size_t>(id) >= vocab) {
      throw std::out_of_range("Sampler: logit_bias token id " + std::to_string(id) +
                              " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
    cand_[static_cast<size_t>(id)].logit += bias;
  }
}

void Sampler::apply_allowed() {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < cand_.size(); ++i) {
    if (((allowed_[i / 32] >> (i % 32)) & 1u) == 0) cand_[i].logit = ninf;
  }
}

void Sampler::mask_suppressed() {
  for (int32_t id : suppressed_) {
    if (id >= 0 && static_cast<size_t>(id) < cand_.size()) {
      cand_[static_cast<size_t>(id)].logit = -std::numeric_limits<float>::infinity();
    }
  }
}

void Sampler::throw_all_masked(std::span<const float> logits, bool masking) const {
  // Which step took the last finite logit away: the model's row itself, the min_tokens mask (a
  // suppressed token), or the repetition penalty (logit * penalty underflowing to -inf).
  const float ninf = -std::numeric_limits<float>::infinity();
  bool suppressed_finite = false, other_finite = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] == ninf) continue;
    const bool s = masking && std::find(suppressed_.begin(), suppressed_.end(),
                                        static_cast<int32_t>(i)) != suppressed_.end();
    (s ? suppressed_finite : other_finite) = true;
  }
  if (other_finite) {
    throw NonFiniteLogits("repetition_penalty",
                          "repetition_penalty = " + show(params_.repetition_penalty) +
                              " turns every logit into -inf (logit * repetition_penalty "
                              "overflows float); no token can be sampled; use a "
                              "repetition_penalty closer to 1");
  }
  if (suppressed_finite) {
    throw NonFiniteLogits("min_tokens", "min_tokens = " + std::to_string(params_.min_tokens) +
                                            " masks EOS and stop_token_ids, and every other "
                                            "token's logit is -inf; no token can be sampled");
  }
  throw NonFiniteLogits({},
                        "every logit is -inf as the model produced it; no token can be "
                        "sampled (the model produced a non-finite row)");
}

bool Sampler::greedy() const {
  return params_.temperature < kGreedyBelow;
}

size_t Sampler::argmax() const {
  size_t best = 0;
  for (size_t i = 1; i < cand_.size(); ++i) {
    if (cand_[i].logit > cand_[best].logit) best = i;  // strict: the lowest id wins ties
  }
  return best;
}

void Sampler::sort_head(size_t& sorted, size_t need, size_t n) {
  need = std::min(need, n);
  if (need <= sorted) return;
  const auto first = cand_.begin() + static_cast<std::ptrdiff_t>(sorted);
  const auto mid = cand_.begin() + static_cast<std::ptrdiff_t>(need);
  const auto last = cand_.begin() + static_cast<std::ptrdiff_t>(n);
  // Everything in [sorted, n) already orders after [0, sorted), so ordering the next slice only
  // needs a selection inside the unsorted tail.
  if (mid != last) std::nth_element(first, mid, last, more_likely);
  std::sort(first, mid, more_likely);
  sorted = need;
}

double Sampler::filter() {
  const size_t vocab = cand_.size();
  size_t n = vocab;
  size_t sorted = 0;  // cand_[0, sorted) is in final order, and precedes everything after it

  const auto k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < n) {
    std::nth_element(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(k), cand_.end(),
                     more_likely);
    n = k;
  }

  // Temperature: one float exp per surviving candidate (relative error ~1e-7 per weight).
  const float inv_t = 1.0f / params_.temperature;
  const auto max_logit = static_cast<float>(max_logit_);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    auto& c = cand_[i];
    c.weight = std::exp((c.logit - max_logit) * inv_t);
    total += static_cast<double>(c.weight);
  }
  full_sum_ = (n == vocab && params_.temperature == 1.0f) ? total : -1.0;

  if (params_.top_p < 1.0f) {
    // Tokens lighter than (1 - top_p)·total / n are outside the nucleus for sure: together they
    // weigh < (1 - top_p)·total and all rank below the rest, so counted from the bottom they never
    // reach the kept mass. Dropping them first leaves the sort only the plausible head.
    // Swapping keeps every token in cand_ for log_normalizer().
    const double floor =
        (1.0 - static_cast<double>(params_.top_p)) * total / static_cast<double>(n);
    size_t live = 0;
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<double>(cand_[i].weight) >= floor) std::swap(cand_[live++], cand_[i]);
    }
    n = live;
    const double budget = static_cast<double>(params_.top_p) * total;
    double mass_before = 0.0;
    size_t i = 0;
    for (; i < n; ++i) {
      if (i > 0 && mass_before >= budget) break;  // the nucleus already reaches top_p
      if (i == sorted) sort_head(sorted, std::max(kTopPFirstChunk, 4 * sorted), n);
      mass_before += static_cast<double>(cand_[i].weight);
    }
    n = i;
  }

  if (params_.min_p > 0.0f) {
    // p / p_max = exp((x - x_max) / T) = weight, whatever the normalization; the top token
    // (weight 1) always survives top-k and top-p, so the threshold is the same at this point.
    // Swapping (not overwriting) keeps every token in cand_ for log_normalizer().
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (cand_[i].weight >= params_.min_p) std::swap(cand_[kept++], cand_[i]);
    }
    n = kept;
  }

  num_kept_ = n;
  total = 0.0;
  for (size_t i = 0; i < n; ++i) total += static_cast<double>(cand_[i].weight);
  return total;
}

double Sampler::log_normalizer() const {
  if (full_sum_ > 0.0) return max_logit_ + std::log(full_sum_);
  const auto max_logit = static_cast<float>(max_logit_);
  double sum = 0.0;
  for (const auto& c : cand_) sum += static_cast<double>(std::exp(c.logit - max_logit));
  return max_logit_ + std::log(sum);
}

std::vector<std::pair<int32_t, float>> Sampler::top_logprobs(size_t n, double log_z) const {
  // A sorted run of the best n so far; with n <= 20 most tokens are rejected by one comparison.
  std::vector<Candidate> best;
  best.reserve(n + 1);
  for (const auto& c : cand_) {
    if (best.size() == n && !more_likely(c, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), c, more_likely), c);
    if (best.size() > n) best.pop_back();
  }
  std::vector<std::pair<int32_t, float>> out;
  out.reserve(best.size());
  for (const auto& c : best) {
    out.emplace_back(c.id, static_cast<float>(static_cast<double>(c.logit) - log_z));
  }
  return out;
}

std::vector<float> Sampler::probabilities(std::span<const float> logits,
                                          std::span<const int32_t> prompt,
                                          std::span<const int32_t> output) {
  apply_penalties(logits, prompt, output);
  std::vector<float> probs(logits.size(), 0.0f);
  if (greedy()) {
    probs[argmax()] = 1.0f;
    return probs;
  }
  const double total = filter();
  for (size_t i = 0; i < num_kept_; ++i) {
    probs[static_cast<size_t>(cand_[i].id)] = static_cast<float>(cand_[i].weight / total);
  }
  return probs;
}

Sampler::Result Sampler::sample(std::span<const float> logits, std::span<const int32_t> prompt,
                                std::span<const int32_t> output) {
  apply_penalties(logits, prompt, output);
  const Candidate* chosen = nullptr;
  if (greedy()) {
    full_sum_ = -1.0;
    chosen = &cand_[argmax()];
  } else {
    const double total = filter();
    const double u = uniform() * total;
    double cum = 0.0;
    for (size_t i = 0; i < num_kept_; ++i) {
      const auto& c = cand_[i];
      if (c.weight > 0.0f) chosen = &c;  // the last live token if rounding leaves u >= cum
      cum += c.weight;
      if (u < cum) break;
    }
  }
  // Logprobs: log-softmax of the penalized logits, before temperature (see the class comment).
  const double log_z = log_normalizer();
  Result result{chosen->id, static_cast<float>(static_cast<double>(chosen->logit) - log_z), {}};
  if (params_.logprobs > 0) {
    result.top_logprobs =
        top_logprobs(std::min(static_cast<size_t>(params_.logprobs), cand_.size()), log_z);
  }
  return result;
}

double Sampler::uniform() {
  // 53 random bits → uniform in [0, 1), the same on every platform (unlike
  // std::uniform_real_distribution, whose algorithm is implementation-defined).
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

Sampler::Result Sampler::score(std::span<const float> logits, std::span<const int32_t> prompt,
                               std::span<const int32_t> output, int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) {
    throw std::out_of_range("score: token " + std::to_string(token) + " outside [0, " +
                            std::to_string(logits.size()) + ")");
  }
  apply_penalties(logits, prompt, output);  // cand_[id] is token id's candidate until filter()
  full_sum_ = -1.0;
  const double log_z = log_normalizer();
  const Candidate& c = cand_[static_cast<size_t>(token)];
  Result result{c.id, static_cast<float>(static_cast<double>(c.logit) - log_z), {}};
  if (params_.logprobs > 0) {
    result.top_logprobs =
        top_logprobs(std::min(static_cast<size_t>(params_.logprobs), cand_.size()), log_z);
  }
  return result;
}

}  // namespace plinth
