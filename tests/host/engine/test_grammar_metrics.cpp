// engine/grammar_metrics: the grammar series on a MetricsRegistry: compile and mask times as
// histograms with their buckets, the plugin's counters turned into counter increments (growth
// only), constrained requests counted, and the Prometheus text naming each with its type.
#include "engine/grammar_metrics.hpp"

#include <gtest/gtest.h>

#include <string>

#include "runtime/metrics.hpp"

namespace plinth {
namespace {

plinth_grammar_stats stats(uint64_t compiles, uint64_t hits, uint64_t refused) {
  plinth_grammar_stats s{};
  s.struct_size = sizeof s;
  s.num_compiles = compiles;
  s.num_cache_hits = hits;
  s.num_refused = refused;
  return s;
}

TEST(GrammarMetrics, CountsCompilesMasksAndConstrainedRequests) {
  MetricsRegistry r;
  GrammarMetrics m(r);
  m.on_compile(0.020, stats(1, 0, 0));    // a miss
  m.on_compile(0.00002, stats(1, 1, 0));  // a hit
  m.on_compile(0.001, stats(1, 1, 1));    // a refusal
  m.on_compile(0.0001, stats(1, 1, 1));   // nothing new (stats read late): no change
  for (int i = 0; i < 5; ++i) m.on_mask(8e-6);
  m.on_constrained_request();
  m.on_constrained_request();
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_compile_seconds")), 4.0);  // a histogram's count
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_mask_seconds")), 5.0);
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_compiles_total")), 1.0);
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_compile_cache_hits_total")), 1.0);
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_compile_refused_total")), 1.0);
  EXPECT_EQ(r.value(r.id_of("plinth_grammar_constrained_requests_total")), 2.0);

  const std::string text = r.render_prometheus();
  EXPECT_NE(text.find("# TYPE plinth_grammar_compile_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("# TYPE plinth_grammar_mask_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("# TYPE plinth_grammar_compile_cache_hits_total counter"), std::string::npos);
  // 8 µs falls in the 1e-05 bucket (cumulative: all five), not in the 5e-06 one.
  EXPECT_NE(text.find("plinth_grammar_mask_seconds_bucket{le=\"1e-05\"} 5"), std::string::npos)
      << text;
  EXPECT_NE(text.find("plinth_grammar_mask_seconds_bucket{le=\"5e-06\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace plinth
