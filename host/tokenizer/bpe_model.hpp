#pragma once
// Byte-level BPE merging (Sennrich et al. 2016; GPT-2's byte-level variant) for one pre-tokenized
// word, in the order llama.cpp's `llm_tokenizer_bpe_session` applies merges: repeatedly merge the
// adjacent pair with the lowest merge rank, the leftmost first on equal ranks.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace plinth {

/// Hash allowing lookups by std::string_view in a map keyed by std::string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
/// Vocabulary text -> id.
using TokenIdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  /// `token_ids` maps each vocabulary text (GPT-2 byte-mapped form, e.g. "Ġthe") to its id,
  /// `vocab_size` is the number of vocabulary entries, `merges` are "left right" pairs in rank
  /// order (rank = index). A merge whose parts or result are not in the vocabulary is kept (as
  /// llama.cpp does): its result is an internal symbol that falls back to byte tokens if it
  /// survives to the end. Throws std::runtime_error naming `tokenizer.ggml.merges[i]` for an entry
  /// without a separating space.
  BpeModel(const TokenIdMap& token_ids, int32_t vocab_size, const std::vector<std::string>& merges);

  /// Appends the token ids of `word` (raw UTF-8 bytes of one pre-tokenized word) to `out`.
  /// Throws std::runtime_error if a byte of `word` has no single-byte token. Thread-safe.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  /// Whether byte `b` has a single-byte token. A byte-level vocabulary may lack some (SmolLM2's
  /// has no token for several control bytes, e.g. 0x14); text holding such a byte cannot be
  /// encoded.
  bool has_byte_token(uint8_t b) const { return byte_ids_[b] >= 0; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // a vocabulary id, or >= vocab_size_ for an internal symbol
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  void emit(int32_t symbol, std::vector<int32_t>& out) const;

  int32_t vocab_size_;
  std::array<int32_t, 256> byte_ids_;           // token of each single byte, -1 when absent
  std::unordered_map<uint64_t, Merge> merges_;  // (left, right) -> rank and result
  std::vector<std::string> internal_bytes_;     // raw bytes of internal symbol vocab_size_ + i
};

}  // namespace plinth
