#include "scheduler_config.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

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
    "long_prefill_token_threshold": {"type": "integer", "minimum": 0, "default": 0,
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

namespace {

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::invalid_argument("scheduler_continuous: config." + key + " " + what);
}

uint32_t get_uint(const nlohmann::json& v, const std::string& key, uint32_t lo, uint32_t hi) {
  std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (!v.is_number_integer()) bad(key, "must be an integer in " + range + ", got " + v.dump());
  if ((!v.is_number_unsigned() && v.get<int64_t>() < 0) || v.get<uint64_t>() < lo ||
      v.get<uint64_t>() > hi) {
    bad(key, "must be in " + range + ", got " + v.dump());
  }
  return static_cast<uint32_t>(v.get<uint64_t>());
}

}  // namespace

SchedulerConfig parse_config(std::string_view json) {
  SchedulerConfig c;
  if (json.empty()) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("scheduler_continuous: config is not valid JSON: ") +
                                e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("scheduler_continuous: config must be an object");
  for (const auto& [key, v] : j.items()) {
    if (key == "max_num_seqs") {
      c.max_num_seqs = get_uint(v, key, 1, 65536);
    } else if (key == "max_num_batched_tokens") {
      c.max_num_batched_tokens = get_uint(v, key, 1, 1u << 20);
    } else if (key == "enable_chunked_prefill") {
      if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
      c.enable_chunked_prefill = v.get<bool>();
    } else if (key == "long_prefill_token_threshold") {
      c.long_prefill_token_threshold = get_uint(v, key, 0, UINT32_MAX);
    } else if (key == "policy") {
      if (v == "fcfs") {
        c.policy = Policy::kFcfs;
      } else if (v == "priority") {
        c.policy = Policy::kPriority;
      } else if (v == "longest_prefix_first") {
        c.policy = Policy::kLongestPrefixFirst;
      } else {
        bad(key, "must be \"fcfs\", \"priority\" or \"longest_prefix_first\", got " + v.dump());
      }
    } else if (key == "lpm_max_waiting") {
      c.lpm_max_waiting = get_uint(v, key, 1, 1u << 20);
    } else if (key == "preemption_mode") {
      if (v != "recompute")
        bad(key, "must be \"recompute\" (swap is not implemented), got " + v.dump());
    } else {
      throw std::invalid_argument(
          "scheduler_continuous: unknown config key '" + key +
          "'; allowed: max_num_seqs, max_num_batched_tokens, enable_chunked_prefill, "
          "long_prefill_token_threshold, policy, lpm_max_waiting, preemption_mode");
    }
  }
  return c;
}

}  // namespace plinth::scheduler_continuous
