// DraftPolicy: the draft-length schedule by batch size (configured and default), the k that
// maximizes E(k) / C(k) at a measured acceptance, and the per-sequence pause / probe.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "draft_policy.hpp"
#include "spec_config.hpp"

using plinth::spec_decode::DraftPolicy;
using plinth::spec_decode::ScheduleRow;
using plinth::spec_decode::SpecConfig;

namespace {

SpecConfig config(uint32_t k, std::vector<ScheduleRow> schedule = {}, bool adaptive = true,
                  uint32_t probe_interval = 16) {
  SpecConfig c;
  c.num_speculative_tokens = k;
  c.draft_len_schedule = std::move(schedule);
  c.adaptive = adaptive;
  c.probe_interval = probe_interval;
  return c;
}

/// The documented objective, independently: argmax over k in 0..limit of
/// E(k) / C(k) = ((1 - α^(k+1)) / (1 - α)) / (1 + k · cost), k = 0 (ratio 1) unless beaten.
uint32_t oracle_best_k(double alpha, uint32_t limit, double cost) {
  uint32_t best = 0;
  double best_ratio = 1.0;
  for (uint32_t k = 1; k <= limit; ++k) {
    double expected = 0;  // 1 + α + ... + α^k
    for (uint32_t i = 0; i <= k; ++i) expected += std::pow(alpha, i);
    const double ratio = expected / (1.0 + k * cost);
    if (ratio > best_ratio + 1e-12) {
      best_ratio = ratio;
      best = k;
    }
  }
  return best;
}

}  // namespace

TEST(DraftPolicy, ScheduleMapsBatchSizeToK) {
  const DraftPolicy p(config(6, {{2, 6}, {8, 3}, {32, 1}}), 0.0);
  EXPECT_EQ(p.k_for_batch(1), 6u);
  EXPECT_EQ(p.k_for_batch(2), 6u);
  EXPECT_EQ(p.k_for_batch(3), 3u);
  EXPECT_EQ(p.k_for_batch(8), 3u);
  EXPECT_EQ(p.k_for_batch(9), 1u);
  EXPECT_EQ(p.k_for_batch(32), 1u);
  EXPECT_EQ(p.k_for_batch(33), 0u);  // above the last row: no speculation
  EXPECT_EQ(p.k_for_batch(100000), 0u);
  // A row's k is clamped to num_speculative_tokens; a row of 0 turns speculation off there.
  const DraftPolicy q(config(3, {{4, 8}, {16, 0}, {64, 2}}), 0.0);
  EXPECT_EQ(q.k_for_batch(1), 3u);
  EXPECT_EQ(q.k_for_batch(10), 0u);
  EXPECT_EQ(q.k_for_batch(64), 2u);
}

TEST(DraftPolicy, DefaultSchedule) {
  // k up to 4 sequences, k / 2 up to 16, none above.
  const DraftPolicy p(config(6), 0.0);
  for (uint32_t b = 1; b <= 4; ++b) EXPECT_EQ(p.k_for_batch(b), 6u) << b;
  for (uint32_t b = 5; b <= 16; ++b) EXPECT_EQ(p.k_for_batch(b), 3u) << b;
  EXPECT_EQ(p.k_for_batch(17), 0u);
  EXPECT_EQ(p.k_for_batch(1000), 0u);
  EXPECT_EQ(DraftPolicy(config(5), 0.0).k_for_batch(16), 2u);
  EXPECT_EQ(DraftPolicy(config(1), 0.0).k_for_batch(16), 1u);  // k / 2 rounds up to 1 draft
  // Model-drafted methods stop after 4 sequences.
  SpecConfig model_drafted = config(4);
  model_drafted.method = plinth::spec_decode::Method::kLayerSkip;
  EXPECT_EQ(DraftPolicy(model_drafted, 0.4).k_for_batch(4), 4u);
  EXPECT_EQ(DraftPolicy(model_drafted, 0.4).k_for_batch(5), 0u);
}

TEST(DraftPolicy, BestKIsZeroWithoutAcceptanceAndGrowsWithIt) {
  const DraftPolicy p(config(16), 0.0);  // cost per token: 0 (draft) + 0.25 (verify, default)
  for (uint32_t limit : {0u, 1u, 4u, 16u}) EXPECT_EQ(p.best_k(0.0, limit), 0u);
  EXPECT_EQ(p.best_k(0.2, 16), 0u);  // E(1) / C(1) = 1.2 / 1.25 < 1: plain decoding wins
  uint32_t last = 0;
  for (int i = 0; i <= 99; ++i) {
    const double alpha = i / 100.0;
    const uint32_t k = p.best_k(alpha, 16);
    EXPECT_GE(k, last) << "alpha " << alpha;
    EXPECT_LE(k, 16u);
    EXPECT_EQ(k, oracle_best_k(alpha, 16, 0.25)) << "alpha " << alpha;
    last = k;
  }
  EXPECT_GT(p.best_k(0.9, 16), p.best_k(0.6, 16));
  EXPECT_GT(p.best_k(0.6, 16), 0u);
  EXPECT_EQ(p.best_k(0.99, 4), 4u);  // clamped to the limit
  // A costlier draft pays off later.
  const DraftPolicy costly(config(16), 1.0);
  EXPECT_LT(costly.best_k(0.9, 16), p.best_k(0.9, 16));
  EXPECT_EQ(costly.best_k(0.9, 16), oracle_best_k(0.9, 16, 1.25));
}

