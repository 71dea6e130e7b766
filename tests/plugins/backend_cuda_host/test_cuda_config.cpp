// backend_cuda's config: parse_cuda_config against the documented defaults and its own errors
// (what C++ cannot read, max_num_seqs <= max_num_tokens), and kCudaConfigSchema through the host's
// own schema validator (host/runtime/json_schema.cpp), which refuses every bad value naming the
// key, so the schema, its defaults and the parser agree.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "cuda_config.hpp"
#include "runtime/json_schema.hpp"

namespace plinth::cuda {
namespace {

std::string error_of(const std::string& json) {
  try {
    (void)parse_cuda_config(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CudaConfig, DefaultsWhenEmptyOrNull) {
  for (const CudaConfig& c :
       {parse_cuda_config(""), parse_cuda_config("{}"),
        parse_cuda_config(static_cast<const char*>(nullptr)), parse_cuda_config("  \n")}) {
    EXPECT_EQ(c.device, 0);
    EXPECT_EQ(c.memory_fraction, 0.9);
    EXPECT_TRUE(c.invariant_gemm);
    EXPECT_EQ(c.max_num_tokens, 8192u);
    EXPECT_EQ(c.max_num_seqs, 256u);
  }
}

TEST(CudaConfig, ReadsEveryKey) {
  const CudaConfig c = parse_cuda_config(
      R"({"device": 1, "memory_fraction": 0.5, "gemm": "fast", "max_num_tokens": 2048.0,
          "max_num_seqs": 64})");
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.memory_fraction, 0.5);
  EXPECT_FALSE(c.invariant_gemm);
  EXPECT_EQ(c.max_num_tokens, 2048u);
  EXPECT_EQ(c.max_num_seqs, 64u);
  EXPECT_TRUE(parse_cuda_config(R"({"gemm": "invariant", "memory_fraction": 1})").invariant_gemm);
}

// Created without the host, what C++ cannot read and the rule across keys are refused.
TEST(CudaConfig, ErrorsNameKeyValueAndFix) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1]").find("must be a JSON object"), std::string::npos);
  EXPECT_EQ(error_of(R"({"device": 0.5})"),
            "backend_cuda: config.device must be an integer in -2147483648..2147483647, got 0.5");
  EXPECT_EQ(error_of(R"({"memory_fraction": "0.5"})"),
            "backend_cuda: config.memory_fraction must be a number, got \"0.5\"");
  EXPECT_EQ(error_of(R"({"gemm": "cublas"})"),
            "backend_cuda: config.gemm must be one of \"invariant\", \"fast\", got \"cublas\"");
  EXPECT_NE(error_of(R"({"max_num_tokens": 18446744073709551615})"), "");
  const std::string e = error_of(R"({"max_num_tokens": 128, "max_num_seqs": 256})");
  EXPECT_NE(e.find("config.max_num_seqs = 256 exceeds max_num_tokens = 128"), std::string::npos)
      << e;
  EXPECT_NE(e.find("raise max_num_tokens or lower max_num_seqs"), std::string::npos) << e;
}

TEST(CudaConfigSchema, IsInTheHostDialectAndItsDefaultsParseToCudaConfig) {
  const nlohmann::json schema = nlohmann::json::parse(kCudaConfigSchema);
  EXPECT_NO_THROW(check_schema(schema, "config_schema"));
  nlohmann::json filled = nlohmann::json::object();
  validate_json(schema, filled, "config");
  EXPECT_EQ(filled, nlohmann::json::parse(R"({"device": 0, "memory_fraction": 0.9,
      "gemm": "invariant", "max_num_tokens": 8192, "max_num_seqs": 256})"));
  const CudaConfig c = parse_cuda_config(filled.dump());
  const CudaConfig d;
  EXPECT_EQ(c.device, d.device);
  EXPECT_EQ(c.memory_fraction, d.memory_fraction);
  EXPECT_EQ(c.invariant_gemm, d.invariant_gemm);
  EXPECT_EQ(c.max_num_tokens, d.max_num_tokens);
  EXPECT_EQ(c.max_num_seqs, d.max_num_seqs);
}

// Every bad value is refused by the host's schema check (before create), naming the key.
TEST(CudaConfigSchema, RefusesBadValuesNamingTheKey) {
  const nlohmann::json schema = nlohmann::json::parse(kCudaConfigSchema);
  const auto refusal = [&](const char* bad) -> std::string {
    nlohmann::json j = nlohmann::json::parse(bad);
    try {
      validate_json(schema, j, "plugins[0].config");
    } catch (const SchemaError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal(R"({"device": -1})"),
            "plugins[0].config.device: must be between 0 and 1023, got -1");
  EXPECT_EQ(refusal(R"({"device": 1024})"),
            "plugins[0].config.device: must be between 0 and 1023, got 1024");
  EXPECT_NE(refusal(R"({"device": 0.5})").find("config.device: must be an integer"),
            std::string::npos);
  EXPECT_EQ(refusal(R"({"memory_fraction": 0})"),
            "plugins[0].config.memory_fraction: must be > 0 and <= 1, got 0");
  EXPECT_EQ(refusal(R"({"memory_fraction": 1.5})"),
            "plugins[0].config.memory_fraction: must be > 0 and <= 1, got 1.5");
  EXPECT_NE(refusal(R"({"gemm": "cublas"})").find("config.gemm: must be one of"),
            std::string::npos);
  EXPECT_EQ(refusal(R"({"max_num_tokens": 0})"),
            "plugins[0].config.max_num_tokens: must be between 1 and 1048576, got 0");
  EXPECT_EQ(refusal(R"({"max_num_seqs": 65537})"),
            "plugins[0].config.max_num_seqs: must be between 1 and 65536, got 65537");
  EXPECT_NE(refusal(R"({"devce": 0})").find("config.devce: unknown option"), std::string::npos);
  for (const char* good : {R"({"device": 3, "memory_fraction": 1, "gemm": "fast"})",
                           R"({"max_num_tokens": 1, "max_num_seqs": 1})"}) {
    nlohmann::json j = nlohmann::json::parse(good);
    EXPECT_NO_THROW(validate_json(schema, j, "config")) << good;
    EXPECT_NO_THROW((void)parse_cuda_config(j.dump())) << good;
  }
}

}  // namespace
}  // namespace plinth::cuda
