// cuda_graph's config: the default capture-size schedule (1, 2, 4, multiples of 8, the maximum),
// explicit lists, and the errors for bad values (through the host's schema check); the published
// schema's defaults agree with the parser's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/host_config.hpp"
#include "graph_config.hpp"

namespace plinth::cuda_graph {
namespace {

using Sizes = std::vector<uint32_t>;

TEST(CudaGraphConfig, DefaultScheduleIsOneTwoFourThenStepsOfEight) {
  EXPECT_EQ(default_capture_sizes(64), (Sizes{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}));
  EXPECT_EQ(default_capture_sizes(1), (Sizes{1}));
  EXPECT_EQ(default_capture_sizes(3), (Sizes{1, 2, 3}));
  EXPECT_EQ(default_capture_sizes(6), (Sizes{1, 2, 4, 6}));
  EXPECT_EQ(default_capture_sizes(8), (Sizes{1, 2, 4, 8}));
  EXPECT_EQ(default_capture_sizes(20), (Sizes{1, 2, 4, 8, 16, 20}));
  EXPECT_THROW(default_capture_sizes(0), std::invalid_argument);
  EXPECT_THROW(default_capture_sizes(4097), std::invalid_argument);
}

TEST(CudaGraphConfig, EmptyConfigGivesTheDefaults) {
  for (const char* text : {"", "{}"}) {
    const GraphConfig c = parse_config(text);
    EXPECT_EQ(c.capture_sizes, default_capture_sizes(64));
    EXPECT_EQ(c.max_capture_size(), 64u);
    EXPECT_FALSE(c.eager_capture);
    EXPECT_EQ(c.max_blocks_per_seq, 0u);
  }
}

TEST(CudaGraphConfig, OptionsAreRead) {
  GraphConfig c =
      parse_config(R"({"max_capture_size": 16, "eager_capture": true, "max_blocks_per_seq": 12})");
  EXPECT_EQ(c.capture_sizes, (Sizes{1, 2, 4, 8, 16}));
  EXPECT_TRUE(c.eager_capture);
  EXPECT_EQ(c.max_blocks_per_seq, 12u);
  // An explicit list wins over max_capture_size, sorted and without repeats.
  c = parse_config(R"({"max_capture_size": 64, "capture_sizes": [8, 3, 3, 1, 100]})");
  EXPECT_EQ(c.capture_sizes, (Sizes{1, 3, 8, 100}));
  EXPECT_EQ(c.max_capture_size(), 100u);
  // The host fills the schema's default [] for capture_sizes: the schedule applies.
  c = parse_config(R"({"max_capture_size": 2, "capture_sizes": []})");
  EXPECT_EQ(c.capture_sizes, (Sizes{1, 2}));
  // Whole floats are integers, as the host's schema check accepts them.
  c = parse_config(R"({"max_capture_size": 16.0, "max_blocks_per_seq": 1e3})");
  EXPECT_EQ(c.capture_sizes, (Sizes{1, 2, 4, 8, 16}));
  EXPECT_EQ(c.max_blocks_per_seq, 1000u);
  EXPECT_EQ(parse_config(R"({"capture_sizes": [8.0, 2]})").capture_sizes, (Sizes{2, 8}));
}

// Every bad value is refused by the host's schema check (before create), naming the key.
void expect_host_error(const std::string& json, const std::string& fragment) {
  const std::string error = test::host_config(kConfigSchema, json).error;
  EXPECT_NE(error.find(fragment), std::string::npos) << json << " -> " << error;
}

TEST(CudaGraphConfig, HostRefusesBadValuesNamingTheKey) {
  const std::string range = ": must be between 1 and 4096, got ";
  expect_host_error(R"({"max_capture_size": 0})", "plugins[1].config.max_capture_size" + range);
  expect_host_error(R"({"max_capture_size": 5000})", "config.max_capture_size" + range + "5000");
  expect_host_error(R"({"max_capture_size": -3})", "config.max_capture_size" + range + "-3");
  expect_host_error(R"({"max_capture_size": "64"})", "config.max_capture_size: must be an integer");
  expect_host_error(R"({"max_capture_size": 8.5})", "config.max_capture_size: must be an integer");
  expect_host_error(R"({"capture_sizes": 8})", "config.capture_sizes: must be an array");
  expect_host_error(R"({"capture_sizes": [1, 0]})", "config.capture_sizes[1]" + range + "0");
  expect_host_error(R"({"eager_capture": 1})", "config.eager_capture: must be a boolean");
  expect_host_error(R"({"max_blocks_per_seq": 2000000})",
                    "config.max_blocks_per_seq: must be between 0 and 1048576, got 2000000");
  expect_host_error(R"({"capture_size": 8})", "config.capture_size: unknown option");
  // What the host passes, defaults filled, parses to the values written.
  const auto passed = test::host_config(kConfigSchema, R"({"max_capture_size": 6.0})");
  ASSERT_EQ(passed.error, "");
  EXPECT_EQ(parse_config(passed.text).capture_sizes, (Sizes{1, 2, 4, 6}));
}

// Created without the host, a config C++ cannot read is still refused, naming the key.
TEST(CudaGraphConfig, RefusesWhatCppCannotRead) {
  const auto error_of = [](const char* json) -> std::string {
    try {
      parse_config(json);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(R"({"max_capture_size": -3})"),
            "cuda_graph: config.max_capture_size must be an integer in 0..4294967295, got -3");
  EXPECT_EQ(error_of(R"({"capture_sizes": 8})"),
            "cuda_graph: config.capture_sizes must be an array, got 8");
  EXPECT_EQ(error_of(R"({"capture_sizes": [1, "2"]})"),
            "cuda_graph: config.capture_sizes[1] must be an integer in 0..4294967295, got \"2\"");
  EXPECT_EQ(error_of(R"({"eager_capture": 1})"),
            "cuda_graph: config.eager_capture must be true or false, got 1");
  EXPECT_EQ(error_of(R"({"max_capture_size": 0})"),
            "cuda_graph: max_capture_size must be in 1..4096, got 0");
  EXPECT_NE(error_of("[1]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
}

TEST(CudaGraphConfig, SchemaDefaultsAreTheParsersDefaults) {
  const nlohmann::json schema = nlohmann::json::parse(kConfigSchema);
  nlohmann::json defaults = nlohmann::json::object();
  for (const auto& [key, prop] : schema.at("properties").items()) {
    ASSERT_TRUE(prop.contains("default")) << key;
    defaults[key] = prop.at("default");
  }
  EXPECT_EQ(defaults.size(), 4u);
  const GraphConfig a = parse_config(defaults.dump());  // every key known to the parser
  const GraphConfig b = parse_config("");
  EXPECT_EQ(a.capture_sizes, b.capture_sizes);
  EXPECT_EQ(a.eager_capture, b.eager_capture);
  EXPECT_EQ(a.max_blocks_per_seq, b.max_blocks_per_seq);
  EXPECT_EQ(schema.at("properties").at("max_capture_size").at("maximum"), kMaxCaptureSizeLimit);
  EXPECT_EQ(schema.at("properties").at("max_blocks_per_seq").at("maximum"), kMaxBlocksPerSeqLimit);
}

}  // namespace
}  // namespace plinth::cuda_graph
