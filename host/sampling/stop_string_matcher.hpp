#pragma once
// Stop strings over streamed text: what is safe to emit now, and where the output ends.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

/// Finds stop strings in text that arrives in pieces (one detokenized delta per token), so a stop
/// string split across 2, 3 or more deltas is still found and none of it is ever emitted.
///
/// feed() returns the part of the text seen so far that can no longer belong to a stop string; it
/// holds back the longest suffix that is a proper prefix of some stop string (at most
/// max_stop_length - 1 bytes). When a stop string completes, the output ends just before it
/// (OpenAI / vLLM: the stop string itself is not returned) and the matcher is done.
///
/// Which stop wins when several occur: the one that completes first in the text (smallest end
/// offset), and among those the one that starts first. This is what checking after every byte
/// would give, so the result does not depend on how the text was cut into deltas.
///
/// Text is treated as bytes; valid UTF-8 input gives valid UTF-8 output because a held-back
/// suffix starts where a stop string (valid UTF-8) would start.
/// Thread rules: one matcher per sequence; not safe for concurrent calls.
class StopStringMatcher {
 public:
  struct Result {
    std::string text;  ///< newly safe text to emit (possibly empty)
    bool stopped;      ///< a stop string completed; `text` ends right before it
    /// Index into the stop list of the string that matched, when stopped.
    std::optional<size_t> stop_index;
  };

  /// stops: the stop strings; each must be non-empty (std::invalid_argument naming the index).
  /// An empty list gives a matcher that passes text straight through.
  explicit StopStringMatcher(std::vector<std::string> stops);

  /// Appends a text delta. After a stop was found, further deltas return {"", true, index}.
  Result feed(std::string_view delta);

  /// End of generation without a stop string (EOS, stop token, max_tokens): returns the held-back
  /// text, which is then known not to start a stop string. Empty after a stop.
  std::string flush();

  bool stopped() const { return stopped_index_.has_value(); }
  /// Bytes currently held back.
  size_t held() const { return pending_.size(); }

 private:
  /// Length of the longest suffix of pending_ that is a proper prefix of some stop string.
  size_t partial_suffix_length() const;

  std::vector<std::string> stops_;
  size_t max_len_ = 0;
  std::string pending_;  // text received but not yet emitted
  std::optional<size_t> stopped_index_;
};

}  // namespace plinth
