// Tokenization of llama.cpp's vocabulary test files (models/ggml-vocab-<name>.gguf with .inp/.out,
// the ids Hugging Face's tokenizers give for each input, which llama.cpp's test-tokenizer-0
// checks against), fetched by tools/fetch_llama_cpp_assets: exact ids for every vocabulary whose
// tokenizer plinth implements, a clear refusal for the others, and round trips (llama.cpp's
// test-tokenizer-1: every token's text re-encodes to text that decodes back to it).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../llama_cpp_assets.hpp"
#include "model/gguf.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/utf8.hpp"

namespace plinth {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// test-tokenizer-0.cpp read_tests: inputs separated by "\n__ggml_vocab_test__\n", one line of
// space-separated ids per input.
std::vector<std::pair<std::string, std::vector<int32_t>>> read_cases(const std::string& base) {
  const std::string raw = read_file(base + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::ifstream out(base + ".out");
  std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
  std::string line;
  for (size_t i = 0; std::getline(out, line); ++i) {
    std::istringstream ids(line);
    std::vector<int32_t> v;
    for (int32_t id = 0; ids >> id;) v.push_back(id);
    if (i < inputs.size()) cases.emplace_back(inputs[i], std::move(v));
  }
  EXPECT_EQ(cases.size(), inputs.size()) << base;
  return cases;
}

bool valid_utf8(std::string_view s) {
  try {
    utf8::validate(s);
    return true;
  } catch (const InvalidUtf8Error&) {
    return false;
  }
}

std::string path_of(const std::string& name) {
  return (test::llama_cpp_assets_dir() / "models" / ("ggml-vocab-" + name + ".gguf")).string();
}

class VocabFile : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!test::llama_cpp_assets_present()) GTEST_SKIP() << test::kLlamaCppAssetsMissing;
  }
};

TEST_P(VocabFile, ExactIdsAndRoundTrips) {
  const std::string path = path_of(GetParam());
  const auto file = GgufFile::open(path);
  const Tokenizer tok = Tokenizer::from_gguf(*file);
  // SentencePiece-style models prepend a space (add_space_prefix) that decode keeps.
  const std::string prefix = tok.model() == "llama" ? " " : "";
  const auto cases = read_cases(path);
  ASSERT_FALSE(cases.empty());
  for (const auto& [text, expected] : cases) {
    const auto ids = tok.encode(text, false);
    EXPECT_EQ(ids, expected) << GetParam() << ": \"" << text << "\"";
    EXPECT_EQ(tok.decode(ids), text.empty() ? "" : prefix + text) << GetParam();
  }
  // Every token: the text it decodes to (when that is whole UTF-8) encodes to ids that decode
  // back to the same text.
  size_t checked = 0;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    const std::string piece = tok.decode(std::vector<int32_t>{id});
    if (piece.empty() || !valid_utf8(piece)) continue;
    EXPECT_EQ(tok.decode(tok.encode(piece, false)), prefix + piece)
        << GetParam() << ": token " << id;
    ++checked;
  }
  EXPECT_GT(checked, static_cast<size_t>(tok.vocab_size()) / 2) << GetParam();
}

// Every vocabulary with .inp/.out whose tokenizer plinth implements ("gpt2" BPE with a regex
// pre-tokenizer, "llama" SentencePiece-style).
INSTANTIATE_TEST_SUITE_P(LlamaCpp, VocabFile,
                         testing::Values("command-r", "deepseek-coder", "deepseek-llm", "falcon",
                                         "gpt-2", "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2",
                                         "qwen35", "refact", "starcoder"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

// The others are refused at load, naming the key and the value.
TEST(VocabFileRefused, UnsupportedModelsAreNamed) {
  if (!test::llama_cpp_assets_present()) GTEST_SKIP() << test::kLlamaCppAssetsMissing;
  for (const auto& [name, what] : {std::pair<std::string, std::string>{"bert-bge", "\"bert\""},
                                   {"gemma-4", "\"gemma4\""},
                                   {"nomic-bert-moe", "\"t5\""}}) {
    const auto file = GgufFile::open(path_of(name));
    try {
      (void)Tokenizer::from_gguf(*file);
      ADD_FAILURE() << name << " loaded";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("tokenizer.ggml.model"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace plinth
