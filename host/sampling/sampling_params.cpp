#include "sampling/sampling_params.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace plinth {
namespace {

[[noreturn]] void reject(const std::string& field, const std::string& value,
                         const std::string& allowed) {
  throw std::invalid_argument("invalid sampling parameter " + field + " = " + value + ": " +
                              allowed);
}

std::string show(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

}  // namespace

void validate(const SamplingParams& p) {
  // NaN fails every comparison, so each check is written as "!(inside the range)".
  if (!(p.temperature >= 0.0f) || std::isinf(p.temperature)) {
    reject("temperature", show(p.temperature), "must be a finite number >= 0 (0 = greedy)");
  }
  if (p.top_k < 0) {
    reject("top_k", std::to_string(p.top_k), "must be >= 0 (0 = off)");
  }
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    reject("top_p", show(p.top_p), "must be in (0, 1] (1 = off)");
  }
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) {
    reject("min_p", show(p.min_p), "must be in [0, 1] (0 = off)");
  }
  if (!(p.repetition_penalty > 0.0f) || std::isinf(p.repetition_penalty)) {
    reject("repetition_penalty", show(p.repetition_penalty),
           "must be a finite number > 0 (1 = off)");
  }
  if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f)) {
    reject("presence_penalty", show(p.presence_penalty), "must be in [-2, 2] (0 = off)");
  }
  if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f)) {
    reject("frequency_penalty", show(p.frequency_penalty), "must be in [-2, 2] (0 = off)");
  }
  if (p.max_tokens < 1) {
    reject("max_tokens", std::to_string(p.max_tokens), "must be >= 1");
  }
  for (size_t i = 0; i < p.stop_token_ids.size(); ++i) {
    if (p.stop_token_ids[i] < 0) {
      reject("stop_token_ids[" + std::to_string(i) + "]", std::to_string(p.stop_token_ids[i]),
             "token ids must be >= 0");
    }
  }
  for (size_t i = 0; i < p.stop.size(); ++i) {
    if (p.stop[i].empty()) {
      reject("stop[" + std::to_string(i) + "]", "\"\"", "stop strings must be non-empty");
    }
  }
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens) {
    reject("min_tokens", std::to_string(p.min_tokens),
           "must be in [0, max_tokens = " + std::to_string(p.max_tokens) + "]");
  }
  for (size_t i = 0; i < p.logit_bias.size(); ++i) {
    const auto& [id, bias] = p.logit_bias[i];
    if (id < 0) {
      reject("logit_bias[" + std::to_string(i) + "]", std::to_string(id), "token ids must be >= 0");
    }
    if (!(bias >= -100.0f && bias <= 100.0f)) {
      reject("logit_bias[" + std::to_string(id) + "]", show(bias), "must be in [-100, 100]");
    }
  }
  if (p.logprobs < 0 || p.logprobs > kMaxLogprobs) {
    reject("logprobs", std::to_string(p.logprobs),
           "must be in [0, " + std::to_string(kMaxLogprobs) + "]");
  }
}

}  // namespace plinth
