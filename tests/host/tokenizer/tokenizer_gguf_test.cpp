// Tokenizer::from_gguf on small GGUF files written here (GGUF v3 layout: magic, version, tensor
// count, kv count, then key / value-type / value triples; ggml/docs/gguf.md).

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/gguf.hpp"
#include "tiny_vocab.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

enum : uint32_t { kU32 = 4, kI32 = 5, kBool = 7, kString = 8, kArray = 9 };

class GgufBuilder {
 public:
  void str(const std::string& key, const std::string& v) {
    head(key, kString);
    string(v);
  }
  void u32(const std::string& key, uint32_t v) {
    head(key, kU32);
    raw(v);
  }
  void boolean(const std::string& key, bool v) {
    head(key, kBool);
    raw(static_cast<uint8_t>(v));
  }
  void strings(const std::string& key, const std::vector<std::string>& v) {
    head(key, kArray);
    raw(kString);
    raw(static_cast<uint64_t>(v.size()));
    for (const auto& s : v) string(s);
  }
  void ints(const std::string& key, const std::vector<int32_t>& v) {
    head(key, kArray);
    raw(kI32);
    raw(static_cast<uint64_t>(v.size()));
    for (const int32_t x : v) raw(x);
  }
  std::string write(const std::string& name) const {
    std::vector<char> file;
    const auto put = [&](const auto& v) {
      const char* p = reinterpret_cast<const char*>(&v);
      file.insert(file.end(), p, p + sizeof v);
    };
    file.insert(file.end(), {'G', 'G', 'U', 'F'});
    put(uint32_t{3});
    put(uint64_t{0});  // tensors
    put(count_);
    file.insert(file.end(), body_.begin(), body_.end());
    while (file.size() % 32 != 0) file.push_back(0);
    const auto path = (std::filesystem::temp_directory_path() /
                       ("plinth_tok_" + std::to_string(::getpid()) + "_" + name + ".gguf"))
                          .string();
    std::ofstream(path, std::ios::binary)
        .write(file.data(), static_cast<std::streamsize>(file.size()));
    return path;
  }

 private:
  template <class T>
  void raw(T v) {
    const char* p = reinterpret_cast<const char*>(&v);
    body_.insert(body_.end(), p, p + sizeof v);
  }
  void string(const std::string& s) {
    raw(static_cast<uint64_t>(s.size()));
    body_.insert(body_.end(), s.begin(), s.end());
  }
  void head(const std::string& key, uint32_t type) {
    string(key);
    raw(type);
    ++count_;
  }
  std::vector<char> body_;
  uint64_t count_ = 0;
};

GgufBuilder tiny_gguf(const std::string& model = "gpt2", const std::string& pre = "smollm",
                      bool with_merges = true) {
  const auto v = test::tiny_vocab();
  GgufBuilder b;
  b.str("tokenizer.ggml.model", model);
  b.str("tokenizer.ggml.pre", pre);
  b.strings("tokenizer.ggml.tokens", v.tokens);
  b.ints("tokenizer.ggml.token_type", v.types);
  if (with_merges) b.strings("tokenizer.ggml.merges", v.merges);
  b.u32("tokenizer.ggml.bos_token_id", test::kImStart);
  b.u32("tokenizer.ggml.eos_token_id", test::kImEnd);
  b.boolean("tokenizer.ggml.add_bos_token", true);
  return b;
}

std::string load_error(const GgufBuilder& b, const std::string& name) {
  const std::string path = b.write(name);
  std::string msg;
  try {
    const auto file = GgufFile::open(path);
    Tokenizer::from_gguf(*file);
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  std::filesystem::remove(path);
  return msg;
}

TEST(TokenizerFromGguf, ReadsTheTokenizerKeys) {
  const std::string path = tiny_gguf().write("ok");
  const auto file = GgufFile::open(path);
  const Tokenizer t = Tokenizer::from_gguf(*file);
  const Tokenizer plain = test::tiny_tokenizer(/*add_bos=*/true);
  EXPECT_EQ(t.vocab_size(), plain.vocab_size());
  EXPECT_EQ(t.bos_id(), test::kImStart);
  EXPECT_EQ(t.eos_id(), test::kImEnd);
  EXPECT_TRUE(t.add_bos());
  EXPECT_EQ(t.pre_tokenizer_name(), "smollm");
  EXPECT_TRUE(t.is_special(test::kImEnd));
  for (const std::string s : {"hello world", "abc aaa", "x1 \xE6\x97\xA5"}) {
    EXPECT_EQ(t.encode(s, true), plain.encode(s, true)) << s;
  }
  std::filesystem::remove(path);
}

TEST(TokenizerFromGguf, ErrorsNameTheKey) {
  EXPECT_NE(load_error(tiny_gguf("bert"), "model").find("tokenizer.ggml.model"), std::string::npos);
  // An unknown pre-tokenizer is named, with the known ones.
  const std::string pre_error = load_error(tiny_gguf("gpt2", "qwen9"), "pre");
  EXPECT_NE(pre_error.find("tokenizer.ggml.pre"), std::string::npos);
  EXPECT_NE(pre_error.find("\"qwen9\""), std::string::npos) << pre_error;
  EXPECT_NE(pre_error.find("llama-bpe"), std::string::npos) << pre_error;
  // One llama.cpp knows but plinth does not implement says why.
  EXPECT_NE(load_error(tiny_gguf("gpt2", "kimi-k2"), "pre").find("not supported by plinth"),
            std::string::npos);
  EXPECT_NE(load_error(tiny_gguf("gpt2", "smollm", false), "merges").find("tokenizer.ggml.merges"),
            std::string::npos);
  GgufBuilder empty;
  empty.str("general.name", "no tokenizer");
  EXPECT_NE(load_error(empty, "empty").find("tokenizer.ggml.model"), std::string::npos);
}

}  // namespace
}  // namespace plinth
