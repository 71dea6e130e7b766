#pragma once
// The serving metrics, registered in the HostContext's MetricsRegistry next to the plugins' own
// (plinth_kv_*, plinth_sched_*), with vLLM's names under a plinth_ prefix:
//   plinth_num_requests_running / _waiting      gauges, from the scheduler
//   plinth_kv_cache_usage_perc                   gauge, used KV blocks / all blocks, 0..1
//   plinth_kv_cache_used_blocks                  gauge, blocks with a reference
//   plinth_time_to_first_token_seconds           histogram, arrival → first token
//   plinth_time_per_output_token_seconds         histogram, per request: (finish − first) / (n − 1)
//   plinth_e2e_request_latency_seconds           histogram, arrival → finish
//   plinth_prompt_tokens_total, plinth_generation_tokens_total   counters, finished requests
//   plinth_num_preemptions_total                 counter
//   plinth_request_success_total, plinth_request_aborted_total,
//   plinth_request_failure_total   counters
// and, with a speculator (vLLM's spec_decode metrics):
//   plinth_spec_decode_num_drafts_total, _num_draft_tokens_total, _num_accepted_tokens_total
//                                                counters
//   plinth_spec_decode_num_accepted_tokens_pos<j>_total   counter per draft position j
//   plinth_spec_decode_acceptance_rate           gauge, accepted / draft tokens
//   plinth_spec_decode_mean_acceptance_length    gauge, 1 + accepted / drafts
// Updated on the engine thread; rendered by the HTTP side (the registry is thread-safe).

#include <cstdint>
#include <vector>

#include "engine/engine.hpp"
#include "engine/sequence.hpp"

namespace plinth {
class MetricsRegistry;
}

namespace plinth::server {

class ServerMetrics {
 public:
  explicit ServerMetrics(MetricsRegistry& registry);
  /// After every engine-loop iteration.
  void update(const EngineStats& stats);
  /// When a request finishes (any reason).
  void on_finished(const SequenceTimings& timings, const std::string& finish_reason);

 private:
  MetricsRegistry& registry_;
  int64_t running_, waiting_, kv_usage_, kv_used_, ttft_, tpot_, e2e_, prompt_tokens_,
      generation_tokens_, preemptions_, success_, aborted_, failed_;
  uint64_t last_preemptions_ = 0;
  void update_spec(const SpecStats& s);
  int64_t drafts_ = -1, draft_tokens_ = -1, accepted_ = -1, acceptance_rate_ = -1,
          acceptance_length_ = -1;
  std::vector<int64_t> accepted_pos_;  // registered as positions appear
  SpecStats last_spec_;
};

}  // namespace plinth::server
