#pragma once
// The host's measurements of structured outputs (docs/server.md, "Metrics"): how long compiling a
// constraint takes, how long filling one sequence's token mask takes, the grammar plugin's
// compile-cache hits, compiles and refusals, and the requests that entered the engine with a
// constraint. Measured by the host around the plugin's calls (engine/grammar.hpp), so they hold
// for any grammar plugin.

#include <cstdint>
#include <mutex>
#include <vector>

#include "plinth/plinth.h"

namespace plinth {

class MetricsRegistry;

/// Registers the grammar series in a MetricsRegistry and records into them. Thread-safe (compile
/// runs on any thread, masks on the engine thread; the registry is thread-safe and the counters
/// taken from the plugin's stats are guarded here).
class GrammarMetrics {
 public:
  /// Upper bounds (seconds) of the mask-time histogram: 1 µs .. 100 ms (a mask over a
  /// 49,152-token vocabulary takes microseconds to a millisecond).
  static const std::vector<double>& mask_buckets();
  /// Upper bounds (seconds) of the compile-time histogram: 100 µs .. 30 s (a cache hit takes
  /// microseconds, a large JSON Schema up to the plugin's time cap).
  static const std::vector<double>& compile_buckets();

  /// Registers plinth_grammar_compile_seconds, plinth_grammar_mask_seconds (histograms),
  /// plinth_grammar_compile_cache_hits_total, plinth_grammar_compiles_total,
  /// plinth_grammar_compile_refused_total and plinth_grammar_constrained_requests_total
  /// (counters). `registry` must outlive this.
  explicit GrammarMetrics(MetricsRegistry& registry);

  /// One compile call that took `seconds` (a cache hit, a compile or a refusal), and the plugin's
  /// counters read after it: their growth since the last call is added to the counters.
  void on_compile(double seconds, const plinth_grammar_stats& stats);
  /// One fill of one sequence's mask that took `seconds`.
  void on_mask(double seconds);
  /// A request (each of n choices counts) entered the engine with a constraint.
  void on_constrained_request();

 private:
  MetricsRegistry& registry_;
  int64_t compile_seconds_, mask_seconds_, cache_hits_, compiles_, refused_, constrained_;
  std::mutex mutex_;  // guards last_
  plinth_grammar_stats last_{};
};

}  // namespace plinth
