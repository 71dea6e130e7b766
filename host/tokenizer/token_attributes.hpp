#pragma once
// Per-token attributes as llama.cpp derives them (src/llama-vocab.cpp `llama_token_attr` and the
// overrides of `llama_vocab::impl::load`): the GGUF token type, plus the fixes llama.cpp applies by
// token text and model name, which change how text is tokenized.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

/// Bits of llama.cpp's `llama_token_attr`.
namespace token_attr {
constexpr uint32_t kUndefined = 0;
constexpr uint32_t kUnknown = 1U << 0;
constexpr uint32_t kUnused = 1U << 1;
constexpr uint32_t kNormal = 1U << 2;
constexpr uint32_t kControl = 1U << 3;
constexpr uint32_t kUserDefined = 1U << 4;
constexpr uint32_t kByte = 1U << 5;
constexpr uint32_t kLstrip = 1U << 7;  // spaces before the token's text in input are dropped
constexpr uint32_t kRstrip = 1U << 8;  // spaces after it are dropped
/// Tokens matched in input text before the model's tokenizer runs (llama.cpp's
/// cache_special_tokens): control, user-defined and unknown ones.
constexpr uint32_t kSpecial = kControl | kUserDefined | kUnknown;
}  // namespace token_attr

/// What the attribute derivation reads besides the token texts and types.
struct TokenAttributeInputs {
  /// `general.name` (llama.cpp marks special tokens RSTRIP when it contains "phi-3"/"phi3",
  /// case-insensitively).
  std::string model_name;
  /// Whether the GGUF names each fill-in-the-middle token (`tokenizer.ggml.fim_*_token_id`):
  /// llama.cpp looks the missing ones up by text (Qwen's "<|fim_prefix|>", ...) and makes them
  /// control tokens. Order: pre, suf, mid, pad, rep, sep.
  bool has_fim_id[6] = {false, false, false, false, false, false};
};

/// The attributes of every token: `types[i]` (GGUF `tokenizer.ggml.token_type`, values 0..6;
/// empty = all normal) mapped to its bit, then llama.cpp's overrides: end-of-generation texts
/// ("<|eot_id|>", "<|im_end|>", "<end_of_turn>", "</s>", ...) and unnamed FIM texts become
/// control; gpt-oss's "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>" become
/// user-defined; for Phi-3 every special token gets RSTRIP, and "</s>" too, except "<unk>",
/// "<s>", "<|endoftext|>". `tokens` and `types` have equal sizes (types may be empty).
std::vector<uint32_t> token_attributes(const std::vector<std::string>& tokens,
                                       const std::vector<int32_t>& types,
                                       const TokenAttributeInputs& in);

}  // namespace plinth
