// engine/contract_check: each rule holds for a well-formed answer and names the plugin, what it
// did and the header for each way of breaking it (the misbehaving-plugin tests in
// tests/integration/continuous/contract_test.cpp cover the engine's reaction).
#include "engine/contract_check.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plinth::contract {
namespace {

void expect_violation(const std::optional<std::string>& why, const std::string& part) {
  ASSERT_TRUE(why.has_value()) << "expected a violation mentioning '" << part << "'";
  EXPECT_NE(why->find(part), std::string::npos) << *why;
}

TEST(ContractCheck, PluginNamesKindAndName) {
  EXPECT_EQ(plugin("kv_cache", "kv_paged"), "kv_cache 'kv_paged'");
}

TEST(ContractCheck, ScheduledIdsMustBeLiveAndDistinct) {
  const std::vector<plinth_seq_id> ids = {1, 2, 3};
  const std::vector<uint32_t> counts = {0, 0, 0};
  plinth_sched_output s{};
  s.num_scheduled = 3;
  s.seqs = ids.data();
  s.num_computed = s.num_new_tokens = counts.data();
  auto state = [](plinth_seq_id id) {
    return id <= 3 ? SeqState::kLive : id == 4 ? SeqState::kFinished : SeqState::kUnknown;
  };
  EXPECT_FALSE(scheduled_ids("scheduler 'x'", s, state));

  const std::vector<plinth_seq_id> finished = {1, 4}, unknown = {5}, twice = {2, 2};
  s.num_scheduled = 2;
  s.seqs = finished.data();
  expect_violation(scheduled_ids("scheduler 'x'", s, state),
                   "scheduler 'x' scheduled sequence 4, which is not running (it finished");
  s.num_scheduled = 1;
  s.seqs = unknown.data();
  expect_violation(scheduled_ids("scheduler 'x'", s, state), "(the host never added it)");
  s.num_scheduled = 2;
  s.seqs = twice.data();
  expect_violation(scheduled_ids("scheduler 'x'", s, state), "sequence 2 twice in one step");
  s.seqs = nullptr;
  expect_violation(scheduled_ids("scheduler 'x'", s, state), "without the seqs");
}

TEST(ContractCheck, BlockCopiesStayInThePool) {
  const std::vector<plinth_block_copy> ok = {{0, 7}}, past = {{3, 8}}, negative = {{-1, 2}};
  plinth_sched_output s{};
  s.num_copies = 1;
  s.copies = ok.data();
  EXPECT_FALSE(block_copies("scheduler 'x'", s, 8));
  s.copies = past.data();
  expect_violation(block_copies("scheduler 'x'", s, 8),
                   "asked to copy block 3 to block 8, outside the pool of 8 blocks");
  s.copies = negative.data();
  expect_violation(block_copies("scheduler 'x'", s, 8), "copy block -1 to block 2");
  s.copies = nullptr;
  expect_violation(block_copies("scheduler 'x'", s, 8), "without the copies array");
}

TEST(ContractCheck, ScheduledCountsFitTheSequence) {
  EXPECT_FALSE(scheduled_counts("s", 1, 0, 5, 5, 0));  // a whole prompt
  EXPECT_FALSE(scheduled_counts("s", 1, 4, 1, 5, 0));  // a decode
  EXPECT_FALSE(scheduled_counts("s", 1, 4, 4, 5, 3));  // a decode with 3 draft slots
  expect_violation(scheduled_counts("s", 1, 4, 0, 5, 0), "to compute tokens [4, 4)");
  expect_violation(scheduled_counts("s", 1, 5, 1, 5, 0), "but it holds 5 tokens (+0 draft slots)");
  expect_violation(scheduled_counts("s", 1, 4, 5, 5, 3), "[4, 9) but it holds 5 tokens (+3");
}

TEST(ContractCheck, BlockTablesPointIntoThePoolAndHoldThePositions) {
  plinth_kv_info pool{};
  pool.block_size = 4;
  pool.num_blocks = 8;
  const std::vector<int32_t> ok = {0, 7}, past = {0, 8}, negative = {-1, 3};
  EXPECT_FALSE(block_table("kv_cache 'k'", 2, ok, pool, 8));
  expect_violation(block_table("kv_cache 'k'", 2, past, pool, 8),
                   "kv_cache 'k' gave sequence 2 a block table whose entry 1 is block 8, outside "
                   "the pool of 8 blocks (plinth/kv_cache.h");
  expect_violation(block_table("kv_cache 'k'", 2, negative, pool, 8), "entry 0 is block -1");
  expect_violation(block_table("kv_cache 'k'", 2, ok, pool, 9),
                   "2 blocks of 4 tokens for 9 scheduled positions");
}

TEST(ContractCheck, ForwardOutputMatchesTheBatch) {
  plinth_batch b{};
  b.num_logits = 2;
  const std::vector<float> logits(2 * 5, 0.0f);
  const std::vector<int32_t> ids = {4, -1}, bad_ids = {5, 0};
  plinth_forward_output o{};
  o.num_logits = 2;
  o.vocab_size = 5;
  o.logits = logits.data();
  EXPECT_FALSE(forward_output("backend 'b'", b, o, 5));
  expect_violation(forward_output("backend 'b'", b, o, 6),
                   "returned logits rows of 5 entries for a model of 6 tokens");
  o.num_logits = 1;
  expect_violation(forward_output("backend 'b'", b, o, 5),
                   "backend 'b' returned 1 logits rows for a batch that asked for 2 (plinth/"
                   "backend.h");
  o.num_logits = 2;
  o.logits = nullptr;
  expect_violation(forward_output("backend 'b'", b, o, 5), "returned no logits for 2 rows");
  o.argmax_ids = ids.data();  // argmax ids alone do only under argmax_only
  expect_violation(forward_output("backend 'b'", b, o, 5), "returned no logits for 2 rows");
  b.argmax_only = 1;
  EXPECT_FALSE(forward_output("backend 'b'", b, o, 5));
  o.argmax_ids = bad_ids.data();
  expect_violation(forward_output("backend 'b'", b, o, 5), "argmax id 5 in row 0");
  o.argmax_ids = nullptr;
  expect_violation(forward_output("backend 'b'", b, o, 5), "no logits and no argmax_ids");
  b.num_logits = o.num_logits = 0;  // a batch of prefill chunks wants nothing
  EXPECT_FALSE(forward_output("backend 'b'", b, o, 5));
}

TEST(ContractCheck, SpecProposalHasOneRowPerSequenceAsked) {
  const std::vector<uint32_t> num = {2, 0};
  const std::vector<int32_t> tokens = {5, 6, 0, 0};
  plinth_spec_proposal p{};
  p.struct_size = sizeof p;
  p.num_seqs = 2;
  p.max_draft = 2;
  p.num_draft = num.data();
  p.draft_tokens = tokens.data();
  const std::string sp = "speculator 'x'";
  EXPECT_FALSE(spec_proposal(sp, p, 2, 100));
  expect_violation(spec_proposal(sp, p, 3, 100),
                   "speculator 'x' proposed drafts for 2 sequences when asked for 3");
  p.draft_tokens = nullptr;
  expect_violation(spec_proposal(sp, p, 2, 100), "without the num_draft / draft_tokens arrays");
  // No sequence drafts this step (spec_decode's adaptive k at 0): [num_seqs, 0] may be null.
  const std::vector<uint32_t> none = {0, 0};
  p.num_draft = none.data();
  p.max_draft = 0;
  EXPECT_FALSE(spec_proposal(sp, p, 2, 100));
  p.num_draft = nullptr;
  expect_violation(spec_proposal(sp, p, 2, 100), "without the num_draft / draft_tokens arrays");
  p.num_draft = num.data();
  p.max_draft = 2;
  p.draft_tokens = tokens.data();
  const std::vector<float> probs(2 * 2 * 99, 0.0f);
  p.draft_probs = probs.data();
  p.vocab_size = 99;
  expect_violation(spec_proposal(sp, p, 2, 100), "draft_probs rows of 99 entries");
  p.vocab_size = 100;
  EXPECT_FALSE(spec_proposal(sp, p, 2, 100));
}

TEST(ContractCheck, SpecDraftsFitTheirRowTheirLimitAndTheVocabulary) {
  const std::vector<int32_t> ok = {1, 2, 3}, bad = {1, 100};
  const std::string sp = "speculator 'x'";
  EXPECT_FALSE(spec_drafts(sp, 7, 3, 4, 3, true, ok, 100));
  expect_violation(spec_drafts(sp, 7, 5, 4, 5, true, {}, 100),
                   "proposed 5 drafts for sequence 7 in rows of 4");
  expect_violation(spec_drafts(sp, 7, 3, 4, 2, true, ok, 100),
                   "proposed 3 drafts for sequence 7, whose max_draft is 2");
  // The plain propose knows only the largest limit: the host cuts the extra drafts instead.
  EXPECT_FALSE(spec_drafts(sp, 7, 3, 4, 2, false, std::span(ok).first(2), 100));
  expect_violation(spec_drafts(sp, 7, 2, 4, 4, true, bad, 100),
                   "draft token 100 at position 1 for sequence 7, outside the vocabulary");
}

TEST(ContractCheck, SpecVerdictsStayInRangeAndGreedyOnesAreTheArgmax) {
  const std::vector<int32_t> drafts = {4, 5, 6}, target = {4, 5, 9, 1};
  plinth_spec_verify v{};
  v.seq = 3;
  v.num_draft = 3;
  v.draft_tokens = drafts.data();
  v.target_tokens = target.data();
  v.vocab_size = 10;
  const std::string sp = "speculator 'x'";
  EXPECT_FALSE(spec_verdict(sp, v, 2, 9, 10));
  expect_violation(spec_verdict(sp, v, 4, 1, 10), "accepted, next token 1");
  expect_violation(spec_verdict(sp, v, 2, 10, 10), "the vocabulary [0, 10)");
  expect_violation(spec_verdict(sp, v, 2, -1, 10), "next token -1");
  expect_violation(spec_verdict(sp, v, 3, 1, 10), "not the target's argmax");  // draft 2 != 9
  expect_violation(spec_verdict(sp, v, 1, 4, 10), "not the target's argmax");  // next != 5
  // Sampled: any prefix and any next token in range (the distribution is the plugin's to keep).
  const std::vector<float> probs(4 * 10, 0.1f);
  v.target_probs = probs.data();
  EXPECT_FALSE(spec_verdict(sp, v, 3, 1, 10));
}

}  // namespace
}  // namespace plinth::contract
