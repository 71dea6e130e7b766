#include "server/server_metrics.hpp"

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
}

void ServerMetrics::on_finished(const SequenceTimings& t, const std::string& reason) {
  if (t.first_token > 0) registry_.observe(ttft_, t.ttft());
  if (t.num_generated_tokens > 1 && t.finished > 0) registry_.observe(tpot_, t.tpot());
  if (t.finished > 0) registry_.observe(e2e_, t.finished - t.arrival);
  registry_.add(prompt_tokens_, t.num_prompt_tokens);
  registry_.add(generation_tokens_, t.num_generated_tokens);
  registry_.add(reason == "abort" ? aborted_ : success_, 1);
}

}  // namespace plinth::server
