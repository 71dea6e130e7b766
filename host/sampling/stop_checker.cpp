#include "sampling/stop_checker.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace plinth {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kNone:
      break;
  }
  return "";
}

StopChecker::StopChecker(const SamplingParams& params, std::vector<int32_t> eos_token_ids)
    : max_tokens_(params.max_tokens),
      min_tokens_(params.min_tokens),
      include_stop_(params.include_stop_str_in_output),
      stop_tokens_(params.stop_token_ids),
      stops_(params.stop),
      matcher_((validate(params), params.stop)) {
  if (!params.ignore_eos) {
    stop_tokens_.insert(stop_tokens_.end(), eos_token_ids.begin(), eos_token_ids.end());
  }
}

bool StopChecker::is_stop_token(int32_t token) const {
  return std::find(stop_tokens_.begin(), stop_tokens_.end(), token) != stop_tokens_.end();
}

StopChecker::Step StopChecker::on_token(int32_t token, std::string_view text_delta, bool ends) {
  if (finish_ != FinishReason::kNone) {
    throw std::logic_error(std::string("StopChecker::on_token: the sequence already finished (") +
                           to_string(finish_) + ")");
  }
  ++num_generated_;
  Step step;
  if (num_generated_ < min_tokens_ && !ends) {
    // vLLM: no stop condition but max_tokens applies before min_tokens are generated (EOS and
    // stop ids are masked in the sampler; stop strings are not looked for).
    step.text = std::string(text_delta);
  } else if (ends || is_stop_token(token)) {
    // Text held back as a possible stop-string prefix is real output after all.
    step.text = matcher_.flush();
    if (include_stop_) step.text += text_delta;
    step.finish = finish_ = FinishReason::kStop;
    step.stop_token = token;
    return step;
  } else {
    auto r = matcher_.feed(text_delta);
    step.text = std::move(r.text);
    if (r.stopped) {
      if (include_stop_) step.text += stops_.at(*r.stop_index);
      step.finish = finish_ = FinishReason::kStop;
      step.stop_string = r.stop_index;
      return step;
    }
  }
  if (num_generated_ >= max_tokens_) {
    step.text += matcher_.flush();
    step.finish = finish_ = FinishReason::kLength;
  }
  return step;
}

}  // namespace plinth
