// The schema rewrite before the subset check (plugins/grammar_xgrammar/schema_rewrite.hpp): allOf
// merged keyword by keyword, date formats as RFC 3339 patterns (checked against the proleptic
// Gregorian calendar of <chrono>), unknown formats dropped, patternProperties as
// additionalProperties; what cannot be merged exactly is refused by pointer.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "schema_rewrite.hpp"

namespace {

using nlohmann::ordered_json;
using plinth::grammar::rewrite_schema;
using plinth::grammar::SchemaRefusal;

/// The rewritten schema (compact JSON), or "refused at POINTER".
std::string rewritten(const char* schema, bool strict = false) {
  ordered_json s = ordered_json::parse(schema);
  SchemaRefusal why;
  if (!rewrite_schema(s, strict, why)) return "refused at " + why.pointer;
  return s.dump();
}

std::string compact(const char* json) {
  return ordered_json::parse(json).dump();
}

TEST(SchemaRewrite, DatePatternAgreesWithTheCalendar) {
  const std::regex date(plinth::grammar::date_pattern(), std::regex::ECMAScript);
  int checked = 0;
  for (int year :
       {1, 4, 99, 100, 400, 1600, 1700, 1900, 1996, 2000, 2023, 2024, 2100, 9996, 9999}) {
    for (unsigned month = 0; month <= 13; ++month) {
      for (unsigned day = 0; day <= 32; ++day) {
        char text[32];
        std::snprintf(text, sizeof text, "%04d-%02u-%02u", year, month, day);
        const bool real =
            std::chrono::year_month_day(std::chrono::year(year), std::chrono::month(month),
                                        std::chrono::day(day))
                .ok();
        EXPECT_EQ(std::regex_match(text, date), real) << text;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 15 * 14 * 33);
  for (const char* bad : {"0000-01-01", "2024-1-01", "2024-01-1", "20240101", "2024-01-01 ",
                          "+2024-01-01", "2024-01-01T00:00:00Z"}) {
    EXPECT_FALSE(std::regex_match(bad, date)) << bad;
  }
}

TEST(SchemaRewrite, DateTimePatternIsRfc3339) {
  const std::regex dt(plinth::grammar::date_time_pattern(), std::regex::ECMAScript);
  for (const char* good :
       {"2024-02-29T23:59:59Z", "1963-06-19T08:30:06.283185Z", "2000-01-01T00:00:00+05:30",
        "2000-01-01T00:00:00-23:59", "2000-01-01T00:00:00.5-00:00"}) {
    EXPECT_TRUE(std::regex_match(good, dt)) << good;
  }
  for (const char* bad :
       {"2023-02-29T00:00:00Z", "2000-01-01T24:00:00Z", "2000-01-01T00:60:00Z",
        "2000-01-01T00:00:00", "2000-01-01 00:00:00Z", "2000-01-01T00:00:00.Z",
        "2000-01-01T00:00:00+24:00", "2000-01-01T00:00:00+0530", "2000-01-01T00:00:61Z"}) {
    EXPECT_FALSE(std::regex_match(bad, dt)) << bad;
  }
}

TEST(SchemaRewrite, FormatsDateBecomesAPatternUnknownOnesAreDropped) {
  EXPECT_EQ(
      rewritten(R"({"type": "string", "format": "date"})"),
      ordered_json({{"type", "string"}, {"pattern", plinth::grammar::date_pattern()}}).dump());
  EXPECT_EQ(rewritten(R"({"type": "string", "format": "int32"})"),
            compact(R"({"type": "string"})"));
  // a defined format stays (the subset check enforces or refuses it), date beside a pattern too
  EXPECT_EQ(rewritten(R"({"type": "string", "format": "uri"})"),
            compact(R"({"type": "string", "format": "uri"})"));
  EXPECT_EQ(rewritten(R"({"type": "string", "format": "date", "pattern": "^2"})"),
            compact(R"({"type": "string", "format": "date", "pattern": "^2"})"));
}

TEST(SchemaRewrite, AllOfMergesKeywordByKeyword) {
  EXPECT_EQ(rewritten(R"({"allOf": [
      {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
      {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}]})"),
            compact(R"({"type": "object", "properties": {"a": {"type": "integer"},
                         "b": {"type": "string"}}, "required": ["a", "b"]})"));
  // bounds: the tighter; types: the intersection (integer is a number); annotations vanish
  EXPECT_EQ(rewritten(R"({"allOf": [{"type": "number", "minimum": 1, "maximum": 9},
                                    {"type": "integer", "minimum": 3, "maximum": 20},
                                    {"description": "x"}]})"),
            compact(R"({"type": "integer", "minimum": 3, "maximum": 9})"));
  // a property the other member's additionalProperties forbids is gone
  EXPECT_EQ(rewritten(R"({"allOf": [{"properties": {"a": {}}, "additionalProperties": false},
                                    {"properties": {"b": {}}}]})"),
            compact(R"({"properties": {"a": {}}, "additionalProperties": false})"));
  // a member's additionalProperties schema constrains the other member's properties
  EXPECT_EQ(rewritten(R"({"allOf": [{"properties": {"a": {"type": "integer"}},
                                     "additionalProperties": {"type": "string"}},
                                    {"properties": {"b": {"maxLength": 3}}}]})"),
            compact(R"({"properties": {"a": {"type": "integer"},
                         "b": {"anyOf": [{"type": "string", "maxLength": 3}]}},
                         "additionalProperties": {"type": "string"}})"));
  // a local $ref member is resolved; the definitions stay for other references
  EXPECT_EQ(rewritten(R"({"definitions": {"id": {"type": "object", "properties": {"id": {}}}},
                         "allOf": [{"$ref": "#/definitions/id"}, {"required": ["id"]}]})"),
            compact(R"({"type": "object", "properties": {"id": {}}, "required": ["id"],
                         "definitions": {"id": {"type": "object", "properties": {"id": {}}}}})"));
  // anyOf distributed over the other members; an alternative that cannot hold is dropped
  EXPECT_EQ(rewritten(R"({"allOf": [{"type": "string"},
                                    {"anyOf": [{"type": "string", "maxLength": 2},
                                               {"type": "integer"}]}]})"),
            compact(R"({"anyOf": [{"type": "string", "maxLength": 2}]})"));
  // enum: the values in common
  EXPECT_EQ(rewritten(R"({"allOf": [{"enum": [1, 2, 3]}, {"enum": [3, 2, 5]}]})"),
            compact(R"({"enum": [2, 3]})"));
}

