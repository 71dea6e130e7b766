// The metrics registry and its Prometheus text (exposition format 0.0.4), and the host API table
// plugins reach it through.
#include <gtest/gtest.h>

#include "runtime/host_context.hpp"
#include "runtime/metrics.hpp"

namespace {

using plinth::MetricsRegistry;

TEST(Metrics, RegisterRulesFollowTheHostApi) {
  MetricsRegistry m;
  int64_t a = m.register_metric("plinth_requests_total", "Requests", PLINTH_METRIC_COUNTER);
  EXPECT_GE(a, 0);
  EXPECT_EQ(m.register_metric("plinth_requests_total", "again", PLINTH_METRIC_COUNTER), a);
  EXPECT_EQ(m.register_metric("plinth_requests_total", "", PLINTH_METRIC_GAUGE), -1);
  EXPECT_EQ(m.register_metric("9bad", "", PLINTH_METRIC_GAUGE), -1);
  EXPECT_EQ(m.register_metric("bad-name", "", PLINTH_METRIC_GAUGE), -1);
  EXPECT_EQ(m.register_metric("ok:name_1", "", 7), -1);
  EXPECT_GE(m.register_metric("ok:name_1", "", PLINTH_METRIC_GAUGE), 0);
}

TEST(Metrics, RendersCountersGaugesAndHistograms) {
  MetricsRegistry m;
  int64_t c = m.register_metric("plinth_tokens_total", "Generated tokens", PLINTH_METRIC_COUNTER);
  int64_t g =
      m.register_metric("plinth_kv_usage", "KV cache usage\nfraction \\ 1", PLINTH_METRIC_GAUGE);
  int64_t h =
      m.register_metric("plinth_ttft_seconds", "Time to first token", PLINTH_METRIC_HISTOGRAM);
  m.add(c, 3);
  m.add(c, -1);  // ignored: counters only go up
  m.add(c, 2);
  m.set(g, 0.25);
  m.observe(h, 0.004);
  m.observe(h, 0.2);
  m.observe(h, 100);
  m.set(c, 99);     // ignored: not a gauge
  m.observe(g, 1);  // ignored: not a histogram
  m.add(42, 1);     // unknown id: ignored
  std::string text = m.render_prometheus();
  EXPECT_NE(
      text.find("# HELP plinth_tokens_total Generated tokens\n# TYPE plinth_tokens_total counter\n"
                "plinth_tokens_total 5\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# HELP plinth_kv_usage KV cache usage\\nfraction \\\\ 1\n"
                      "# TYPE plinth_kv_usage gauge\nplinth_kv_usage 0.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE plinth_ttft_seconds histogram\n"
                      "plinth_ttft_seconds_bucket{le=\"0.001\"} 0\n"
                      "plinth_ttft_seconds_bucket{le=\"0.0025\"} 0\n"
                      "plinth_ttft_seconds_bucket{le=\"0.005\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("plinth_ttft_seconds_bucket{le=\"0.25\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("plinth_ttft_seconds_bucket{le=\"60\"} 2\n"
                      "plinth_ttft_seconds_bucket{le=\"+Inf\"} 3\n"
                      "plinth_ttft_seconds_sum 100.204\n"
                      "plinth_ttft_seconds_count 3\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, LabelledSeriesShareOneFamilyAndConstantLabelsComeFirst) {
  MetricsRegistry m;
  m.set_constant_labels({{"model_name", "tiny \"q\""}, {"bad-name", "dropped"}});
  int64_t stop = m.register_metric("plinth_request_success_total", "by reason",
                                   PLINTH_METRIC_COUNTER, {{"finished_reason", "stop"}});
  int64_t other = m.register_metric("plinth_other", "", PLINTH_METRIC_GAUGE);
  int64_t length = m.register_metric("plinth_request_success_total", "by reason",
                                     PLINTH_METRIC_COUNTER, {{"finished_reason", "length"}});
  ASSERT_GE(stop, 0);
  ASSERT_GE(length, 0);
  EXPECT_NE(stop, length);
  EXPECT_EQ(m.register_metric("plinth_request_success_total", "", PLINTH_METRIC_COUNTER,
                              {{"finished_reason", "stop"}}),
            stop);
  EXPECT_EQ(m.register_metric("plinth_request_success_total", "", PLINTH_METRIC_GAUGE,
                              {{"finished_reason", "x"}}),
            -1);  // one type per family
  EXPECT_EQ(m.register_metric("plinth_x", "", PLINTH_METRIC_GAUGE, {{"le", "1"}}), -1);
  EXPECT_EQ(m.register_metric("plinth_x", "", PLINTH_METRIC_GAUGE, {{"__x", "1"}}), -1);
  EXPECT_EQ(m.id_of("plinth_other"), other);
  EXPECT_EQ(m.id_of("plinth_request_success_total"), -1);  // only labelled series
  m.add(stop, 2);
  m.add(length, 1);
  m.set(other, 0.5);
  EXPECT_EQ(
      m.render_prometheus(),
      "# HELP plinth_request_success_total by reason\n"
      "# TYPE plinth_request_success_total counter\n"
      "plinth_request_success_total{model_name=\"tiny \\\"q\\\"\",finished_reason=\"stop\"} 2\n"
      "plinth_request_success_total{model_name=\"tiny \\\"q\\\"\",finished_reason=\"length\"} "
      "1\n"
      "# HELP plinth_other \n"
      "# TYPE plinth_other gauge\n"
      "plinth_other{model_name=\"tiny \\\"q\\\"\"} 0.5\n");
}

TEST(Metrics, HistogramsTakeTheirOwnBuckets) {
  MetricsRegistry m;
  m.set_constant_labels({{"model_name", "m"}});
  EXPECT_EQ(m.register_metric("plinth_h", "", PLINTH_METRIC_HISTOGRAM, {}, {1, 1}), -1);
  EXPECT_EQ(m.register_metric("plinth_g", "", PLINTH_METRIC_GAUGE, {}, {1, 2}), -1);
  int64_t h = m.register_metric("plinth_tokens", "", PLINTH_METRIC_HISTOGRAM, {}, {1, 2, 5});
  ASSERT_GE(h, 0);
  for (double v : {1.0, 3.0, 5.0, 9.0}) m.observe(h, v);
  std::string text = m.render_prometheus();
  EXPECT_NE(text.find("plinth_tokens_bucket{model_name=\"m\",le=\"1\"} 1\n"
                      "plinth_tokens_bucket{model_name=\"m\",le=\"2\"} 1\n"
                      "plinth_tokens_bucket{model_name=\"m\",le=\"5\"} 3\n"
                      "plinth_tokens_bucket{model_name=\"m\",le=\"+Inf\"} 4\n"
                      "plinth_tokens_sum{model_name=\"m\"} 18\n"
                      "plinth_tokens_count{model_name=\"m\"} 4\n"),
            std::string::npos)
      << text;
}

TEST(HostApi, PluginsReachLoggerAndMetricsThroughTheTable) {
  plinth::HostContext host;
  const plinth_host_api* api = host.api();
  EXPECT_EQ(api->struct_size, sizeof(plinth_host_api));
  EXPECT_EQ(api->abi_major, PLINTH_ABI_MAJOR);
  EXPECT_EQ(api->abi_minor, PLINTH_ABI_MINOR);
  int64_t id = api->metric_register(api->ctx, "plugin_blocks", "Blocks", PLINTH_METRIC_GAUGE);
  ASSERT_GE(id, 0);
  api->metric_set(api->ctx, id, 7);
  api->metric_add(api->ctx, id, 1);
  EXPECT_EQ(host.metrics().value(id), 8);
  EXPECT_EQ(api->metric_register(api->ctx, nullptr, nullptr, PLINTH_METRIC_GAUGE), -1);
  host.logger().set_level(spdlog::level::warn);
  EXPECT_EQ(api->log_enabled(api->ctx, PLINTH_LOG_INFO), 0);
  EXPECT_EQ(api->log_enabled(api->ctx, PLINTH_LOG_ERROR), 1);
}

}  // namespace
