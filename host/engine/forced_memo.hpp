#pragma once
// Forced-token drafting's memory of how the model spells forced bytes (engine/forced_drafts.hpp):
// the tokenizer's canonical encoding of a forced byte string is often not the model's (SmolLM2
// writes `customer_full_legal_name` with other tokens than encode() gives), so a draft of it is
// rejected where the spellings part. The memo keeps, per forced byte string, the tokens the target
// actually produced the last time the grammar forced those bytes (in any request: constrained
// requests sharing a schema meet the same forced strings), and forced drafting proposes them the
// next time. A proposal only: the masked target verifies every draft, so what the memo holds never
// changes an output, only how many drafts are kept.
//
// Bounded: at most `max_entries` strings (least recently used evicted), keys of at most
// `max_key_bytes` bytes, values of at most `max_tokens` tokens; longer ones are not stored.
// Not thread-safe: the engine's thread alone uses it (the engine owns it through ForcedDrafts).

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace plinth {

class ForcedTokenMemo {
 public:
  /// Throws std::invalid_argument for a zero bound.
  ForcedTokenMemo(size_t max_entries, size_t max_key_bytes, size_t max_tokens);

  /// The tokens last recorded for exactly `bytes` (marked most recently used), or null. Valid
  /// until the next record().
  const std::vector<int32_t>* find(std::string_view bytes);

  /// Records that the target spelled `bytes` as `tokens`: the concatenated bytes of `tokens`
  /// (`token_bytes[i]`: the bytes of tokens[i]) start with `bytes` and the last token reaches its
  /// end (it may reach past it, into bytes the grammar did not force). Also records each suffix of
  /// `bytes` that starts at a token boundary (what stays forced once the first tokens are out),
  /// with the tokens after that boundary. Calls that break the rule above, empty ones and
  /// over-long ones are ignored.
  void record(std::string_view bytes, std::span<const int32_t> tokens,
              std::span<const std::string_view> token_bytes);

  size_t size() const { return index_.size(); }
  /// Bytes held by keys and values (for the bound's test; not counting the containers' nodes).
  size_t payload_bytes() const { return payload_; }

 private:
  void put(std::string_view key, std::span<const int32_t> tokens);

  size_t max_entries_, max_key_bytes_, max_tokens_;
  // Most recently used at the front.
  std::list<std::pair<std::string, std::vector<int32_t>>> lru_;
  std::unordered_map<std::string_view, decltype(lru_)::iterator> index_;  // keys point into lru_
  size_t payload_ = 0;
};

}  // namespace plinth
