// backend_cuda's config: parse_cuda_config against the documented defaults and errors, and
// kCudaConfigSchema through the host's own schema validator (host/runtime/json_schema.cpp), so
// the schema, its defaults and the parser agree.
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

TEST(CudaConfig, ErrorsNameKeyValueAndFix) {
  EXPECT_NE(error_of("{").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of("[1]").find("must be a JSON object"), std::string::npos);
  std::string e = error_of(R"({"devce": 0})");
  EXPECT_NE(e.find("unknown key \"devce\""), std::string::npos) << e;
  EXPECT_NE(e.find("allowed: device, memory_fraction"), std::string::npos) << e;
  e = error_of(R"({"device": -1})");
  EXPECT_NE(e.find("device = -1 must be an integer between 0 and 1023"), std::string::npos) << e;
  e = error_of(R"({"device": 0.5})");
  EXPECT_NE(e.find("device = 0.5"), std::string::npos) << e;
  e = error_of(R"({"memory_fraction": 0})");
  EXPECT_NE(e.find("memory_fraction = 0 must be a number in (0, 1]"), std::string::npos) << e;
  EXPECT_NE(error_of(R"({"memory_fraction": 1.01})"), "");
  EXPECT_NE(error_of(R"({"memory_fraction": "0.5"})"), "");
  e = error_of(R"({"gemm": "cublas"})");
  EXPECT_NE(e.find("gemm = \"cublas\" must be \"invariant\""), std::string::npos) << e;
  e = error_of(R"({"max_num_tokens": 0})");
  EXPECT_NE(e.find("max_num_tokens = 0 must be an integer between 1 and 1048576"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of(R"({"max_num_tokens": 18446744073709551615})"), "");
  EXPECT_NE(error_of(R"({"max_num_seqs": 65537})"), "");
  e = error_of(R"({"max_num_tokens": 128, "max_num_seqs": 256})");
  EXPECT_NE(e.find("max_num_seqs = 256 exceeds max_num_tokens = 128"), std::string::npos) << e;
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

TEST(CudaConfigSchema, RejectsWhatTheParserRejects) {
  const nlohmann::json schema = nlohmann::json::parse(kCudaConfigSchema);
  for (const char* bad :
       {R"({"device": -1})", R"({"device": 1024})", R"({"memory_fraction": 0})",
        R"({"memory_fraction": 1.5})", R"({"gemm": "cublas"})", R"({"max_num_tokens": 0})",
        R"({"max_num_seqs": 0})", R"({"other": 1})"}) {
    nlohmann::json j = nlohmann::json::parse(bad);
    EXPECT_THROW(validate_json(schema, j, "config"), SchemaError) << bad;
    EXPECT_THROW((void)parse_cuda_config(bad), std::invalid_argument) << bad;
  }
  for (const char* good : {R"({"device": 3, "memory_fraction": 1, "gemm": "fast"})",
                           R"({"max_num_tokens": 1, "max_num_seqs": 1})"}) {
    nlohmann::json j = nlohmann::json::parse(good);
    EXPECT_NO_THROW(validate_json(schema, j, "config")) << good;
    EXPECT_NO_THROW((void)parse_cuda_config(j.dump())) << good;
  }
}

}  // namespace
}  // namespace plinth::cuda