TEST(SchemaRewrite, AllOfThatCannotMergeExactlyIsRefusedByPointer) {
  EXPECT_EQ(
      rewritten(R"({"properties": {"p": {"allOf": [{"type": "string"}, {"type": "null"}]}}})"),
      "refused at /properties/p/allOf");
  EXPECT_EQ(rewritten(R"({"allOf": [{"type": "string", "pattern": "a"},
                                    {"type": "string", "pattern": "b"}]})"),
            "refused at /allOf");
  EXPECT_EQ(rewritten(R"({"allOf": [{"anyOf": [{}, {}]}, {"oneOf": [{}, {}]}]})"),
            "refused at /allOf");
  EXPECT_EQ(rewritten(R"({"allOf": [{"$ref": "http://example.com/a"}, {}]})"), "refused at /allOf");
  EXPECT_EQ(rewritten(R"({"allOf": [{"properties": {"a": {}}, "additionalProperties": false},
                                    {"required": ["b"]}]})"),
            "refused at /allOf");  // b required but forbidden: unsatisfiable
}

TEST(SchemaRewrite, PatternPropertiesBecomeAdditionalProperties) {
  // a pattern matching every key: all keys, named ones too, satisfy its schema
  EXPECT_EQ(rewritten(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                         "patternProperties": {".*": {"type": "number", "minimum": 0}}})"),
            compact(R"({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}},
                         "additionalProperties": {"type": "number", "minimum": 0}})"));
  // one pattern beside additionalProperties that is not false: stricter (every other key takes
  // both schemas), the named keys the pattern finds take its schema
  EXPECT_EQ(rewritten(R"({"type": "object", "properties": {"xa": {}, "b": {}},
                         "patternProperties": {"^x": {"type": "string"}}})"),
            compact(R"({"type": "object", "properties": {"xa": {"type": "string"}, "b": {}},
                         "additionalProperties": {"type": "string"}})"));
  // beside additionalProperties false (strict: absent), one pattern stays for the engine
  EXPECT_EQ(rewritten(R"({"type": "object", "patternProperties": {"^x": {}}})", true),
            compact(R"({"type": "object", "patternProperties": {"^x": {}},
                         "additionalProperties": false})"));
  EXPECT_EQ(rewritten(R"({"type": "object", "patternProperties": {"^x": {}, "^y": {}}})"),
            compact(R"({"type": "object", "patternProperties": {"^x": {}, "^y": {}}})"));
}

TEST(SchemaRewrite, TypedKeywordsWithoutTheirSingleTypeSplitByType) {
  EXPECT_EQ(rewritten(R"({"type": ["string", "null"], "maxLength": 3, "title": "t"})"),
            compact(R"({"title": "t", "anyOf": [{"type": "string", "maxLength": 3},
                                                {"type": "null"}]})"));
  EXPECT_EQ(rewritten(R"({"minimum": 1, "items": {"type": "boolean"}})"),
            compact(R"({"anyOf": [{"type": "number", "minimum": 1},
                                  {"type": "array", "items": {"type": "boolean"}},
                                  {"type": ["string", "boolean", "object", "null"]}]})"));
  // one type owning its keywords, and object keywords alone, stay as they are
  EXPECT_EQ(rewritten(R"({"type": "integer", "maximum": 3})"),
            compact(R"({"type": "integer", "maximum": 3})"));
  EXPECT_EQ(rewritten(R"({"properties": {"a": {"type": "null"}}})"),
            compact(R"({"properties": {"a": {"type": "null"}}})"));
}

}  // namespace
