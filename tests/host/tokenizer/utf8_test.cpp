#include "tokenizer/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace plinth {
namespace {

size_t bad_offset(const std::string& s) {
  try {
    utf8::validate(s);
  } catch (const InvalidUtf8Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(e.offset())), std::string::npos)
        << e.what();
    return e.offset();
  }
  return std::string::npos;
}

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_EQ(bad_offset(""), std::string::npos);
  EXPECT_EQ(bad_offset("plain ascii\n\t"), std::string::npos);
  EXPECT_EQ(bad_offset("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80"), std::string::npos);
  EXPECT_EQ(bad_offset("\xF4\x8F\xBF\xBF"), std::string::npos);  // U+10FFFF
  EXPECT_EQ(bad_offset(std::string("nul\0inside", 10)), std::string::npos);
}

TEST(Utf8, RejectsIllFormedTextWithOffset) {
  EXPECT_EQ(bad_offset("ab\xFF"
                       "cd"),
            2u);                                    // never a lead byte
  EXPECT_EQ(bad_offset("abc\x80"), 3u);             // stray continuation
  EXPECT_EQ(bad_offset("x\xC0\x80"), 1u);           // overlong NUL
  EXPECT_EQ(bad_offset("xy\xE0\x80\xAF"), 2u);      // overlong 3-byte
  EXPECT_EQ(bad_offset("\xED\xA0\x80"), 0u);        // UTF-16 surrogate D800
  EXPECT_EQ(bad_offset("ok\xF4\x90\x80\x80"), 2u);  // above U+10FFFF
  EXPECT_EQ(bad_offset("ok \xE6\x97"), 3u);         // truncated at the end
  EXPECT_EQ(bad_offset("\xE6\x97"
                       "a"),
            0u);                                                // continuation missing
  EXPECT_THROW(utf8::validate("\xC3"), std::invalid_argument);  // is-a invalid_argument
}

TEST(Utf8, InspectReportsMaximalSubparts) {
  auto s = utf8::inspect("\xE6\x97\xA5", 0);
  EXPECT_EQ(s.status, utf8::SeqStatus::kComplete);
  EXPECT_EQ(s.length, 3u);
  EXPECT_EQ(s.code_point, U'\u65E5');
  s = utf8::inspect("\xE6\x97", 0);
  EXPECT_EQ(s.status, utf8::SeqStatus::kIncomplete);
  s = utf8::inspect("\xE6\x97x", 0);
  EXPECT_EQ(s.status, utf8::SeqStatus::kInvalid);
  EXPECT_EQ(s.length, 2u);
}

TEST(Utf8, CompletePrefixStopsBeforeTruncatedTail) {
  EXPECT_EQ(utf8::complete_prefix("ab\xF0\x9F\x98"), 2u);
  EXPECT_EQ(utf8::complete_prefix("ab\xF0\x9F\x98\x80"), 6u);
  EXPECT_EQ(utf8::complete_prefix(""), 0u);
}

TEST(Utf8, AppendEncodesAllLengths) {
  std::string out;
  for (char32_t cp : {U'A', U'\u00E9', U'\u65E5', U'\U0001F600'}) utf8::append(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace plinth
