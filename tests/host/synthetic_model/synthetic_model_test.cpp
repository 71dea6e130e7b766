// The synthetic SmolLM2 model (host/model/synthetic_model.hpp): the same bytes for the same seed,
// block tensors independent of the layer count, the config read_model_config reads back equal to
// the real file's hyper-parameters, a generated tokenizer the host's Tokenizer loads and
// round-trips, weights with the documented statistics, and the real model's tensors copied
// verbatim with --from (skipped without models/SmolLM2-135M-Instruct.Q4_1.gguf).
#include "model/synthetic_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "gguf_test_files.hpp"
#include "model/ggml_quantize.hpp"
#include "model/gguf.hpp"
#include "model/model_config.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";

std::unique_ptr<GgufFile> write_and_open(const GgufWriter& w, const test::TempDir& dir,
                                         const std::string& name) {
  const std::string path = (dir.path() / name).string();
  w.write_file(path);
  return GgufFile::open(path);
}

std::span<const std::byte> bytes_of(const GgufTensor& t) {
  return {t.data, static_cast<size_t>(t.nbytes)};
}

bool same_bytes(const GgufTensor& a, const GgufTensor& b) {
  return a.nbytes == b.nbytes && std::memcmp(a.data, b.data, a.nbytes) == 0;
}

TEST(SyntheticModel, SameSeedSameBytesOtherSeedOtherBytes) {
  SyntheticModelOptions o;
  o.layers = 1;
  o.dtype = GgmlType::kQ8_0;
  o.seed = 42;
  const std::vector<uint8_t> a = make_synthetic_model(o).build();
  const std::vector<uint8_t> b = make_synthetic_model(o).build();
  EXPECT_TRUE(a == b);
  o.seed = 43;
  const std::vector<uint8_t> c = make_synthetic_model(o).build();
  ASSERT_EQ(a.size(), c.size());  // the same layout ...
  EXPECT_FALSE(a == c);           // ... other values
}

TEST(SyntheticModel, ReadsBackWithSmolLm2ConfigAndBlocksIndependentOfLayerCount) {
  test::TempDir dir;
  SyntheticModelOptions o;
  o.seed = 7;
  o.dtype = GgmlType::kBF16;
  o.layers = 2;
  const auto two = write_and_open(make_synthetic_model(o), dir, "two.gguf");
  const ModelConfig c = read_model_config(*two);
  // The real file's values (llama.* keys of models/SmolLM2-135M-Instruct.Q4_1.gguf).
  EXPECT_EQ(c.architecture, "llama");
  EXPECT_EQ(c.n_layers, 2u);
  EXPECT_EQ(c.hidden_size, 576u);
  EXPECT_EQ(c.n_heads, 9u);
  EXPECT_EQ(c.n_kv_heads, 3u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.ffn_size, 1536u);
  EXPECT_EQ(c.vocab_size, 49152u);
  EXPECT_EQ(c.context_length, 8192u);
  EXPECT_FLOAT_EQ(c.rope_theta, 100000.0f);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(two->tensors().size(), 2u + 2 * 9);
  EXPECT_EQ(two->find_tensor("blk.0.attn_q.weight")->type, GgmlType::kBF16);
  EXPECT_EQ(two->find_tensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
  EXPECT_EQ(two->get_uint("general.file_type"), 32u);  // LLAMA_FTYPE_MOSTLY_BF16

  o.layers = 1;
  const auto one = write_and_open(make_synthetic_model(o), dir, "one.gguf");
  for (const GgufTensor& t : one->tensors()) {
    const GgufTensor* u = two->find_tensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_TRUE(same_bytes(t, *u)) << t.name;
  }
}

TEST(SyntheticModel, WeightStatistics) {
  SyntheticModelOptions o;
  o.seed = 1;
  o.dtype = GgmlType::kF32;
  o.layers = 1;
  test::TempDir dir;
  const auto f = write_and_open(make_synthetic_model(o), dir, "f32.gguf");
  auto stats = [&](const char* name) {
    const GgufTensor& t = *f->find_tensor(name);
    const auto v = ggml_dequantize(t.type, bytes_of(t), static_cast<size_t>(t.num_elements()));
    double s = 0, s2 = 0;
    for (float x : v) s += x;
    const double mean = s / static_cast<double>(v.size());
    for (float x : v) s2 += (x - mean) * (x - mean);
    return std::pair{mean, std::sqrt(s2 / static_cast<double>(v.size()))};
  };
  const auto [qm, qs] = stats("blk.0.ffn_up.weight");  // 884736 values
  EXPECT_NEAR(qm, 0.0, 1e-4);
  EXPECT_NEAR(qs, 0.02, 2e-4);
  const auto [nm, ns] = stats("blk.0.attn_norm.weight");  // 576 values
  EXPECT_NEAR(nm, 1.0, 0.02);
  EXPECT_NEAR(ns, 0.1, 0.01);
}

TEST(SyntheticModel, Q4TypesKeepTheEmbeddingInQ8_0) {
  SyntheticModelOptions o;
  o.layers = 1;
  o.dtype = GgmlType::kQ4_0;
  test::TempDir dir;
  const auto f = write_and_open(make_synthetic_model(o), dir, "q40.gguf");
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down.weight")->type, GgmlType::kQ4_0);
  EXPECT_EQ(f->get_uint("general.file_type"), 2u);
}

TEST(SyntheticModel, GeneratedTokenizerLoadsAndRoundTrips) {
  SyntheticModelOptions o;
  o.vocab_only = true;
  test::TempDir dir;
  const auto f = write_and_open(make_synthetic_model(o), dir, "vocab.gguf");
  EXPECT_TRUE(f->tensors().empty());
  const Tokenizer t = Tokenizer::from_gguf(*f);
  EXPECT_EQ(t.vocab_size(), 49152);
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_id(), 2);
  EXPECT_TRUE(t.is_special(2));
  for (int b = 0; b < 256; ++b) {  // byte tokens in the host's GPT-2 byte mapping
    EXPECT_EQ(t.token_to_bytes(3 + b), std::string(1, static_cast<char>(b))) << b;
    EXPECT_EQ(t.find_token(byte_unicode::byte_to_utf8(static_cast<uint8_t>(b))), 3 + b);
  }
  const std::string text = "Hello, world! 123 \xC3\xA9t\xC3\xA9 \xF0\x9F\x99\x82\n";
  const std::vector<int32_t> ids = t.encode(text, true);
  EXPECT_EQ(t.decode(ids), text);
  // "He": byte 'H' then 'e' merge into the two-byte token 3 + 256 + 'H' * 256 + 'e'.
  EXPECT_EQ(t.encode("He", false), std::vector<int32_t>{3 + 256 + 'H' * 256 + 'e'});
}

