// spec_decode's manifest config: defaults, each option, every refusal naming config.<key> (through
// the host's schema check), the cross-option rules a schema cannot express, and the published
// schema agreeing with the parser.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "common/host_config.hpp"
#include "spec_config.hpp"

using plinth::spec_decode::kConfigSchema;
using plinth::spec_decode::kMaxSpeculativeTokens;
using plinth::spec_decode::Method;
using plinth::spec_decode::parse_config;

namespace {

const char* const kKeys[] = {"method",
                             "num_speculative_tokens",
                             "min_n",
                             "max_n",
                             "exit_layer",
                             "draft_kv_tokens",
                             "draft_len_schedule",
                             "adaptive",
                             "verify_token_cost",
                             "draft_token_cost",
                             "probe_interval"};

/// The message of the std::invalid_argument parse_config throws; fails the test when it accepts.
std::string refusal(const std::string& json) {
  try {
    parse_config(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << json << ": not std::invalid_argument: " << e.what();
    return "";
  }
  ADD_FAILURE() << json << ": accepted";
  return "";
}

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

}  // namespace

TEST(SpecDecodeConfig, Defaults) {
  for (const char* json : {"", "{}"}) {
    const auto c = parse_config(json);
    EXPECT_EQ(c.method, Method::kNgram);
    EXPECT_EQ(c.num_speculative_tokens, 4u);
    EXPECT_EQ(c.min_n, 2u);
    EXPECT_EQ(c.max_n, 4u);
    EXPECT_EQ(c.exit_layer, 0u);
    EXPECT_EQ(c.draft_kv_tokens, 16384u);
    EXPECT_TRUE(c.draft_len_schedule.empty());
    EXPECT_TRUE(c.adaptive);
    EXPECT_EQ(c.verify_token_cost, 0.0);
    EXPECT_EQ(c.draft_token_cost, -1.0);
    EXPECT_EQ(c.probe_interval, 16u);
  }
}

TEST(SpecDecodeConfig, EveryOption) {
  const auto c = parse_config(R"({"method": "layer_skip", "num_speculative_tokens": 16,
    "min_n": 1, "max_n": 64, "exit_layer": 12, "draft_kv_tokens": 16,
    "draft_len_schedule": [{"max_batch_size": 1, "num_speculative_tokens": 8},
                           {"max_batch_size": 64, "num_speculative_tokens": 0}],
    "adaptive": false, "verify_token_cost": 0.5, "draft_token_cost": 0,
    "probe_interval": 1000000})");
  EXPECT_EQ(c.method, Method::kLayerSkip);
  EXPECT_EQ(c.num_speculative_tokens, kMaxSpeculativeTokens);
  EXPECT_EQ(c.min_n, 1u);
  EXPECT_EQ(c.max_n, 64u);
  EXPECT_EQ(c.exit_layer, 12u);
  EXPECT_EQ(c.draft_kv_tokens, 16u);
  ASSERT_EQ(c.draft_len_schedule.size(), 2u);
  EXPECT_EQ(c.draft_len_schedule[0].max_batch_size, 1u);
  EXPECT_EQ(c.draft_len_schedule[0].k, 8u);
  EXPECT_EQ(c.draft_len_schedule[1].max_batch_size, 64u);
  EXPECT_EQ(c.draft_len_schedule[1].k, 0u);
  EXPECT_FALSE(c.adaptive);
  EXPECT_EQ(c.verify_token_cost, 0.5);
  EXPECT_EQ(c.draft_token_cost, 0.0);
  EXPECT_EQ(c.probe_interval, 1000000u);
  EXPECT_EQ(parse_config(R"({"method": "draft"})").method, Method::kDraft);
  EXPECT_EQ(parse_config(R"({"min_n": 3, "max_n": 3})").min_n, 3u);
}

