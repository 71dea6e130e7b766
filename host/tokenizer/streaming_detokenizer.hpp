#pragma once
// Incremental detokenization for streaming output: one token's bytes may end inside a UTF-8
// character (byte-level BPE splits emoji and CJK across tokens), so bytes are held back until the
// character is complete. Everything returned is well-formed UTF-8.

#include <cstdint>
#include <string>

namespace plinth {

class Tokenizer;

class StreamingDetokenizer {
 public:
  /// `tokenizer` must outlive this object. `skip_special` as in Tokenizer::decode.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special = false);

  /// Adds token `id` and returns the text that is now complete: whole characters only, an
  /// incomplete trailing sequence is kept for the next call. Bytes that can never form a
  /// character are replaced by U+FFFD (one per maximal ill-formed subpart, Unicode §3.9 / WHATWG).
  /// Throws std::out_of_range for an id outside the vocabulary. One thread at a time.
  std::string push(int32_t id);

  /// Returns what is held back, each ill-formed or incomplete sequence as U+FFFD, and resets.
  std::string flush();

  /// Bytes currently held back (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace plinth
