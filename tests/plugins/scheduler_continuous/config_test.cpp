// scheduler_continuous config parsing and schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "common/host_config.hpp"
#include "scheduler_config.hpp"

using namespace plinth::scheduler_continuous;

namespace {
std::string error_of(const char* json) {
  try {
    parse_config(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(SchedulerConfig, DefaultsAndValues) {
  SchedulerConfig d = parse_config("{}");
  EXPECT_EQ(d.max_num_seqs, 64u);
  EXPECT_EQ(d.max_num_batched_tokens, 2048u);
  EXPECT_TRUE(d.enable_chunked_prefill);
  EXPECT_EQ(d.long_prefill_token_threshold, 0u);
  EXPECT_EQ(d.policy, Policy::kFcfs);
  SchedulerConfig c = parse_config(
      R"({"max_num_seqs": 4, "max_num_batched_tokens": 512, "enable_chunked_prefill": false,
          "long_prefill_token_threshold": 128, "policy": "priority", "preemption_mode": "recompute"})");
  EXPECT_EQ(c.max_num_seqs, 4u);
  EXPECT_EQ(c.max_num_batched_tokens, 512u);
  EXPECT_FALSE(c.enable_chunked_prefill);
  EXPECT_EQ(c.long_prefill_token_threshold, 128u);
  EXPECT_EQ(c.policy, Policy::kPriority);
}

// Every bad value is refused by the host's schema check (before create), naming the key.
TEST(SchedulerConfig, HostRefusesBadValuesNamingTheKey) {
  const auto host = [](const char* config) {
    return plinth::test::host_config(kConfigSchema, config).error;
  };
  EXPECT_EQ(host(R"({"max_num_seqs": 0})"),
            "plugins[1].config.max_num_seqs: must be between 1 and 65536, got 0");
  EXPECT_EQ(host(R"({"max_num_batched_tokens": -5})"),
            "plugins[1].config.max_num_batched_tokens: must be between 1 and 1048576, got -5");
  EXPECT_EQ(host(R"({"enable_chunked_prefill": 1})"),
            "plugins[1].config.enable_chunked_prefill: must be a boolean, got integer 1");
  EXPECT_EQ(host(R"({"long_prefill_token_threshold": 4294967296})"),
            "plugins[1].config.long_prefill_token_threshold: must be between 0 and 4294967295, got "
            "4294967296");
  EXPECT_EQ(host(R"({"lpm_max_waiting": 0})"),
            "plugins[1].config.lpm_max_waiting: must be between 1 and 1048576, got 0");
  EXPECT_NE(host(R"({"policy": "lifo"})")
                .find("config.policy: must be one of \"fcfs\", \"priority\", "
                      "\"longest_prefix_first\""),
            std::string::npos)
      << host(R"({"policy": "lifo"})");
  EXPECT_NE(host(R"({"preemption_mode": "swap"})").find("config.preemption_mode: must be"),
            std::string::npos);
  EXPECT_NE(host(R"({"max_seqs": 3})").find("config.max_seqs: unknown option"), std::string::npos);
  const auto passed = plinth::test::host_config(kConfigSchema, R"({"policy": "priority"})");
  ASSERT_EQ(passed.error, "");
  EXPECT_EQ(parse_config(passed.text).policy, Policy::kPriority);
}

// Created without the host, a config C++ cannot read is still refused, naming the key.
TEST(SchedulerConfig, RefusesWhatCppCannotRead) {
  EXPECT_EQ(error_of(R"({"enable_chunked_prefill": 1})"),
            "scheduler_continuous: config.enable_chunked_prefill must be true or false, got 1");
  EXPECT_EQ(
      error_of(R"({"max_num_seqs": -1})"),
      "scheduler_continuous: config.max_num_seqs must be an integer in 0..4294967295, got -1");
  EXPECT_EQ(error_of(R"({"policy": "lifo"})"),
            "scheduler_continuous: config.policy must be one of \"fcfs\", \"priority\", "
            "\"longest_prefix_first\", got \"lifo\"");
}

TEST(SchedulerConfig, SchemaDefaultsParse) {
  auto schema = nlohmann::json::parse(kConfigSchema);
  nlohmann::json defaults = nlohmann::json::object();
  for (const auto& [k, v] : schema["properties"].items()) defaults[k] = v["default"];
  SchedulerConfig c = parse_config(defaults.dump());
  SchedulerConfig d;
  EXPECT_EQ(c.max_num_seqs, d.max_num_seqs);
  EXPECT_EQ(c.max_num_batched_tokens, d.max_num_batched_tokens);
  EXPECT_EQ(c.enable_chunked_prefill, d.enable_chunked_prefill);
  EXPECT_EQ(c.policy, d.policy);
}
