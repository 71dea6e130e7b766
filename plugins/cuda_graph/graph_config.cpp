#include "graph_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace plinth::cuda_graph {

// clang-format off
const char* const kConfigSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "max_capture_size": {"type": "integer", "minimum": 1, "maximum": 4096, "default": 64,
      "description": "largest decode batch (sequences) replayed from a graph; sizes captured: 1, 2, 4, then multiples of 8 up to it (and it). Larger batches run eagerly"},
    "capture_sizes": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 4096}, "default": [],
      "description": "explicit capture sizes (sequences per decode batch); when non-empty it replaces the schedule of max_capture_size"},
    "eager_capture": {"type": "boolean", "default": false,
      "description": "capture every size at start-up; false (default): capture a size the first time a batch needs it"},
    "max_blocks_per_seq": {"type": "integer", "minimum": 0, "maximum": 1048576, "default": 0,
      "description": "block-table width of the captured graphs; 0 = ceil(context_length / block_size). Batches with wider tables run eagerly"}
  }
})schema";
// clang-format on

namespace {

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::invalid_argument("cuda_graph: config." + key + " " + what);
}

// An integer in [lo, hi]; a whole float (64.0, 1e3) counts, as the host's schema check lets it
// through as an integer.
uint32_t get_uint(const std::string& key, const nlohmann::json& v, uint32_t lo, uint32_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  const bool whole_float = v.is_number_float() && std::isfinite(v.get<double>()) &&
                           std::floor(v.get<double>()) == v.get<double>() && v.get<double>() >= 0 &&
                           v.get<double>() <= 4294967295.0;
  if (!whole_float &&
      (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))) {
    bad(key, "must be an integer in " + range + ", got " + v.dump());
  }
  const auto x = whole_float ? static_cast<uint64_t>(v.get<double>()) : v.get<uint64_t>();
  if (x < lo || x > hi) bad(key, "must be in " + range + ", got " + v.dump());
  return static_cast<uint32_t>(x);
}

}  // namespace

std::vector<uint32_t> default_capture_sizes(uint32_t max_capture_size) {
  if (max_capture_size == 0 || max_capture_size > kMaxCaptureSizeLimit) {
    throw std::invalid_argument("cuda_graph: max_capture_size must be in 1.." +
                                std::to_string(kMaxCaptureSizeLimit) + ", got " +
                                std::to_string(max_capture_size));
  }
  std::vector<uint32_t> sizes;
  for (uint32_t s : {1u, 2u, 4u}) {
    if (s <= max_capture_size) sizes.push_back(s);
  }
  for (uint32_t s = 8; s <= max_capture_size; s += 8) sizes.push_back(s);
  if (sizes.back() != max_capture_size) sizes.push_back(max_capture_size);
  return sizes;
}

GraphConfig parse_config(std::string_view json) {
  GraphConfig c;
  uint32_t max_capture_size = 64;
  std::vector<uint32_t> explicit_sizes;
  if (!json.empty()) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(json);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::invalid_argument(std::string("cuda_graph: config is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw std::invalid_argument("cuda_graph: config must be a JSON object");
    for (const auto& [key, v] : j.items()) {
      if (key == "max_capture_size") {
        max_capture_size = get_uint(key, v, 1, kMaxCaptureSizeLimit);
      } else if (key == "capture_sizes") {
        if (!v.is_array()) bad(key, "must be an array of integers in 1..4096, got " + v.dump());
        for (size_t i = 0; i < v.size(); ++i) {
          explicit_sizes.push_back(
              get_uint(key + "[" + std::to_string(i) + "]", v[i], 1, kMaxCaptureSizeLimit));
        }
      } else if (key == "eager_capture") {
        if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
        c.eager_capture = v.get<bool>();
      } else if (key == "max_blocks_per_seq") {
        c.max_blocks_per_seq = get_uint(key, v, 0, kMaxBlocksPerSeqLimit);
      } else {
        throw std::invalid_argument(
            "cuda_graph: unknown config key '" + key +
            "'; allowed: max_capture_size, capture_sizes, eager_capture, max_blocks_per_seq");
      }
    }
  }
  if (explicit_sizes.empty()) {
    c.capture_sizes = default_capture_sizes(max_capture_size);
  } else {
    std::sort(explicit_sizes.begin(), explicit_sizes.end());
    explicit_sizes.erase(std::unique(explicit_sizes.begin(), explicit_sizes.end()),
                         explicit_sizes.end());
    c.capture_sizes = std::move(explicit_sizes);
  }
  return c;
}

}  // namespace plinth::cuda_graph
