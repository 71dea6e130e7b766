#include "engine/grammar_metrics.hpp"

#include "runtime/metrics.hpp"

namespace plinth {

const std::vector<double>& GrammarMetrics::mask_buckets() {
  static const std::vector<double> b = {1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                        5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1};
  return b;
}

const std::vector<double>& GrammarMetrics::compile_buckets() {
  static const std::vector<double> b = {1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
                                        0.1,  0.25,   0.5,  1.0,  2.5,    5.0,  10.0, 30.0};
  return b;
}

GrammarMetrics::GrammarMetrics(MetricsRegistry& r) : registry_(r) {
  auto counter = [&](const char* name, const char* help) {
    return r.register_metric(name, help, PLINTH_METRIC_COUNTER);
  };
  compile_seconds_ = r.register_metric(
      "plinth_grammar_compile_seconds",
      "time of one grammar compile call (cache hits, compiles and refusals), seconds",
      PLINTH_METRIC_HISTOGRAM, {}, compile_buckets());
  mask_seconds_ = r.register_metric("plinth_grammar_mask_seconds",
                                    "time to fill one sequence's token mask, seconds",
                                    PLINTH_METRIC_HISTOGRAM, {}, mask_buckets());
  cache_hits_ = counter("plinth_grammar_compile_cache_hits_total",
                        "compile calls the grammar plugin answered from its cache");
  compiles_ = counter("plinth_grammar_compiles_total",
                      "compile calls that compiled (grammar cache misses)");
  refused_ = counter("plinth_grammar_compile_refused_total",
                     "compile calls refused (a malformed, unsupported or over-large constraint)");
  constrained_ = counter("plinth_grammar_constrained_requests_total",
                         "requests (each of n choices) that entered the engine with a constraint");
  last_.struct_size = sizeof last_;
}

void GrammarMetrics::on_compile(double seconds, const plinth_grammar_stats& s) {
  registry_.observe(compile_seconds_, seconds);
  const std::lock_guard<std::mutex> lock(mutex_);
  auto bump = [&](int64_t id, uint64_t now, uint64_t& before) {
    if (now > before) registry_.add(id, static_cast<double>(now - before));
    if (now > before) before = now;
  };
  bump(cache_hits_, s.num_cache_hits, last_.num_cache_hits);
  bump(compiles_, s.num_compiles, last_.num_compiles);
  bump(refused_, s.num_refused, last_.num_refused);
}

void GrammarMetrics::on_mask(double seconds) {
  registry_.observe(mask_seconds_, seconds);
}

void GrammarMetrics::on_constrained_request() {
  registry_.add(constrained_, 1);
}

}  // namespace plinth
