#include "server/server_metrics.hpp"

#include <spdlog/spdlog.h>

#include <string>

#include "runtime/metrics.hpp"

namespace plinth::server {

namespace {

// vLLM's bucket sets (vllm/v1/metrics/loggers.py), seconds.
// Time to first token; also queue and prefill time, parts of it.
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
// Inter-token latency and time per output token: vLLM's, with 1, 2.5 and 5 ms in front (a small
// model decodes a token in under 10 ms on a CPU).
const std::vector<double> kTokenLatencyBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2,  0.3,
    0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
// Whole-request phases: end-to-end, decode, inference.
const std::vector<double> kRequestLatencyBuckets = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
// Tokens per engine step (vLLM's follow its CUDA graph sizes; powers of two here).
std::vector<double> iteration_buckets(uint32_t max_batched) {
  std::vector<double> b = {1};
  const double max = max_batched == 0 ? 16384 : max_batched;
  for (double v = 8; v < max; v *= 2) b.push_back(v);
  if (b.back() < max) b.push_back(max);
  return b;
}

}  // namespace

std::vector<double> ServerMetrics::buckets_1_2_5(double max) {
  std::vector<double> b;
  for (double decade = 1;; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      b.push_back(m * decade);
      if (m * decade >= max) return b;
    }
  }
}

ServerMetrics::ServerMetrics(MetricsRegistry& r, spdlog::logger& logger, uint32_t max_model_len,
                             uint32_t max_batched_tokens, double log_interval)
    : registry_(r), logger_(logger), log_interval_(log_interval) {
  auto gauge = [&](const char* name, const char* help) {
    return r.register_metric(name, help, PLINTH_METRIC_GAUGE);
  };
  auto counter = [&](const char* name, const char* help,
                     const MetricsRegistry::Labels& labels = {}) {
    return r.register_metric(name, help, PLINTH_METRIC_COUNTER, labels);
  };
  auto histogram = [&](const char* name, const char* help, const std::vector<double>& buckets) {
    return r.register_metric(name, help, PLINTH_METRIC_HISTOGRAM, {}, buckets);
  };
  running_ = gauge("plinth_num_requests_running", "requests in the running batch");
  waiting_ = gauge("plinth_num_requests_waiting", "requests waiting to be scheduled");
  kv_usage_ = gauge("plinth_kv_cache_usage_perc", "KV cache usage: used blocks / all blocks (0-1)");
  kv_used_ = gauge("plinth_kv_cache_used_blocks", "KV cache blocks with a reference");
  vllm_running_ = gauge("vllm:num_requests_running", "alias of plinth_num_requests_running");
  vllm_waiting_ = gauge("vllm:num_requests_waiting", "alias of plinth_num_requests_waiting");
  vllm_kv_usage_ = gauge("vllm:kv_cache_usage_perc", "alias of plinth_kv_cache_usage_perc");
  vllm_gpu_usage_ = gauge("vllm:gpu_cache_usage_perc", "alias of plinth_kv_cache_usage_perc");

  ttft_ = histogram("plinth_time_to_first_token_seconds", "arrival to first token, seconds",
                    kTtftBuckets);
  itl_ = histogram("plinth_inter_token_latency_seconds",
                   "time between a request's consecutive token-producing steps, seconds",
                   kTokenLatencyBuckets);
  tpot_ = histogram("plinth_time_per_output_token_seconds",
                    "per request: (finish - first token) / (tokens - 1), seconds",
                    kTokenLatencyBuckets);
  e2e_ = histogram("plinth_e2e_request_latency_seconds", "arrival to finish, seconds",
                   kRequestLatencyBuckets);
  queue_ = histogram("plinth_request_queue_time_seconds", "arrival to first scheduled, seconds",
                     kTtftBuckets);
  prefill_ = histogram("plinth_request_prefill_time_seconds",
                       "first scheduled to first token, seconds", kTtftBuckets);
  decode_ = histogram("plinth_request_decode_time_seconds", "first token to finish, seconds",
                      kRequestLatencyBuckets);
  inference_ = histogram("plinth_request_inference_time_seconds",
                         "first scheduled to finish, seconds", kRequestLatencyBuckets);
  const std::vector<double> per_request = buckets_1_2_5(max_model_len == 0 ? 1 : max_model_len);
  prompt_hist_ =
      histogram("plinth_request_prompt_tokens", "prompt tokens per finished request", per_request);
  generation_hist_ = histogram("plinth_request_generation_tokens",
                               "generated tokens per finished request", per_request);
  iteration_tokens_ =
      histogram("plinth_iteration_tokens", "tokens computed per engine step (prefill + decode)",
                iteration_buckets(max_batched_tokens));

  prompt_tokens_ = counter("plinth_prompt_tokens_total", "prompt tokens of finished requests");
  generation_tokens_ =
      counter("plinth_generation_tokens_total", "generated tokens of finished requests");
  preemptions_ = counter("plinth_num_preemptions_total", "sequences preempted since start");
  const char* success_help = "requests finished by a stop condition or the length limit";
  success_stop_ =
      counter("plinth_request_success_total", success_help, {{"finished_reason", "stop"}});
  success_length_ =
      counter("plinth_request_success_total", success_help, {{"finished_reason", "length"}});
  aborted_ = counter("plinth_request_aborted_total", "requests aborted (client gone, shutdown)");
  failed_ = counter("plinth_request_failure_total",
                    "requests the engine failed (a plugin broke its contract on them, or "
                    "their logits turned non-finite)");
}