// Every bad value is refused by the host's schema check (before create), naming the key.
TEST(SpecDecodeConfig, HostRefusesEveryBadValueNamingItsKey) {
  const struct {
    const char* json;
    const char* key;
  } cases[] = {
      {R"({"method": "beam"})", "config.method"},
      {R"({"method": 1})", "config.method"},
      {R"({"num_speculative_tokens": 0})", "config.num_speculative_tokens"},
      {R"({"num_speculative_tokens": 17})", "config.num_speculative_tokens"},
      {R"({"num_speculative_tokens": -1})", "config.num_speculative_tokens"},
      {R"({"num_speculative_tokens": 2.5})", "config.num_speculative_tokens"},
      {R"({"num_speculative_tokens": "4"})", "config.num_speculative_tokens"},
      {R"({"num_speculative_tokens": true})", "config.num_speculative_tokens"},
      {R"({"min_n": 0})", "config.min_n"},
      {R"({"min_n": 65})", "config.min_n"},
      {R"({"max_n": 0})", "config.max_n"},
      {R"({"max_n": 65})", "config.max_n"},
      {R"({"exit_layer": -1})", "config.exit_layer"},
      {R"({"exit_layer": 4097})", "config.exit_layer"},
      {R"({"draft_kv_tokens": 15})", "config.draft_kv_tokens"},
      {R"({"draft_kv_tokens": 16777217})", "config.draft_kv_tokens"},
      {R"({"draft_len_schedule": {}})", "config.draft_len_schedule"},
      {R"({"draft_len_schedule": [1]})", "config.draft_len_schedule[0]"},
      {R"({"draft_len_schedule": [{"max_batch_size": 4}]})",
       "config.draft_len_schedule[0].num_speculative_tokens"},
      {R"({"draft_len_schedule": [{"num_speculative_tokens": 4}]})",
       "config.draft_len_schedule[0].max_batch_size"},
      {R"({"draft_len_schedule": [{"max_batch_size": 0, "num_speculative_tokens": 4}]})",
       "config.draft_len_schedule[0].max_batch_size"},
      {R"({"draft_len_schedule": [{"max_batch_size": 4, "num_speculative_tokens": 17}]})",
       "config.draft_len_schedule[0].num_speculative_tokens"},
      {R"({"draft_len_schedule": [{"max_batch_size": 4, "num_speculative_tokens": 2},
          {"max_batch_size": "8", "num_speculative_tokens": 1}]})",
       "config.draft_len_schedule[1].max_batch_size"},
      {R"({"adaptive": 1})", "config.adaptive"},
      {R"({"adaptive": "true"})", "config.adaptive"},
      {R"({"verify_token_cost": -0.1})", "config.verify_token_cost"},
      {R"({"verify_token_cost": 10.5})", "config.verify_token_cost"},
      {R"({"verify_token_cost": "1"})", "config.verify_token_cost"},
      {R"({"draft_token_cost": -2})", "config.draft_token_cost"},
      {R"({"draft_token_cost": 11})", "config.draft_token_cost"},
      {R"({"probe_interval": 0})", "config.probe_interval"},
      {R"({"probe_interval": 1000001})", "config.probe_interval"},
  };
  for (const auto& c : cases) {
    const std::string m = plinth::test::host_config(kConfigSchema, c.json).error;
    EXPECT_TRUE(has(m, std::string("plugins[1].") + c.key + ": ")) << c.json << " -> " << m;
  }
}

// Created without the host, a config C++ cannot read is still refused, naming the key.
TEST(SpecDecodeConfig, RefusesWhatCppCannotRead) {
  EXPECT_EQ(refusal(R"({"method": "beam"})"),
            "spec_decode: config.method must be one of \"ngram\", \"draft\", \"layer_skip\", "
            "got \"beam\"");
  EXPECT_EQ(refusal(R"({"num_speculative_tokens": -1})"),
            "spec_decode: config.num_speculative_tokens must be an integer in 0..4294967295, got "
            "-1");
  EXPECT_EQ(refusal(R"({"adaptive": 1})"),
            "spec_decode: config.adaptive must be true or false, got 1");
  EXPECT_EQ(refusal(R"({"verify_token_cost": "1"})"),
            "spec_decode: config.verify_token_cost must be a number, got \"1\"");
  EXPECT_EQ(refusal(R"({"draft_len_schedule": [1]})"),
            "spec_decode: config.draft_len_schedule[0] must be an object, got 1");
  EXPECT_EQ(refusal(R"({"draft_len_schedule": [{"max_batch_size": 4}]})"),
            "spec_decode: config.draft_len_schedule[0].num_speculative_tokens must be given");
  EXPECT_EQ(refusal(R"({"draft_len_schedule": [{"max_batch_size": 4, "num_speculative_tokens": 2},
          {"max_batch_size": "8", "num_speculative_tokens": 1}]})"),
            "spec_decode: config.draft_len_schedule[1].max_batch_size must be an integer in "
            "0..4294967295, got \"8\"");
}

