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

// `name="value"` (value escaped: backslash, double quote, line feed), comma-separated.
void append_label(std::string& out, std::string_view name, std::string_view value) {
  if (!out.empty()) out += ',';
  out += name;
  out += "=\"";
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
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

bool MetricsRegistry::valid_label_name(std::string_view name) {
  if (name.empty() || name == "le" || name.rfind("__", 0) == 0) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

int64_t MetricsRegistry::register_metric(std::string_view name, std::string_view help, int32_t type,
                                         const Labels& labels, const std::vector<double>& buckets) {
  if (!valid_name(name) || type < PLINTH_METRIC_COUNTER || type > PLINTH_METRIC_HISTOGRAM) {
    return -1;
  }
  if (!buckets.empty() && type != PLINTH_METRIC_HISTOGRAM) return -1;
  for (size_t i = 1; i < buckets.size(); ++i) {
    if (!(buckets[i] > buckets[i - 1])) return -1;
  }
  std::string rendered;
  for (const auto& [k, v] : labels) {
    if (!valid_label_name(k)) return -1;
    append_label(rendered, k, v);
  }
  std::lock_guard lock(mutex_);
  for (const Metric& m : metrics_) {  // one type per family
    if (m.name == name && m.type != type) return -1;
  }
  const std::string key = std::string(name) + "{" + rendered;
  if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;
  Metric m{std::string(name),
           std::string(help),
           static_cast<plinth_metric_type>(type),
           rendered,
           0,
           0,
           {},
           {}};
  if (m.type == PLINTH_METRIC_HISTOGRAM) {
    m.bounds = buckets.empty() ? histogram_buckets() : buckets;
    m.buckets.assign(m.bounds.size(), 0);
  }
  auto id = static_cast<int64_t>(metrics_.size());
  metrics_.push_back(std::move(m));
  by_key_.emplace(key, id);
  return id;
}

void MetricsRegistry::set_constant_labels(const Labels& labels) {
  std::string rendered;
  for (const auto& [k, v] : labels) {
    if (valid_label_name(k)) append_label(rendered, k, v);
  }
  std::lock_guard lock(mutex_);
  constant_labels_ = std::move(rendered);
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
  for (size_t i = 0; i < m->bounds.size(); ++i) {
    if (value <= m->bounds[i]) {
      ++m->buckets[i];
      break;
    }
  }
  ++m->count;
  m->value += value;
}

int64_t MetricsRegistry::id_of(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = by_key_.find(std::string(name) + "{");
  return it == by_key_.end() ? -1 : it->second;
}

double MetricsRegistry::value(int64_t id) const {
  std::lock_guard lock(mutex_);
  if (id < 0 || static_cast<size_t>(id) >= metrics_.size()) return 0;
  const Metric& m = metrics_[static_cast<size_t>(id)];
  return m.type == PLINTH_METRIC_HISTOGRAM ? static_cast<double>(m.count) : m.value;
}

// One series' samples; `le` goes last, after the constant and the series' own labels.
void MetricsRegistry::render(const Metric& m, std::string& out) const {
  std::string labels = constant_labels_;
  if (!labels.empty() && !m.labels.empty()) labels += ',';
  labels += m.labels;
  const std::string braced = labels.empty() ? "" : "{" + labels + "}";
  if (m.type != PLINTH_METRIC_HISTOGRAM) {
    out += m.name + braced + " " + format_value(m.value) + "\n";
    return;
  }
  const std::string prefix = labels.empty() ? "{" : "{" + labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < m.bounds.size(); ++i) {
    cumulative += m.buckets[i];
    out += m.name + "_bucket" + prefix + "le=\"" + format_value(m.bounds[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += m.name + "_bucket" + prefix + "le=\"+Inf\"} " + std::to_string(m.count) + "\n";
  out += m.name + "_sum" + braced + " " + format_value(m.value) + "\n";
  out += m.name + "_count" + braced + " " + std::to_string(m.count) + "\n";
}

std::string MetricsRegistry::render_prometheus() const {
  std::lock_guard lock(mutex_);
  std::string out;
  std::vector<bool> done(metrics_.size(), false);
  for (size_t i = 0; i < metrics_.size(); ++i) {
    if (done[i]) continue;
    const Metric& first = metrics_[i];
    out += "# HELP " + first.name + " " + escape_help(first.help) + "\n";
    out += "# TYPE " + first.name + " " + std::string(type_name(first.type)) + "\n";
    for (size_t j = i; j < metrics_.size(); ++j) {  // the family's series together
      if (!done[j] && metrics_[j].name == first.name) {
        render(metrics_[j], out);
        done[j] = true;
      }
    }
  }
  return out;
}

}  // namespace plinth
