#pragma once
// One sequence's host-side state: its tokens (the host owns them; plugins see only counts), its
// sampler, detokenizer and stop conditions, and its timings.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/grammar.hpp"
#include "sampling/sampler.hpp"
#include "sampling/stop_checker.hpp"
#include "tokenizer/streaming_detokenizer.hpp"

namespace plinth {

/// Timestamps in seconds on the steady clock, and counts; TTFT / TPOT derive from them.
struct SequenceTimings {
  double arrival = 0;      ///< add_request
  double scheduled = 0;    ///< first scheduled (0 until then): arrival → here is queue time
  double first_token = 0;  ///< first generated token sampled (0 until then)
  double last_token = 0;   ///< latest generated token sampled (0 until then)
  double finished = 0;     ///< finish or abort (0 until then)
  uint32_t num_prompt_tokens = 0;
  uint32_t num_generated_tokens = 0;
  uint32_t num_preemptions = 0;
  /// Time to first token, seconds (0 before the first token).
  double ttft() const { return first_token > 0 ? first_token - arrival : 0; }
  /// Time per output token after the first, seconds (0 with fewer than 2 tokens).
  double tpot() const {
    return num_generated_tokens > 1 && finished > 0
               ? (finished - first_token) / (num_generated_tokens - 1)
               : 0;
  }
};

class Sequence {
 public:
  Sequence(uint64_t id, std::vector<int32_t> prompt, const SamplingParams& params,
           const Tokenizer& tokenizer, std::vector<int32_t> eos_ids, double now);

