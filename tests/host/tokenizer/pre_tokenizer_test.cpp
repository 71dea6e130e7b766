#include "tokenizer/pre_tokenizer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plinth {
namespace {

std::vector<std::string> split(const PreTokenizer& pre, std::string_view text) {
  std::vector<std::string> out;
  for (const auto w : pre.split(text)) out.emplace_back(w);
  return out;
}

using V = std::vector<std::string>;

// Expected splits follow llama.cpp's unicode_regex_split for LLAMA_VOCAB_PRE_TYPE_SMOLLM
// (pass 1: \p{N}; pass 2: the GPT-2 regex, hand-written there with a final `\s+`).
TEST(PreTokenizerSmollm, WordsAndSpaces) {
  const PreTokenizer pre("smollm");
  EXPECT_EQ(split(pre, "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(split(pre, "a  b"), (V{"a", " ", " b"}));
  EXPECT_EQ(split(pre, "hi  "), (V{"hi", "  "}));
  EXPECT_EQ(split(pre, "  hi"), (V{" ", " hi"}));
  EXPECT_EQ(split(pre, "x\n\n y"), (V{"x", "\n\n", " y"}));
  EXPECT_EQ(split(pre, "\tfoo"), (V{"\t", "foo"}));
  EXPECT_EQ(split(pre, "!!! ?"), (V{"!!!", " ?"}));
  EXPECT_EQ(split(pre, ""), V{});
}

TEST(PreTokenizerSmollm, DigitsAreSingleAndBoundLookahead) {
  const PreTokenizer pre("smollm");
  EXPECT_EQ(split(pre, "a 123"), (V{"a", " ", "1", "2", "3"}));
  EXPECT_EQ(split(pre, "x1y"), (V{"x", "1", "y"}));
  // \u00B2 (superscript two) is \p{N} too.
  EXPECT_EQ(split(pre, "m\xC2\xB2"), (V{"m", "\xC2\xB2"}));
}

TEST(PreTokenizerSmollm, ContractionsAndPunctuation) {
  const PreTokenizer pre("smollm");
  EXPECT_EQ(split(pre, "I'm they're"), (V{"I", "'m", " they", "'re"}));
  EXPECT_EQ(split(pre, "don't 's"), (V{"don", "'t", " '", "s"}));
  EXPECT_EQ(split(pre, "<|im_start|>user"), (V{"<|", "im", "_", "start", "|>", "user"}));
}

TEST(PreTokenizerSmollm, UnicodeClasses) {
  const PreTokenizer pre("smollm");
  // CJK ideographs are \p{L}; the ideographic full stop is punctuation.
  EXPECT_EQ(split(pre, "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x82"),
            (V{"\xE6\x97\xA5\xE6\x9C\xAC", "\xE3\x80\x82"}));
  // A combining acute (\p{M}) is not a letter: it splits "e\u0301" after "e".
  EXPECT_EQ(split(pre, "e\xCC\x81t"), (V{"e", "\xCC\x81", "t"}));
  // U+3000 ideographic space is White_Space; U+0085 too (PCRE2's \s would not take it).
  EXPECT_EQ(split(pre, "a\xE3\x80\x80\xE3\x80\x80"), (V{"a", "\xE3\x80\x80\xE3\x80\x80"}));
  EXPECT_EQ(split(pre, "a\xC2\x85\xC2\x85"), (V{"a", "\xC2\x85\xC2\x85"}));
}

TEST(PreTokenizerGpt2, NumbersStayTogether) {
  const PreTokenizer pre("gpt-2");
  EXPECT_EQ(split(pre, "a 123 b"), (V{"a", " 123", " b"}));
}

TEST(PreTokenizerDefault, PunctuationAndDigitGroups) {
  const PreTokenizer pre("default");
  // Pass 1 isolates punctuation runs, pass 3/4 split digit runs in threes.
  EXPECT_EQ(split(pre, "ab, 12345"), (V{"ab", ",", " ", "123", "45"}));
}

TEST(PreTokenizer, PiecesCoverTheText) {
  const PreTokenizer pre("smollm");
  const std::string text =
      "Mixed: \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD 42\t\tend \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D  ";
  std::string joined;
  for (const auto w : pre.split(text)) {
    EXPECT_FALSE(w.empty());
    joined += w;
  }
  EXPECT_EQ(joined, text);
}

TEST(PreTokenizer, UnknownNameNamesTheKey) {
  try {
    PreTokenizer pre("llama-bpe-x");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tokenizer.ggml.pre"), std::string::npos) << msg;
    EXPECT_NE(msg.find("llama-bpe-x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("smollm"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace plinth