TEST(SpecDecodeConfig, MinNAboveMaxNNamesBoth) {
  for (const char* json : {R"({"min_n": 5, "max_n": 3})", R"({"min_n": 5})", R"({"max_n": 1})"}) {
    const std::string m = refusal(json);
    EXPECT_TRUE(has(m, "config.min_n")) << m;
    EXPECT_TRUE(has(m, "config.max_n")) << m;
  }
  EXPECT_TRUE(has(refusal(R"({"max_n": 3, "min_n": 5})"), "config.min_n = 5"));
  EXPECT_TRUE(has(refusal(R"({"max_n": 3, "min_n": 5})"), "config.max_n = 3"));
}

TEST(SpecDecodeConfig, ScheduleMustAscend) {
  for (const char* second : {"4", "2"}) {  // equal, then smaller
    const std::string json =
        std::string(R"({"draft_len_schedule": [{"max_batch_size": 4, "num_speculative_tokens": 4},
        {"max_batch_size": )") +
        second + R"(, "num_speculative_tokens": 2}]})";
    const std::string m = refusal(json);
    EXPECT_TRUE(has(m, "config.draft_len_schedule[1].max_batch_size")) << m;
    EXPECT_TRUE(has(m, "ascending")) << m;
  }
}

TEST(SpecDecodeConfig, HostRefusesAnUnknownKeyListingTheAllowedOnes) {
  const std::string m =
      plinth::test::host_config(kConfigSchema, R"({"num_draft_tokens": 4})").error;
  EXPECT_TRUE(has(m, "plugins[1].config.num_draft_tokens: unknown option")) << m;
  for (const char* key : kKeys) EXPECT_TRUE(has(m, key)) << key << " missing from: " << m;
}

TEST(SpecDecodeConfig, NotAnObject) {
  EXPECT_TRUE(has(refusal("[1]"), "must be a JSON object"));
  EXPECT_TRUE(has(refusal("{"), "not valid JSON"));
}

TEST(SpecDecodeConfig, SchemaAgreesWithTheParser) {
  const auto s = nlohmann::json::parse(kConfigSchema);
  EXPECT_EQ(s["additionalProperties"], false);
  std::set<std::string> schema_keys, parser_keys(std::begin(kKeys), std::end(kKeys));
  for (const auto& [key, _] : s["properties"].items()) schema_keys.insert(key);
  EXPECT_EQ(schema_keys, parser_keys);
  // The schema's defaults are what parse_config gives for a missing key, and parse_config accepts
  // the object of all defaults (the host fills them in before create).
  nlohmann::json defaults = nlohmann::json::object();
  for (const auto& [key, prop] : s["properties"].items()) {
    ASSERT_TRUE(prop.contains("default")) << key;
    defaults[key] = prop["default"];
  }
  const auto filled = parse_config(defaults.dump());
  const auto empty = parse_config("{}");
  EXPECT_EQ(filled.method, empty.method);
  EXPECT_EQ(filled.num_speculative_tokens, empty.num_speculative_tokens);
  EXPECT_EQ(filled.min_n, empty.min_n);
  EXPECT_EQ(filled.max_n, empty.max_n);
  EXPECT_EQ(filled.exit_layer, empty.exit_layer);
  EXPECT_EQ(filled.draft_kv_tokens, empty.draft_kv_tokens);
  EXPECT_EQ(filled.draft_len_schedule.size(), empty.draft_len_schedule.size());
  EXPECT_EQ(filled.adaptive, empty.adaptive);
  EXPECT_EQ(filled.verify_token_cost, empty.verify_token_cost);
  EXPECT_EQ(filled.draft_token_cost, empty.draft_token_cost);
  EXPECT_EQ(filled.probe_interval, empty.probe_interval);
  EXPECT_EQ(s["properties"]["num_speculative_tokens"]["maximum"], kMaxSpeculativeTokens);
}
