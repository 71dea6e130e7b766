// select_first_layers (host/model/layer_selection.hpp) on small synthetic models: the tensors and
// metadata a draft keeps, changes and drops, and the refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "gguf_test_files.hpp"
#include "model/ggml_quantize.hpp"
#include "model/gguf.hpp"
#include "model/layer_selection.hpp"
#include "model/model_config.hpp"

namespace plinth {
namespace {

using VT = GgufValueType;

// A tiny llama of `layers` blocks (hidden 32, 2 heads, 1 KV head, ffn 64, vocab 4) with a
// rope_freqs tensor outside the blocks, a per-layer array and a general.alignment of 64.
GgufWriter tiny_llama(uint32_t layers, GgufValue block_count) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "tiny");
  w.add_u32("general.alignment", 64);
  w.add("llama.block_count", std::move(block_count));
  w.add_u32("llama.embedding_length", 32);
  w.add_u32("llama.attention.head_count", 2);
  w.add_u32("llama.attention.head_count_kv", 1);
  w.add_u32("llama.feed_forward_length", 64);
  w.add_u32("llama.context_length", 64);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  std::vector<GgufValue> per_layer;
  for (uint32_t l = 0; l < layers; ++l) per_layer.push_back(gguf_uint(VT::kUint32, 100 + l));
  w.add("llama.test_per_layer_values", gguf_array(VT::kUint32, per_layer));
  w.add("llama.not_per_layer", gguf_string_array({"a", "b"}));  // another length: kept whole
  w.add("tokenizer.ggml.tokens", gguf_string_array({"a", "b", "c", "d"}));
  test::add_pattern_tensor(w, "token_embd.weight", {32, 4}, GgmlType::kF32);
  // Llama 3's RoPE frequency factors: values read_model_config accepts (finite, > 0).
  w.add_tensor("rope_freqs.weight", GgmlType::kF32, {8},
               ggml_quantize(GgmlType::kF32, std::vector<float>{1, 1, 1, 2, 4, 8, 8, 8}));
  for (uint32_t l = 0; l < layers; ++l) {  // one tensor of each type plinth reads
    const std::string p = "blk." + std::to_string(l) + ".";
    test::add_pattern_tensor(w, p + "attn_norm.weight", {32}, GgmlType::kF32);
    test::add_pattern_tensor(w, p + "attn_q.weight", {32, 32}, GgmlType::kQ8_0);
    test::add_pattern_tensor(w, p + "attn_k.weight", {32, 16}, GgmlType::kQ4_1);
    test::add_pattern_tensor(w, p + "attn_v.weight", {32, 16}, GgmlType::kQ4_0);
    test::add_pattern_tensor(w, p + "attn_output.weight", {32, 32}, GgmlType::kF16);
    test::add_pattern_tensor(w, p + "ffn_norm.weight", {32}, GgmlType::kF32);
    test::add_pattern_tensor(w, p + "ffn_gate.weight", {32, 64}, GgmlType::kBF16);
    test::add_pattern_tensor(w, p + "ffn_up.weight", {32, 64}, GgmlType::kF16);
    test::add_pattern_tensor(w, p + "ffn_down.weight", {64, 32}, GgmlType::kQ8_0);
  }
  test::add_pattern_tensor(w, "output_norm.weight", {32}, GgmlType::kF32);
  test::add_pattern_tensor(w, "output.weight", {32, 4}, GgmlType::kF32);
  return w;
}

class DraftModel : public ::testing::Test {
 protected:
  std::unique_ptr<GgufFile> source(uint32_t layers,
                                   GgufValue block_count = gguf_uint(VT::kUint32, 4)) {
    return GgufFile::open(
        dir_.write("src.gguf", tiny_llama(layers, std::move(block_count)).build()));
  }
  std::unique_ptr<GgufFile> draft(const GgufFile& src, uint32_t layers) {
    const std::string path = (dir_.path() / "draft.gguf").string();
    select_first_layers(src, layers).write_file(path);
    return GgufFile::open(path);
  }
  test::TempDir dir_;
};

