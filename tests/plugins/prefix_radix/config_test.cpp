// prefix_radix's manifest config: defaults, each option, every refusal naming the key (through the
// host's schema check); the published schema; namespaces built from the config salt and the key
// salt.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "common/host_config.hpp"
#include "prefix_radix_config.hpp"

using plinth::prefix_radix::kConfigSchema;
using plinth::prefix_radix::namespace_of;
using plinth::prefix_radix::parse_config;

namespace {
std::string refusal(const char* json) {
  try {
    parse_config(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(PrefixRadixConfig, Defaults) {
  for (const char* json : {"", "{}"}) {
    auto c = parse_config(json);
    EXPECT_EQ(c.salt, "");
    EXPECT_EQ(c.max_cached_blocks, 0u);
  }
}

TEST(PrefixRadixConfig, Options) {
  auto c = parse_config(R"({"salt": "model-v2", "max_cached_blocks": 4096})");
  EXPECT_EQ(c.salt, "model-v2");
  EXPECT_EQ(c.max_cached_blocks, 4096u);
  EXPECT_EQ(parse_config(R"({"max_cached_blocks": 16777216})").max_cached_blocks, 1u << 24);
}

// Every bad value is refused by the host's schema check (before create), naming the key.
TEST(PrefixRadixConfig, HostRefusesBadValuesNamingTheKey) {
  const auto host = [](const char* config) {
    return plinth::test::host_config(kConfigSchema, config).error;
  };
  EXPECT_EQ(host(R"({"salt": 3})"), "plugins[1].config.salt: must be a string, got integer 3");
  EXPECT_EQ(host(R"({"max_cached_blocks": -1})"),
            "plugins[1].config.max_cached_blocks: must be between 0 and 16777216, got -1");
  EXPECT_NE(host(R"({"max_cached_blocks": 1.5})")
                .find("config.max_cached_blocks: must be an "
                      "integer"),
            std::string::npos);
  EXPECT_EQ(host(R"({"max_cached_blocks": 16777217})"),
            "plugins[1].config.max_cached_blocks: must be between 0 and 16777216, got 16777217");
  EXPECT_NE(host(R"({"block_size": 16})").find("config.block_size: unknown option"),
            std::string::npos);
  const auto passed = plinth::test::host_config(kConfigSchema, R"({"salt": "s"})");
  ASSERT_EQ(passed.error, "");
  EXPECT_EQ(parse_config(passed.text).salt, "s");
}

// Created without the host, a config C++ cannot read is still refused, naming the key.
TEST(PrefixRadixConfig, RefusesWhatCppCannotRead) {
  EXPECT_EQ(refusal(R"({"salt": 3})"), "prefix_radix: config.salt must be a string, got 3");
  EXPECT_EQ(refusal(R"({"max_cached_blocks": -1})"),
            "prefix_radix: config.max_cached_blocks must be an integer in 0..4294967295, got -1");
  EXPECT_NE(refusal("[1]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(refusal("{").find("not valid JSON"), std::string::npos);
}

TEST(PrefixRadixConfig, SchemaListsTheOptions) {
  auto s = nlohmann::json::parse(kConfigSchema);
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["properties"]["salt"]["type"], "string");
  EXPECT_EQ(s["properties"]["salt"]["default"], "");
  EXPECT_EQ(s["properties"]["max_cached_blocks"]["minimum"], 0);
  EXPECT_EQ(s["properties"]["max_cached_blocks"]["default"], 0);
  EXPECT_EQ(s["properties"].size(), 2u);
}

TEST(PrefixRadixConfig, NamespacesKeepKeySaltsApart) {
  EXPECT_NE(namespace_of("", "", ""), namespace_of("", "", std::string("\0", 1)));
  EXPECT_NE(namespace_of("m", "x", "a"), namespace_of("m", "x", "b"));
  EXPECT_NE(namespace_of("m", "x", "a"), namespace_of("n", "x", "a"));
  EXPECT_NE(namespace_of("m", "x", "a"), namespace_of("m", "y", "a"));
  // Parts never run into each other: a salt holding the separator is still another namespace.
  EXPECT_NE(namespace_of("a:", "", "b"), namespace_of("a", "", ":b"));
  EXPECT_EQ(namespace_of("m", "x", "a"), "1:m1:x1:a");
}
