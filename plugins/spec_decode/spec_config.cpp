#include "spec_config.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
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

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::invalid_argument("spec_decode: config." + key + " " + what);
}

uint32_t uint_in(const nlohmann::json& v, const std::string& key, uint64_t lo, uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) {
    bad(key, "must be an integer in " + range + ", got " + v.dump());
  }
  const auto x = v.get<uint64_t>();
  if (x < lo || x > hi) bad(key, "must be in " + range + ", got " + v.dump());
  return static_cast<uint32_t>(x);
}

double number_in(const nlohmann::json& v, const std::string& key, double lo, double hi) {
  if (!v.is_number()) bad(key, "must be a number, got " + v.dump());
  const double x = v.get<double>();
  if (x < lo || x > hi) {
    bad(key,
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  }
  return x;
}

Method parse_method(const nlohmann::json& v) {
  const std::string m = v.is_string() ? v.get<std::string>() : "";
  if (m == "ngram") return Method::kNgram;
  if (m == "draft") return Method::kDraft;
  if (m == "layer_skip") return Method::kLayerSkip;
  bad("method", "must be \"ngram\", \"draft\" or \"layer_skip\", got " + v.dump());
}

// draft_len_schedule: rows {max_batch_size, num_speculative_tokens}, ascending by max_batch_size.
std::vector<ScheduleRow> parse_schedule(const nlohmann::json& v, const std::string& key) {
  if (!v.is_array()) bad(key, "must be an array of {max_batch_size, num_speculative_tokens}");
  std::vector<ScheduleRow> rows;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const auto& row = v[i];
    if (!row.is_object() || !row.contains("max_batch_size") ||
        !row.contains("num_speculative_tokens")) {
      bad(at, "must be {\"max_batch_size\": N, \"num_speculative_tokens\": K}");
    }
    ScheduleRow r{uint_in(row["max_batch_size"], at + ".max_batch_size", 1, 65536),
                  uint_in(row["num_speculative_tokens"], at + ".num_speculative_tokens", 0,
                          kMaxSpeculativeTokens)};
    if (!rows.empty() && r.max_batch_size <= rows.back().max_batch_size) {
      bad(at + ".max_batch_size", "must grow from row to row (the schedule is ascending)");
    }
    rows.push_back(r);
  }
  return rows;
}

// Sets the field `key` names from v, checked; throws std::invalid_argument for an unknown key.
void apply_key(const std::string& key, const nlohmann::json& v, SpecConfig& c) {
  if (key == "method") {
    c.method = parse_method(v);
  } else if (key == "num_speculative_tokens") {
    c.num_speculative_tokens = uint_in(v, key, 1, kMaxSpeculativeTokens);
  } else if (key == "min_n") {
    c.min_n = uint_in(v, key, 1, 64);
  } else if (key == "max_n") {
    c.max_n = uint_in(v, key, 1, 64);
  } else if (key == "exit_layer") {
    c.exit_layer = uint_in(v, key, 0, 4096);
  } else if (key == "draft_kv_tokens") {
    c.draft_kv_tokens = uint_in(v, key, 16, 16777216);
  } else if (key == "draft_len_schedule") {
    c.draft_len_schedule = parse_schedule(v, key);
  } else if (key == "adaptive") {
    if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
    c.adaptive = v.get<bool>();
  } else if (key == "verify_token_cost") {
    c.verify_token_cost = number_in(v, key, 0, 10);
  } else if (key == "draft_token_cost") {
    c.draft_token_cost = number_in(v, key, -1, 10);
  } else if (key == "probe_interval") {
    c.probe_interval = uint_in(v, key, 1, 1000000);
  } else {
    throw std::invalid_argument(
        "spec_decode: unknown config key '" + key +
        "'; allowed: method, num_speculative_tokens, min_n, max_n, exit_layer, draft_kv_tokens, "
        "draft_len_schedule, adaptive, verify_token_cost, draft_token_cost, probe_interval");
  }
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
  SpecConfig c;
  if (json.empty()) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("spec_decode: config is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("spec_decode: config must be a JSON object");
  for (const auto& [key, v] : j.items()) apply_key(key, v, c);
  if (c.min_n > c.max_n) {
    std::string msg = "= ";
    msg += std::to_string(c.min_n);
    msg += " must not exceed config.max_n = ";
    msg += std::to_string(c.max_n);
    msg += ": lower min_n or raise max_n";
    bad("min_n", msg);
  }
  return c;
}

}  // namespace plinth::spec_decode
