#include "scheduler_config.hpp"

#include <plinth/config.hpp>

namespace plinth::scheduler_continuous {

// clang-format off
const char* const kConfigSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "max_num_seqs": {"type": "integer", "minimum": 1, "maximum": 65536, "default": 64,
      "description": "sequences running at once at most"},
    "max_num_batched_tokens": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 2048,
      "description": "tokens computed in one step at most (prefill chunks + decodes)"},
    "enable_chunked_prefill": {"type": "boolean", "default": true,
      "description": "split long prompts into chunks that share steps with decodes"},
    "long_prefill_token_threshold": {"type": "integer", "minimum": 0, "maximum": 4294967295, "default": 0,
      "description": "largest prefill chunk of one sequence in one step; 0 = only the token budget limits it"},
    "policy": {"type": "string", "enum": ["fcfs", "priority", "longest_prefix_first"], "default": "fcfs",
      "description": "fcfs: arrival order; priority: lower priority value first, then arrival; longest_prefix_first: waiting sequences with the longest prefix-cache match first, then arrival (SGLang's LPM; needs a prefix_cache)"},
    "lpm_max_waiting": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 128,
      "description": "longest_prefix_first orders the waiting queue only while it holds at most this many sequences (matching each costs a tree walk), else FCFS"},
    "preemption_mode": {"type": "string", "enum": ["recompute"], "default": "recompute",
      "description": "what happens to a preempted sequence: its KV is freed and recomputed later"}
  }
})schema";
// clang-format on

SchedulerConfig parse_config(std::string_view json) {
  // Types, ranges, enums and keys are kConfigSchema's, checked by the host before create();
  // preemption_mode has one value, "recompute", so there is nothing to read.
  const sdk::ConfigReader config("scheduler_continuous", json);
  SchedulerConfig c;
  c.max_num_seqs = config.get<uint32_t>("max_num_seqs", c.max_num_seqs);
  c.max_num_batched_tokens =
      config.get<uint32_t>("max_num_batched_tokens", c.max_num_batched_tokens);
  c.enable_chunked_prefill = config.get<bool>("enable_chunked_prefill", c.enable_chunked_prefill);
  c.long_prefill_token_threshold =
      config.get<uint32_t>("long_prefill_token_threshold", c.long_prefill_token_threshold);
  c.policy = config.get_enum<Policy>("policy",
                                     {{"fcfs", Policy::kFcfs},
                                      {"priority", Policy::kPriority},
                                      {"longest_prefix_first", Policy::kLongestPrefixFirst}},
                                     c.policy);
  c.lpm_max_waiting = config.get<uint32_t>("lpm_max_waiting", c.lpm_max_waiting);
  return c;
}

}  // namespace plinth::scheduler_continuous
