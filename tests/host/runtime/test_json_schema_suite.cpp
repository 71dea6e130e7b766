// The config-schema validator (host/runtime/json_schema.hpp) against the official JSON-Schema Test
// Suite (Debian package json-schema-test-suite, found by CMake; skips without it). For each keyword
// of the subset the suite's draft-7 file runs (the newest draft that package ships; the subset's
// keywords mean the same in 2020-12), plus the files that test the subset through other keywords
// (boolean schemas, numbers). A group runs when its schema uses only the subset (check_schema must
// accept it, and validate_json's verdict on each case must equal the suite's); a group using
// another keyword is skipped and counted. The deliberate plinth rules are listed in kExceptions:
// there check_schema must refuse the schema, and validate_json's verdicts still must match.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "runtime/json_schema.hpp"

#ifndef PLINTH_JSON_SCHEMA_SUITE_DIR
#define PLINTH_JSON_SCHEMA_SUITE_DIR ""
#endif

namespace {

using nlohmann::json;
using plinth::SchemaError;

// The keywords json_schema.hpp claims (x-power-of-two is plinth's own: not in the suite).
const std::set<std::string, std::less<>> kClaimed = {"type",
                                                     "enum",
                                                     "minimum",
                                                     "maximum",
                                                     "exclusiveMinimum",
                                                     "exclusiveMaximum",
                                                     "required",
                                                     "additionalProperties",
                                                     "default",
                                                     "items",
                                                     "properties",
                                                     "description",
                                                     "title",
                                                     "$schema",
                                                     "$comment"};

// Where the validator deliberately differs from the suite (plinth rules, documented in
// json_schema.hpp). With `test` null: check_schema refuses the group's schema (its cases still
// run through validate_json); with `test`: validate_json's verdict on that case is the opposite of
// the suite's. Either way the difference must still hold, and the cases count as exceptions.
struct Exception {
  const char* file;
  const char* group;
  const char* test;
  const char* reason;
};
const Exception kExceptions[] = {
    {"draft7/default.json", "invalid type for default", nullptr,
     "a default must satisfy its own schema (plinth rule)"},
    {"draft7/default.json", "invalid type for default",
     "still valid when the invalid default is used",
     "validate_json checks the default it fills in (plinth rule)"},
};

const Exception* exception_for(const std::string& file, const std::string& group,
                               const char* test) {
  for (const Exception& e : kExceptions) {
    if (file == e.file && group == e.group &&
        (test == nullptr ? e.test == nullptr : e.test != nullptr && std::string(test) == e.test)) {
      return &e;
    }
  }
  return nullptr;
}

// Why a schema is outside the subset ("patternProperties", "items (array form)"), or "" when it
// uses only claimed keywords. Recurses into the subschemas of claimed keywords only: the values of
// enum, default and required are data, and keys under properties are names.
std::string outside_subset(const json& schema) {
  if (schema.is_boolean()) return "";
  if (!schema.is_object()) return "a non-schema";
  for (const auto& [key, value] : schema.items()) {
    if (!kClaimed.contains(key)) return key;
    std::string why;
    if (key == "properties") {
      for (const auto& [_, sub] : value.items()) {
        if (why = outside_subset(sub); !why.empty()) return why;
      }
    } else if (key == "items" && value.is_array()) {
      return "items (array form: 2020-12 prefixItems)";
    } else if (key == "items" || key == "additionalProperties") {
      if (why = outside_subset(value); !why.empty()) return why;
    }
  }
  return "";
}

// The files that run: one per claimed keyword with a suite file, then the others that test the
// subset (boolean schemas; big and zero-terminated numbers against type and the range keywords).
const char* const kFiles[] = {"draft7/type.json",
                              "draft7/enum.json",
                              "draft7/minimum.json",
                              "draft7/maximum.json",
                              "draft7/exclusiveMinimum.json",
                              "draft7/exclusiveMaximum.json",
                              "draft7/required.json",
                              "draft7/additionalProperties.json",
                              "draft7/default.json",
                              "draft7/items.json",
                              "draft7/properties.json",
                              "draft7/boolean_schema.json",
                              "draft7/optional/bignum.json",
                              "draft7/optional/zeroTerminatedFloats.json"};

class JsonSchemaSuite : public testing::TestWithParam<const char*> {};

TEST_P(JsonSchemaSuite, VerdictsMatch) {
  const std::filesystem::path dir = PLINTH_JSON_SCHEMA_SUITE_DIR;
  if (dir.empty()) {
    GTEST_SKIP() << "JSON-Schema Test Suite not found: install the Debian package "
                    "json-schema-test-suite (./dev installs it) and reconfigure";
  }
  const std::string file = GetParam();
  std::ifstream in(dir / file);
  ASSERT_TRUE(in) << "cannot read " << (dir / file) << " (json-schema-test-suite changed layout?)";
  const json groups = json::parse(in);

  size_t run = 0, skipped = 0, refused = 0, excepted = 0;
  std::map<std::string, size_t> skip_reasons;  // keyword -> cases
  for (const json& g : groups) {
    const std::string group = g["description"];
    const json& schema = g["schema"];
    const json& tests = g["tests"];
    if (std::string why = outside_subset(schema); !why.empty()) {
      skipped += tests.size();
      skip_reasons[why] += tests.size();
      continue;
    }
    if (const Exception* ex = exception_for(file, group, nullptr); ex != nullptr) {
      EXPECT_THROW(plinth::check_schema(schema, "schema"), SchemaError)
          << file << " / " << group << ": the exception (" << ex->reason << ") no longer holds";
      ++refused;
      std::cout << "[suite] " << file << " / " << group << ": check_schema refuses the schema ("
                << tests.size() << " cases): " << ex->reason << "\n";
    } else {
      try {
        plinth::check_schema(schema, "schema");
      } catch (const SchemaError& e) {
        ADD_FAILURE() << file << " / " << group << ": check_schema refuses a schema of the subset "
                      << schema.dump() << ": " << e.what();
        continue;
      }
    }
    for (const json& c : tests) {
      json data = c["data"];
      const bool valid = c["valid"];
      std::string error;
      try {
        plinth::validate_json(schema, data, "data");
      } catch (const SchemaError& e) {
        error = e.what();
        EXPECT_EQ(e.path().rfind("data", 0), 0u) << "the error names no path: " << error;
      }
      const std::string test = c["description"];
      if (const Exception* ex = exception_for(file, group, test.c_str()); ex != nullptr) {
        EXPECT_NE(error.empty(), valid) << file << " / " << group << " / " << test
                                        << ": the exception (" << ex->reason << ") no longer holds";
        ++excepted;
        std::cout << "[suite] " << file << " / " << group << " / " << test << ": validator "
                  << (error.empty() ? "valid" : error) << ", suite "
                  << (valid ? "valid" : "invalid") << ": " << ex->reason << "\n";
        continue;
      }
      EXPECT_EQ(error.empty(), valid)
          << file << " / " << group << " / " << test << "\n  schema: " << schema.dump()
          << "\n  data:   " << c["data"].dump() << "\n  suite: " << (valid ? "valid" : "invalid")
          << ", validator: " << (error.empty() ? "valid" : error);
      ++run;
    }
  }
  std::cout << "[suite] " << file << ": " << run << " cases run, " << skipped << " skipped";
  if (!skip_reasons.empty()) {
    std::cout << " (";
    const char* sep = "";
    for (const auto& [why, n] : skip_reasons) {
      std::cout << sep << why << ": " << n;
      sep = ", ";
    }
    std::cout << ")";
  }
  std::cout << ", " << excepted << " exceptions";
  if (refused > 0) std::cout << "; check_schema refuses the schema of " << refused << " group(s)";
  std::cout << "\n";
  EXPECT_GT(run + excepted, 0u) << file << ": no group of the subset ran";
}

std::string test_name(const testing::TestParamInfo<const char*>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  if (std::string(info.param).find("/optional/") != std::string::npos) name = "optional_" + name;
  return name;
}

INSTANTIATE_TEST_SUITE_P(Draft7, JsonSchemaSuite, testing::ValuesIn(kFiles), test_name);

}  // namespace
