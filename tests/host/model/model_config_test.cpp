// read_model_config on small synthetic llama files: values, defaults, refusals naming the problem.
#include <gtest/gtest.h>

#include <cmath>

#include "gguf_test_files.hpp"
#include "model/ggml_quantize.hpp"
#include "model/gguf.hpp"
#include "model/synthetic_arch.hpp"

namespace plinth {
namespace {

struct TinyLlama {
  uint32_t layers = 2, hidden = 8, heads = 2, kv_heads = 1, ffn = 16, vocab = 32;
  bool with_output = false;
  bool with_kv_heads_key = true;
  std::string skip_tensor;  // leave this tensor out
  std::string arch = "llama";

  GgufWriter writer() const {
    GgufWriter w;
    const uint64_t hd = hidden / heads;
    w.add_string("general.architecture", arch);
    w.add_string("general.name", "tiny");
    w.add_u32(arch + ".block_count", layers);
    w.add_u32(arch + ".embedding_length", hidden);
    w.add_u32(arch + ".attention.head_count", heads);
    if (with_kv_heads_key) w.add_u32(arch + ".attention.head_count_kv", kv_heads);
    w.add_u32(arch + ".feed_forward_length", ffn);
    w.add_u32(arch + ".context_length", 128);
    w.add_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    std::vector<std::string> tokens;
    // (append, not "t" + to_string: GCC 12's -Wrestrict false positive at -O3)
    for (uint32_t i = 0; i < vocab; ++i)
      tokens.push_back(std::string("t").append(std::to_string(i)));
    w.add("tokenizer.ggml.tokens", gguf_string_array(tokens));
    auto add = [&](const std::string& name, std::vector<uint64_t> dims) {
      if (name != skip_tensor) test::add_pattern_tensor(w, name, std::move(dims), GgmlType::kF32);
    };
    const uint64_t kv = (with_kv_heads_key ? kv_heads : heads) * hd;
    add("token_embd.weight", {hidden, vocab});
    for (uint32_t l = 0; l < layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      add(p + "attn_norm.weight", {hidden});
      add(p + "attn_q.weight", {hidden, heads * hd});
      add(p + "attn_k.weight", {hidden, kv});
      add(p + "attn_v.weight", {hidden, kv});
      add(p + "attn_output.weight", {heads * hd, hidden});
      add(p + "ffn_norm.weight", {hidden});
      add(p + "ffn_gate.weight", {hidden, ffn});
      add(p + "ffn_up.weight", {hidden, ffn});
      add(p + "ffn_down.weight", {ffn, hidden});
    }
    add("output_norm.weight", {hidden});
    if (with_output) add("output.weight", {hidden, vocab});
    return w;
  }
};

class ModelConfigTest : public ::testing::Test {
 protected:
  std::unique_ptr<GgufFile> open(const GgufWriter& w) {
    return GgufFile::open(dir_.write("m.gguf", w.build()));
  }
  // read_model_config must throw a GgufError whose field is `field` and message holds `what`.
  void expect_refused(GgufWriter w, const std::string& field, const std::string& what) {
    const auto f = open(std::move(w));
    try {
      read_model_config(*f);
      ADD_FAILURE() << "accepted; expected an error about " << field;
    } catch (const GgufError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  test::TempDir dir_;
};

TEST_F(ModelConfigTest, ReadsValuesAndDefaults) {
  const auto f = open(TinyLlama{}.writer());
  const ModelConfig c = read_model_config(*f);
  EXPECT_EQ(c.architecture, "llama");
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(c.n_layers, 2u);
  EXPECT_EQ(c.hidden_size, 8u);
  EXPECT_EQ(c.n_heads, 2u);
  EXPECT_EQ(c.n_kv_heads, 1u);
  EXPECT_EQ(c.head_dim, 4u);  // default hidden / heads
  EXPECT_EQ(c.ffn_size, 16u);
  EXPECT_EQ(c.vocab_size, 32u);  // from tokenizer.ggml.tokens
  EXPECT_EQ(c.context_length, 128u);
  EXPECT_EQ(c.rope_theta, 10000.0f);  // default
  EXPECT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_FALSE(c.rope_neox);
  EXPECT_TRUE(c.tied_embeddings);
}

TEST_F(ModelConfigTest, ExplicitKeysAndOutputHead) {
  TinyLlama m;
  m.with_output = true;
  m.with_kv_heads_key = false;  // defaults to head_count
  GgufWriter w = m.writer();
  w.add_f32("llama.rope.freq_base", 100000.0f);
  w.add_u32("llama.rope.dimension_count", 4);
  w.add_u32("llama.vocab_size", 32);
  const ModelConfig c = read_model_config(*open(std::move(w)));
  EXPECT_EQ(c.n_kv_heads, 2u);
  EXPECT_EQ(c.rope_theta, 100000.0f);
  EXPECT_EQ(c.head_dim, 4u);
  EXPECT_FALSE(c.tied_embeddings);
}

TEST_F(ModelConfigTest, RefusesOtherArchitectures) {
  TinyLlama m;
  m.arch = "mamba";
  expect_refused(m.writer(), "general.architecture",
                 "architecture 'mamba' is not supported; supported: gemma3, granite, llama, olmo2, "
                 "phi3, qwen2, qwen3, smollm3");
}

TEST_F(ModelConfigTest, LlamaIsThePlainBlock) {
  const auto f = open(TinyLlama{}.writer());
  const ModelConfig c = read_model_config(*f);
  EXPECT_EQ(c.features, 0u);
  EXPECT_EQ(c.rope_dims, 4u);
  ASSERT_EQ(c.layers.size(), 2u);
  EXPECT_EQ(c.layers[1].rope_base, 10000.0);
  EXPECT_EQ(c.layers[1].sliding_window, 0);
}

TEST_F(ModelConfigTest, ReadsRopeFreqFactors) {
  GgufWriter w = TinyLlama{}.writer();
  const std::vector<float> f = {1.0f, 8.0f};
  w.add_tensor("rope_freqs.weight", GgmlType::kF32, {2}, ggml_quantize(GgmlType::kF32, f));
  const ModelConfig c = read_model_config(*open(std::move(w)));
  EXPECT_EQ(c.features, sdk::kRopeFreqFactors);
  EXPECT_EQ(c.rope_freq_factors, f);
}

TEST_F(ModelConfigTest, RefusesMathNoAdapterImplements) {
  GgufWriter w = TinyLlama{}.writer();
  w.add_f32("llama.attention.clamp_kqv", 8.0f);
  expect_refused(std::move(w), "llama.attention.clamp_kqv", "does not implement");
  GgufWriter w2 = TinyLlama{}.writer();
  w2.add_f32("llama.attention.max_alibi_bias", 8.0f);
  expect_refused(std::move(w2), "llama.attention.max_alibi_bias", "does not implement");
  GgufWriter w3 = TinyLlama{}.writer();
  w3.add_string("llama.rope.scaling.type", "yarn");
  expect_refused(std::move(w3), "llama.rope.scaling.type",
                 "RoPE scaling \"yarn\" is not implemented");
}

TEST_F(ModelConfigTest, RefusesATensorTheForwardPassWouldIgnore) {
  GgufWriter w = TinyLlama{}.writer();
  test::add_pattern_tensor(w, "blk.0.attn_output.weight.bias", {8}, GgmlType::kF32);
  test::add_pattern_tensor(w, "blk.1.attn_output.bias", {8}, GgmlType::kF32);
  expect_refused(std::move(w), "blk.0.attn_output.weight.bias",
                 "not read by the llama forward pass");
}

TEST_F(ModelConfigTest, LinearRopeScalingIsEveryLayersScale) {
  GgufWriter w = TinyLlama{}.writer();
  w.add_string("llama.rope.scaling.type", "linear");
  w.add_f32("llama.rope.scaling.factor", 4.0f);
  const ModelConfig c = read_model_config(*open(std::move(w)));
  EXPECT_EQ(c.features, sdk::kLayerRope);
  EXPECT_EQ(c.layers[0].rope_scale, 0.25);
}

// The synthetic model of every architecture: the adapter's description.
TEST_F(ModelConfigTest, AdaptersDescribeEachArchitecture) {
  struct Want {
    const char* arch;
    uint64_t features;
    bool neox;
  };
  const Want wants[] = {
      {"llama", 0, false},
      {"llama3", sdk::kRopeFreqFactors, false},
      {"qwen2", sdk::kQkvBias, true},
      {"qwen3", sdk::kQkNorm, true},
      {"gemma3",
       sdk::kEmbedScale | sdk::kQkNorm | sdk::kPostNorms | sdk::kGeluTanh | sdk::kSlidingWindow |
           sdk::kLayerRope,
       true},
      {"phi3", sdk::kFusedQkv | sdk::kFusedGateUp | sdk::kPartialRotary, true},
      {"granite", sdk::kEmbedScale | sdk::kAttnScale | sdk::kResidualScale | sdk::kLogitScale,
       false},
      {"olmo2", sdk::kNoPreNorms | sdk::kQkNormFull | sdk::kPostNorms, true},
      {"smollm3", sdk::kLayerRope, false}};
  for (const Want& want : wants) {
    ArchModelOptions o;
    o.arch = want.arch;
    const ModelConfig c = read_model_config(*open(make_arch_model(o)));
    EXPECT_EQ(c.features, want.features)
        << want.arch << ": " << sdk::arch_feature_names(c.features);
    EXPECT_EQ(c.rope_neox, want.neox) << want.arch;
    if (std::string(want.arch) == "gemma3") {
      ASSERT_EQ(c.layers.size(), 6u);
      for (size_t l = 0; l < 6; ++l) {
        const bool local = l != 5;  // 5 local : 1 global
        EXPECT_EQ(c.layers[l].sliding_window, local ? 8 : 0) << l;
        EXPECT_EQ(c.layers[l].rope_base, local ? 10000.0 : 1000000.0) << l;
        EXPECT_EQ(c.layers[l].rope_scale, local ? 1.0 : 0.125) << l;
      }
      EXPECT_FLOAT_EQ(c.embed_scale, std::sqrt(128.0f));
    }
    if (std::string(want.arch) == "phi3") {
      EXPECT_EQ(c.rope_dims, 16u);
    }
    if (std::string(want.arch) == "qwen3") {
      EXPECT_EQ(c.head_dim, 32u);
    }
    if (std::string(want.arch) == "granite") {  // GraniteModel's keys, as llama.cpp reads them
      EXPECT_EQ(c.embed_scale, 12.0f);
      EXPECT_EQ(c.attn_scale, 0.015625f);
      EXPECT_EQ(c.residual_scale, 0.22f);
      EXPECT_EQ(c.logit_scale, 1.0f / 8.0f);
    }
    if (std::string(want.arch) == "smollm3") {  // NoPE every 4th layer
      ASSERT_EQ(c.layers.size(), 4u);
      for (size_t l = 0; l < 4; ++l) EXPECT_EQ(c.layers[l].rope, l != 3) << l;
    }
  }
}

TEST_F(ModelConfigTest, Phi3RefusesLongRope) {
  ArchModelOptions o;
  o.arch = "phi3";
  GgufWriter w = make_arch_model(o);
  test::add_pattern_tensor(w, "rope_factors_long.weight", {8}, GgmlType::kF32);
  expect_refused(std::move(w), "rope_factors_long.weight", "LongRoPE");
}

// Olmo 3's sliding-window layers (olmo2.attention.sliding_window) are not implemented: refused.
TEST_F(ModelConfigTest, Olmo2RefusesSlidingWindow) {
  ArchModelOptions o;
  o.arch = "olmo2";
  GgufWriter w = make_arch_model(o);
  w.add_u32("olmo2.attention.sliding_window", 4096);
  expect_refused(std::move(w), "olmo2.attention.sliding_window", "does not implement");
}

// Granite with rope.scaling.finetuned false: no RoPE in any layer (llama.cpp's rope_pattern).
TEST_F(ModelConfigTest, GraniteRopeFinetunedFalseTurnsRopeOff) {
  ArchModelOptions o;
  o.arch = "granite";
  GgufWriter w = make_arch_model(o);
  w.add_bool("granite.rope.scaling.finetuned", false);
  const ModelConfig c = read_model_config(*open(std::move(w)));
  for (const sdk::LayerSpec& l : c.layers) EXPECT_FALSE(l.rope);
  EXPECT_NE(c.features & sdk::kLayerRope, 0u);
}

TEST_F(ModelConfigTest, NamesMissingKey) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 1);
  expect_refused(std::move(w), "llama.embedding_length", "missing");
}

TEST_F(ModelConfigTest, NamesMissingTensor) {
  TinyLlama m;
  m.skip_tensor = "blk.1.ffn_up.weight";
  expect_refused(m.writer(), "blk.1.ffn_up.weight", "missing");
  m.skip_tensor = "output_norm.weight";
  expect_refused(m.writer(), "output_norm.weight", "missing");
}

TEST_F(ModelConfigTest, NamesWrongShape) {
  TinyLlama m;
  GgufWriter w = m.writer();
  w.add_u32("llama.vocab_size", 31);  // token_embd has 32 rows
  expect_refused(std::move(w), "token_embd.weight", "dims {8, 32}, expected {8, 31}");
  m.kv_heads = 2;  // tensors for 2 KV heads, metadata says 2: fine; now lie in metadata
  GgufWriter w2 = m.writer();
  w2.add_u32("llama.attention.key_length", 8);
  expect_refused(std::move(w2), "blk.0.attn_q.weight", "expected {8, 16}");
}

TEST_F(ModelConfigTest, RefusesInconsistentHeads) {
  TinyLlama m;
  m.kv_heads = 3;  // 3 does not divide 2
  expect_refused(m.writer(), "llama.attention.head_count_kv", "do not divide");
}

TEST_F(ModelConfigTest, RefusesPartialRope) {
  GgufWriter w = TinyLlama{}.writer();
  w.add_u32("llama.attention.key_length", 4);
  w.add_u32("llama.rope.dimension_count", 2);
  expect_refused(std::move(w), "llama.rope.dimension_count", "partial RoPE");
}

TEST_F(ModelConfigTest, RefusesZeroLayers) {
  TinyLlama m;
  m.layers = 0;
  expect_refused(m.writer(), "llama.block_count", "outside 1..");
}

}  // namespace
}  // namespace plinth
