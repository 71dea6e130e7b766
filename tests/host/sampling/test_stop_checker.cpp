// StopChecker: EOS, stop token ids, stop strings and max_tokens, with the text each step streams.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "sampling/stop_checker.hpp"

namespace plinth {
namespace {

constexpr int32_t kEos = 2;

TEST(StopChecker, EosStopsWithoutEmittingItsText) {
  SamplingParams p;
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(10, "Hi").text, "Hi");
  const auto s = c.on_token(kEos, "<|im_end|>");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "");
  EXPECT_EQ(s.stop_token, kEos);
  EXPECT_STREQ(to_string(c.finish()), "stop");
  EXPECT_THROW(c.on_token(11, "x"), std::logic_error);
}

TEST(StopChecker, IgnoreEosKeepsGoingButHonoursStopTokenIds) {
  SamplingParams p;
  p.ignore_eos = true;
  p.stop_token_ids = {7};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(kEos, "e").finish, FinishReason::kNone);
  EXPECT_EQ(c.on_token(7, "seven").finish, FinishReason::kStop);
}

// A token that completed the output's grammar ends the sequence as a stop token, ignore_eos or
// not (the grammar allows nothing after it: the next mask would be empty).
TEST(StopChecker, ATokenEndingTheGrammarStopsEvenWithIgnoreEos) {
  SamplingParams p;
  p.ignore_eos = true;
  p.stop = {"END"};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(10, "EN").text, "");  // held as a possible "END"
  const auto s = c.on_token(kEos, "", /*ends=*/true);
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "EN");  // released, the ending token's own text not emitted
  EXPECT_EQ(s.stop_token, kEos);
}

TEST(StopChecker, MaxTokensGivesLengthAndFlushesHeldText) {
  SamplingParams p;
  p.max_tokens = 3;
  p.stop = {"END"};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(5, "a").text, "a");
  EXPECT_EQ(c.on_token(6, "b").text, "b");
  const auto s = c.on_token(7, "EN");  // held as a possible "END", released at the end
  EXPECT_EQ(s.finish, FinishReason::kLength);
  EXPECT_EQ(s.text, "EN");
  EXPECT_EQ(c.num_generated(), 3);
  EXPECT_STREQ(to_string(FinishReason::kLength), "length");
}

TEST(StopChecker, StopStringAcrossTokens) {
  SamplingParams p;
  p.stop = {"\n\n"};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(5, "one\n").text, "one");
  const auto s = c.on_token(6, "\ntwo");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "");
  EXPECT_EQ(s.stop_string, 0u);
}

TEST(StopChecker, StopTokenReleasesHeldText) {
  SamplingParams p;
  p.stop = {"END"};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(5, "xE").text, "x");
  const auto s = c.on_token(kEos, "");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "E");
}

TEST(StopChecker, StopStringWinsOverMaxTokensOnTheSameStep) {
  SamplingParams p;
  p.max_tokens = 1;
  p.stop = {"!"};
  StopChecker c(p, {kEos});
  const auto s = c.on_token(5, "hi!");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "hi");
}

TEST(StopChecker, RejectsInvalidParams) {
  SamplingParams p;
  p.max_tokens = 0;
  EXPECT_THROW(StopChecker(p, {kEos}), std::invalid_argument);
}

TEST(StopChecker, IncludeStopStrInOutputKeepsTheStopStringAndTheStopTokensText) {
  SamplingParams p;
  p.stop = {"END"};
  p.include_stop_str_in_output = true;
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(5, "abE").text, "ab");  // "E" may start "END": held back
  const auto s = c.on_token(6, "NDx");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "END");  // the held "E" starts the stop string; "x" after it is cut
}

TEST(StopChecker, IncludeStopStrInOutputWithAStopToken) {
  SamplingParams p;
  p.include_stop_str_in_output = true;
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(5, "a").text, "a");
  const auto s = c.on_token(kEos, "<|im_end|>");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.text, "<|im_end|>");
}

TEST(StopChecker, MinTokensIgnoresStopsUntilReached) {
  SamplingParams p;
  p.min_tokens = 2;
  p.stop = {"x"};
  StopChecker c(p, {kEos});
  EXPECT_EQ(c.on_token(kEos, "").finish, FinishReason::kNone);  // token 1 < min_tokens
  EXPECT_EQ(c.on_token(5, "x").finish, FinishReason::kStop);    // token 2: checked
  SamplingParams q;
  q.min_tokens = 3;
  q.stop = {"x"};
  StopChecker d(q, {kEos});
  EXPECT_EQ(d.on_token(5, "x").text, "x");
  EXPECT_EQ(d.on_token(kEos, "").finish, FinishReason::kNone);
  EXPECT_EQ(d.on_token(kEos, "").finish, FinishReason::kStop);
}

}  // namespace
}  // namespace plinth
