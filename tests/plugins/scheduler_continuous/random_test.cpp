// Scheduler + real kv_paged under random add / step / abort for thousands of steps: budgets hold
// every step (checked by the harness), KV invariants hold every step, every request finishes
// (with exactly its target length, preempted or not) or is aborted, no block leaks, and under
// FCFS no request starves: each is first scheduled in arrival order and finishes within a bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "harness.hpp"

using namespace plinth::test;
using plinth::scheduler_continuous::Policy;

namespace {

struct Params {
  uint32_t block_size, num_blocks, max_seqs, max_tokens;
  bool chunked;
  Policy policy;
  uint32_t lookahead;
  uint32_t seed;
};

void run(const Params& p, int add_steps) {
  auto c = config(p.max_seqs, p.max_tokens, p.chunked);
  c.policy = p.policy;
  Harness h(p.block_size, p.num_blocks, 0.01, c);
  std::mt19937 rng(p.seed);
  auto uni = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  const uint32_t pool_tokens = p.block_size * p.num_blocks;
  const uint32_t max_len = p.chunked ? pool_tokens / 2 : std::min(pool_tokens / 2, p.max_tokens);
  plinth_seq_id next = 1;
  uint64_t preempt_steps = 0;
  for (int i = 0; i < add_steps || !h.all_done(); ++i) {
    ASSERT_LT(i, add_steps * 20) << "requests did not drain";
    if (i < add_steps && uni(0, 2) == 0) {
      uint32_t prompt = uni(1, max_len / 2);
      uint32_t target = prompt + uni(1, max_len - prompt);
      h.add(next, prompt, target, static_cast<int32_t>(uni(0, 3)));
      ++next;
    }
    if (i < add_steps && uni(0, 40) == 0 && next > 1)
      h.abort(uni(1, static_cast<uint32_t>(next - 1)));
    auto out = h.step(p.lookahead, uni(0, p.lookahead));
    if (out.num_preempted > 0) ++preempt_steps;
    if (testing::Test::HasFailure()) FAIL() << "at step " << i;
  }
  // Every request finished with its exact length or was aborted; nothing leaked.
  uint64_t preempted_and_finished = 0;
  for (const auto& [s, r] : h.requests) {
    ASSERT_TRUE(r.finished || r.aborted) << "seq " << s;
    if (r.finished) {
      EXPECT_EQ(r.num_tokens, r.target) << "seq " << s;
      if (h.preemptions.count(s)) ++preempted_and_finished;
    }
  }
  EXPECT_EQ(h.kv().num_free_blocks(), p.num_blocks);
  EXPECT_EQ(h.kv().num_seqs(), 0u);
  EXPECT_EQ(h.scheduler->stats().num_running, 0u);
  EXPECT_EQ(h.scheduler->stats().num_waiting, 0u);
  testing::Test::RecordProperty("preemption_steps", static_cast<int>(preempt_steps));
  EXPECT_GT(preempted_and_finished, 0u) << "the pool is small enough that preemption must happen";

  if (p.policy == Policy::kFcfs) {
    // No overtaking at admission: first-scheduled steps are non-decreasing in arrival order.
    uint64_t last = 0;
    uint64_t total_tokens = 0;
    for (const auto& [s, r] : h.requests) {  // seq ids ascend with arrival
      total_tokens += r.target;
      if (r.aborted && r.first_scheduled_step == UINT64_MAX) continue;
      EXPECT_GE(r.first_scheduled_step, last) << "seq " << s << " overtook an earlier arrival";
      last = r.first_scheduled_step;
      // Starvation bound: a request finishes within (all tokens of it and earlier arrivals)
      // steps of its arrival, times 2 for recompute after preemption.
      if (r.finished) {
        EXPECT_LE(r.finished_step - r.added_step, 2 * total_tokens + 8) << "seq " << s;
      }
    }
  }
}

}  // namespace

TEST(SchedulerRandom, FcfsChunkedSmallPool) {
  run({4, 48, 8, 32, true, Policy::kFcfs, 0, 11}, 3000);
}
TEST(SchedulerRandom, FcfsChunkedLookahead) {
  run({8, 40, 6, 48, true, Policy::kFcfs, 2, 12}, 3000);
}
TEST(SchedulerRandom, FcfsNoChunking) {
  run({4, 64, 8, 64, false, Policy::kFcfs, 0, 13}, 3000);
}
TEST(SchedulerRandom, PriorityChunked) {
  run({16, 24, 16, 96, true, Policy::kPriority, 0, 14}, 3000);
}
