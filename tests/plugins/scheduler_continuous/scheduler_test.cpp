// Scheduler against the real kv_paged core: chunked prefill, preemption + recompute, policies,
// admission rules, refusals, aborts, draft truncation.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness.hpp"

using namespace plinth::test;
using plinth::scheduler_continuous::Policy;

namespace {
uint32_t new_tokens_of(const plinth_sched_output& out, plinth_seq_id seq) {
  for (uint32_t i = 0; i < out.num_scheduled; ++i) {
    if (out.seqs[i] == seq) return out.num_new_tokens[i];
  }
  return 0;
}
}  // namespace

TEST(Scheduler, ChunkedPrefillSplitsLongPromptAndMixesWithDecode) {
  Harness h(16, 256, 0.0, config(8, 64));
  h.add(1, 4, 100);
  auto out = h.step();  // A's whole prompt
  EXPECT_EQ(new_tokens_of(out, 1), 4u);
  h.add(2, 200, 210);
  out = h.step();
  EXPECT_EQ(out.num_scheduled, 2u);
  EXPECT_EQ(new_tokens_of(out, 1), 1u);   // decode
  EXPECT_EQ(new_tokens_of(out, 2), 63u);  // first chunk: the rest of the budget
  EXPECT_EQ(out.num_batched_tokens, 64u);
  out = h.step();
  EXPECT_EQ(new_tokens_of(out, 1), 1u);
  EXPECT_EQ(new_tokens_of(out, 2), 63u);
  EXPECT_EQ(out.num_computed[1], 63u);
  out = h.step();
  EXPECT_EQ(new_tokens_of(out, 2), 63u);
  out = h.step();
  EXPECT_EQ(new_tokens_of(out, 2), 11u);      // 200 = 63 * 3 + 11
  EXPECT_EQ(h.requests[2].num_tokens, 201u);  // sampled after the last chunk
  out = h.step();
  EXPECT_EQ(new_tokens_of(out, 2), 1u);  // now decoding
}

TEST(Scheduler, LongPrefillThresholdCapsChunks) {
  auto c = config(8, 64);
  c.long_prefill_token_threshold = 16;
  Harness h(16, 256, 0.0, c);
  h.add(1, 40, 50);
  h.add(2, 40, 50);
  auto out = h.step();
  EXPECT_EQ(new_tokens_of(out, 1), 16u);
  EXPECT_EQ(new_tokens_of(out, 2), 16u);
}

TEST(Scheduler, WithoutChunkingWholePromptOrNothing) {
  Harness h(16, 256, 0.0, config(8, 64, false));
  h.add(1, 40, 50);
  h.add(2, 40, 50);
  auto out = h.step();
  EXPECT_EQ(out.num_scheduled, 1u);
  EXPECT_EQ(new_tokens_of(out, 1), 40u);
  out = h.step();  // 1 decode + 40 prompt fit 64
  EXPECT_EQ(new_tokens_of(out, 1), 1u);
  EXPECT_EQ(new_tokens_of(out, 2), 40u);
}

TEST(Scheduler, PreemptsNewestWhenPoolRunsOutAndResumedSequenceRecomputesAll) {
  // 12 blocks of 4 tokens; three requests of 8 prompt -> 24 tokens (6 blocks each) cannot all fit.
  // A fourth request waits (max_num_seqs 3): the preempted one must go ahead of it.
  Harness h(4, 12, 0.0, config(3, 64));
  h.add(1, 8, 24);
  h.add(2, 8, 24);
  h.add(3, 8, 24);
  h.add(4, 4, 8);
  auto out = h.step();
  EXPECT_EQ(out.num_scheduled, 3u);
  bool saw_preemption = false;
  bool checked_resume = false;
  for (int i = 0; i < 200 && !h.all_done(); ++i) {
    out = h.step();
    if (out.num_preempted > 0) {
      saw_preemption = true;
      EXPECT_EQ(out.preempted[0], 3u);  // the latest arrival goes first (FCFS)
      const auto& w = h.scheduler->waiting();
      ASSERT_FALSE(w.empty());
      EXPECT_EQ(w.front().seq, out.preempted[0]);  // back to the FRONT of waiting
      EXPECT_EQ(w.front().num_computed, 0u);
    }
    for (uint32_t k = 0; k < out.num_scheduled; ++k) {
      if (h.preemptions.count(out.seqs[k]) != 0 && out.num_computed[k] == 0 && !checked_resume) {
        // Resumed: prefill covers prompt + generated tokens, not just the prompt.
        EXPECT_GT(out.num_new_tokens[k], 8u);
        EXPECT_EQ(out.num_new_tokens[k] + 1, h.requests[out.seqs[k]].num_tokens);
        checked_resume = true;
      }
    }
  }
  EXPECT_TRUE(saw_preemption);
  EXPECT_TRUE(checked_resume);
  EXPECT_GT(h.scheduler->stats().num_preemptions, 0u);
  ASSERT_TRUE(h.all_done());
  for (const auto& [s, r] : h.requests) EXPECT_EQ(r.num_tokens, r.target) << "seq " << s;
  EXPECT_EQ(h.kv().num_free_blocks(), 12u);
}

