// Tokenizer::from_gguf: reads the llama.cpp GGUF tokenizer keys (gguf-py/gguf/constants.py
// Keys.Tokenizer) and hands them to the plain-data constructor.

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "model/gguf.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

constexpr const char* kModel = "tokenizer.ggml.model";
constexpr const char* kTokens = "tokenizer.ggml.tokens";
constexpr const char* kTypes = "tokenizer.ggml.token_type";
constexpr const char* kMerges = "tokenizer.ggml.merges";
constexpr const char* kPre = "tokenizer.ggml.pre";
constexpr const char* kBos = "tokenizer.ggml.bos_token_id";
constexpr const char* kEos = "tokenizer.ggml.eos_token_id";
constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";

[[noreturn]] void fail(const GgufFile& file, const std::string& key, const std::string& what) {
  throw std::runtime_error(file.path() + ": " + key + ": " + what);
}

int32_t optional_id(const GgufFile& file, const char* key) {
  const auto v = file.find_uint(key);
  if (!v) return -1;
  if (*v > static_cast<uint64_t>(INT32_MAX))
    fail(file, key, "id " + std::to_string(*v) + " too large");
  return static_cast<int32_t>(*v);
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& file) {
  const auto model = file.find_string(kModel);
  if (!model) fail(file, kModel, "missing (the file has no tokenizer)");
  if (*model != "gpt2") {
    fail(file, kModel,
         "unsupported tokenizer model \"" + *model + "\" (supported: \"gpt2\", byte-level BPE)");
  }
  if (!file.has(kTokens)) fail(file, kTokens, "missing");
  if (!file.has(kMerges)) fail(file, kMerges, "missing (byte-level BPE needs its merges)");
  std::vector<std::string> tokens = file.get_string_array(kTokens);
  std::vector<std::string> merges = file.get_string_array(kMerges);

  std::vector<int32_t> types;
  if (file.has(kTypes)) {
    const auto raw = file.get_int_array(kTypes);
    if (raw.size() != tokens.size()) {
      fail(
          file, kTypes,
          std::to_string(raw.size()) + " entries for " + std::to_string(tokens.size()) + " tokens");
    }
    types.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] < 0 || raw[i] > static_cast<int64_t>(TokenType::kByte)) {
        fail(file, kTypes,
             "entry " + std::to_string(i) + " is " + std::to_string(raw[i]) + " (allowed 0..6)");
      }
      types.push_back(static_cast<int32_t>(raw[i]));
    }
  }
  // llama.cpp uses its "default" pre-tokenizer when the key is absent.
  const std::string pre = file.find_string(kPre).value_or("default");
  const int32_t bos = optional_id(file, kBos), eos = optional_id(file, kEos);
  for (const auto& [key, id] : {std::pair{kBos, bos}, std::pair{kEos, eos}}) {
    if (id >= static_cast<int64_t>(tokens.size())) {
      fail(file, key,
           "id " + std::to_string(id) + " outside the vocabulary of " +
               std::to_string(tokens.size()));
    }
  }
  const bool add_bos = file.find_bool(kAddBos).value_or(false);
  try {
    return Tokenizer(std::move(tokens), std::move(types), std::move(merges), pre, bos, eos,
                     add_bos);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.path() + ": " + e.what());
  }
}

}  // namespace plinth
