// The JSON Schema subset check: every keyword the engine cannot enforce is refused with its JSON
// pointer; the enforced ones and annotations pass.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "schema_subset.hpp"

namespace {

using nlohmann::json;
using plinth::grammar::check_schema_subset;
using plinth::grammar::SchemaRefusal;

std::string refused_at(const char* schema) {
  SchemaRefusal why;
  if (check_schema_subset(json::parse(schema), why)) return "accepted";
  return why.pointer;
}

TEST(SchemaSubset, AcceptsTheEnforcedKeywordsAndAnnotations) {
  EXPECT_EQ(refused_at(R"({"type": "object", "title": "t", "description": "d",
      "properties": {"a": {"type": "string", "minLength": 1, "maxLength": 5},
                     "b": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
                     "c": {"type": "array", "items": {"$ref": "#/$defs/c"}, "maxItems": 3},
                     "d": {"enum": ["x", "y"]}, "e": {"anyOf": [{"type": "null"}, {"type": "number"}]},
                     "f": {"type": "string", "pattern": "^[a-z]+$"}, "g": {"x-vendor": 1}},
      "required": ["a"], "additionalProperties": false,
      "$defs": {"c": {"type": "boolean"}}})"),
            "accepted");
}

TEST(SchemaSubset, RefusesUnenforcedKeywordsByPointer) {
  EXPECT_EQ(refused_at(R"({"properties": {"a": {"type": "number", "multipleOf": 3}}})"),
            "/properties/a/multipleOf");
  EXPECT_EQ(refused_at(R"({"type": "array", "uniqueItems": true})"), "/uniqueItems");
  EXPECT_EQ(refused_at(R"({"not": {"type": "string"}})"), "/not");
  EXPECT_EQ(refused_at(R"({"patternProperties": {"^x": {}}})"), "/patternProperties");
  EXPECT_EQ(refused_at(R"({"properties": {"a~b/c": {"if": {}}}})"), "/properties/a~0b~1c/if");
}

// XGrammar refuses an empty range anywhere (an optional property's too) without a pointer: the
// check names the lower bound. A one-value range and an open interval with room pass.
TEST(SchemaSubset, RefusesAnEmptyRangeByItsLowerBound) {
  EXPECT_EQ(refused_at(R"({"type": "object", "properties": {"a": {"type": "integer",
      "minimum": 5, "maximum": 3}}})"),
            "/properties/a/minimum");
  EXPECT_EQ(refused_at(R"({"type": "string", "minLength": 5, "maxLength": 3})"), "/minLength");
  EXPECT_EQ(refused_at(R"({"type": "array", "minItems": 3, "maxItems": 1})"), "/minItems");
  EXPECT_EQ(refused_at(R"({"type": "object", "minProperties": 3, "maxProperties": 1})"),
            "/minProperties");
  EXPECT_EQ(refused_at(R"({"type": "number", "exclusiveMinimum": 2, "maximum": 2})"),
            "/exclusiveMinimum");
  EXPECT_EQ(refused_at(R"({"type": "number", "minimum": 2, "exclusiveMaximum": 2})"), "/minimum");
  EXPECT_EQ(refused_at(R"({"type": "integer", "minimum": 3, "maximum": 3})"), "accepted");
  EXPECT_EQ(refused_at(R"({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1.5})"),
            "accepted");
  SchemaRefusal why;
  EXPECT_FALSE(check_schema_subset(json::parse(R"({"type": "integer", "minimum": 5,
      "maximum": 3})"),
                                   why));
  EXPECT_NE(why.message.find("minimum 5 is greater than maximum 3"), std::string::npos)
      << why.message;
}

TEST(SchemaSubset, RefusesWhatTheEngineWouldSilentlyDrop) {
  // pattern with a length, format with a pattern, an anchor inside a pattern, a lookahead
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "a+", "maxLength": 3})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^h", "format": "uri"})"), "/format");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "a^b"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "(?=a)b"})"), "/pattern");
  // a keyword beside anyOf / $ref, more than one allOf member, overlapping oneOf, remote $ref
  EXPECT_EQ(refused_at(R"({"anyOf": [{}, {}], "properties": {"a": {}}})"), "/properties");
  EXPECT_EQ(refused_at(R"({"$ref": "#/$defs/a", "maxLength": 2, "$defs": {"a": {}}})"),
            "/maxLength");
  EXPECT_EQ(refused_at(R"({"allOf": [{}, {}]})"), "/allOf");
  EXPECT_EQ(refused_at(R"({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 2}]})"),
            "/oneOf");
  EXPECT_EQ(refused_at(R"({"$ref": "https://example.com/s.json"})"), "/$ref");
  // a type's keywords without that single type
  EXPECT_EQ(refused_at(R"({"maxLength": 2})"), "/maxLength");
  EXPECT_EQ(refused_at(R"({"type": ["string", "null"], "pattern": "a"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "minimum": 1})"), "/minimum");
  // date formats (the engine does not check the day of the month), enum values of another type
  EXPECT_EQ(refused_at(R"({"type": "string", "format": "date"})"), "/format");
  EXPECT_EQ(refused_at(R"({"type": "string", "enum": ["a", 1]})"), "/enum/1");
}

TEST(SchemaSubset, RefusesOverDeepNesting) {
  std::string s = "{}";
  for (int i = 0; i < plinth::grammar::kMaxSchemaDepth + 2; ++i) s = R"({"items": )" + s + "}";
  SchemaRefusal why;
  EXPECT_FALSE(check_schema_subset(json::parse(s), why));
  EXPECT_NE(why.message.find("deeper"), std::string::npos) << why.message;
}

}  // namespace

TEST(SchemaSubset, RefusesPatternLiteralsTheEngineWouldWriteUnescaped) {
  // XGrammar 0.2.9 writes a pattern's literal '"', '\' or control character raw inside the JSON
  // string ({"pattern": "^a\"c$"} let `"a"c"` through: invalid JSON), found by the JSON Schema
  // reference matcher (reference_json_test.cpp); negated classes are intersected correctly.
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^a\"c$"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^a\\\\c$"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^a\\tc$"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^a\\x22$"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^[\"]$"})"), "/pattern");
  EXPECT_EQ(refused_at(R"({"properties": {"p": {"type": "string", "pattern": "a\\u0009"}}})"),
            "/properties/p/pattern");
  EXPECT_EQ(refused_at(R"({"type": "string", "pattern": "^[^\"\\\\\\n\\r]+\\s\\w$"})"), "accepted");
}
