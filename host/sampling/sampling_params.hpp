#pragma once
// Per-request sampling parameters, with the OpenAI / vLLM meaning of every field.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace plinth {

/// How one sequence picks its next token and when it stops. Defaults follow the OpenAI API.
/// Order of application in Sampler (as vLLM / llama.cpp): penalties → temperature → top-k →
/// top-p → min-p → softmax → draw.
struct SamplingParams {
  /// Divides the logits. 0 (or anything below 1e-5) = greedy: argmax, lowest token id on ties.
  /// < 0 invalid.
  float temperature = 1.0f;
  /// Keep the k most likely tokens (exactly k; ties at the boundary go to the lower id). 0 = off.
  int32_t top_k = 0;
  /// Nucleus: keep the smallest most-likely prefix whose mass reaches top_p. Range (0, 1].
  float top_p = 1.0f;
  /// Drop tokens whose probability is below min_p × the top probability. Range [0, 1].
  float min_p = 0.0f;
  /// CTRL-style (Keskar et al. 2019, as in HF / vLLM): over the set of tokens in prompt + output,
  /// logit > 0 ? logit / p : logit * p. Must be > 0; 1 = off.
  float repetition_penalty = 1.0f;
  /// OpenAI semantics over output tokens only: logit -= presence * [count > 0] + frequency * count.
  /// Range [-2, 2] each.
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  /// Seeds the sequence's RNG; same seed + same logits → same tokens. Absent: random_device.
  std::optional<uint64_t> seed;
  /// Number of tokens to generate at most (finish reason "length"). >= 1.
  int32_t max_tokens = 16;
  /// Generation stops (finish reason "stop") when one of these tokens is sampled; the token's text
  /// is not emitted. Each id must be >= 0.
  std::vector<int32_t> stop_token_ids;
  /// Stop strings: generation stops when one appears in the output text, which is cut just before
  /// it (or just after it with include_stop_str_in_output). Each must be non-empty.
  std::vector<std::string> stop;
  /// vLLM's include_stop_str_in_output: the stop string that ended generation, or the stop
  /// token's text (EOS, stop_token_ids), stays in the output text.
  bool include_stop_str_in_output = false;
  /// vLLM's min_tokens: until this many tokens are generated, EOS and stop_token_ids are masked
  /// out of the logits (never sampled) and stop strings are not checked. In [0, max_tokens].
  int32_t min_tokens = 0;
  /// OpenAI's logit_bias: (token id, bias in [-100, 100]) added to the logit of that token after
  /// the penalties and before temperature, in sampling and in the reported logprobs. Ids >= 0;
  /// Sampler checks them against the vocabulary.
  std::vector<std::pair<int32_t, float>> logit_bias;
  /// vLLM's skip_special_tokens: special tokens (EOS, <|im_end|>, ...) add no text to the output.
  bool skip_special_tokens = true;
  /// Keep generating past the model's EOS token (stop_token_ids still apply).
  bool ignore_eos = false;
  /// Number of top logprobs to return per token (0..20). The sampled token's logprob is always
  /// returned.
  int32_t logprobs = 0;
};

/// Upper bound on SamplingParams::logprobs (OpenAI's limit).
inline constexpr int32_t kMaxLogprobs = 20;

/// Checks every field against its range. Throws std::invalid_argument whose message names the
/// field, the value and the allowed range, e.g. "top_p = 0: must be in (0, 1]".
void validate(const SamplingParams& params);

}  // namespace plinth
