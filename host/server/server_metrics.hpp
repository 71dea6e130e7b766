#pragma once
// The serving metrics, registered in the HostContext's MetricsRegistry next to the plugins' own,
// with vLLM's names under a plinth_ prefix (docs/server.md, "Metrics", lists every series with
// its type, unit and buckets). Every series carries the server's `model_name` label (a constant
// label the Server sets). The three gauges the Gateway API Inference Extension's model-server
// protocol reads are also exported under vLLM's names (vllm:num_requests_waiting,
// vllm:num_requests_running, vllm:kv_cache_usage_perc and its older vllm:gpu_cache_usage_perc),
// so that an endpoint picker with its default flags reads plinth like vLLM.
//
// Also writes the periodic engine log line (like vLLM's "Avg prompt throughput ..."), at info,
// at most every `log_interval` seconds while requests run or wait.
//
// Updated on the engine thread; rendered by the HTTP side (the registry is thread-safe).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.hpp"
#include "engine/sequence.hpp"

namespace spdlog {
class logger;
}

namespace plinth {
class MetricsRegistry;
}

namespace plinth::server {

class ServerMetrics {
 public:
  /// `max_model_len` (tokens) bounds the per-request token histograms' buckets (1-2-5 steps up to
  /// it, as vLLM's); `max_batched_tokens` bounds the iteration-tokens histogram's (0: 16384).
  /// `logger` gets the periodic engine line; both must outlive this.
  ServerMetrics(MetricsRegistry& registry, spdlog::logger& logger, uint32_t max_model_len,
                uint32_t max_batched_tokens = 0, double log_interval = 10.0);
  /// After every engine-loop iteration; `now` in seconds on the engine's clock.
  void update(const EngineStats& stats, double now);
  /// After a step gave request `id` new tokens: one inter-token-latency observation per step.
  void on_tokens(uint64_t id, const SequenceTimings& timings, size_t num_new_tokens);
  /// When a request finishes (any reason).
  void on_finished(uint64_t id, const SequenceTimings& timings, const std::string& finish_reason);

  /// Upper bounds 1, 2, 5, 10, 20, 50, ... up to and including the first >= `max` (vLLM's
  /// build_1_2_5_buckets, which stops at <= max; plinth keeps one bound past it).
  static std::vector<double> buckets_1_2_5(double max);

 private:
  MetricsRegistry& registry_;
  spdlog::logger& logger_;
  int64_t running_, waiting_, kv_usage_, kv_used_, vllm_running_, vllm_waiting_, vllm_kv_usage_,
      vllm_gpu_usage_;
  int64_t ttft_, itl_, tpot_, e2e_, queue_, prefill_, decode_, inference_, prompt_hist_,
      generation_hist_, iteration_tokens_;
  int64_t prompt_tokens_, generation_tokens_, preemptions_, success_stop_, success_length_,
      aborted_, failed_;
  uint64_t last_preemptions_ = 0;
  uint64_t last_computed_ = 0;
  std::unordered_map<uint64_t, double> last_token_;  // request id → its latest token's time

  // The periodic log line's window.
  double log_interval_;
  double window_start_ = -1;
  uint64_t window_computed_ = 0, window_generated_ = 0;
  uint64_t window_prefix_queries_ = 0, window_prefix_hits_ = 0;
  void maybe_log(const EngineStats& s, double now);

  void update_spec(const SpecStats& s);
  int64_t drafts_ = -1, draft_tokens_ = -1, accepted_ = -1, acceptance_rate_ = -1,
          acceptance_length_ = -1;
  std::vector<int64_t> accepted_pos_;  // registered as positions appear
  SpecStats last_spec_;

  /// Forced-token drafting's counters (registered when the first forced draft is verified).
  void update_forced(const SpecStats& s);
  int64_t forced_drafts_ = -1, forced_draft_tokens_ = -1, forced_accepted_ = -1;
  SpecStats last_forced_;
};

}  // namespace plinth::server
