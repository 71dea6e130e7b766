#pragma once
// Splitting input text at the special tokens written in it, before the tokenizer model runs
// (llama.cpp src/llama-vocab.cpp `tokenizer_st_partition`): the special tokens are tried longest
// text first; each occurrence in a text fragment becomes a token fragment, with the spaces before
// it (LSTRIP) or after it (RSTRIP, Phi-3) dropped when the token says so.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

/// A piece of partitioned input: a special token, or a run of text to tokenize.
struct Fragment {
  int32_t token;          // >= 0: this token; -1: `text`
  std::string_view text;  // a view into the partitioned text (empty for a token)
};

class SpecialPartition {
 public:
  /// `tokens` and `attrs` (token_attributes.hpp) describe the vocabulary; both are read now and
  /// not kept. The candidates are the tokens with a control, user-defined or unknown attribute.
  SpecialPartition(const std::vector<std::string>& tokens, const std::vector<uint32_t>& attrs);

  /// Appends the fragments of `text` to `out`, in order. With `parse_special` false only
  /// user-defined tokens are matched (as llama.cpp does without parse_special: control and
  /// unknown tokens stay text); with true all candidates are. Thread-safe.
  void split(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;

 private:
  struct Candidate {
    int32_t id;
    std::string text;
    bool control_or_unknown, lstrip, rstrip;
  };
  std::vector<Candidate> candidates_;  // longest text first, then lowest id
};

}  // namespace plinth
