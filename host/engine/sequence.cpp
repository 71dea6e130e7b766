#include "engine/sequence.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "sampling/masked_argmax.hpp"

namespace plinth {

Sequence::Sequence(uint64_t id, std::vector<int32_t> prompt, const SamplingParams& params,
                   const Tokenizer& tokenizer, std::vector<int32_t> eos_ids, double now)
    : id_(id),
      tokens_(std::move(prompt)),
      num_prompt_(static_cast<uint32_t>(tokens_.size())),
      sampler_(params, eos_ids),
      detokenizer_(tokenizer, params.skip_special_tokens),
      stop_(params, std::move(eos_ids)) {
  timings_.arrival = now;
  timings_.num_prompt_tokens = num_prompt_;
}

template <class F>
auto Sequence::masked(std::span<const int32_t> pending, F&& f) {
  if (!grammar_) return f();
  // Structured outputs: the mask after penalties / logit_bias, before greedy, top-k / top-p and
  // logprobs (Sampler::set_allowed), at the state after `pending` (speculation's earlier drafts).
  size_t advanced = 0;
  struct Restore {
    Sequence& s;
    size_t& n;
    ~Restore() {
      s.sampler_.set_allowed(nullptr);
      if (n > 0) s.grammar_->rollback(static_cast<uint32_t>(n));
    }
  } restore{*this, advanced};
  for (int32_t t : pending) {
    if (!grammar_->try_accept(t)) {
      throw GrammarContractError("a draft token the grammar refused reached verification");
    }
    ++advanced;
  }
  sampler_.set_allowed(grammar_->fill().data());
  return f();
}

size_t Sequence::grammar_valid_prefix(std::span<const int32_t> drafts) {
  if (dormant_) return static_cast<size_t>(std::ranges::find(drafts, trigger_) - drafts.begin());
  if (!grammar_) return drafts.size();
  // A draft that ends the grammar (a stop token where it can end) is cut too: the verification
  // row after it would have no token to allow. Such a token can still be the step's sampled one.
  size_t accepted = 0;
  size_t keep = 0;
  while (accepted < drafts.size() && grammar_->try_accept(drafts[accepted])) {
    ++accepted;
    if (grammar_->terminated()) break;
    keep = accepted;
  }
  if (accepted > 0) grammar_->rollback(static_cast<uint32_t>(accepted));
  return keep;
}

std::string Sequence::grammar_forced_bytes(size_t capacity) {
  if (!grammar_ || finished()) return {};
  return grammar_->forced_bytes(capacity);
}

std::string Sequence::sample_and_append(std::span<const float> logits, double now) {
  if (plain_greedy()) {
    // Greedy under the grammar's mask alone, or no mask (a batch whose backend computed no
    // argmax ids): the (masked) argmax, without the sampler's copy of the row and softmax (a
    // logprob nobody reads); the same token.
    if (!grammar_) return append_argmax(masked_argmax(logits, {}), now);
    const int32_t token = masked_argmax(logits, grammar_->fill());
    grammar_->accept(token);  // the plugin must accept the token its mask allowed
    return append_argmax(token, now);
  }
  if (!grammar_) return append(sampler_.sample(logits, prompt(), output()), now);
  Sampler::Result r = masked({}, [&] { return sampler_.sample(logits, prompt(), output()); });
  grammar_->accept(r.token);  // the plugin must accept the token its mask allowed
  return append(std::move(r), now);
}

std::vector<float> Sequence::distribution(std::span<const float> logits,
                                          std::span<const int32_t> pending) {
  return masked(pending, [&] {
    if (pending.empty()) return sampler_.probabilities(logits, prompt(), output());
    std::vector<int32_t> out(output().begin(), output().end());
    out.insert(out.end(), pending.begin(), pending.end());
    return sampler_.probabilities(logits, prompt(), out);
  });
}

int32_t Sequence::greedy_token(std::span<const float> logits, std::span<const int32_t> pending) {
  if (!plain_greedy()) {
    const std::vector<float> p = distribution(logits, pending);
    return static_cast<int32_t>(std::max_element(p.begin(), p.end()) - p.begin());
  }
  if (!grammar_) return masked_argmax(logits, {});
  return masked(pending, [&] { return masked_argmax(logits, grammar_->mask()); });
}

std::string Sequence::append_scored(std::span<const float> logits, int32_t token, double now) {
  if (plain_greedy()) {
    // Nobody reads the logprob: the token as verification chose it (greedy_token's masked argmax
    // at this state), the grammar advanced over it.
    if (grammar_) grammar_->accept(token);  // refused: the plugin broke its contract
    return append_argmax(token, now);
  }
  if (!grammar_) return append(sampler_.score(logits, prompt(), output(), token), now);
  Sampler::Result r = masked({}, [&] { return sampler_.score(logits, prompt(), output(), token); });
  if (!grammar_->allowed(token)) {
    throw GrammarContractError("speculative verification chose token " + std::to_string(token) +
                               ", which the grammar's mask does not allow");
  }
  grammar_->accept(token);
  return append(std::move(r), now);
}

bool Sequence::argmax_suffices() const {
  return !grammar_ && plain_greedy();
}

bool Sequence::plain_greedy() const {
  const SamplingParams& p = sampler_.params();
  return sampler_.greedy() && !needs_logprobs_ && p.logprobs == 0 && p.repetition_penalty == 1.0f &&
         p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f && p.logit_bias.empty() &&
         p.min_tokens == 0;
}

std::string Sequence::append_argmax(int32_t token, double now) {
  Sampler::Result r;
  r.token = token;
  r.logprob = std::numeric_limits<float>::quiet_NaN();
  return append(std::move(r), now);
}

uint32_t Sequence::tokens_left() const {
  const auto max = static_cast<uint32_t>(sampler_.params().max_tokens);
  const auto generated = static_cast<uint32_t>(tokens_.size() - num_prompt_);
  return generated >= max ? 0 : max - generated;
}

std::string Sequence::append(Sampler::Result r, double now) {
  tokens_.push_back(r.token);
  samples_.push_back(std::move(r));
  int32_t token = tokens_.back();
  if (timings_.first_token == 0) timings_.first_token = now;
  timings_.last_token = now;
  timings_.num_generated_tokens++;
  // A dormant grammar's trigger adds no text; what was held back before it is released.
  const bool trigger = dormant_ && token == trigger_;
  std::string delta = trigger ? detokenizer_.flush() : detokenizer_.push(token);
  // A token that completed the grammar (its end: EOS, taken as text under ignore_eos) ends the
  // sequence: the grammar allows nothing after it.
  StopChecker::Step step = stop_.on_token(token, delta, grammar_ && grammar_->terminated());
  std::string out = std::move(step.text);
  if (trigger && step.finish != FinishReason::kStop) {
    if (step.finish == FinishReason::kNone) out += stop_.release();
    grammar_ = std::move(dormant_);
    trigger_index_ = tokens_.size() - 1 - num_prompt_;
    trigger_text_offset_ = text_.size() + out.size();
  }
  if (step.finish != FinishReason::kNone) {
    // A stop token's or stop string's text is not output; a length finish releases held bytes.
    if (step.finish == FinishReason::kLength) out += detokenizer_.flush();
    finish_reason_ = to_string(step.finish);
    stop_string_ = step.stop_string;
    timings_.finished = now;
  }
  text_ += out;
  return out;
}

void Sequence::abort(double now) {
  if (finished()) return;
  finish_reason_ = "abort";
  timings_.finished = now;
}

void Sequence::fail(std::string why, double now, std::string param) {
  if (finished()) return;
  finish_reason_ = "error";
  error_ = std::move(why);
  error_param_ = std::move(param);
  timings_.finished = now;
}

std::string Sequence::finish_at_context(double now) {
  std::string out = detokenizer_.flush();
  text_ += out;
  finish_reason_ = "length";
  timings_.finished = now;
  return out;
}

}  // namespace plinth
