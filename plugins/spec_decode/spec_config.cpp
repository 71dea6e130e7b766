#include "spec_config.hpp"

#include <plinth/config.hpp>

#include <string>
#include <vector>

namespace plinth::spec_decode {

// clang-format off
const char* const kConfigSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "method": {"enum": ["ngram", "draft", "layer_skip"], "default": "ngram",
      "description": "ngram: prompt lookup; draft: a smaller model (a backend with role draft); layer_skip: the target's first exit_layer layers (backend extension plinth.early_exit/1)"},
    "num_speculative_tokens": {"type": "integer", "minimum": 1, "maximum": 16, "default": 4,
      "description": "k: the most draft tokens per sequence per step"},
    "min_n": {"type": "integer", "minimum": 1, "maximum": 64, "default": 2,
      "description": "ngram: the shortest suffix n-gram looked up"},
    "max_n": {"type": "integer", "minimum": 1, "maximum": 64, "default": 4,
      "description": "ngram: the longest suffix n-gram looked up (tried first)"},
    "exit_layer": {"type": "integer", "minimum": 0, "maximum": 4096, "default": 0,
      "description": "layer_skip: layers the draft runs before the final norm and LM head; must be below the model's layer count; 0 = half of them"},
    "draft_kv_tokens": {"type": "integer", "minimum": 16, "maximum": 16777216, "default": 16384,
      "description": "draft: tokens of KV cache the draft model keeps for all sequences"},
    "draft_len_schedule": {"type": "array", "default": [],
      "items": {"type": "object", "additionalProperties": false,
        "required": ["max_batch_size", "num_speculative_tokens"],
        "properties": {
          "max_batch_size": {"type": "integer", "minimum": 1, "maximum": 65536},
          "num_speculative_tokens": {"type": "integer", "minimum": 0, "maximum": 16}}},
      "description": "batch size -> k, ascending by max_batch_size; larger batches do not speculate; [] = k up to 4 sequences, then (ngram only) k/2 up to 16, none above"},
    "adaptive": {"type": "boolean", "default": true,
      "description": "per sequence, draft only as many tokens as its measured acceptance pays for"},
    "verify_token_cost": {"type": "number", "minimum": 0, "maximum": 10, "default": 0,
      "description": "the cost of one extra verified token, in decode steps, for the adaptive policy; 0 = 0.25"},
    "draft_token_cost": {"type": "number", "minimum": -1, "maximum": 10, "default": -1,
      "description": "the cost of proposing one draft token, in decode steps; -1 = derived (ngram 0, layer_skip exit_layer / layers, draft: draft layers / target layers)"},
    "probe_interval": {"type": "integer", "minimum": 1, "maximum": 1000000, "default": 16,
      "description": "steps a sequence whose acceptance does not pay waits before drafting again"}
  }
})schema";
// clang-format on

namespace {

// draft_len_schedule: rows {max_batch_size, num_speculative_tokens}; ascending by max_batch_size,
// the one rule here the schema cannot express.
std::vector<ScheduleRow> read_schedule(const sdk::ConfigReader& config) {
  std::vector<ScheduleRow> rows;
  const std::vector<sdk::ConfigReader> items = config.get_objects("draft_len_schedule");
  for (size_t i = 0; i < items.size(); ++i) {
    const ScheduleRow r{items[i].get<uint32_t>("max_batch_size"),
                        items[i].get<uint32_t>("num_speculative_tokens")};
    if (!rows.empty() && r.max_batch_size <= rows.back().max_batch_size) {
      config.fail("draft_len_schedule[" + std::to_string(i) + "].max_batch_size",
                  "= " + std::to_string(r.max_batch_size) +
                      " must grow from row to row (the schedule is ascending)");
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

const char* method_name(Method m) {
  switch (m) {
    case Method::kNgram:
      return "ngram";
    case Method::kDraft:
      return "draft";
    case Method::kLayerSkip:
      return "layer_skip";
  }
  return "?";
}

SpecConfig parse_config(std::string_view json) {
  // Types, ranges, the method names and keys are kConfigSchema's, checked by the host before
  // create(); the rules across options are checked here.
  const sdk::ConfigReader config("spec_decode", json);
  SpecConfig c;
  c.method = config.get_enum<Method>(
      "method",
      {{"ngram", Method::kNgram}, {"draft", Method::kDraft}, {"layer_skip", Method::kLayerSkip}},
      c.method);
  c.num_speculative_tokens =
      config.get<uint32_t>("num_speculative_tokens", c.num_speculative_tokens);
  c.min_n = config.get<uint32_t>("min_n", c.min_n);
  c.max_n = config.get<uint32_t>("max_n", c.max_n);
  c.exit_layer = config.get<uint32_t>("exit_layer", c.exit_layer);
  c.draft_kv_tokens = config.get<uint32_t>("draft_kv_tokens", c.draft_kv_tokens);
  c.draft_len_schedule = read_schedule(config);
  c.adaptive = config.get<bool>("adaptive", c.adaptive);
  c.verify_token_cost = config.get<double>("verify_token_cost", c.verify_token_cost);
  c.draft_token_cost = config.get<double>("draft_token_cost", c.draft_token_cost);
  c.probe_interval = config.get<uint32_t>("probe_interval", c.probe_interval);
  if (c.min_n > c.max_n) {
    config.fail("min_n", "= " + std::to_string(c.min_n) + " must not exceed config.max_n = " +
                             std::to_string(c.max_n) + ": lower min_n or raise max_n");
  }
  return c;
}

}  // namespace plinth::spec_decode
