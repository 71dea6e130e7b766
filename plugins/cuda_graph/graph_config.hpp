// cuda_graph — the manifest config and the capture sizes it implies. Pure C++ (no CUDA headers),
// unit-tested on the CPU.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace plinth::cuda_graph {

/// Largest capture size accepted (sequences of one decode batch).
inline constexpr uint32_t kMaxCaptureSizeLimit = 4096;
/// Largest max_blocks_per_seq override accepted (blocks per block-table row).
inline constexpr uint32_t kMaxBlocksPerSeqLimit = 1u << 20;

struct GraphConfig {
  /// Ascending, distinct, each in [1, kMaxCaptureSizeLimit]; never empty.
  std::vector<uint32_t> capture_sizes;
  /// Capture every size in capture() (true) or each the first time a batch needs it (false).
  bool eager_capture = false;
  /// Block-table width of the static buffers; 0 = ceil(context_length / block_size).
  uint32_t max_blocks_per_seq = 0;

  /// The largest capture size (the static buffers' row count).
  uint32_t max_capture_size() const { return capture_sizes.back(); }
};

/// The default sizes for `max_capture_size` (vLLM's schedule): 1, 2, 4, then every multiple of 8
/// up to max_capture_size, and max_capture_size itself when it is not one of those. E.g. 64 ->
/// {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}; 6 -> {1, 2, 4, 6}. Throws std::invalid_argument for
/// 0 or a value above kMaxCaptureSizeLimit.
std::vector<uint32_t> default_capture_sizes(uint32_t max_capture_size);

/// Parses the manifest's config object (JSON text; "" or "{}" = defaults):
///   {"max_capture_size": 64, "capture_sizes": [], "eager_capture": false,
///    "max_blocks_per_seq": 0}
/// A non-empty capture_sizes list replaces the default schedule (it is sorted and deduplicated;
/// max_capture_size is then ignored). The host has validated it against kConfigSchema (types,
/// ranges, no unknown keys); throws std::invalid_argument naming the key only for what C++ cannot
/// read (a value of the wrong JSON type, an integer that does not fit uint32_t), and as
/// default_capture_sizes does for a max_capture_size outside 1..kMaxCaptureSizeLimit.
GraphConfig parse_config(std::string_view json);

/// The config's JSON Schema (the subset the host validates), published by the plugin.
extern const char* const kConfigSchema;

}  // namespace plinth::cuda_graph
