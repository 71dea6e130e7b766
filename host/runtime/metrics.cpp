#include "runtime/metrics.hpp"

#include <charconv>
#include <cmath>

namespace plinth {

namespace {

// Prometheus float formatting: shortest round-trip decimal, +Inf/-Inf/NaN spelled its way.
std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

// HELP text escapes backslash and line feed.
std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view type_name(plinth_metric_type t) {
  switch (t) {
    case PLINTH_METRIC_COUNTER:
      return "counter";
    case PLINTH_METRIC_GAUGE:
      return "gauge";
    case PLINTH_METRIC_HISTOGRAM:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

const std::vector<double>& MetricsRegistry::histogram_buckets() {
  static const std::vector<double> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1.0,    2.5,   5.0,  10.0,  30.0, 60.0};
  return kBuckets;
}

bool MetricsRegistry::valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

int64_t MetricsRegistry::register_metric(std::string_view name, std::string_view help,
                                         int32_t type) {
  if (!valid_name(name) || type < PLINTH_METRIC_COUNTER || type > PLINTH_METRIC_HISTOGRAM) {
    return -1;
  }
  std::lock_guard lock(mutex_);
  auto it = by_name_.find(std::string(name));
  if (it != by_name_.end()) {
    return metrics_[static_cast<size_t>(it->second)].type == type ? it->second : -1;
  }
  Metric m{std::string(name), std::string(help), static_cast<plinth_metric_type>(type), 0, 0, {}};
  if (m.type == PLINTH_METRIC_HISTOGRAM) m.buckets.assign(histogram_buckets().size(), 0);
  auto id = static_cast<int64_t>(metrics_.size());
  metrics_.push_back(std::move(m));
  by_name_.emplace(std::string(name), id);
  return id;
}

MetricsRegistry::Metric* MetricsRegistry::find(int64_t id) {
  if (id < 0 || static_cast<size_t>(id) >= metrics_.size()) return nullptr;
  return &metrics_[static_cast<size_t>(id)];
}

void MetricsRegistry::set(int64_t id, double value) {
  std::lock_guard lock(mutex_);
  Metric* m = find(id);
  if (m != nullptr && m->type == PLINTH_METRIC_GAUGE) m->value = value;
}

void MetricsRegistry::add(int64_t id, double delta) {
  std::lock_guard lock(mutex_);
  Metric* m = find(id);
  if (m == nullptr || m->type == PLINTH_METRIC_HISTOGRAM) return;
  if (m->type == PLINTH_METRIC_COUNTER && !(delta >= 0)) return;
  m->value += delta;
}

void MetricsRegistry::observe(int64_t id, double value) {
  std::lock_guard lock(mutex_);
  Metric* m = find(id);
  if (m == nullptr || m->type != PLINTH_METRIC_HISTOGRAM) return;
  const std::vector<double>& bounds = histogram_buckets();
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) {
      ++m->buckets[i];
      break;
    }
  }
  ++m->count;
  m->value += value;
}

double MetricsRegistry::value(int64_t id) const {
  std::lock_guard lock(mutex_);
  if (id < 0 || static_cast<size_t>(id) >= metrics_.size()) return 0;
  const Metric& m = metrics_[static_cast<size_t>(id)];
  return m.type == PLINTH_METRIC_HISTOGRAM ? static_cast<double>(m.count) : m.value;
}

std::string MetricsRegistry::render_prometheus() const {
  std::lock_guard lock(mutex_);
  std::string out;
  const std::vector<double>& bounds = histogram_buckets();
  for (const Metric& m : metrics_) {
    out += "# HELP " + m.name + " " + escape_help(m.help) + "\n";
    out += "# TYPE " + m.name + " " + std::string(type_name(m.type)) + "\n";
    if (m.type != PLINTH_METRIC_HISTOGRAM) {
      out += m.name + " " + format_value(m.value) + "\n";
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cumulative += m.buckets[i];
      out += m.name + "_bucket{le=\"" + format_value(bounds[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += m.name + "_bucket{le=\"+Inf\"} " + std::to_string(m.count) + "\n";
    out += m.name + "_sum " + format_value(m.value) + "\n";
    out += m.name + "_count " + std::to_string(m.count) + "\n";
  }
  return out;
}

}  // namespace plinth
