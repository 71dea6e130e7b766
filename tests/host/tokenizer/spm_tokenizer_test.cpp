// The SentencePiece-style tokenizer ("llama") and the rules shared with BPE, on a hand-made
// vocabulary, following llama.cpp's llm_tokenizer_spm_session / tokenizer_st_partition: merges by
// score, byte fallback, the space prefix (at the start and after special tokens), user-defined
// tokens matched in text, control ones not, Phi-3's RSTRIP. The real vocabularies are checked
// against llama.cpp in vocab_files_test.cpp and llama_cpp_tokens_test.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tokenizer/token_attributes.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

using Ids = std::vector<int32_t>;

// 0 <unk>, 1 <s>, 2 </s>, 3 <ud> (user-defined), 4..259 <0x00>..<0xFF>, then scored pieces.
TokenizerSpec tiny_spm(const std::string& name = "tiny") {
  TokenizerSpec s;
  s.model = "llama";
  s.tokens = {"<unk>", "<s>", "</s>", "<ud>"};
  s.token_types = {2, 3, 3, 4};
  s.scores = {0, 0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    s.tokens.emplace_back(hex);
    s.token_types.push_back(6);
    s.scores.push_back(0);
  }
  const std::vector<std::pair<std::string, float>> pieces = {{"\xE2\x96\x81", -1},
                                                             {"h", -2},
                                                             {"e", -2},
                                                             {"l", -2},
                                                             {"o", -2},
                                                             {"\xE2\x96\x81h", -3},
                                                             {"ll", -4},
                                                             {"\xE2\x96\x81he", -5},
                                                             {"llo", -6},
                                                             {"\xE2\x96\x81hello", -7}};
  for (const auto& [text, score] : pieces) {
    s.tokens.push_back(text);
    s.token_types.push_back(1);
    s.scores.push_back(score);
  }
  s.bos_id = 1;
  s.eos_id = 2;
  s.attribute_inputs.model_name = name;
  return s;
}

constexpr int32_t kByte0 = 4;
constexpr int32_t kSpace = 260, kH = 261, kE = 262, kL = 263, kO = 264, kHello = 269;

TEST(SpmTokenizer, MergesByScoreWithASpacePrefix) {
  const Tokenizer t(tiny_spm());
  EXPECT_EQ(t.model(), "llama");
  EXPECT_TRUE(t.add_bos());  // llama.cpp's default for SPM
  // "▁hello": ▁h (-3), ll (-4), ▁he (-5), llo (-6), then ▁hello (-7).
  EXPECT_EQ(t.encode("hello", false), (Ids{kHello}));
  EXPECT_EQ(t.encode("hello", true), (Ids{1, kHello}));
  // "▁hel" + "▁" + "o": no "▁hel" token, so ▁he + l; spaces become ▁.
  EXPECT_EQ(t.encode("hel o", false), (Ids{267, kL, kSpace, kO}));
  EXPECT_EQ(t.encode("", false), Ids{});
  EXPECT_EQ(t.decode(t.encode("hello", false)), " hello");
}

TEST(SpmTokenizer, ByteFallbackAndDecode) {
  const Tokenizer t(tiny_spm());
  // "é" (C3 A9) has no piece: its bytes.
  EXPECT_EQ(t.encode("h\xC3\xA9", false), (Ids{265, kByte0 + 0xC3, kByte0 + 0xA9}));
  EXPECT_EQ(t.decode(t.encode("h\xC3\xA9", false)), " h\xC3\xA9");
  EXPECT_EQ(t.token_to_bytes(kByte0 + 'A'), "A");
}

TEST(SpmTokenizer, UserDefinedTokensAreMatchedControlOnesAreNot) {
  const Tokenizer t(tiny_spm());
  // "<ud>" becomes its token; the text after it gets the space prefix again (llama.cpp).
  EXPECT_EQ(t.encode("hello<ud>hello", false), (Ids{kHello, 3, kHello}));
  // "<s>" is a control token: plain text, in bytes here ("<", "s", ">" have no pieces).
  EXPECT_EQ(t.encode("<s>", false), (Ids{kSpace, kByte0 + '<', kByte0 + 's', kByte0 + '>'}));
  EXPECT_TRUE(t.is_special(3));
  EXPECT_EQ(t.decode(Ids{3}), "<ud>");
}

TEST(SpmTokenizer, SegmentsGetTheSpacePrefixAfterEachSpecialToken) {
  const Tokenizer t(tiny_spm());
  const std::vector<Tokenizer::Segment> segs = {
      {"<s>", true}, {"hello", false}, {"</s>", true}, {"hello", false}};
  EXPECT_EQ(t.encode_segments(segs, true), (Ids{1, kHello, 2, kHello}));
  TokenizerSpec no_prefix = tiny_spm();
  no_prefix.add_space_prefix = false;
  const Tokenizer np(no_prefix);
  EXPECT_EQ(np.encode("hello", false), (Ids{kH, kE, 268 /* llo */}));
}

TEST(SpmTokenizer, Phi3SpecialTokensStripTheWhitespaceAfterThem) {
  const std::vector<Tokenizer::Segment> segs = {{"</s>", true}, {" \n hello", false}};
  // Not Phi-3: the whitespace stays ("▁▁\n▁hello": \n has no piece, a byte).
  const Tokenizer plain(tiny_spm());
  EXPECT_EQ(plain.encode_segments(segs, false), (Ids{2, kSpace, kSpace, kByte0 + '\n', kHello}));
  // general.name "Phi3-mini": </s> is RSTRIP (as llama.cpp marks it), <s> is not.
  const Tokenizer phi3(tiny_spm("Phi3-mini"));
  EXPECT_NE(phi3.token_attributes(2) & token_attr::kRstrip, 0U);
  EXPECT_EQ(phi3.token_attributes(1) & token_attr::kRstrip, 0U);
  EXPECT_EQ(phi3.encode_segments(segs, false), (Ids{2, kHello}));
}

TEST(SpmTokenizer, EndOfGenerationTextsAreControl) {
  // A user-defined "</s>" becomes control (llama.cpp's EOG fix): no longer matched in text.
  TokenizerSpec s = tiny_spm();
  s.token_types[2] = 4;
  const Tokenizer t(s);
  EXPECT_NE(t.token_attributes(2) & token_attr::kControl, 0U);
  EXPECT_EQ(t.encode("</s>", false).front(), kSpace);
}

TEST(SpmTokenizer, UnknownModelIsRefusedNamingIt) {
  TokenizerSpec s = tiny_spm();
  s.model = "bert";
  try {
    (void)Tokenizer(s);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"bert\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace plinth