TEST(DraftPolicy, RejectedSequencePausesAndProbes) {
  DraftPolicy p(config(4, {}, true, 4), 0.0);
  // Sequence 9 accepts everything, so the method as a whole works: only 7's own α drops.
  auto healthy = [&] { p.observe(9, 4, 4); };
  for (int i = 0; i < 4; ++i) healthy();
  const uint32_t fresh = p.k_for_seq(7, 4);
  EXPECT_GT(fresh, 0u);    // a new sequence starts from the method's (high) acceptance
  p.observe(7, fresh, 0);  // every draft rejected
  // The prior counts as 3 trials: a few more rejections, each drafting less, and it pauses.
  uint32_t last = fresh;
  int rejections = 1;
  for (uint32_t k; (k = p.k_for_seq(7, 4)) > 0; ++rejections) {
    ASSERT_LT(rejections, 8) << "rejections must pause the sequence";
    EXPECT_LE(k, last);
    last = k;
    p.observe(7, k, 0);
    healthy();
  }
  EXPECT_GE(rejections, 2) << "one rejection alone does not pause a new sequence";
  // Paused (that 0 was the pause's first step): then one probe every probe_interval steps.
  std::vector<uint32_t> ks;
  for (int step = 0; step < 11; ++step) {
    const uint32_t k = p.k_for_seq(7, 4);
    ks.push_back(k);
    if (k > 0) p.observe(7, k, 0);  // the probe is rejected too
    healthy();
  }
  EXPECT_EQ(ks, (std::vector<uint32_t>{0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  // Other sequences start from the method's acceptance, not 7's.
  EXPECT_GT(p.k_for_seq(8, 4), 0u);
  // A probe that is accepted resumes drafting.
  for (int step = 0; step < 3; ++step) ASSERT_EQ(p.k_for_seq(7, 4), 0u);
  ASSERT_EQ(p.k_for_seq(7, 4), 1u);
  p.observe(7, 1, 1);
  EXPECT_GT(p.k_for_seq(7, 4), 0u);
  // release forgets the sequence: it starts fresh.
  p.observe(7, 4, 0);
  EXPECT_EQ(p.k_for_seq(7, 4), 0u);
  p.release(7);
  EXPECT_GT(p.k_for_seq(7, 4), 0u);
}

TEST(DraftPolicy, AMethodThatFailsEverywhereStopsForNewSequencesAndProbesRarely) {
  DraftPolicy p(config(4, {}, true, 4), 0.0);
  EXPECT_NEAR(p.method_alpha(), 0.7, 1e-12);  // no evidence yet: the optimistic prior
  // Ten sequences, every draft rejected.
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    for (uint32_t k; (k = p.k_for_seq(seq, 4)) > 0;) p.observe(seq, k, 0);
  }
  EXPECT_LT(p.method_alpha(), 0.1);
  // A new sequence starts paused, and a paused one probes every 8 × probe_interval steps.
  EXPECT_EQ(p.k_for_seq(11, 4), 0u);
  int probes = 0;
  for (int step = 0; step < 64; ++step) probes += p.k_for_seq(11, 4) > 0 ? 1 : 0;
  EXPECT_EQ(probes, 2);  // 65 steps at one probe per 32
}

TEST(DraftPolicy, HighAcceptanceDraftsMore) {
  DraftPolicy p(config(8, {}, true, 16), 0.0);
  for (int i = 0; i < 20; ++i) p.observe(1, 8, 8);  // every draft kept
  for (int i = 0; i < 20; ++i) p.observe(2, 8, 1);  // one of eight
  const uint32_t high = p.k_for_seq(1, 8), low = p.k_for_seq(2, 8);
  EXPECT_EQ(high, 8u);
  EXPECT_LT(low, high);
  EXPECT_EQ(p.k_for_seq(1, 3), 3u);  // never above the limit
}

TEST(DraftPolicy, NotAdaptiveReturnsTheLimit) {
  DraftPolicy p(config(4, {}, false, 2), 0.0);
  for (int i = 0; i < 10; ++i) p.observe(1, 4, 0);
  for (int step = 0; step < 5; ++step) EXPECT_EQ(p.k_for_seq(1, 3), 3u);
  EXPECT_EQ(p.k_for_seq(1, 0), 0u);
  EXPECT_EQ(p.k_for_seq(1, 16), 16u);
}
