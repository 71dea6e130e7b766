#pragma once
// Pre-tokenization: splitting text into words before byte-level BPE, as llama.cpp does it
// (src/llama-vocab.cpp `llm_tokenizer_bpe` regex lists + src/unicode.cpp `unicode_regex_split`).
//
// A pre-tokenizer is a list of regular expressions applied one after the other. Each pass runs
// over every piece produced by the previous pass (the regex never sees past a piece's ends, so a
// lookahead stops at the piece boundary) and splits it into its matches AND the gaps between
// them; both become pieces. Regexes are PCRE2 in UTF + UCP mode, with `\s` written out as the
// Unicode White_Space set that llama.cpp uses (PCRE2's own `\s` would leave out U+0085).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

class PreTokenizer {
 public:
  /// `name` is the GGUF `tokenizer.ggml.pre` value: "smollm" (llama.cpp
  /// LLAMA_VOCAB_PRE_TYPE_SMOLLM: every \p{N} alone, then the GPT-2 regex), "gpt2" (the GPT-2 regex
  /// only) or "default" (llama.cpp LLAMA_VOCAB_PRE_TYPE_DEFAULT). Throws std::runtime_error naming
  /// the value and the supported ones otherwise.
  explicit PreTokenizer(std::string_view name);

  /// Splits `text` (well-formed UTF-8, not checked here) into words that cover it in order, with
  /// no empty word. The views point into `text`. Thread-safe (the compiled patterns are shared,
  /// match state is per call).
  std::vector<std::string_view> split(std::string_view text) const;

  const std::string& name() const { return name_; }

  /// The accepted `tokenizer.ggml.pre` values.
  static std::vector<std::string> supported();

 private:
  struct Pattern;  // a compiled PCRE2 pattern (JIT where available)
  std::string name_;
  std::vector<std::shared_ptr<const Pattern>> passes_;
};

}  // namespace plinth
