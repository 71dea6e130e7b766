// The config-schema validator: each keyword of the subset, paths and messages, defaults.
#include <gtest/gtest.h>

#include "runtime/json_schema.hpp"

namespace {

using nlohmann::json;
using plinth::SchemaError;

// The message validate_json throws, or "" when `value` is valid.
std::string error_of(const json& schema, json value, const std::string& path = "c") {
  try {
    plinth::validate_json(schema, value, path);
    return "";
  } catch (const SchemaError& e) {
    return e.what();
  }
}

TEST(Schema, Types) {
  EXPECT_EQ(error_of({{"type", "integer"}}, 3), "");
  EXPECT_EQ(error_of({{"type", "integer"}}, 3.0), "");
  EXPECT_EQ(error_of({{"type", "integer"}}, 3.5), "c: must be an integer, got number 3.5");
  EXPECT_EQ(error_of({{"type", "number"}}, 3), "");
  EXPECT_EQ(error_of({{"type", "string"}}, true), "c: must be a string, got boolean true");
  EXPECT_EQ(error_of({{"type", json::array({"string", "null"})}}, nullptr), "");
  EXPECT_EQ(error_of({{"type", json::array({"string", "null"})}}, 1),
            "c: must be a string or null, got integer 1");
  EXPECT_EQ(error_of({{"type", "object"}}, json::array()), "c: must be an object, got array []");
}

TEST(Schema, EnumListsAllowedValues) {
  json s = {{"enum", {"fcfs", "priority"}}};
  EXPECT_EQ(error_of(s, "fcfs"), "");
  EXPECT_EQ(error_of(s, "lifo"), "c: must be one of \"fcfs\", \"priority\", got \"lifo\"");
}

TEST(Schema, RangesNameTheRange) {
  json s = {{"type", "integer"}, {"minimum", 1}, {"maximum", 8}};
  EXPECT_EQ(error_of(s, 1), "");
  EXPECT_EQ(error_of(s, 8), "");
  EXPECT_EQ(error_of(s, 0), "c: must be between 1 and 8, got 0");
  EXPECT_EQ(error_of(s, 9), "c: must be between 1 and 8, got 9");
  EXPECT_EQ(error_of({{"minimum", 2}}, 1), "c: must be >= 2, got 1");
  EXPECT_EQ(error_of({{"exclusiveMinimum", 0}}, 0), "c: must be > 0, got 0");
  EXPECT_EQ(error_of({{"exclusiveMinimum", 0}}, 0.001), "");
  EXPECT_EQ(error_of({{"exclusiveMaximum", 1}}, 1), "c: must be < 1, got 1");
}

TEST(Schema, PowerOfTwoKeyword) {
  json s = {{"type", "integer"}, {"x-power-of-two", true}, {"minimum", 1}, {"maximum", 256}};
  for (int v : {1, 2, 16, 256}) EXPECT_EQ(error_of(s, v), "") << v;
  EXPECT_EQ(error_of(s, 24), "c: must be a power of two between 1 and 256, got 24");
  EXPECT_EQ(error_of(s, 512), "c: must be a power of two between 1 and 256, got 512");
  EXPECT_EQ(error_of(s, 0), "c: must be a power of two between 1 and 256, got 0");
}

TEST(Schema, ObjectsRequiredAdditionalPropertiesAndNestedPaths) {
  json s = json::parse(R"({"type": "object", "additionalProperties": false, "required": ["a"],
    "properties": {"a": {"type": "integer"},
                   "sub": {"type": "object", "additionalProperties": false,
                           "properties": {"x": {"type": "boolean"}}}}})");
  EXPECT_EQ(error_of(s, json{{"a", 1}}), "");
  EXPECT_EQ(error_of(s, json::object()), "c.a: required option is missing");
  EXPECT_EQ(error_of(s, json{{"a", 1}, {"b", 2}}), "c.b: unknown option; allowed: a, sub");
  EXPECT_EQ(error_of(s, json{{"a", 1}, {"sub", {{"x", 1}}}}),
            "c.sub.x: must be a boolean, got integer 1");
  EXPECT_EQ(error_of(s, json{{"a", 1}, {"odd key", 1}}),
            "c[\"odd key\"]: unknown option; allowed: a, sub");
}

TEST(Schema, ItemsReportIndex) {
  json s = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 1}}}};
  EXPECT_EQ(error_of(s, json{1, 2, 3}), "");
  EXPECT_EQ(error_of(s, json{1, 0}), "c[1]: must be >= 1, got 0");
}

TEST(Schema, FillsDefaults) {
  json s = json::parse(R"({"type": "object", "properties": {
    "block_size": {"type": "integer", "default": 16}, "n": {"type": "integer"}}})");
  json v = json::object();
  plinth::validate_json(s, v, "c");
  EXPECT_EQ(v, json({{"block_size", 16}}));
  json given = {{"block_size", 32}};
  plinth::validate_json(s, given, "c");
  EXPECT_EQ(given["block_size"], 32);
}

TEST(Schema, CheckSchemaRefusesWhatTheHostCannotValidate) {
  EXPECT_NO_THROW(plinth::check_schema(json::parse(R"({"type": "object", "description": "d",
    "properties": {"a": {"type": "integer", "minimum": 0, "default": 1}}})"),
                                       "s"));
  try {
    plinth::check_schema(
        json::parse(R"({"properties": {"a": {"type": "string", "pattern": "x"}}})"), "s");
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.path(), "s.properties.a.pattern");
  }
  EXPECT_THROW(plinth::check_schema(json::parse(R"({"type": "float"})"), "s"), SchemaError);
  EXPECT_THROW(
      plinth::check_schema(json::parse(R"({"type": "integer", "minimum": 1, "default": 0})"), "s"),
      SchemaError);
}

TEST(Schema, BooleanSchemas) {
  json s = json::parse(R"({"properties": {"on": true, "off": false}, "items": false})");
  EXPECT_NO_THROW(plinth::check_schema(s, "s"));
  EXPECT_EQ(error_of(s, json::parse(R"({"on": [1]})")), "");
  EXPECT_EQ(error_of(s, json::parse(R"({"off": 1})")), "c.off: no value is allowed here, got 1");
  EXPECT_EQ(error_of(s, json::array()), "");
  EXPECT_EQ(error_of(s, json::array({2})), "c[0]: no value is allowed here, got 2");
  EXPECT_EQ(error_of(false, nullptr), "c: no value is allowed here, got null");
  EXPECT_THROW(plinth::check_schema(json::parse(R"({"items": 3})"), "s"), SchemaError);
}

}  // namespace