TEST(GgufBlockIndex, ParsesBlockTensorNamesOnly) {
  EXPECT_EQ(gguf_block_index("blk.0.attn_q.weight"), 0);
  EXPECT_EQ(gguf_block_index("blk.29.ffn_down.weight"), 29);
  EXPECT_EQ(gguf_block_index("blk.123.x"), 123);
  EXPECT_EQ(gguf_block_index("token_embd.weight"), -1);
  EXPECT_EQ(gguf_block_index("output.weight"), -1);
  EXPECT_EQ(gguf_block_index("blk..x"), -1);
  EXPECT_EQ(gguf_block_index("blk.3"), -1);
  EXPECT_EQ(gguf_block_index("blk.3x.y"), -1);
  EXPECT_EQ(gguf_block_index("blk"), -1);
  EXPECT_EQ(gguf_block_index("xblk.1.y"), -1);
}

TEST_F(DraftModel, KeepsTheFirstLayersByteForByte) {
  const auto src = source(4);
  const auto d = draft(*src, 2);
  // Tensors: those outside the blocks and of blocks 0, 1, in the source's order.
  std::vector<std::string> want;
  for (const GgufTensor& t : src->tensors()) {
    if (gguf_block_index(t.name) < 2) want.push_back(t.name);
  }
  ASSERT_EQ(want.size(), 2u + 2 * 9 + 2);
  ASSERT_EQ(d->tensors().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const GgufTensor& t = d->tensors()[i];
    const GgufTensor* s = src->find_tensor(want[i]);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(t.name, want[i]);
    EXPECT_EQ(t.type, s->type) << t.name;
    EXPECT_EQ(t.dims, s->dims) << t.name;
    ASSERT_EQ(t.nbytes, s->nbytes) << t.name;
    EXPECT_EQ(std::memcmp(t.data, s->data, t.nbytes), 0) << t.name;
    EXPECT_EQ((t.offset - d->data_offset()) % 64, 0u) << t.name;
  }
  EXPECT_EQ(d->find_tensor("blk.2.attn_q.weight"), nullptr);
  EXPECT_EQ(d->find_tensor("blk.3.ffn_down.weight"), nullptr);
  EXPECT_EQ(d->alignment(), 64u);

  // Metadata: the same keys in the same order; block_count, general.name and per-layer arrays
  // changed, everything else equal.
  EXPECT_EQ(d->keys(), src->keys());
  EXPECT_EQ(d->get_uint("llama.block_count"), 2u);
  EXPECT_EQ(d->type_of("llama.block_count"), VT::kUint32);
  EXPECT_EQ(d->get_string("general.name"), "tiny (first 2 layers)");
  EXPECT_EQ(d->get_int_array("llama.test_per_layer_values"), (std::vector<int64_t>{100, 101}));
  EXPECT_EQ(d->get_string_array("llama.not_per_layer"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d->get_string_array("tokenizer.ggml.tokens"),
            src->get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(d->get_float("llama.attention.layer_norm_rms_epsilon"),
            src->get_float("llama.attention.layer_norm_rms_epsilon"));

  const ModelConfig c = read_model_config(*d);
  EXPECT_EQ(c.n_layers, 2u);
  EXPECT_FALSE(c.tied_embeddings);
}

TEST_F(DraftModel, KeepsASignedBlockCountSigned) {
  const auto src = source(4, gguf_int(VT::kInt32, 4));
  const auto d = draft(*src, 3);
  EXPECT_EQ(d->type_of("llama.block_count"), VT::kInt32);
  EXPECT_EQ(d->get_int("llama.block_count"), 3);
  EXPECT_EQ(d->find_tensor("blk.3.attn_q.weight"), nullptr);
  EXPECT_NE(d->find_tensor("blk.2.attn_q.weight"), nullptr);
}

TEST_F(DraftModel, RefusesLayersOutsideOneToBlockCountMinusOne) {
  const auto src = source(4);
  for (uint32_t bad : {0u, 4u, 5u}) {
    try {
      select_first_layers(*src, bad);
      ADD_FAILURE() << "accepted " << bad << " layers of 4";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("outside 1..3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("has 4 blocks"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(select_first_layers(*src, 1));
  EXPECT_NO_THROW(select_first_layers(*src, 3));
}

TEST_F(DraftModel, NeedsArchitectureAndBlockCount) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  const auto f = GgufFile::open(dir_.write("no_blocks.gguf", w.build()));
  try {
    select_first_layers(*f, 1);
    ADD_FAILURE();
  } catch (const GgufError& e) {
    EXPECT_EQ(e.field(), "llama.block_count");
  }
  GgufWriter none;
  none.add_u32("llama.block_count", 4);
  const auto g = GgufFile::open(dir_.write("no_arch.gguf", none.build()));
  EXPECT_THROW(select_first_layers(*g, 1), GgufError);
}

}  // namespace
}  // namespace plinth
