#pragma once
// Next-token selection for one sequence: penalties, temperature, top-k, top-p, min-p, seeded draw,
// logprobs.

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "sampling/non_finite_logits.hpp"
#include "sampling/sampling_params.hpp"

namespace plinth {

/// Picks the next token of one sequence from the logits of its last position.
///
/// Pipeline (the order of vLLM's and llama.cpp's samplers):
///  1. penalties, in float32 like the logits: repetition (prompt + output tokens, CTRL-style), then
///     frequency and presence (output tokens only, OpenAI); then logit_bias (OpenAI: added to the
///     logits), then while fewer than min_tokens are generated EOS and stop_token_ids get -inf
///     (vLLM's MinTokensLogitsProcessor);
///  2. temperature < 1e-5 (0 in practice) → greedy: argmax of the penalized logits, lowest id on
///     ties; steps 3–7 skipped;
///  3. temperature: x = logit / T;
///  4. top-k: keep exactly k tokens, ordering by (penalized logit desc, id asc);
///  5. top-p: in that order keep each token whose preceding mass (softmax over the top-k survivors)
///     is < top_p — the smallest prefix whose mass reaches top_p, never empty;
///  6. min-p: keep tokens with p >= min_p · p_max, i.e. exp(x - x_max) >= min_p;
///  7. softmax over the survivors and one draw with a 53-bit uniform from std::mt19937_64.
/// The token drawn depends only on the logits, history, params and RNG state, not on `logprobs`.
///
/// Logprobs: the log-softmax of the penalized logits BEFORE temperature and truncation (vLLM's
/// "processed logits" minus temperature: the model's own distribution after penalties), so they do
/// not depend on the sampling knobs and greedy requests still get informative values.
///
/// Cost per step: one copy of the logits, O(len(prompt + output)) for penalties, one exp per
/// surviving candidate, top-k by nth_element (no full sort), top-p by an incremental partial sort
/// that orders only the head that top-p keeps, and one exp pass over the vocabulary for the
/// sampled token's logprob (shared with the filter when T = 1 and top-k is off). The scratch
/// buffer ([vocab] candidates of 12 bytes, plus [vocab] bytes/int32 for penalties when they are
/// on) is owned here and reused; after the first step sample() allocates only top_logprobs.
///
/// Thread rules: one Sampler per sequence; not safe for concurrent calls on the same object.
class Sampler {
 public:
  struct Result {
    int32_t token;  ///< sampled token id
    float logprob;  ///< log-softmax of the penalized logits at `token` (natural log)
    /// The `params.logprobs` most likely tokens by the same logprobs, descending (ties: lower id).
    std::vector<std::pair<int32_t, float>> top_logprobs;
  };

  /// Validates `params` (std::invalid_argument naming the field) and seeds the RNG.
  /// eos_token_ids: the model's EOS tokens, masked with params.stop_token_ids while fewer than
  /// params.min_tokens tokens are generated (unless params.ignore_eos).
  explicit Sampler(const SamplingParams& params, std::vector<int32_t> eos_token_ids = {});

  /// Samples one token.
  /// logits: [vocab] float32 of the last position; not modified (copied into scratch). Must not
  ///   contain NaN or +inf, and not be all -inf: NonFiniteLogits (a std::invalid_argument) with
  ///   an empty param(). A repetition_penalty that turns a finite logit into +inf (logit / a tiny
  ///   penalty overflows float), or the min_tokens mask or the repetition penalty (logit * a huge
  ///   penalty) leaving every logit -inf, throws NonFiniteLogits naming that parameter.
  /// prompt, output: token ids of the sequence so far, for the penalties; each in [0, vocab)
  ///   (std::out_of_range otherwise). Only read during the call.
  Result sample(std::span<const float> logits, std::span<const int32_t> prompt,
                std::span<const int32_t> output);

  /// The filtered distribution that sample() draws from: [vocab] probabilities summing to 1, zero
  /// for tokens removed by top-k / top-p / min-p; one-hot at the argmax when greedy. Does not
  /// advance the RNG. Same arguments and errors as sample().
  std::vector<float> probabilities(std::span<const float> logits, std::span<const int32_t> prompt,
                                   std::span<const int32_t> output);

