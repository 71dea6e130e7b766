// validate(): every out-of-range field is rejected with a message naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sampling/sampler.hpp"
#include "sampling/sampling_params.hpp"

namespace plinth {
namespace {

struct BadCase {
  std::string field;  // expected in the message
  std::function<void(SamplingParams&)> spoil;
};

std::vector<BadCase> bad_cases() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"temperature", [](SamplingParams& p) { p.temperature = -0.1f; }},
      {"temperature", [=](SamplingParams& p) { p.temperature = nan; }},
      {"temperature", [=](SamplingParams& p) { p.temperature = inf; }},
      {"top_k", [](SamplingParams& p) { p.top_k = -1; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 0.0f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 1.01f; }},
      {"top_p", [=](SamplingParams& p) { p.top_p = nan; }},
      {"min_p", [](SamplingParams& p) { p.min_p = -0.01f; }},
      {"min_p", [](SamplingParams& p) { p.min_p = 1.5f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = 0.0f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = -1.0f; }},
      {"repetition_penalty", [=](SamplingParams& p) { p.repetition_penalty = inf; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = 2.5f; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = -2.01f; }},
      {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = -3.0f; }},
      {"frequency_penalty", [=](SamplingParams& p) { p.frequency_penalty = nan; }},
      {"max_tokens", [](SamplingParams& p) { p.max_tokens = 0; }},
      {"max_tokens", [](SamplingParams& p) { p.max_tokens = -5; }},
      {"stop_token_ids[1]",
       [](SamplingParams& p) {
         p.stop_token_ids = {2, -1};
       }},
      {"stop[0]",
       [](SamplingParams& p) {
         p.stop = {"", "x"};
       }},
      {"logprobs", [](SamplingParams& p) { p.logprobs = -1; }},
      {"logprobs", [](SamplingParams& p) { p.logprobs = 21; }},
  };
}

TEST(SamplingParams, DefaultsAndEdgesAreValid) {
  SamplingParams p;
  EXPECT_NO_THROW(validate(p));
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.min_p = 1.0f;
  p.presence_penalty = -2.0f;
  p.frequency_penalty = 2.0f;
  p.logprobs = kMaxLogprobs;
  p.max_tokens = 1;
  p.top_k = 1;
  EXPECT_NO_THROW(validate(p));
}

TEST(SamplingParams, EveryInvalidFieldIsNamed) {
  for (const auto& c : bad_cases()) {
    SamplingParams p;
    c.spoil(p);
    try {
      validate(p);
      ADD_FAILURE() << "accepted an invalid " << c.field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos)
          << "message does not name " << c.field << ": " << e.what();
    }
    EXPECT_THROW(Sampler{p}, std::invalid_argument) << c.field;
  }
}

TEST(SamplingParams, MessageStatesTheRange) {
  SamplingParams p;
  p.top_p = 0.0f;
  try {
    validate(p);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(0, 1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace plinth
