#include "tokenizer/byte_unicode.hpp"

#include <gtest/gtest.h>

#include <set>

namespace plinth {
namespace {

TEST(ByteUnicode, MatchesGpt2Table) {
  // Values from openai/gpt-2 encoder.py bytes_to_unicode().
  EXPECT_EQ(byte_unicode::byte_to_code_point(' '), U'\u0120');   // Ġ
  EXPECT_EQ(byte_unicode::byte_to_code_point('\n'), U'\u010A');  // Ċ
  EXPECT_EQ(byte_unicode::byte_to_code_point('\t'), U'\u0109');  // ĉ
  EXPECT_EQ(byte_unicode::byte_to_code_point(0), U'\u0100');
  EXPECT_EQ(byte_unicode::byte_to_code_point('a'), U'a');
  EXPECT_EQ(byte_unicode::byte_to_code_point(0xAD), U'\u0143');  // soft hyphen is remapped
  EXPECT_EQ(byte_unicode::byte_to_code_point(0xFF), U'\u00FF');
  EXPECT_EQ(byte_unicode::byte_to_utf8(' '), "\xC4\xA0");
}

TEST(ByteUnicode, IsABijection) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byte_unicode::byte_to_code_point(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second);
    EXPECT_EQ(byte_unicode::code_point_to_byte(cp), b);
  }
  EXPECT_FALSE(byte_unicode::code_point_to_byte(U'\u0200').has_value());
}

TEST(ByteUnicode, EncodeDecodeRoundTripsAllBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(byte_unicode::decode(byte_unicode::encode(all)), all);
  EXPECT_EQ(byte_unicode::encode("a b"),
            "a\xC4\xA0"
            "b");
}

}  // namespace
}  // namespace plinth
