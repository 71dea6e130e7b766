// spec_decode — the manifest options (the JSON schema the host validates against, with defaults)
// and their parsed form. Cross-option rules (min_n <= max_n, an ascending draft_len_schedule,
// exit_layer below the layer count) are checked here and at create, since a schema cannot express
// them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace plinth::spec_decode {

extern const char* const kConfigSchema;

/// Upper bound on num_speculative_tokens (k): verification rows grow with it.
inline constexpr uint32_t kMaxSpeculativeTokens = 16;

enum class Method { kNgram, kDraft, kLayerSkip };

/// One row of the draft-length schedule: batches of up to max_batch_size sequences draft k
/// tokens per sequence (TensorRT-LLM's draft_len_schedule).
struct ScheduleRow {
  uint32_t max_batch_size;
  uint32_t k;
};

struct SpecConfig {
  Method method = Method::kNgram;
  uint32_t num_speculative_tokens = 4;  ///< k, the most drafts per sequence per step
  uint32_t min_n = 2, max_n = 4;        ///< n-gram sizes matched (ngram)
  uint32_t exit_layer = 0;              ///< layer_skip: layers the draft runs; 0 = half
  uint32_t draft_kv_tokens = 16384;     ///< draft: KV the draft model keeps, tokens
  /// Ascending by max_batch_size; batches above the last row do not speculate. Empty = the
  /// default: k up to 4 sequences, then (ngram only) k / 2 up to 16, none above.
  std::vector<ScheduleRow> draft_len_schedule;
  bool adaptive = true;          ///< per-sequence policy from measured acceptance
  double verify_token_cost = 0;  ///< extra verified token's cost, in decode steps (0 = default)
  double draft_token_cost = -1;  ///< one draft token's cost, in decode steps (< 0 = derived)
  uint32_t probe_interval = 16;  ///< steps a paused sequence waits before drafting again
};

/// Reads the config create() receives, which the host has validated against kConfigSchema
/// (types, ranges, the method names, no unknown keys) with defaults filled. Throws
/// std::invalid_argument naming "spec_decode: config.<key>" and the fix for the rules across
/// options (min_n <= max_n, draft_len_schedule ascending) and for what C++ cannot read (a value
/// of the wrong JSON type, an integer that does not fit its field, an unknown method name).
SpecConfig parse_config(std::string_view json);

const char* method_name(Method m);

}  // namespace plinth::spec_decode
