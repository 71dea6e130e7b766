#include "graph_config.hpp"

#include <plinth/config.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

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
  // Types, ranges and keys are kConfigSchema's, checked by the host before create().
  const sdk::ConfigReader config("cuda_graph", json);
  GraphConfig c;
  c.eager_capture = config.get<bool>("eager_capture", c.eager_capture);
  c.max_blocks_per_seq = config.get<uint32_t>("max_blocks_per_seq", c.max_blocks_per_seq);
  const auto max_capture_size = config.get<uint32_t>("max_capture_size", 64);
  std::vector<uint32_t> sizes = config.get_array<uint32_t>("capture_sizes");
  if (sizes.empty()) {
    c.capture_sizes = default_capture_sizes(max_capture_size);
  } else {
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    c.capture_sizes = std::move(sizes);
  }
  return c;
}

}  // namespace plinth::cuda_graph
