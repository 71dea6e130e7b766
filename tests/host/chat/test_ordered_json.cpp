// chat/ordered_json.hpp: the same values, member order and duplicate-key rule as nlohmann's own
// ordered_json::parse (the independent reference) on every shape, discarded where it refuses the
// text, and linear time on the shapes where nlohmann's parse is quadratic.
#include "chat/ordered_json.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace plinth {
namespace {

using nlohmann::ordered_json;

TEST(OrderedJson, SameAsNlohmannOrderedParse) {
  const std::vector<std::string> texts = {
      "null",
      "true",
      "false",
      "0",
      "-12",
      "18446744073709551615",
      "1.5e-3",
      "\"a\\u00e9\\n\"",
      "[]",
      "{}",
      " [1, [2, [3, {}]], \"x\"] ",
      R"({"b": 1, "a": {"d": [1, 2, {"z": null, "y": true}], "c": "x"}, "e": []})",
      R"({"k": 1, "j": 2, "k": 3})",              // repeated key: first position, last value
      R"({"k": {"a": 1}, "x": 0, "k": [2, 3]})",  // a repeated key replacing a container
      R"({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}},
          "required": ["z", "a"]})"};
  for (const std::string& t : texts) {
    const ordered_json want = ordered_json::parse(t);
    const ordered_json got = parse_ordered_json(t);
    EXPECT_EQ(got, want) << t;
    EXPECT_EQ(got.dump(), want.dump()) << t;  // the member order too
  }
}

TEST(OrderedJson, WideObjectWithRepeatedKeysSameAsNlohmann) {
  // More members than the scan limit: repeated keys go through the index.
  std::string t = "{";
  for (int i = 0; i < 200; ++i)
    t += "\"k" + std::to_string(i % 70) + "\": " + std::to_string(i) + ",";
  t += "\"last\": [1]}";
  const ordered_json want = ordered_json::parse(t);
  EXPECT_EQ(parse_ordered_json(t).dump(), want.dump());
  EXPECT_EQ(want.size(), 71u);
}

TEST(OrderedJson, NotJsonIsDiscarded) {
  for (const char* t : {"", "{", "[1,]", "{\"a\" 1}", "{} x", "[1] [2]", "nul", "\"\\ud800\"",
                        "{\"a\": 1,}", "\xff"}) {
    EXPECT_TRUE(ordered_json::parse(t, nullptr, false).is_discarded()) << t;
    EXPECT_TRUE(parse_ordered_json(t).is_discarded()) << t;
  }
}

double seconds_to_parse(const std::string& text) {
  const auto t0 = std::chrono::steady_clock::now();
  const ordered_json v = parse_ordered_json(text);
  EXPECT_FALSE(v.is_discarded());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// nlohmann's ordered parse copies each deep member again at every level above it (20,000
// levels: ~20 s on a 2-core VM) and scans for each key of a wide object (80,000 keys: ~7 s);
// these shapes now take milliseconds, so a bound of seconds holds on a loaded machine.
TEST(OrderedJson, DeepObjectsWithLaterMembersInLinearTime) {
  constexpr int kDepth = 40000;
  std::string t;
  for (int i = 0; i < kDepth; ++i) t += "{\"a\":";
  t += "1";
  for (int i = 0; i < kDepth; ++i) t += ",\"b\":1}";
  EXPECT_LT(seconds_to_parse(t), 3.0);
  const ordered_json v = parse_ordered_json(t);
  EXPECT_EQ(v.begin().key(), "a");
  EXPECT_EQ(v["b"], 1);
}

TEST(OrderedJson, WideObjectInLinearTime) {
  std::string t = "{";
  for (int i = 0; i < 200000; ++i) t += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  t += "}";
  EXPECT_LT(seconds_to_parse(t), 3.0);
  const ordered_json v = parse_ordered_json(t);
  EXPECT_EQ(v.size(), 200000u);
  EXPECT_EQ(v.begin().key(), "k0");
  EXPECT_EQ((--v.end()).key(), "k199999");
}

}  // namespace
}  // namespace plinth
