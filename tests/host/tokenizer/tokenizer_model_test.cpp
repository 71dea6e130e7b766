// Integration: the tokenizer of the real SmolLM2 GGUF against golden ids from llama.cpp
// (tests/fixtures/tokenizer/smollm2.json, made by tools/reference/tokenizer_fixture.py).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/gguf.hpp"
#include "tokenizer/streaming_detokenizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

struct Case {
  std::string text;
  std::vector<int32_t> ids;
};

std::string model_path() {
  if (const char* env = std::getenv("PLINTH_MODEL")) return env;
  return PLINTH_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
}

class SmolLM2Tokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(model_path())) return;
    file_ = GgufFile::open(model_path()).release();
    tok_ = new Tokenizer(Tokenizer::from_gguf(*file_));
    std::ifstream in(PLINTH_SOURCE_DIR "/tests/fixtures/tokenizer/smollm2.json");
    const auto j = nlohmann::json::parse(in);
    cases_ = new std::vector<Case>;
    for (const auto& c : j.at("cases")) {
      cases_->push_back({c.at("text").get<std::string>(), c.at("ids").get<std::vector<int32_t>>()});
    }
  }
  static void TearDownTestSuite() {
    delete cases_;
    delete tok_;
    delete file_;
    cases_ = nullptr;
    tok_ = nullptr;
    file_ = nullptr;
  }
  void SetUp() override {
    if (tok_ == nullptr) {
      GTEST_SKIP() << "model not found at " << model_path()
                   << " (run tools/fetch_model or set PLINTH_MODEL)";
    }
  }
  static const Tokenizer& tok() { return *tok_; }
  static const std::vector<Case>& cases() { return *cases_; }

 private:
  static inline GgufFile* file_ = nullptr;
  static inline Tokenizer* tok_ = nullptr;
  static inline std::vector<Case>* cases_ = nullptr;
};

std::string show(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) out += std::to_string(id) + "'" + t.token_to_bytes(id) + "' ";
  return out;
}

TEST_F(SmolLM2Tokenizer, Metadata) {
  EXPECT_EQ(tok().vocab_size(), 49152);
  EXPECT_EQ(tok().bos_id(), 1);
  EXPECT_EQ(tok().eos_id(), 2);
  EXPECT_FALSE(tok().add_bos());
  EXPECT_EQ(tok().pre_tokenizer_name(), "smollm");
  EXPECT_EQ(tok().find_token("<|im_start|>"), 1);
  EXPECT_EQ(tok().find_token("<|im_end|>"), 2);
  EXPECT_TRUE(tok().is_special(0));
  EXPECT_FALSE(tok().is_special(100));
}

TEST_F(SmolLM2Tokenizer, MatchesLlamaCppOnEveryFixtureString) {
  ASSERT_GE(cases().size(), 60u);
  for (const Case& c : cases()) {
    const auto ids = tok().encode(c.text, false);
    EXPECT_EQ(ids, c.ids) << "text: " << testing::PrintToString(c.text)
                          << "\n plinth:    " << show(tok(), ids)
                          << "\n llama.cpp: " << show(tok(), c.ids);
  }
}

TEST_F(SmolLM2Tokenizer, DecodeInvertsEncode) {
  for (const Case& c : cases()) {
    EXPECT_EQ(tok().decode(tok().encode(c.text, false)), c.text) << testing::PrintToString(c.text);
  }
}

TEST_F(SmolLM2Tokenizer, SpecialTokenTextIsPlainText) {
  for (const std::string s : {"<|im_start|>user", "<|im_end|>", "<|endoftext|>", "<file_sep>"}) {
    const auto ids = tok().encode(s, false);
    EXPECT_GT(ids.size(), 1u) << s;
    for (const int32_t id : ids) EXPECT_FALSE(tok().is_special(id)) << s << " gave " << id;
    EXPECT_EQ(tok().decode(ids), s);
  }
}

TEST_F(SmolLM2Tokenizer, SegmentsMapSpecialTokensToSingleIds) {
  const std::vector<Tokenizer::Segment> segs = {
      {"<|im_start|>", true}, {"user\nHello there", false}, {"<|im_end|>", true}, {"\n", false}};
  std::vector<int32_t> expected = {1};
  for (const int32_t id : tok().encode("user\nHello there", false)) expected.push_back(id);
  expected.push_back(2);
  expected.push_back(tok().encode("\n", false).at(0));
  EXPECT_EQ(tok().encode_segments(segs, true), expected);  // add_bos_token is false: no BOS
  EXPECT_EQ(tok().decode(expected), "<|im_start|>user\nHello there<|im_end|>\n");
  EXPECT_EQ(tok().decode(expected, /*skip_special=*/true), "user\nHello there\n");
  EXPECT_THROW(tok().encode_segments({{"<|im_start|>user", true}}, false), std::invalid_argument);
}

TEST_F(SmolLM2Tokenizer, RejectsInvalidUtf8WithOffset) {
  const std::string bad = std::string("caf\xC3\xA9 ") + "\xF0\x9F\x98" + " end";
  try {
    tok().encode(bad, false);
    FAIL() << "expected InvalidUtf8Error";
  } catch (const InvalidUtf8Error& e) {
    EXPECT_EQ(e.offset(), 6u);
    EXPECT_NE(std::string(e.what()).find("offset 6"), std::string::npos) << e.what();
  }
}

TEST_F(SmolLM2Tokenizer, StreamingNeverEmitsPartialCharacters) {
  size_t held_back = 0;
  for (const Case& c : cases()) {
    StreamingDetokenizer d(tok());
    std::string streamed;
    for (const int32_t id : c.ids) {
      const std::string part = d.push(id);
      EXPECT_NO_THROW(utf8::validate(part)) << testing::PrintToString(c.text);
      held_back += d.pending_bytes() > 0;
      streamed += part;
    }
    streamed += d.flush();
    EXPECT_EQ(streamed, tok().decode(c.ids)) << testing::PrintToString(c.text);
  }
  EXPECT_GT(held_back, 0u) << "the CJK/emoji cases should split characters across tokens";
}

TEST_F(SmolLM2Tokenizer, EncodeSpeedOfA512TokenPrompt) {
  std::string prompt;
  while (tok().encode(prompt, false).size() < 512) {
    for (const Case& c : cases()) prompt += c.text + "\n";
  }
  const int reps = 50;
  size_t n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) n = tok().encode(prompt, false).size();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
      reps;
  // Reported, not asserted (timings depend on the machine; docs/architecture.md, 'Tests').
  std::cout << "encode: " << n << " tokens (" << prompt.size() << " bytes) in " << ms << " ms\n";
  RecordProperty("encode_ms", std::to_string(ms));
  EXPECT_GE(n, 512u);
}

}  // namespace
}  // namespace plinth