TEST(Scheduler, FcfsAdmitsInArrivalOrder) {
  Harness h(16, 256, 0.0, config(1, 64));
  h.add(5, 4, 6);
  h.add(3, 4, 6);
  h.add(9, 4, 6);
  std::vector<plinth_seq_id> order;
  for (int i = 0; i < 50 && !h.all_done(); ++i) {
    auto out = h.step();
    for (uint32_t k = 0; k < out.num_scheduled; ++k) {
      if (out.num_computed[k] == 0) order.push_back(out.seqs[k]);
    }
  }
  EXPECT_EQ(order, (std::vector<plinth_seq_id>{5, 3, 9}));
}

TEST(Scheduler, PriorityPolicyAdmitsLowerValueFirst) {
  auto c = config(1, 64);
  c.policy = Policy::kPriority;
  Harness h(16, 256, 0.0, c);
  h.add(1, 4, 6, 5);
  h.add(2, 4, 6, 1);
  h.add(3, 4, 6, 3);
  h.add(4, 4, 6, 1);  // same priority as 2, later arrival
  std::vector<plinth_seq_id> order;
  for (int i = 0; i < 50 && !h.all_done(); ++i) {
    auto out = h.step();
    for (uint32_t k = 0; k < out.num_scheduled; ++k) {
      if (out.num_computed[k] == 0) order.push_back(out.seqs[k]);
    }
  }
  EXPECT_EQ(order, (std::vector<plinth_seq_id>{2, 4, 3, 1}));
}

TEST(Scheduler, PriorityPolicyPreemptsWorstPriority) {
  auto c = config(8, 64);
  c.policy = Policy::kPriority;
  Harness h(4, 12, 0.0, c);
  h.add(1, 8, 24, 9);  // worst priority, earliest arrival
  h.add(2, 8, 24, 0);
  h.add(3, 8, 24, 1);
  std::vector<plinth_seq_id> preempted;
  for (int i = 0; i < 200 && !h.all_done(); ++i) {
    auto out = h.step();
    for (uint32_t k = 0; k < out.num_preempted; ++k) preempted.push_back(out.preempted[k]);
  }
  ASSERT_FALSE(preempted.empty());
  EXPECT_EQ(preempted[0], 1u);
  ASSERT_TRUE(h.all_done());
}

TEST(Scheduler, WatermarkHoldsBackAdmissionButNotTheFirstSequence) {
  Harness h(4, 10, 0.5, config(8, 64));  // watermark 5 blocks
  EXPECT_EQ(h.scheduler->watermark_blocks(), 5u);
  h.add(1, 24, 26);  // 6 blocks: more than total - watermark, admitted since nothing runs
  auto out = h.step();
  EXPECT_EQ(new_tokens_of(out, 1), 24u);
  h.add(2, 4, 6);  // 1 block: 4 free - 1 < 5 -> held back
  out = h.step();
  EXPECT_EQ(new_tokens_of(out, 2), 0u);
  EXPECT_EQ(h.scheduler->stats().num_waiting, 1u);
}

TEST(Scheduler, AddRefusals) {
  Harness h(16, 8, 0.0, config(8, 64, false));
  plinth_sched_request r{};
  r.struct_size = sizeof(r);
  r.seq = 1;
  r.num_prompt_tokens = 0;
  EXPECT_THROW(h.scheduler->add(r), std::invalid_argument);
  r.num_prompt_tokens = 100;
  r.max_tokens = 100;  // 200 tokens = 13 blocks > 8
  try {
    h.scheduler->add(r);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("13 blocks of 16, the pool has 8"), std::string::npos)
        << e.what();
  }
  r.max_tokens = 20;  // 120 tokens fit the pool but not a 64-token step without chunking
  EXPECT_THROW(h.scheduler->add(r), std::invalid_argument);
  r.num_prompt_tokens = 10;
  h.scheduler->add(r);
  EXPECT_THROW(h.scheduler->add(r), std::invalid_argument);  // duplicate
  EXPECT_EQ(h.scheduler->stats().num_waiting, 1u);
}

