// schema_eval (plugins/grammar_xgrammar/schema_eval.hpp) against the JSON Schema Test Suite's
// labels (Debian json-schema-test-suite, draft 7): every verdict it gives must equal the label;
// it may leave a case undecided (format, a $ref beside other keywords, remote references, ...).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schema_eval.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(SchemaEval, AgreesWithTheJsonSchemaTestSuite) {
  if (!fs::is_directory(PLINTH_JSON_SCHEMA_SUITE)) {
    GTEST_SKIP() << PLINTH_JSON_SCHEMA_SUITE << " is missing (Debian json-schema-test-suite)";
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(PLINTH_JSON_SCHEMA_SUITE)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int decided = 0, undecided = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    for (const auto& group : json::parse(in)) {
      const json& schema = group.at("schema");
      for (const auto& t : group.at("tests")) {
        const std::optional<bool> r = plinth::grammar::satisfies(t.at("data"), schema, schema);
        if (!r.has_value()) {
          ++undecided;
          continue;
        }
        ++decided;
        EXPECT_EQ(*r, t.at("valid").get<bool>())
            << f.filename().string() << ": " << group.value("description", "") << ": "
            << t.value("description", "") << "\nschema: " << schema.dump()
            << "\ndata: " << t.at("data").dump();
      }
    }
  }
  std::printf(
      "JSON Schema Test Suite draft 7: %d verdicts given (all equal the labels), %d left "
      "undecided\n",
      decided, undecided);
  EXPECT_GE(decided,
            380);  // measured 386 of 423; a drop means keywords it decided are no longer decided
}

TEST(SchemaEval, EnumBesideNotIsTheValuesThatSatisfyIt) {
  // The shape of JSONSchemaBench's Synthesized files: allOf [enum, not ...].
  const json m = json::parse(R"({"allOf": [{"enum": [1, 7, 14, 3]}, {"not": {"multipleOf": 7}}]})");
  EXPECT_EQ(plinth::grammar::satisfies(1, m, m), true);
  EXPECT_EQ(plinth::grammar::satisfies(7, m, m), false);
  EXPECT_EQ(plinth::grammar::satisfies(14, m, m), false);
  EXPECT_EQ(plinth::grammar::satisfies(2, m, m), false);  // not listed
  const json u = json::parse(R"({"enum": [[1, 1], [1, 2]],
                                 "not": {"type": "array", "uniqueItems": true}})");
  EXPECT_EQ(plinth::grammar::satisfies(json::parse("[1, 1]"), u, u), true);
  EXPECT_EQ(plinth::grammar::satisfies(json::parse("[1, 2]"), u, u), false);
  const json f = json::parse(R"({"enum": ["a"], "not": {"format": "email"}})");
  EXPECT_EQ(plinth::grammar::satisfies("a", f, f), std::nullopt);  // format: undecided
}

}  // namespace
