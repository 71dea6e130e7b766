// scheduler_continuous — the manifest config (options, defaults, ranges) and its JSON Schema.
#pragma once

#include <cstdint>
#include <string_view>

namespace plinth::scheduler_continuous {

enum class Policy { kFcfs, kPriority, kLongestPrefixFirst };

struct SchedulerConfig {
  uint32_t max_num_seqs = 64;                 // running sequences at most, >= 1
  uint32_t max_num_batched_tokens = 2048;     // token budget of one step, >= 1
  bool enable_chunked_prefill = true;         // split prompts longer than the budget (Sarathi)
  uint32_t long_prefill_token_threshold = 0;  // cap on one prefill chunk; 0 = no cap
  Policy policy = Policy::kFcfs;              // "fcfs" (arrival order) | "priority" (lower first)
                                              // | "longest_prefix_first" (SGLang's LPM)
  uint32_t lpm_max_waiting = 128;             // LPM falls back to FCFS above this many waiting
  // preemption_mode: only "recompute" (free the KV, prefill again later).
};

/// Reads the config create() receives ("" = defaults), which the host has validated against
/// kConfigSchema (types, ranges, the policy names, no unknown keys). Throws std::invalid_argument
/// naming the key only for what C++ cannot read (a value of the wrong JSON type, an integer that
/// does not fit its field, a policy name it has no enumerator for).
SchedulerConfig parse_config(std::string_view json);

/// The JSON Schema the plugin publishes.
extern const char* const kConfigSchema;

}  // namespace plinth::scheduler_continuous
