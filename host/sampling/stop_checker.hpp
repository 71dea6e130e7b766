#pragma once
// Every stop condition of one sequence: EOS, stop token ids, stop strings, max_tokens.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/sampling_params.hpp"
#include "sampling/stop_string_matcher.hpp"

namespace plinth {

/// Why a sequence finished (the OpenAI `finish_reason`).
enum class FinishReason {
  kNone,    ///< still running
  kStop,    ///< EOS, a stop token id or a stop string
  kLength,  ///< max_tokens generated
};

/// "stop" / "length" / "" (kNone), as the OpenAI API spells them.
const char* to_string(FinishReason reason);

/// Decides, after each generated token, whether the sequence is done and which text to stream.
/// Checks in vLLM's order: EOS (unless ignore_eos) and stop_token_ids first — the token's own text
/// is then not emitted — then stop strings over the streamed text, then max_tokens. With
/// params.include_stop_str_in_output the stop token's text / the stop string is emitted; before
/// params.min_tokens tokens are generated only max_tokens is checked (vLLM's StopChecker).
/// Thread rules: one checker per sequence; not safe for concurrent calls.
class StopChecker {
 public:
  struct Step {
    std::string text;  ///< text to stream to the client now (possibly empty)
    FinishReason finish = FinishReason::kNone;
    /// For finish = kStop: the stop token id, or the index into params.stop of the stop string.
    std::optional<int32_t> stop_token;
    std::optional<size_t> stop_string;
  };

  /// params: validated (std::invalid_argument); max_tokens, min_tokens, stop_token_ids, stop,
  /// include_stop_str_in_output and ignore_eos are copied.
  /// eos_token_ids: the model's end-of-sequence tokens (e.g. {2} for SmolLM2); ignored when
  /// params.ignore_eos.
  StopChecker(const SamplingParams& params, std::vector<int32_t> eos_token_ids);

  /// Feeds one generated token and the text it adds (the detokenizer's delta, which may be empty
  /// while a UTF-8 character is incomplete). `ends`: the token ends the sequence as a stop token
  /// does, whatever ignore_eos, stop_token_ids and min_tokens say (it completed the output's
  /// grammar, which allows no further token: Sequence::append). Calling it again after a finish
  /// throws std::logic_error.
  Step on_token(int32_t token, std::string_view text_delta, bool ends = false);

  /// Releases the text held back as a possible stop-string prefix: a boundary no stop string
  /// spans (a grammar trigger token, engine/sequence.hpp). Matching goes on after it.
  std::string release() { return matcher_.flush(); }
  FinishReason finish() const { return finish_; }
  int32_t num_generated() const { return num_generated_; }

 private:
  bool is_stop_token(int32_t token) const;

  int32_t max_tokens_;
  int32_t min_tokens_;
  bool include_stop_;
  std::vector<int32_t> stop_tokens_;  // stop_token_ids + EOS unless ignore_eos
  std::vector<std::string> stops_;
  StopStringMatcher matcher_;
  int32_t num_generated_ = 0;
  FinishReason finish_ = FinishReason::kNone;
};

}  // namespace plinth