void ServerMetrics::update(const EngineStats& s, double now) {
  const double usage =
      s.kv.num_blocks == 0 ? 0.0 : static_cast<double>(s.kv.num_used_blocks) / s.kv.num_blocks;
  for (int64_t id : {running_, vllm_running_}) registry_.set(id, s.num_running);
  for (int64_t id : {waiting_, vllm_waiting_}) registry_.set(id, s.num_waiting);
  for (int64_t id : {kv_usage_, vllm_kv_usage_, vllm_gpu_usage_}) registry_.set(id, usage);
  registry_.set(kv_used_, s.kv.num_used_blocks);
  if (s.num_preemptions > last_preemptions_) {
    registry_.add(preemptions_, static_cast<double>(s.num_preemptions - last_preemptions_));
    last_preemptions_ = s.num_preemptions;
  }
  if (s.num_computed_tokens > last_computed_) {
    const uint64_t step = s.num_computed_tokens - last_computed_;
    registry_.observe(iteration_tokens_, static_cast<double>(step));
    window_computed_ += step;
    last_computed_ = s.num_computed_tokens;
  }
  if (s.has_speculator) update_spec(s.spec);
  if (s.forced.num_drafts > 0) update_forced(s.forced);
  maybe_log(s, now);
}

void ServerMetrics::maybe_log(const EngineStats& s, double now) {
  const bool busy = s.num_running + s.num_waiting > 0;
  if (window_start_ < 0) {
    if (!busy) return;
    window_start_ = now;
  }
  const double elapsed = now - window_start_;
  if (elapsed < log_interval_) return;
  const int64_t queries_id = registry_.id_of("plinth_prefix_cache_queries_total");
  const int64_t hits_id = registry_.id_of("plinth_prefix_cache_hits_total");
  std::string prefix;
  if (queries_id >= 0 && hits_id >= 0) {
    const auto queries = static_cast<uint64_t>(registry_.value(queries_id));
    const auto hits = static_cast<uint64_t>(registry_.value(hits_id));
    const uint64_t dq = queries - window_prefix_queries_, dh = hits - window_prefix_hits_;
    prefix = fmt::format(", prefix cache hit rate: {:.1f}%", dq == 0 ? 0.0 : 100.0 * dh / dq);
    window_prefix_queries_ = queries;
    window_prefix_hits_ = hits;
  }
  const uint64_t prompt = window_computed_ > window_generated_
                              ? window_computed_ - window_generated_
                              : 0;  // computed tokens that were not decode steps
  const double usage = s.kv.num_blocks == 0 ? 0.0 : 100.0 * s.kv.num_used_blocks / s.kv.num_blocks;
  logger_.info(
      "engine: avg prompt throughput: {:.1f} tokens/s, avg generation throughput: {:.1f} "
      "tokens/s, running: {} reqs, waiting: {} reqs, KV cache usage: {:.1f}%{}",
      static_cast<double>(prompt) / elapsed, static_cast<double>(window_generated_) / elapsed,
      s.num_running, s.num_waiting, usage, prefix);
  window_computed_ = window_generated_ = 0;
  window_start_ = busy ? now : -1;
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

void ServerMetrics::update_forced(const SpecStats& s) {
  if (forced_drafts_ < 0) {
    forced_drafts_ = registry_.register_metric(
        "plinth_grammar_forced_drafts_total",
        "verified forced-token proposals (the tokens of bytes a grammar forces)",
        PLINTH_METRIC_COUNTER);
    forced_draft_tokens_ =
        registry_.register_metric("plinth_grammar_forced_draft_tokens_total",
                                  "forced draft tokens verified", PLINTH_METRIC_COUNTER);
    forced_accepted_ =
        registry_.register_metric("plinth_grammar_forced_accepted_tokens_total",
                                  "forced draft tokens accepted", PLINTH_METRIC_COUNTER);
  }
  auto bump = [&](int64_t id, uint64_t now, uint64_t before) {
    if (now > before) registry_.add(id, static_cast<double>(now - before));
  };
  bump(forced_drafts_, s.num_drafts, last_forced_.num_drafts);
  bump(forced_draft_tokens_, s.num_draft_tokens, last_forced_.num_draft_tokens);
  bump(forced_accepted_, s.num_accepted_tokens, last_forced_.num_accepted_tokens);
  last_forced_ = s;
}

void ServerMetrics::on_tokens(uint64_t id, const SequenceTimings& t, size_t num_new_tokens) {
  if (num_new_tokens == 0 || t.last_token <= 0) return;
  window_generated_ += num_new_tokens;
  auto [it, first] = last_token_.try_emplace(id, t.last_token);
  if (!first) {
    if (t.last_token > it->second) registry_.observe(itl_, t.last_token - it->second);
    it->second = t.last_token;
  }
}

void ServerMetrics::on_finished(uint64_t id, const SequenceTimings& t, const std::string& reason) {
  last_token_.erase(id);
  if (t.first_token > 0) registry_.observe(ttft_, t.ttft());
  if (t.num_generated_tokens > 1 && t.finished > 0) registry_.observe(tpot_, t.tpot());
  if (t.finished > 0) registry_.observe(e2e_, t.finished - t.arrival);
  if (t.scheduled > 0) {
    registry_.observe(queue_, t.scheduled - t.arrival);
    if (t.first_token > 0) registry_.observe(prefill_, t.first_token - t.scheduled);
    if (t.finished > 0) registry_.observe(inference_, t.finished - t.scheduled);
  }
  if (t.first_token > 0 && t.finished > 0) registry_.observe(decode_, t.finished - t.first_token);
  if (reason == "stop" || reason == "length") {
    registry_.observe(prompt_hist_, t.num_prompt_tokens);
    registry_.observe(generation_hist_, t.num_generated_tokens);
  }
  registry_.add(prompt_tokens_, t.num_prompt_tokens);
  registry_.add(generation_tokens_, t.num_generated_tokens);
  if (reason == "abort") {
    registry_.add(aborted_, 1);
  } else if (reason == "error") {
    registry_.add(failed_, 1);
  } else {
    registry_.add(reason == "length" ? success_length_ : success_stop_, 1);
  }
}

}  // namespace plinth::server