TEST(Scheduler, AbortAnywhereFreesKv) {
  Harness h(4, 64, 0.0, config(2, 64));
  h.add(1, 8, 30);
  h.add(2, 8, 30);
  h.add(3, 8, 30);  // waits: max_num_seqs 2
  h.step();
  EXPECT_EQ(h.kv().num_used_blocks(), 4u);
  h.abort(1);  // running
  h.abort(3);  // waiting
  h.abort(3);  // unknown now: no-op
  h.abort(77);
  EXPECT_EQ(h.kv().num_used_blocks(), 2u);
  EXPECT_EQ(h.scheduler->stats().num_running, 1u);
  EXPECT_EQ(h.scheduler->stats().num_waiting, 0u);
  // A result for a sequence aborted between schedule and update is ignored.
  plinth_sched_step st{sizeof(plinth_sched_step), 0};
  auto out = h.scheduler->schedule(st);
  ASSERT_EQ(out.num_scheduled, 1u);
  h.scheduler->abort_seq(2);
  plinth_sched_result res{2, 9, 10, 0};
  EXPECT_NO_THROW(h.scheduler->update({&res, 1}));
  EXPECT_EQ(h.kv().num_used_blocks(), 0u);
}

TEST(Scheduler, UpdateRejectsInconsistentResults) {
  Harness h(4, 64, 0.0, config(2, 64));
  h.add(1, 8, 30);
  h.add(2, 8, 30);
  plinth_sched_step st{sizeof(plinth_sched_step), 0};
  h.scheduler->schedule(st);
  plinth_sched_result too_far{1, 9, 9, 0};
  EXPECT_THROW(h.scheduler->update({&too_far, 1}), std::invalid_argument);
  plinth_sched_result fewer_tokens{1, 8, 7, 0};
  EXPECT_THROW(h.scheduler->update({&fewer_tokens, 1}), std::invalid_argument);
  plinth_sched_result twice[2] = {{1, 8, 9, 0}, {1, 8, 9, 0}};
  EXPECT_THROW(h.scheduler->update(twice), std::invalid_argument);
  EXPECT_EQ(h.scheduler->running()[0].num_computed, 0u);  // nothing changed
  plinth_sched_result ok[2] = {{1, 8, 9, 0}, {2, 8, 9, 0}};
  h.scheduler->update(ok);
  EXPECT_THROW(h.scheduler->update(ok), std::invalid_argument);  // not scheduled since
}

TEST(Scheduler, DraftSlotsAreAllocatedAndRejectedOnesTruncated) {
  Harness h(4, 64, 0.0, config(4, 64));
  h.add(1, 8, 40);
  h.step();  // prefill; 9 tokens now
  auto out = h.step(/*lookahead=*/3, /*accept_drafts=*/1);
  EXPECT_EQ(new_tokens_of(out, 1), 4u);  // 1 + 3 draft slots
  // 8 + 4 slots were allocated; 8 + 1 + 1 are valid after rejecting 2 drafts.
  EXPECT_EQ(h.kv().num_tokens(1), 10u);
  EXPECT_EQ(h.requests[1].num_tokens, 11u);
  for (int i = 0; i < 100 && !h.all_done(); ++i) h.step(3, 2);
  ASSERT_TRUE(h.all_done());
  EXPECT_EQ(h.requests[1].num_tokens, 40u);
  EXPECT_EQ(h.kv().num_free_blocks(), 64u);
}

TEST(Scheduler, DraftSlotsNeverPassTheRequestsEnd) {
  // Prompt 8, max_tokens 4 (12 tokens at most): after the prefill (9 tokens), a decode gets at
  // most 12 - 8 = 4 tokens however many draft slots are asked for.
  Harness h(4, 64, 0.0, config(4, 64));
  h.add(1, 8, 12);
  h.step();
  auto out = h.step(/*lookahead=*/10, /*accept_drafts=*/0);
  EXPECT_EQ(new_tokens_of(out, 1), 4u);
}

TEST(Scheduler, DraftSlotsAreDroppedBeforeAnyoneIsPreempted) {
  // 4 blocks of 4 tokens: two sequences of 8 tokens each fill the pool exactly (their decode at
  // position 7 fits); draft slots for either would need a fifth block. They are dropped (plain
  // decodes) instead of preempting.
  Harness h(4, 4, 0.0, config(4, 64));
  h.add(1, 7, 12);
  h.add(2, 7, 12);
  h.step();  // both prefill (7 tokens + 1 sampled = 8 each)
  auto out = h.step(/*lookahead=*/4, /*accept_drafts=*/0);
  EXPECT_EQ(out.num_preempted, 0u);
  EXPECT_EQ(new_tokens_of(out, 1), 1u);
  EXPECT_EQ(new_tokens_of(out, 2), 1u);
}
