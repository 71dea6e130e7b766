#include "server/server_metrics.hpp"

#include <string>

#include "runtime/metrics.hpp"

namespace plinth::server {

ServerMetrics::ServerMetrics(MetricsRegistry& r) : registry_(r) {
  auto gauge = [&](const char* name, const char* help) {
    return r.register_metric(name, help, PLINTH_METRIC_GAUGE);
  };
  auto counter = [&](const char* name, const char* help) {
    return r.register_metric(name, help, PLINTH_METRIC_COUNTER);
  };
  auto histogram = [&](const char* name, const char* help) {
    return r.register_metric(name, help, PLINTH_METRIC_HISTOGRAM);
  };
  running_ = gauge("plinth_num_requests_running", "requests in the running batch");
  waiting_ = gauge("plinth_num_requests_waiting", "requests waiting to be scheduled");
  kv_usage_ = gauge("plinth_kv_cache_usage_perc", "KV cache usage: used blocks / all blocks (0-1)");
  kv_used_ = gauge("plinth_kv_cache_used_blocks", "KV cache blocks held by requests");
  ttft_ = histogram("plinth_time_to_first_token_seconds", "time to first token, seconds");
  tpot_ = histogram("plinth_time_per_output_token_seconds",
                    "time per output token after the first, seconds (per request)");
  e2e_ = histogram("plinth_e2e_request_latency_seconds", "arrival to finish, seconds");
  prompt_tokens_ = counter("plinth_prompt_tokens_total", "prompt tokens of finished requests");
  generation_tokens_ =
      counter("plinth_generation_tokens_total", "generated tokens of finished requests");
  preemptions_ = counter("plinth_num_preemptions_total", "sequences preempted since start");
  success_ = counter("plinth_request_success_total", "requests finished by stop or length");
  aborted_ = counter("plinth_request_aborted_total", "requests aborted (client gone, shutdown)");
  failed_ = counter("plinth_request_failure_total",
                    "requests the engine failed (a plugin broke its contract on them)");
}

void ServerMetrics::update(const EngineStats& s) {
  registry_.set(running_, s.num_running);
  registry_.set(waiting_, s.num_waiting);
  registry_.set(kv_used_, s.kv.num_used_blocks);
  registry_.set(kv_usage_, s.kv.num_blocks == 0
                               ? 0.0
                               : static_cast<double>(s.kv.num_used_blocks) / s.kv.num_blocks);
  if (s.num_preemptions > last_preemptions_) {
    registry_.add(preemptions_, static_cast<double>(s.num_preemptions - last_preemptions_));
    last_preemptions_ = s.num_preemptions;
  }
  if (s.has_speculator) update_spec(s.spec);
}

void ServerMetrics::update_spec(const SpecStats& s) {
  if (drafts_ < 0) {
    drafts_ = registry_.register_metric("plinth_spec_decode_num_drafts_total",
                                        "verified proposals of at least one draft token",
                                        PLINTH_METRIC_COUNTER);
    draft_tokens_ = registry_.register_metric("plinth_spec_decode_num_draft_tokens_total",
                                              "draft tokens verified", PLINTH_METRIC_COUNTER);
    accepted_ = registry_.register_metric("plinth_spec_decode_num_accepted_tokens_total",
                                          "draft tokens accepted", PLINTH_METRIC_COUNTER);
    acceptance_rate_ =
        registry_.register_metric("plinth_spec_decode_acceptance_rate",
                                  "accepted / draft tokens since start", PLINTH_METRIC_GAUGE);
    acceptance_length_ = registry_.register_metric(
        "plinth_spec_decode_mean_acceptance_length",
        "1 + accepted / drafts: tokens per verified proposal", PLINTH_METRIC_GAUGE);
  }
  auto bump = [&](int64_t id, uint64_t now, uint64_t before) {
    if (now > before) registry_.add(id, static_cast<double>(now - before));
  };
  bump(drafts_, s.num_drafts, last_spec_.num_drafts);
  bump(draft_tokens_, s.num_draft_tokens, last_spec_.num_draft_tokens);
  bump(accepted_, s.num_accepted_tokens, last_spec_.num_accepted_tokens);
  for (size_t j = 0; j < s.accepted_per_position.size(); ++j) {
    if (j == accepted_pos_.size()) {
      const std::string name =
          "plinth_spec_decode_num_accepted_tokens_pos" + std::to_string(j) + "_total";
      accepted_pos_.push_back(registry_.register_metric(
          name, "proposals whose draft at this position was accepted", PLINTH_METRIC_COUNTER));
    }
    const uint64_t before =
        j < last_spec_.accepted_per_position.size() ? last_spec_.accepted_per_position[j] : 0;
    bump(accepted_pos_[j], s.accepted_per_position[j], before);
  }
  registry_.set(acceptance_rate_, s.acceptance_rate());
  registry_.set(acceptance_length_, s.mean_acceptance_length());
  last_spec_ = s;
}

void ServerMetrics::on_finished(const SequenceTimings& t, const std::string& reason) {
  if (t.first_token > 0) registry_.observe(ttft_, t.ttft());
  if (t.num_generated_tokens > 1 && t.finished > 0) registry_.observe(tpot_, t.tpot());
  if (t.finished > 0) registry_.observe(e2e_, t.finished - t.arrival);
  registry_.add(prompt_tokens_, t.num_prompt_tokens);
  registry_.add(generation_tokens_, t.num_generated_tokens);
  registry_.add(reason == "abort" ? aborted_ : reason == "error" ? failed_ : success_, 1);
}

}  // namespace plinth::server
