// cuda_graph — the graph runner's logic over the backend's "plinth.cuda_stream/1" extension
// (sdk/include/plinth/ext_cuda.h) and a GraphDriver (graph_driver.hpp). No CUDA headers: the CPU
// tests drive it with a fake driver and a host-memory extension.
//
// Per capture size one graph of `forward_static(size)` over the static buffers. Lazy (default):
// a size is captured the first time a batch needs it — one eager warm-up forward_static, then
// the capture, then the first replay; eager_capture: every size in capture(), over dummy-only
// batches. Each capture logs its time and the device memory it took.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph_config.hpp"
#include "graph_driver.hpp"
#include "padded_batch.hpp"
#include "plinth/ext_cuda.h"
#include "plinth/kv_cache.h"
#include "plinth/plugin.hpp"

namespace plinth::cuda_graph {

class GraphRunner {
 public:
  /// Reads args.config_json (parse_config), args.backend (must offer PLINTH_EXT_CUDA_STREAM with
  /// every function: else sdk::Error UNSUPPORTED), args.model (context_length; may be NULL when
  /// config max_blocks_per_seq is set, else INVALID_ARGUMENT) and args.kv_cache (block size for
  /// capture(); may be NULL: then the first batch's). `driver` must not be null.
  GraphRunner(const plinth_create_args& args, std::unique_ptr<GraphDriver> driver);
  virtual ~GraphRunner() = default;
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  /// After the backend's allocate_kv: prepares the static buffers (when the kv_cache's block size
  /// is known) and, with eager_capture, captures every size. Throws sdk::Error with the
  /// extension's status, or std::runtime_error from the driver.
  void capture();
  /// True when `batch` can be replayed (eager_reason is ""). Never throws.
  bool can_run(const plinth_batch& batch);
  /// Pads `batch` to its capture size, loads it into the static buffers, captures the size's
  /// graph if not yet done, replays it and returns the logits (or argmax ids) of the real rows,
  /// as the extension's read_logits gives them. Throws std::invalid_argument for a batch
  /// can_run refuses, sdk::Error / std::runtime_error as capture().
  plinth_forward_output run(const plinth_batch& batch);

  const GraphConfig& config() const { return config_; }
  /// Capture sizes with a graph so far, ascending.
  std::vector<uint32_t> captured_sizes() const;
  uint64_t num_replays() const { return num_replays_; }
  /// The static buffers' shape (max_blocks_per_seq 0 until prepared).
  const StaticShape& shape() const { return shape_; }

 private:
  uint32_t width_for(uint32_t block_size) const;
  void ensure_static(uint32_t block_size);
  /// Warm-up forward_static, then captures the graph of `size` (over what is loaded now).
  uint32_t capture_size(uint32_t size);

  sdk::Host host_;
  GraphConfig config_;
  plinth_instance* backend_ = nullptr;
  const plinth_cuda_stream_ext* ext_ = nullptr;
  plinth_kv_cache_ref kv_cache_{};
  uint32_t context_length_ = 0;
  std::unique_ptr<GraphDriver> driver_;
  StaticShape shape_{};
  bool prepared_ = false;
  std::map<uint32_t, uint32_t> graphs_;  // capture size -> driver graph index
  PaddedBatch padded_;
  uint64_t num_replays_ = 0;
};

}  // namespace plinth::cuda_graph
