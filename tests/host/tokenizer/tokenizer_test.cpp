#include "tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "tiny_vocab.hpp"

namespace plinth {
namespace {

using test::kImEnd;
using test::kImStart;

int32_t id_of(const Tokenizer& t, std::string_view text) {
  const auto id = t.find_token(text);
  EXPECT_TRUE(id.has_value()) << text;
  return id.value_or(-1);
}

TEST(Tokenizer, MergesWholeWords) {
  const Tokenizer t = test::tiny_tokenizer();
  EXPECT_EQ(t.encode("hello world", false),
            (std::vector<int32_t>{id_of(t, "hello"), id_of(t, "Ġworld")}));
}

TEST(Tokenizer, LowestRankMergesFirst) {
  const Tokenizer t = test::tiny_tokenizer();
  // "b c" (rank 9) outranks "a b" (rank 10): abc -> a + bc, not ab + c.
  EXPECT_EQ(t.encode("abc", false), (std::vector<int32_t>{'a', id_of(t, "bc")}));
  // Equal ranks: the leftmost pair first.
  EXPECT_EQ(t.encode("aaa", false), (std::vector<int32_t>{id_of(t, "aa"), 'a'}));
  EXPECT_EQ(t.encode("aaaa", false), (std::vector<int32_t>{id_of(t, "aa"), id_of(t, "aa")}));
}

TEST(Tokenizer, MergeMissingFromVocabularyFallsBackToBytes) {
  const Tokenizer t = test::tiny_tokenizer();
  EXPECT_FALSE(t.find_token("xy").has_value());
  EXPECT_EQ(t.encode("xy", false), (std::vector<int32_t>{'x', 'y'}));
}

TEST(Tokenizer, BytesOfMultibyteCharactersAreByteTokens) {
  const Tokenizer t = test::tiny_tokenizer();
  // Byte tokens of the tiny vocab have id == byte value.
  EXPECT_EQ(t.encode("\xE6\x97\xA5", false), (std::vector<int32_t>{0xE6, 0x97, 0xA5}));
  EXPECT_EQ(t.encode("", false), std::vector<int32_t>{});
}

TEST(Tokenizer, SpecialTokenTextIsPlainText) {
  const Tokenizer t = test::tiny_tokenizer();
  const auto ids = t.encode("<|im_start|>user", false);
  for (const int32_t id : ids) EXPECT_FALSE(t.is_special(id)) << id;
  EXPECT_EQ(ids.front(), id_of(t, "<|"));
  EXPECT_EQ(t.decode(ids), "<|im_start|>user");
}

TEST(Tokenizer, EncodeSegmentsMapsSpecialText) {
  const Tokenizer t = test::tiny_tokenizer();
  const std::vector<Tokenizer::Segment> segs = {
      {"<|im_start|>", true}, {"hello", false}, {"<|im_end|>", true}};
  EXPECT_EQ(t.encode_segments(segs, false),
            (std::vector<int32_t>{kImStart, id_of(t, "hello"), kImEnd}));
  EXPECT_THROW(t.encode_segments({{"hello", true}}, false), std::invalid_argument);
  EXPECT_THROW(t.encode_segments({{"<|nope|>", true}}, false), std::invalid_argument);
}

TEST(Tokenizer, AddsBosOnlyWhenAskedAndWanted) {
  const Tokenizer with = test::tiny_tokenizer(/*add_bos=*/true);
  EXPECT_EQ(with.encode("he", true), (std::vector<int32_t>{kImStart, id_of(with, "he")}));
  EXPECT_EQ(with.encode("he", false), (std::vector<int32_t>{id_of(with, "he")}));
  EXPECT_EQ(with.encode_segments({{"he", false}}, true).front(), kImStart);
  // A template that writes bos_token itself: BOS once, not twice.
  EXPECT_EQ(with.encode_segments({{"<|im_start|>", true}, {"he", false}}, true),
            (std::vector<int32_t>{kImStart, id_of(with, "he")}));
  // BOS text that is not the first segment does not count.
  EXPECT_EQ(with.encode_segments({{"he", false}, {"<|im_start|>", true}}, true),
            (std::vector<int32_t>{kImStart, id_of(with, "he"), kImStart}));
  const Tokenizer without = test::tiny_tokenizer(false);
  EXPECT_EQ(without.encode("he", true), (std::vector<int32_t>{id_of(without, "he")}));
}

TEST(Tokenizer, DecodeRoundTripsAndSkipsSpecial) {
  const Tokenizer t = test::tiny_tokenizer();
  for (const std::string s : {"hello world", "  tabs\tand\nnewlines  ",
                              "caf\xC3\xA9 \xF0\x9F\x98\x80", "x1y22 zzz", "<|im_end|>"}) {
    EXPECT_EQ(t.decode(t.encode(s, false)), s);
  }
  const std::vector<int32_t> ids = {kImStart, id_of(t, "hello"), kImEnd};
  EXPECT_EQ(t.decode(ids), "<|im_start|>hello<|im_end|>");
  EXPECT_EQ(t.decode(ids, /*skip_special=*/true), "hello");
  EXPECT_EQ(t.token_to_bytes(id_of(t, "Ġworld")), " world");
  EXPECT_THROW(t.decode(std::vector<int32_t>{t.vocab_size()}), std::out_of_range);
  EXPECT_THROW(t.token_to_bytes(-1), std::out_of_range);
}

TEST(Tokenizer, RejectsInvalidUtf8WithOffset) {
  const Tokenizer t = test::tiny_tokenizer();
  try {
    t.encode("hello \xC3\x28", false);
    FAIL() << "expected InvalidUtf8Error";
  } catch (const InvalidUtf8Error& e) {
    EXPECT_EQ(e.offset(), 6u);
    EXPECT_NE(std::string(e.what()).find("offset 6"), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, Accessors) {
  const Tokenizer t = test::tiny_tokenizer();
  EXPECT_EQ(t.bos_id(), kImStart);
  EXPECT_EQ(t.eos_id(), kImEnd);
  EXPECT_TRUE(t.is_special(kImStart));
  EXPECT_FALSE(t.is_special('a'));
  EXPECT_EQ(t.vocab_size(), static_cast<int32_t>(test::tiny_vocab().tokens.size()));
  EXPECT_EQ(t.token_type(kImEnd), TokenType::kControl);
}

TEST(Tokenizer, RejectsInconsistentData) {
  auto v = test::tiny_vocab();
  EXPECT_THROW(Tokenizer(v.tokens, {1, 1}, v.merges, "smollm", 0, 1, false), std::invalid_argument);
  EXPECT_THROW(Tokenizer(v.tokens, v.types, v.merges, "smollm", 100000, 1, false),
               std::invalid_argument);
  try {
    Tokenizer(v.tokens, v.types, {"h e", "nospace"}, "smollm", 0, 1, false);
    FAIL() << "expected a merge error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.merges[1]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Tokenizer(v.tokens, v.types, v.merges, "nope", 0, 1, false), std::runtime_error);
}

TEST(Tokenizer, RandomBytesRoundTripOrAreRejected) {
  const Tokenizer t = test::tiny_tokenizer();
  std::mt19937 rng(7);
  // Biased towards bytes that form or break multi-byte sequences.
  const unsigned char alphabet[] = {'a',  'b',  'x',  ' ',  '\n', '1',  '\'', 's',  0x80,
                                    0x9F, 0xBF, 0xC3, 0xA9, 0xE6, 0x97, 0xF0, 0xF4, 0xFF};
  int valid = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s(rng() % 12, ' ');
    for (char& c : s) c = static_cast<char>(alphabet[rng() % sizeof alphabet]);
    bool ok = true;
    try {
      utf8::validate(s);
    } catch (const InvalidUtf8Error&) {
      ok = false;
    }
    if (ok) {
      ++valid;
      EXPECT_EQ(t.decode(t.encode(s, false)), s);
    } else {
      EXPECT_THROW(t.encode(s, false), InvalidUtf8Error);
    }
  }
  EXPECT_GT(valid, 100);
}

TEST(Tokenizer, MissingByteTokenIsAnError) {
  const Tokenizer t({"a", "b"}, {}, {}, "smollm", -1, -1, false);
  EXPECT_EQ(t.encode("ab", false), (std::vector<int32_t>{0, 1}));
  // Bad input, not an engine failure: the server answers it with a 400 naming the byte.
  try {
    t.encode("c", false);
    ADD_FAILURE() << "encode of a byte without a token did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("byte 0x63 at offset 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace plinth