TEST(SyntheticModel, BadOptionsNameTheOption) {
  SyntheticModelOptions o;
  o.layers = 31;
  try {
    make_synthetic_model(o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--layers"), std::string::npos) << e.what();
  }
  o.layers = 2;
  o.real_layers = 1;
  EXPECT_THROW(make_synthetic_model(o), std::invalid_argument);  // no --from
}

class WithRealModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kReal))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kReal << ")";
    real_ = GgufFile::open(kReal.string());
  }
  std::unique_ptr<GgufFile> real_;
  test::TempDir dir_;
};

TEST_F(WithRealModel, AllRealLayersEqualTheRealModel) {
  SyntheticModelOptions o;
  o.from = real_.get();
  o.real_layers = 30;
  const auto f = write_and_open(make_synthetic_model(o), dir_, "real30.gguf");
  ASSERT_EQ(f->tensors().size(), real_->tensors().size());
  for (size_t i = 0; i < f->tensors().size(); ++i) {
    const GgufTensor& a = f->tensors()[i];
    const GgufTensor& b = real_->tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type) << a.name;
    EXPECT_EQ(a.dims, b.dims) << a.name;
    EXPECT_TRUE(same_bytes(a, b)) << a.name;
  }
  EXPECT_EQ(Tokenizer::from_gguf(*f).encode("The capital of France", false),
            Tokenizer::from_gguf(*real_).encode("The capital of France", false));
  EXPECT_EQ(f->get_string("tokenizer.chat_template"), real_->get_string("tokenizer.chat_template"));
}

TEST_F(WithRealModel, FirstRealLayersThenRandomOnes) {
  SyntheticModelOptions o;
  o.from = real_.get();
  o.real_layers = 1;
  o.layers = 3;
  o.dtype = GgmlType::kQ8_0;
  const auto f = write_and_open(make_synthetic_model(o), dir_, "real1.gguf");
  EXPECT_EQ(read_model_config(*f).n_layers, 3u);
  for (const char* name : {"token_embd.weight", "output_norm.weight", "blk.0.attn_q.weight",
                           "blk.0.ffn_norm.weight"}) {
    EXPECT_TRUE(same_bytes(*f->find_tensor(name), *real_->find_tensor(name))) << name;
  }
  EXPECT_EQ(f->find_tensor("blk.1.attn_q.weight")->type, GgmlType::kQ8_0);  // random
  EXPECT_EQ(f->find_tensor("blk.1.attn_norm.weight")->type, GgmlType::kF32);
  EXPECT_EQ(f->find_tensor("blk.3.attn_q.weight"), nullptr);
}

TEST_F(WithRealModel, VocabFromCopiesTheTokenizer) {
  SyntheticModelOptions o;
  o.vocab_from = real_.get();
  o.vocab_only = true;
  const auto f = write_and_open(make_synthetic_model(o), dir_, "vocab.gguf");
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens"),
            real_->get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.merges"),
            real_->get_string_array("tokenizer.ggml.merges"));
  EXPECT_LT(f->size(), 4u << 20);  // metadata only
  // A model made with that file as --vocab-from tokenizes like the real one.
  SyntheticModelOptions m;
  m.vocab_from = f.get();
  m.layers = 1;
  const auto model = write_and_open(make_synthetic_model(m), dir_, "model.gguf");
  EXPECT_EQ(Tokenizer::from_gguf(*model).encode("Hello world", false),
            Tokenizer::from_gguf(*real_).encode("Hello world", false));
}

}  // namespace
}  // namespace plinth
