// Tokenizer::from_gguf: reads the llama.cpp GGUF tokenizer keys (gguf-py/gguf/constants.py
// Keys.Tokenizer) into a TokenizerSpec, with llama.cpp's defaults (src/llama-vocab.cpp load()).

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
constexpr const char* kScores = "tokenizer.ggml.scores";
constexpr const char* kMerges = "tokenizer.ggml.merges";
constexpr const char* kPre = "tokenizer.ggml.pre";
constexpr const char* kBos = "tokenizer.ggml.bos_token_id";
constexpr const char* kEos = "tokenizer.ggml.eos_token_id";
constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";
constexpr const char* kAddSpacePrefix = "tokenizer.ggml.add_space_prefix";
constexpr const char* kName = "general.name";
// In TokenAttributeInputs::has_fim_id order.
constexpr const char* kFimIds[6] = {
    "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
    "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id"};
// The deprecated names llama.cpp also reads for pre, suf, mid.
constexpr const char* kOldFimIds[3] = {"tokenizer.ggml.prefix_token_id",
                                       "tokenizer.ggml.suffix_token_id",
                                       "tokenizer.ggml.middle_token_id"};

[[noreturn]] void fail(const GgufFile& file, const std::string& key, const std::string& what) {
  throw std::runtime_error(file.path() + ": " + key + ": " + what);
}

int32_t optional_id(const GgufFile& file, const char* key, int32_t fallback) {
  const auto v = file.find_uint(key);
  if (!v) return fallback;
  if (*v > static_cast<uint64_t>(INT32_MAX))
    fail(file, key, "id " + std::to_string(*v) + " too large");
  return static_cast<int32_t>(*v);
}

std::vector<int32_t> read_types(const GgufFile& file, size_t n) {
  std::vector<int32_t> types;
  if (!file.has(kTypes)) return types;
  const auto raw = file.get_int_array(kTypes);
  if (raw.size() != n) {
    fail(file, kTypes,
         std::to_string(raw.size()) + " entries for " + std::to_string(n) + " tokens");
  }
  types.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 0 || raw[i] > static_cast<int64_t>(TokenType::kByte)) {
      fail(file, kTypes,
           "entry " + std::to_string(i) + " is " + std::to_string(raw[i]) + " (allowed 0..6)");
    }
    types.push_back(static_cast<int32_t>(raw[i]));
  }
  return types;
}

// tokenizer.ggml.scores: f32 (or, as llama.cpp also accepts, i32) per token.
std::vector<float> read_scores(const GgufFile& file, size_t n) {
  std::vector<float> scores;
  if (!file.has(kScores)) return scores;
  try {
    for (const double v : file.get_float_array(kScores)) scores.push_back(static_cast<float>(v));
  } catch (const std::exception&) {
    scores.clear();
    for (const int64_t v : file.get_int_array(kScores)) scores.push_back(static_cast<float>(v));
  }
  if (scores.size() < n) {
    fail(file, kScores,
         std::to_string(scores.size()) + " entries for " + std::to_string(n) + " tokens");
  }
  scores.resize(n);
  return scores;
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& file) {
  const auto model = file.find_string(kModel);
  if (!model) fail(file, kModel, "missing (the file has no tokenizer)");
  if (*model != "gpt2" && *model != "llama") {
    fail(file, kModel,
         "unsupported tokenizer model \"" + *model +
             "\" (supported: \"gpt2\", byte-level BPE; \"llama\", SentencePiece-style)");
  }
  const bool spm = *model == "llama";
  if (!file.has(kTokens)) fail(file, kTokens, "missing");
  TokenizerSpec spec;
  spec.model = *model;
  spec.tokens = file.get_string_array(kTokens);
  const size_t n = spec.tokens.size();
  spec.token_types = read_types(file, n);
  if (spm) {
    spec.scores = read_scores(file, n);
    spec.add_space_prefix = file.find_bool(kAddSpacePrefix);
  } else {
    if (!file.has(kMerges)) fail(file, kMerges, "missing (byte-level BPE needs its merges)");
    spec.merges = file.get_string_array(kMerges);
    // llama.cpp uses its "default" pre-tokenizer when the key is absent.
    spec.pre = file.find_string(kPre).value_or("default");
  }
  // llama.cpp's defaults for a "llama" vocabulary: BOS 1, EOS 2 (when the vocabulary has them).
  const int32_t default_bos = spm && n > 1 ? 1 : -1, default_eos = spm && n > 2 ? 2 : -1;
  spec.bos_id = optional_id(file, kBos, default_bos);
  spec.eos_id = optional_id(file, kEos, default_eos);
  for (const auto& [key, id] : {std::pair{kBos, spec.bos_id}, std::pair{kEos, spec.eos_id}}) {
    if (id >= static_cast<int64_t>(n)) {
      fail(file, key,
           "id " + std::to_string(id) + " outside the vocabulary of " + std::to_string(n));
    }
  }
  spec.add_bos = file.find_bool(kAddBos);
  spec.attribute_inputs.model_name = file.find_string(kName).value_or("");
  for (size_t k = 0; k < 6; ++k) {
    spec.attribute_inputs.has_fim_id[k] =
        file.has(kFimIds[k]) || (k < 3 && file.has(kOldFimIds[k]));
  }
  try {
    return Tokenizer(std::move(spec));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.path() + ": " + e.what());
  }
}

}  // namespace plinth
