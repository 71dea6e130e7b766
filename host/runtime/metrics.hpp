#pragma once
// The host's metrics registry: counters, gauges and histograms registered by the host and by
// plugins (through plinth_host_api), rendered as Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/) for `/metrics`.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plinth/host_api.h"

namespace plinth {

class MetricsRegistry {
 public:
  /// Upper bounds (seconds) of every histogram's buckets; +Inf is implicit.
  static const std::vector<double>& histogram_buckets();
  /// True when `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*.
  static bool valid_name(std::string_view name);

  /// Registers a metric and returns its id (>= 0); -1 for an invalid name, a type outside
  /// plinth_metric_type, or a name already registered with another type. The same name and type
  /// twice give the same id. Thread-safe, like every member.
  int64_t register_metric(std::string_view name, std::string_view help, int32_t type);
  /// Gauge := value. Ignored for unknown ids and non-gauges.
  void set(int64_t id, double value);
  /// Counter or gauge += delta (a counter ignores delta < 0). Ignored for unknown ids.
  void add(int64_t id, double delta);
  /// Records one histogram observation. Ignored for unknown ids and non-histograms.
  void observe(int64_t id, double value);
  /// Current value of a counter or gauge (0 for unknown ids); the count of a histogram.
  double value(int64_t id) const;

  /// Every metric in registration order: `# HELP`, `# TYPE`, samples; histograms as cumulative
  /// `_bucket{le="..."}`, `_sum`, `_count`.
  std::string render_prometheus() const;

 private:
  struct Metric {
    std::string name;
    std::string help;
    plinth_metric_type type;
    double value = 0;               // counter, gauge; histogram sum
    uint64_t count = 0;             // histogram observations
    std::vector<uint64_t> buckets;  // histogram, per bound (not cumulative)
  };
  Metric* find(int64_t id);

  mutable std::mutex mutex_;
  std::vector<Metric> metrics_;
  std::unordered_map<std::string, int64_t> by_name_;
};

}  // namespace plinth
