#include "tokenizer/streaming_detokenizer.hpp"

#include <gtest/gtest.h>

#include "tiny_vocab.hpp"

namespace plinth {
namespace {

TEST(StreamingDetokenizer, HoldsBackPartialCharacters) {
  const Tokenizer t = test::tiny_tokenizer();
  StreamingDetokenizer d(t);
  // Tiny vocab: byte tokens have id == byte value. U+1F600 is F0 9F 98 80.
  EXPECT_EQ(d.push('a'), "a");
  EXPECT_EQ(d.push(0xF0), "");
  EXPECT_EQ(d.push(0x9F), "");
  EXPECT_EQ(d.push(0x98), "");
  EXPECT_EQ(d.pending_bytes(), 3u);
  EXPECT_EQ(d.push(0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamingDetokenizer, ReplacesBytesThatCanNeverFormACharacter) {
  const Tokenizer t = test::tiny_tokenizer();
  StreamingDetokenizer d(t);
  EXPECT_EQ(d.push(0xE6), "");
  EXPECT_EQ(d.push('x'), "\xEF\xBF\xBDx");  // E6 followed by ASCII: one U+FFFD
  EXPECT_EQ(d.push(0xFF), "\xEF\xBF\xBD");
  EXPECT_EQ(d.push(0xE6), "");
  EXPECT_EQ(d.push(0x97), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // truncated tail
  EXPECT_EQ(d.pending_bytes(), 0u);
}

TEST(StreamingDetokenizer, ConcatenationEqualsDecode) {
  const Tokenizer t = test::tiny_tokenizer();
  const std::string text = "hello \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD world";
  const auto ids = t.encode(text, false);
  StreamingDetokenizer d(t);
  std::string streamed;
  for (const int32_t id : ids) {
    const std::string part = d.push(id);
    EXPECT_EQ(utf8::complete_prefix(part), part.size());
    EXPECT_NO_THROW(utf8::validate(part));
    streamed += part;
  }
  streamed += d.flush();
  EXPECT_EQ(streamed, t.decode(ids));
  EXPECT_EQ(streamed, text);
}

TEST(StreamingDetokenizer, SkipsSpecialWhenAsked) {
  const Tokenizer t = test::tiny_tokenizer();
  StreamingDetokenizer d(t, /*skip_special=*/true);
  EXPECT_EQ(d.push(test::kImStart), "");
  EXPECT_EQ(d.push('h'), "h");
  StreamingDetokenizer keep(t);
  EXPECT_EQ(keep.push(test::kImEnd), "<|im_end|>");
}

}  // namespace
}  // namespace plinth
