#pragma once
// The host's metrics registry: counters, gauges and histograms registered by the host and by
// plugins (through plinth_host_api), rendered as Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/) for `/metrics`.
//
// A metric is one series: a name plus an optional label set. Series of one name form a family
// (one `# HELP` / `# TYPE`, rendered together). Constant labels (the server's `model_name`) are
// put on every sample of every series, the plugins' included.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plinth/host_api.h"

namespace plinth {

class MetricsRegistry {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  /// Upper bounds (seconds) of a histogram's buckets when it is registered without its own;
  /// +Inf is implicit.
  static const std::vector<double>& histogram_buckets();
  /// True when `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*.
  static bool valid_name(std::string_view name);
  /// True when `name` matches [a-zA-Z_][a-zA-Z0-9_]* and does not start with "__"; "le" is
  /// reserved for histogram buckets.
  static bool valid_label_name(std::string_view name);

  /// Registers a series and returns its id (>= 0); -1 for an invalid metric or label name, a
  /// type outside plinth_metric_type, a name already registered with another type, or
  /// `buckets` not strictly increasing (or given for a non-histogram). The same name, type and
  /// labels twice give the same id. `buckets`: a histogram's upper bounds, empty for
  /// histogram_buckets(). Thread-safe, like every member.
  int64_t register_metric(std::string_view name, std::string_view help, int32_t type,
                          const Labels& labels = {}, const std::vector<double>& buckets = {});
  /// Labels added to every sample (first, in this order), e.g. {{"model_name", "m"}}. Invalid
  /// label names are dropped. Call before serving; replaces the previous set.
  void set_constant_labels(const Labels& labels);
  /// Gauge := value. Ignored for unknown ids and non-gauges.
  void set(int64_t id, double value);
  /// Counter or gauge += delta (a counter ignores delta < 0). Ignored for unknown ids.
  void add(int64_t id, double delta);
  /// Records one histogram observation. Ignored for unknown ids and non-histograms.
  void observe(int64_t id, double value);
  /// The id of the label-less series `name`, -1 when none is registered.
  int64_t id_of(std::string_view name) const;
  /// Current value of a counter or gauge (0 for unknown ids); the count of a histogram.
  double value(int64_t id) const;

  /// Every family in order of its first registration: `# HELP`, `# TYPE`, then each series'
  /// samples; histograms as cumulative `_bucket{le="..."}`, `_sum`, `_count`.
  std::string render_prometheus() const;

 private:
  struct Metric {
    std::string name;
    std::string help;
    plinth_metric_type type;
    std::string labels;             // rendered `k="v",...` without the constant labels
    double value = 0;               // counter, gauge; histogram sum
    uint64_t count = 0;             // histogram observations
    std::vector<double> bounds;     // histogram upper bounds
    std::vector<uint64_t> buckets;  // histogram, per bound (not cumulative)
  };
  Metric* find(int64_t id);
  void render(const Metric& m, std::string& out) const;

  mutable std::mutex mutex_;
  std::vector<Metric> metrics_;
  std::unordered_map<std::string, int64_t> by_key_;  // name + '{' + labels
  std::string constant_labels_;                      // rendered
};

}  // namespace plinth