  uint64_t id() const { return id_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  uint32_t num_prompt_tokens() const { return num_prompt_; }
  std::span<const int32_t> prompt() const { return {tokens_.data(), num_prompt_}; }
  std::span<const int32_t> output() const {
    return {tokens_.data() + num_prompt_, tokens_.size() - num_prompt_};
  }

  /// Samples the next token from `logits` ([vocab] float32) and applies stop conditions.
  /// Returns the text now safe to stream (whole UTF-8 characters, stop strings held back/cut).
  std::string sample_and_append(std::span<const float> logits, double now);

  /// The target distribution after this request's sampling transforms (penalties counting
  /// `pending` as if appended after the output, temperature, top-k/top-p/min-p) that the next
  /// token is drawn from: [vocab] probabilities; one-hot at the argmax when greedy.
  std::vector<float> distribution(std::span<const float> logits, std::span<const int32_t> pending);
  /// The token a greedy request takes from `logits` at the state after `pending` (as
  /// distribution()): the argmax of distribution(), computed without it when plain_greedy()
  /// (the masked argmax of the row: no copy of the row, no [vocab] vector). Same errors as
  /// distribution().
  int32_t greedy_token(std::span<const float> logits, std::span<const int32_t> pending);
  /// Appends `token` (chosen elsewhere, e.g. by speculative verification) as if sampled from
  /// `logits` (its logprobs are scored there; when plain_greedy() nobody reads them and the
  /// logprob is NaN, as append_argmax's) and applies the stop conditions like
  /// sample_and_append. Returns the text now safe to stream.
  std::string append_scored(std::span<const float> logits, int32_t token, double now);
  /// A draw in [0, 1) from the sequence's own RNG (seeded requests stay reproducible).
  double uniform() { return sampler_.uniform(); }
  bool greedy() const { return sampler_.greedy(); }
  /// Whether the request gave a seed (its sampled output must then be the same on every run).
  bool seeded() const { return sampler_.params().seed.has_value(); }
  /// True when the next token is the plain argmax of the logits (greedy, no penalties, no
  /// logit_bias, no min_tokens) and nobody
  /// reads its logprobs: the backend's argmax id is then enough (ABI 1.3 argmax_only).
  bool argmax_suffices() const;
  /// Greedy with nothing between the logits and the choice but the grammar's mask, if any: no
  /// penalties, logit_bias or min_tokens, and nobody reads logprobs. The masked argmax of the row
  /// is then the token (sampling/masked_argmax.hpp); argmax_suffices() is this without a grammar.
  bool plain_greedy() const;
  /// Whether the caller reads logprobs (GenerationRequest::logprobs).
  void set_needs_logprobs(bool on) { needs_logprobs_ = on; }
  /// Appends `token`, the argmax the backend computed (argmax_suffices() must hold) or the masked
  /// argmax (plain_greedy()), with a NaN logprob, and applies the stop conditions like
  /// sample_and_append. Does not advance the grammar.
  std::string append_argmax(int32_t token, double now);
  /// Tokens the request may still generate (max_tokens minus those generated).
  uint32_t tokens_left() const;
  /// Constrains the output with a grammar (structured outputs): every later sample, distribution
  /// and scored token is masked by the matcher (distribution() at the state after `pending`), and
  /// every appended token advances it.
  void set_grammar(std::unique_ptr<SequenceGrammar> grammar) { grammar_ = std::move(grammar); }
  /// A grammar armed by a trigger token (a "grammar trigger", llama.cpp's lazy grammar): while
  /// dormant, the sequence samples exactly as an unconstrained one (no mask, no forced drafts);
  /// the token after `trigger` (a vocabulary id, normally a control token such as Mistral's
  /// [TOOL_CALLS]) is the first the grammar constrains, from its initial state. The trigger token
  /// itself adds no text: when it is appended, text held back (an incomplete UTF-8 character, a
  /// possible stop-string prefix) is released, so the text before it is exactly the text of the
  /// tokens before it, and a stop string never spans it. A trigger that finishes the sequence (a
  /// stop token id) arms nothing.
  void set_grammar_trigger(std::unique_ptr<SequenceGrammar> grammar, int32_t trigger) {
    dormant_ = std::move(grammar);
    trigger_ = trigger;
  }
  /// Constrained now: a grammar without a trigger, or one whose trigger was appended.
  bool constrained() const { return grammar_ != nullptr; }
  /// A grammar waits for its trigger token (set_grammar_trigger).
  bool dormant() const { return dormant_ != nullptr; }
  /// The index in output() of the trigger token once appended (it armed the grammar).
  std::optional<size_t> trigger_index() const { return trigger_index_; }
  /// Where the grammar's output starts in text() once the trigger was appended: text() before
  /// it is the text of the tokens before the trigger.
  std::optional<size_t> trigger_text_offset() const { return trigger_text_offset_; }
  /// The sequence's matcher (null when unconstrained); engine thread only.
  SequenceGrammar* grammar() { return grammar_.get(); }
  /// How many of `drafts` (in order) the grammar takes: the drafts are cut at the first one it
  /// refuses or that ends it (a stop token where it can end: no verification row may follow
  /// it) (the matcher advances over them, then rolls back). A dormant grammar's drafts are
  /// cut before their first trigger token, so that the trigger can only be the last token a step
  /// appends (the verification rows after it would need the mask). All of them without a
  /// grammar.
  size_t grammar_valid_prefix(std::span<const int32_t> drafts);
  /// The bytes the grammar forces next from the matcher's state (at most `capacity`); empty
  /// without a grammar or when nothing is forced. Throws GrammarContractError when the plugin
  /// fails.
  std::string grammar_forced_bytes(size_t capacity);
  /// Whether the request allows speculative decoding (the API's per-request opt-out).
  bool speculative() const { return speculative_; }
  void set_speculative(bool on) { speculative_ = on; }

  bool finished() const { return finish_reason_.has_value(); }
  /// "stop", "length", "abort" or "error" once finished.
  const std::optional<std::string>& finish_reason() const { return finish_reason_; }
  /// With finish "stop" by a stop string: its index in the request's params.stop (which string
  /// matched; the Anthropic API's `stop_sequence`); nullopt otherwise.
  std::optional<size_t> stop_string() const { return stop_string_; }
  void abort(double now);
  /// Ends the sequence with "error": a plugin broke its contract on it (engine/contract_check.hpp;
  /// `why` names the plugin and the rule), or its logits row turned non-finite (NonFiniteLogits;
  /// `param` names the request's sampling parameter at fault, "" when the model produced the
  /// value). No-op when already finished.
  void fail(std::string why, double now, std::string param = {});
  /// What failed the sequence (empty unless finish_reason() is "error").
  const std::string& error() const { return error_; }
  /// The request's own parameter that failed it (NonFiniteLogits::param()); "" when the fault is
  /// a plugin's or the model's.
  const std::string& error_param() const { return error_param_; }
  /// Ends the sequence with "length" because it reached the model's context.
  std::string finish_at_context(double now);

  /// Streamed text so far (what the client has received).
  const std::string& text() const { return text_; }
  const std::vector<Sampler::Result>& samples() const { return samples_; }
  /// The request's prefix-cache namespace: cache_salt_digest() of its cache_salt (empty = shared).
  const std::string& cache_key_salt() const { return cache_key_salt_; }
  void set_cache_key_salt(std::string salt) { cache_key_salt_ = std::move(salt); }
  bool bypass_prefix_cache() const { return bypass_prefix_cache_; }
  void set_bypass_prefix_cache(bool bypass) { bypass_prefix_cache_ = bypass; }

  SequenceTimings& timings() { return timings_; }
  const SequenceTimings& timings() const { return timings_; }

 private:
  uint64_t id_;
  std::vector<int32_t> tokens_;
  uint32_t num_prompt_;
  Sampler sampler_;
  StreamingDetokenizer detokenizer_;
  StopChecker stop_;
  std::string text_;
  std::vector<Sampler::Result> samples_;
  std::optional<std::string> finish_reason_;
  std::optional<size_t> stop_string_;
  std::string error_;
  std::string error_param_;
  SequenceTimings timings_;
  std::string cache_key_salt_;
  bool bypass_prefix_cache_ = false;
  bool speculative_ = true;
  bool needs_logprobs_ = false;
  std::unique_ptr<SequenceGrammar> grammar_;  // structured outputs, or none
  std::unique_ptr<SequenceGrammar> dormant_;  // a grammar waiting for trigger_, or none
  int32_t trigger_ = -1;
  std::optional<size_t> trigger_index_;        // output index of the trigger that armed grammar_
  std::optional<size_t> trigger_text_offset_;  // text_.size() right after the trigger

  std::string append(Sampler::Result r, double now);
  /// Runs `f` with the sampler masked by the grammar's mask after `pending` (accepted, then rolled
  /// back); `f` alone without a grammar.
  template <class F>
  auto masked(std::span<const int32_t> pending, F&& f);
};

}  // namespace plinth