  /// The Result sample() would return had it drawn `token` ([0, vocab)): its logprob and top
  /// logprobs; no draw, the RNG does not advance. Used for tokens chosen by speculative
  /// verification. Same arguments and errors as sample(); std::out_of_range for a bad token.
  Result score(std::span<const float> logits, std::span<const int32_t> prompt,
               std::span<const int32_t> output, int32_t token);

  /// Structured outputs: the next sample(), probabilities() or score() masks every token whose
  /// bit is clear in `mask` ([ceil(vocab / 32)] words, bit t % 32 of word t / 32) to -inf after
  /// the penalties, logit_bias and the min_tokens mask, so greedy, top-k / top-p / min-p and the
  /// logprobs all see the masked logits. Borrowed until the next call; nullptr = no mask. When the
  /// mask leaves no finite logit, NonFiniteLogits names "response_format".
  void set_allowed(const uint32_t* mask) { allowed_ = mask; }

  /// One draw in [0, 1) with 53 random bits from this sequence's RNG (the generator sample() uses),
  /// identical on every platform.
  double uniform();

  /// True when temperature is below 1e-5: sample() is the argmax of the penalized logits.
  bool greedy() const;

  const SamplingParams& params() const { return params_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;   // penalized logit
    float weight;  // exp((logit - max) / T), unnormalized probability; set by filter()
  };

  /// Fills cand_ (indexed by token id) with the penalized logits; sets max_logit_.
  void apply_penalties(std::span<const float> logits, std::span<const int32_t> prompt,
                       std::span<const int32_t> output);
  // The steps of apply_penalties(), in order, each on cand_ ([vocab], indexed by token id).
  /// cand_[i] = logits[i]; throws NonFiniteLogits for NaN or +inf.
  void load_candidates(std::span<const float> logits);
  /// Divides (positive) or multiplies (negative) the logit of each distinct token of prompt +
  /// output by repetition_penalty; throws NonFiniteLogits when one overflows.
  void apply_repetition_penalty(std::span<const int32_t> prompt, std::span<const int32_t> output);
  /// Subtracts frequency_penalty x count and presence_penalty for each token of `output`.
  void apply_count_penalties(std::span<const int32_t> output);
  /// Adds logit_bias; throws std::out_of_range for an id outside the vocabulary.
  void apply_logit_bias();
  /// Sets the logits of the tokens allowed_ excludes to -inf.
  void apply_allowed();
  /// Sets the logits of suppressed_ (EOS, stop_token_ids: the min_tokens mask) to -inf.
  void mask_suppressed();
  /// Every penalized logit is -inf: throws NonFiniteLogits naming the step that took the last
  /// finite one away (repetition_penalty, min_tokens) or none when `logits` were all -inf already.
  [[noreturn]] void throw_all_masked(std::span<const float> logits, bool masking) const;
  /// Greedy: index into cand_ (= token id, before filter()) of the argmax, lowest id on ties.
  size_t argmax() const;
  /// Runs temperature / top-k / top-p / min-p; afterwards cand_[0, num_kept_) are the survivors
  /// with their weights. Returns the survivors' weight sum.
  double filter();
  /// Orders cand_[0, n) so that its first `need` entries are the most likely in order, continuing
  /// an earlier partial order of the first `sorted` entries.
  void sort_head(size_t& sorted, size_t need, size_t n);
  /// log of the softmax normalizer of the penalized logits (pre-temperature), over all of cand_.
  double log_normalizer() const;
  /// The n most likely tokens and their logprobs, without reordering cand_.
  std::vector<std::pair<int32_t, float>> top_logprobs(size_t n, double log_z) const;

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<Candidate> cand_;        // [vocab] scratch
  std::vector<uint8_t> seen_;          // [vocab] repetition-penalty mask; allocated on first use
  std::vector<int32_t> counts_;        // [vocab] output-token counts; allocated on first use
  std::vector<int32_t> suppressed_;    // masked while output < min_tokens (stop ids + EOS)
  size_t num_kept_ = 0;                // survivors of filter(): cand_[0, num_kept_)
  double max_logit_ = 0.0;             // max penalized logit, set by apply_penalties
  double full_sum_ = -1.0;             // filter()'s sum over the whole vocab when T = 1, else -1
  const uint32_t* allowed_ = nullptr;  // the grammar's mask (set_allowed), or none
};

}  // namespace plinth
