// scheduler_continuous config parsing and schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

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

TEST(SchedulerConfig, Errors) {
  EXPECT_NE(error_of(R"({"max_num_seqs": 0})").find("max_num_seqs"), std::string::npos);
  EXPECT_NE(error_of(R"({"max_num_batched_tokens": -5})").find("max_num_batched_tokens"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"enable_chunked_prefill": 1})").find("true or false"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"policy": "lifo"})").find("\"fcfs\", \"priority\" or \"longest_prefix_first\""),
      std::string::npos);
  EXPECT_NE(error_of(R"({"preemption_mode": "swap"})").find("recompute"), std::string::npos);
  EXPECT_NE(error_of(R"({"max_seqs": 3})").find("unknown config key"), std::string::npos);
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
