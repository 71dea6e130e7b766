// A draft of the real model's first 8 layers (select_first_layers + GgufWriter::write_file),
// re-read by plinth's reader: block_count 8, the source's tokenizer and every other metadata
// value, exactly the expected tensors with the source's types, dims and bytes. The independent
// check with the `gguf` Python package is tests/integration/cli/check_draft_model.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "gguf_test_files.hpp"
#include "model/gguf.hpp"
#include "model/layer_selection.hpp"
#include "model/model_config.hpp"

namespace plinth {
namespace {

const std::string kModel =
    std::string(PLINTH_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr uint32_t kLayers = 8;

// Equality of two parsed values, types included.
bool same_value(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type) return false;
  if (a.type == GgufValueType::kArray) {
    if (a.elem_type != b.elem_type || a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!same_value(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  if (a.data.index() != b.data.index()) return false;
  if (auto* s = std::get_if<std::string>(&a.data)) return *s == std::get<std::string>(b.data);
  if (auto* u = std::get_if<uint64_t>(&a.data)) return *u == std::get<uint64_t>(b.data);
  if (auto* i = std::get_if<int64_t>(&a.data)) return *i == std::get<int64_t>(b.data);
  if (auto* d = std::get_if<double>(&a.data)) return *d == std::get<double>(b.data);
  return std::get<bool>(a.data) == std::get<bool>(b.data);
}

class RealDraft : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel)) {
      GTEST_SKIP() << "model file " << kModel
                   << " is missing; fetch it with tools/fetch_model to run this test";
    }
    src_ = GgufFile::open(kModel);
    const std::string path = (dir_.path() / "draft.gguf").string();
    select_first_layers(*src_, kLayers).write_file(path);
    draft_ = GgufFile::open(path);
  }
  test::TempDir dir_;
  std::unique_ptr<GgufFile> src_;
  std::unique_ptr<GgufFile> draft_;
};

TEST_F(RealDraft, HasEightBlocksAndTheSourcesMetadata) {
  EXPECT_EQ(draft_->version(), 3u);
  EXPECT_EQ(draft_->get_uint("llama.block_count"), kLayers);
  EXPECT_EQ(src_->get_uint("llama.block_count"), 30u);
  EXPECT_EQ(draft_->get_string("general.name"),
            src_->get_string("general.name") + " (first 8 layers)");
  ASSERT_EQ(draft_->keys(), src_->keys());
  for (const std::string& key : src_->keys()) {
    if (key == "llama.block_count" || key == "general.name") continue;
    EXPECT_TRUE(same_value(*draft_->find_value(key), *src_->find_value(key))) << key;
  }
  // The tokenizer a speculative decoder relies on: spelled out, though covered above.
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"}) {
    EXPECT_EQ(draft_->get_string_array(key), src_->get_string_array(key)) << key;
  }
  EXPECT_EQ(draft_->get_int_array("tokenizer.ggml.token_type"),
            src_->get_int_array("tokenizer.ggml.token_type"));
  EXPECT_EQ(draft_->get_string("tokenizer.chat_template"),
            src_->get_string("tokenizer.chat_template"));
  const ModelConfig d = read_model_config(*draft_);
  const ModelConfig s = read_model_config(*src_);
  EXPECT_EQ(d.n_layers, kLayers);
  EXPECT_EQ(d.vocab_size, s.vocab_size);
  EXPECT_EQ(d.vocab_size, 49152u);
  EXPECT_EQ(d.hidden_size, s.hidden_size);
  EXPECT_TRUE(d.tied_embeddings);  // SmolLM2 has no output.weight
}

TEST_F(RealDraft, HoldsExactlyTheFirstBlocksWithTheSourcesBytes) {
  std::vector<std::string> want = {"token_embd.weight", "output_norm.weight"};
  for (uint32_t l = 0; l < kLayers; ++l) {
    for (const char* t : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm",
                          "ffn_gate", "ffn_up", "ffn_down"}) {
      want.push_back("blk." + std::to_string(l) + "." + t + ".weight");
    }
  }
  std::vector<std::string> got;
  for (const GgufTensor& t : draft_->tensors()) got.push_back(t.name);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(draft_->find_tensor("output.weight"), nullptr);
  EXPECT_EQ(draft_->find_tensor("blk.8.attn_q.weight"), nullptr);

  uint64_t bytes = 0;
  for (const GgufTensor& t : draft_->tensors()) {
    const GgufTensor* s = src_->find_tensor(t.name);
    ASSERT_NE(s, nullptr) << t.name;
    EXPECT_EQ(t.type, s->type) << t.name;
    EXPECT_EQ(t.dims, s->dims) << t.name;
    ASSERT_EQ(t.nbytes, s->nbytes) << t.name;
    EXPECT_EQ(std::memcmp(t.data, s->data, t.nbytes), 0) << t.name;
    EXPECT_EQ((t.offset - draft_->data_offset()) % draft_->alignment(), 0u) << t.name;
    const uint64_t a = draft_->alignment();
    bytes += (t.nbytes + a - 1) / a * a;
  }
  EXPECT_EQ(draft_->alignment(), src_->alignment());
  // The data section holds these tensors, each padded to the alignment, and nothing else.
  EXPECT_EQ(draft_->size(), draft_->data_offset() + bytes);
  EXPECT_LT(draft_->size(), src_->size() * 6 / 10);  // 8 of 30 blocks, plus the embeddings
}

}  // namespace
}  // namespace plinth
