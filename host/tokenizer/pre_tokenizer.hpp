#pragma once
// Pre-tokenization: splitting text into words before byte-level BPE, as llama.cpp does it
// (src/llama-vocab.cpp `llm_tokenizer_bpe` regex lists per `tokenizer.ggml.pre` +
// src/unicode.cpp `unicode_regex_split`), which follow the Hugging Face tokenizers' Split
// pre-tokenizers of each model's tokenizer.json.
//
// A pre-tokenizer is a list of regular expressions applied one after the other. Each pass runs
// over every piece produced by the previous pass (the regex never sees past a piece's ends, so a
// lookahead stops at the piece boundary) and splits it into its matches AND the gaps between
// them; both become pieces. Regexes are PCRE2 in UTF + UCP mode, with `\s` / `\S` written out as
// the Unicode White_Space set that llama.cpp and Oniguruma use (PCRE2's own `\s` would leave out
// U+0085); where llama.cpp emulates a Unicode class with lookaheads (its std::regex lacks
// \p{Lu}), the tokenizer.json original is used, which PCRE2 runs as is.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

class PreTokenizer {
 public:
  /// `name` is the GGUF `tokenizer.ggml.pre` value, one of supported() (the names llama.cpp's
  /// llama-vocab.cpp maps to a regex pre-tokenizer, e.g. "llama-bpe", "qwen2", "smollm",
  /// "gpt-2", "deepseek-llm", "tekken"). Throws std::runtime_error naming the value and the
  /// supported ones otherwise, or saying why a name llama.cpp knows is not implemented here
  /// (kimi-k2, afmoe, superbpe: llama.cpp's own split code; gemma4, sarvam-moe, whitespace:
  /// not byte-level BPE).
  explicit PreTokenizer(std::string_view name);

  /// Splits `text` (well-formed UTF-8, not checked here) into words that cover it in order, with
  /// no empty word. The views point into `text`. Thread-safe (the compiled patterns are shared,
  /// match state is per call).
  std::vector<std::string_view> split(std::string_view text) const;

  const std::string& name() const { return name_; }

  /// llama.cpp's `ignore_merges` for this pre-tokenizer: a word that is itself a vocabulary
  /// entry becomes that token without running the merges (llama3, tekken, youtu, glm4, ...).
  bool ignore_merges() const { return ignore_merges_; }
  /// llama.cpp's add_bos default for this pre-tokenizer when the GGUF has no
  /// `tokenizer.ggml.add_bos_token` (true for llama3, tekken, chameleon).
  bool default_add_bos() const { return default_add_bos_; }

  /// The accepted `tokenizer.ggml.pre` values.
  static std::vector<std::string> supported();

 private:
  struct Pattern;  // a compiled PCRE2 pattern (JIT where available)
  std::string name_;
  std::vector<std::shared_ptr<const Pattern>> passes_;
  bool ignore_merges_ = false;
  bool default_add_bos_ = false;
};

}  // namespace plinth
