// The corrections to XGrammar's printed JSON Schema grammar (json_string_classes.hpp): the
// length-limited string class loses the control characters, every negated class the surrogates,
// and nothing inside a quoted literal or a positive class changes.
#include <gtest/gtest.h>

#include <string>

#include "json_string_classes.hpp"

namespace {

using plinth::grammar::json_string_classes;

TEST(JsonStringClasses, NarrowsTheLengthClassAndNegatedClassesOnly) {
  EXPECT_EQ(json_string_classes(R"(s_characters ::= (([^\"\\\r\n])))"),
            R"(s_characters ::= (([^\ud800-\udfff\0-\x1f\"\\])))");
  EXPECT_EQ(json_string_classes(R"(sub ::= (("\"") | ([^\0-\x1f\"\\\r\n] sub)))"),
            R"(sub ::= (("\"") | ([^\ud800-\udfff\0-\x1f\"\\\r\n] sub)))");
  // A literal holding "[^" (an enum value) and a positive class holding '"' are kept.
  const std::string kept = R"(root ::= (("\"[^a]\\\"[^\"") | ([a-z\"[] "[^"))))";
  EXPECT_EQ(json_string_classes(kept), kept);
  EXPECT_EQ(json_string_classes(R"(k ::= (([^\]a] "x")))"), R"(k ::= (([^\ud800-\udfff\]a] "x")))");
}

TEST(JsonStringClasses, PatternComplementsLoseTheSurrogates) {
  using plinth::grammar::pattern_without_surrogates;
  EXPECT_EQ(pattern_without_surrogates(R"(^[^x]+$)"), R"(^[^\uD800-\uDFFFx]+$)");
  EXPECT_EQ(pattern_without_surrogates(R"(\S\w\W\d\D)"),
            R"([^\s\uD800-\uDFFF]\w[^\w\uD800-\uDFFF]\d[^\d\uD800-\uDFFF])");
  EXPECT_EQ(pattern_without_surrogates(R"([a\S^]\[^)"), R"([a\S^]\[^)");  // positive class kept
  EXPECT_EQ(pattern_without_surrogates(R"(a\\S)"), R"(a\\S)");  // an escaped backslash, then S
}

}  // namespace
