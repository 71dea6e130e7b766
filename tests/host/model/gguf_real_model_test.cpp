// The real model against a fixture made by the `gguf` Python package
// (tools/reference/gguf_dump.py): metadata, the whole tensor table, leading data bytes of sampled
// tensors and the model config.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/gguf.hpp"

namespace plinth {
namespace {

using nlohmann::json;

const std::string kModel =
    std::string(PLINTH_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const std::string kFixture =
    std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/gguf/smollm2-135m-instruct-q4_1.json";

class RealModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kModel)) return;
    file_ = GgufFile::open(kModel).release();
    std::ifstream in(kFixture);
    fixture_ = new json(json::parse(in));
  }
  static void TearDownTestSuite() {
    delete file_;
    delete fixture_;
    file_ = nullptr;
    fixture_ = nullptr;
  }
  void SetUp() override {
    if (file_ == nullptr) {
      GTEST_SKIP() << "model file " << kModel
                   << " is missing; fetch it with tools/fetch_model to run this test";
    }
  }
  static inline GgufFile* file_ = nullptr;
  static inline json* fixture_ = nullptr;
};

// One metadata value against its fixture entry: scalars exactly; arrays by type, length and the
// elements the fixture keeps from each end.
void expect_value(const GgufFile& f, const std::string& key, const json& want) {
  const std::string type = want["type"];
  ASSERT_TRUE(f.has(key)) << key;
  EXPECT_EQ(gguf_value_type_name(f.type_of(key)), type) << key;
  if (type == "string") {
    EXPECT_EQ(f.get_string(key), want["value"].get<std::string>()) << key;
  } else if (type == "bool") {
    EXPECT_EQ(f.get_bool(key), want["value"].get<bool>()) << key;
  } else if (type == "float32" || type == "float64") {
    EXPECT_EQ(f.get_float(key), want["value"].get<double>()) << key;
  } else if (type == "array") {
    const uint64_t n = want["length"];
    ASSERT_EQ(f.array_size(key), n) << key;
    const std::string elem = want["elem_type"];
    EXPECT_EQ(gguf_value_type_name(f.find_value(key)->elem_type), elem) << key;
    const json& head = want["head"];
    const json& tail = want["tail"];
    if (elem == "string") {
      const auto v = f.get_string_array(key);
      for (size_t i = 0; i < head.size(); ++i) EXPECT_EQ(v[i], head[i].get<std::string>()) << key;
      for (size_t i = 0; i < tail.size(); ++i) {
        EXPECT_EQ(v[n - tail.size() + i], tail[i].get<std::string>()) << key;
      }
    } else {
      const auto v = f.get_int_array(key);
      for (size_t i = 0; i < head.size(); ++i) EXPECT_EQ(v[i], head[i].get<int64_t>()) << key;
      for (size_t i = 0; i < tail.size(); ++i) {
        EXPECT_EQ(v[n - tail.size() + i], tail[i].get<int64_t>()) << key;
      }
    }
  } else if (type.starts_with("int")) {
    EXPECT_EQ(f.get_int(key), want["value"].get<int64_t>()) << key;
  } else {
    EXPECT_EQ(f.get_uint(key), want["value"].get<uint64_t>()) << key;
  }
}

TEST_F(RealModel, HeaderAndMetadataMatchGgufPackage) {
  const json& fx = *fixture_;
  EXPECT_EQ(file_->version(), fx["version"].get<uint32_t>());
  EXPECT_EQ(file_->alignment(), fx["alignment"].get<uint64_t>());
  EXPECT_EQ(file_->data_offset(), fx["data_offset"].get<uint64_t>());
  EXPECT_EQ(file_->keys(), fx["keys"].get<std::vector<std::string>>());
  for (const auto& [key, want] : fx["metadata"].items()) expect_value(*file_, key, want);
  EXPECT_EQ(file_->get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(file_->get_string("tokenizer.ggml.pre"), "smollm");
  EXPECT_EQ(file_->get_uint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_FALSE(file_->get_bool("tokenizer.ggml.add_bos_token"));
}

TEST_F(RealModel, TensorTableMatchesGgufPackage) {
  const json& want = (*fixture_)["tensors"];
  ASSERT_EQ(file_->tensors().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const GgufTensor& t = file_->tensors()[i];
    const json& w = want[i];
    EXPECT_EQ(t.name, w["name"].get<std::string>()) << i;
    EXPECT_EQ(static_cast<uint32_t>(t.type), w["type"].get<uint32_t>()) << t.name;
    EXPECT_EQ(t.dims, w["dims"].get<std::vector<uint64_t>>()) << t.name;
    EXPECT_EQ(t.offset, w["offset"].get<uint64_t>()) << t.name;
    EXPECT_EQ(t.nbytes, w["nbytes"].get<uint64_t>()) << t.name;
    EXPECT_EQ(file_->find_tensor(t.name), &t);
  }
  EXPECT_EQ(file_->find_tensor("token_embd.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(file_->find_tensor("blk.3.attn_k.weight")->type, GgmlType::kQ4_1);
  EXPECT_EQ(file_->find_tensor("blk.3.ffn_norm.weight")->type, GgmlType::kF32);
}

TEST_F(RealModel, TensorDataPointsIntoTheMapping) {
  for (const auto& [name, hex] : (*fixture_)["data_first_bytes_hex"].items()) {
    const GgufTensor* t = file_->find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    std::string got;
    for (size_t i = 0; i < hex.get<std::string>().size() / 2; ++i) {
      char buf[3];
      std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(t->data[i]));
      got += buf;
    }
    EXPECT_EQ(got, hex.get<std::string>()) << name;
  }
}

TEST_F(RealModel, ConfigMatchesGgufPackage) {
  const json& w = (*fixture_)["config"];
  const ModelConfig c = read_model_config(*file_);
  EXPECT_EQ(c.architecture, w["architecture"].get<std::string>());
  EXPECT_EQ(c.name, w["name"].get<std::string>());
  EXPECT_EQ(c.n_layers, w["n_layers"].get<uint32_t>());
  EXPECT_EQ(c.hidden_size, w["hidden_size"].get<uint32_t>());
  EXPECT_EQ(c.n_heads, w["n_heads"].get<uint32_t>());
  EXPECT_EQ(c.n_kv_heads, w["n_kv_heads"].get<uint32_t>());
  EXPECT_EQ(c.head_dim, w["head_dim"].get<uint32_t>());
  EXPECT_EQ(c.ffn_size, w["ffn_size"].get<uint32_t>());
  EXPECT_EQ(c.vocab_size, w["vocab_size"].get<uint32_t>());
  EXPECT_EQ(c.context_length, w["context_length"].get<uint32_t>());
  EXPECT_EQ(c.rope_theta, static_cast<float>(w["rope_theta"].get<double>()));
  EXPECT_EQ(c.rms_norm_eps, static_cast<float>(w["rms_norm_eps"].get<double>()));
  EXPECT_EQ(c.tied_embeddings, w["tied_embeddings"].get<bool>());
  EXPECT_FALSE(c.rope_neox);
  // The published model card values, as a second source.
  EXPECT_EQ(c.n_layers, 30u);
  EXPECT_EQ(c.hidden_size, 576u);
  EXPECT_EQ(c.n_heads, 9u);
  EXPECT_EQ(c.n_kv_heads, 3u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.ffn_size, 1536u);
  EXPECT_EQ(c.vocab_size, 49152u);
  EXPECT_EQ(c.context_length, 8192u);
}

}  // namespace
}  // namespace plinth
