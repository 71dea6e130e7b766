#pragma once
// SentencePiece-style tokenization of one text fragment as llama.cpp runs it for
// `tokenizer.ggml.model = "llama"` (src/llama-vocab.cpp `llm_tokenizer_spm_session`): start from
// the UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is a vocabulary
// entry with the highest score (the leftmost on equal scores), then emit each final piece as its
// token, or split it back along the merges that made it, or as byte-fallback tokens <0xNN>.
// This is the BPE-like approximation llama.cpp uses, not SentencePiece's unigram search.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_model.hpp"  // TokenIdMap

namespace plinth {

class SpmModel {
 public:
  /// Finds the byte-fallback tokens in `token_ids` (vocabulary text -> id): "<0xNN>", else the
  /// byte's own one-character token (llama.cpp byte_to_token); a byte with neither cannot be
  /// encoded.
  explicit SpmModel(const TokenIdMap& token_ids);

  /// Appends the ids of `text` (one fragment, spaces already escaped as U+2581, well-formed
  /// UTF-8) to `out`. `token_ids` is the map given to the constructor (the Tokenizer owns it; it
  /// is passed per call so that a moved Tokenizer holds no dangling reference), `scores[i]` the
  /// score of id i (tokenizer.ggml.scores). Throws std::invalid_argument naming the byte when a
  /// piece falls back to a byte the vocabulary has no token for. Thread-safe.
  void encode(std::string_view text, const TokenIdMap& token_ids, const std::vector<float>& scores,
              std::vector<int32_t>& out) const;

  /// Whether byte `b` has a byte-fallback token.
  bool has_byte_token(uint8_t b) const { return byte_ids_[b] >= 0; }

 private:
  std::array<int32_t, 256> byte_ids_;
};

}  // namespace plinth
