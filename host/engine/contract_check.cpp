#include "engine/contract_check.hpp"

#include <unordered_set>

namespace plinth::contract {

namespace {

std::string num(uint64_t v) {
  return std::to_string(v);
}

}  // namespace

std::string plugin(std::string_view kind, std::string_view name) {
  return std::string(kind) + " '" + std::string(name) + "'";
}

std::optional<std::string> scheduled_ids(std::string_view scheduler,
                                         const plinth_sched_output& sched,
                                         const std::function<SeqState(plinth_seq_id)>& state) {
  if (sched.num_scheduled > 0 &&
      (sched.seqs == nullptr || sched.num_computed == nullptr || sched.num_new_tokens == nullptr)) {
    return std::string(scheduler) + " scheduled " + num(sched.num_scheduled) +
           " sequences without the seqs / num_computed / num_new_tokens arrays (plinth/"
           "scheduler.h: schedule fills each array with num_scheduled items)";
  }
  std::unordered_set<plinth_seq_id> seen;
  for (uint32_t i = 0; i < sched.num_scheduled; ++i) {
    const plinth_seq_id id = sched.seqs[i];
    const SeqState s = state(id);
    if (s != SeqState::kLive) {
      return std::string(scheduler) + " scheduled sequence " + num(id) +
             ", which is not running (" +
             (s == SeqState::kFinished ? "it finished or was aborted" : "the host never added it") +
             ") (plinth/scheduler.h: schedule names only sequences given to add that have not "
             "finished nor been aborted)";
    }
    if (!seen.insert(id).second) {
      return std::string(scheduler) + " scheduled sequence " + num(id) +
             " twice in one step (plinth/scheduler.h: each sequence appears at most once in "
             "plinth_sched_output.seqs)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> block_copies(std::string_view scheduler,
                                        const plinth_sched_output& sched, uint32_t num_blocks) {
  const std::string rule =
      " (plinth/scheduler.h: copies are the kv_cache's copy-on-write pairs of pool blocks, ids in "
      "[0, num_blocks))";
  if (sched.num_copies > 0 && sched.copies == nullptr) {
    return std::string(scheduler) + " asked for " + num(sched.num_copies) +
           " block copies without the copies array" + rule;
  }
  for (uint32_t i = 0; i < sched.num_copies; ++i) {
    const plinth_block_copy& c = sched.copies[i];
    for (int32_t b : {c.src, c.dst}) {
      if (b < 0 || static_cast<uint32_t>(b) >= num_blocks) {
        return std::string(scheduler) + " asked to copy block " + std::to_string(c.src) +
               " to block " + std::to_string(c.dst) + ", outside the pool of " + num(num_blocks) +
               " blocks" + rule;
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> scheduled_counts(std::string_view scheduler, plinth_seq_id seq,
                                            uint32_t num_computed, uint32_t num_new,
                                            uint32_t num_tokens, uint32_t num_lookahead) {
  const uint64_t end = uint64_t{num_computed} + num_new;
  if (num_new == 0 || num_computed >= num_tokens || end > uint64_t{num_tokens} + num_lookahead) {
    return std::string(scheduler) + " scheduled sequence " + num(seq) + " to compute tokens [" +
           num(num_computed) + ", " + num(end) + ") but it holds " + num(num_tokens) +
           " tokens (+" + num(num_lookahead) +
           " draft slots) (plinth/scheduler.h: num_new_tokens >= 1, starting at a token the "
           "sequence holds, ending at most num_lookahead_tokens past its last)";
  }
  return std::nullopt;
}

std::optional<std::string> block_table(std::string_view kv_cache, plinth_seq_id seq,
                                       std::span<const int32_t> blocks, const plinth_kv_info& pool,
                                       uint32_t num_positions) {
  if (!blocks.empty() && blocks.data() == nullptr) {
    return std::string(kv_cache) + " gave sequence " + num(seq) + " a NULL block table of " +
           num(blocks.size()) + " blocks (plinth/kv_cache.h: get_block_table points *blocks at " +
           "*num_blocks ids)";
  }
  for (size_t j = 0; j < blocks.size(); ++j) {
    if (blocks[j] < 0 || static_cast<uint32_t>(blocks[j]) >= pool.num_blocks) {
      return std::string(kv_cache) + " gave sequence " + num(seq) + " a block table whose entry " +
             num(j) + " is block " + std::to_string(blocks[j]) + ", outside the pool of " +
             num(pool.num_blocks) +
             " blocks (plinth/kv_cache.h: get_block_table returns physical block ids in [0, "
             "num_blocks))";
    }
  }
  if (uint64_t{blocks.size()} * pool.block_size < num_positions) {
    return std::string(kv_cache) + " gave sequence " + num(seq) + " " + num(blocks.size()) +
           " blocks of " + num(pool.block_size) + " tokens for " + num(num_positions) +
           " scheduled positions (plinth/kv_cache.h: after allocate(seq, n) the block table "
           "holds room for n tokens; the scheduler allocates before it schedules)";
  }
  return std::nullopt;
}

std::optional<std::string> forward_output(std::string_view runner, const plinth_batch& batch,
                                          const plinth_forward_output& fwd, uint32_t vocab_size) {
  const std::string rule =
      " (plinth/backend.h: forward returns batch->num_logits rows of "
      "vocab_size logits, or argmax_ids alone when batch->argmax_only)";
  if (fwd.num_logits != batch.num_logits) {
    return std::string(runner) + " returned " + num(fwd.num_logits) +
           " logits rows for a batch that asked for " + num(batch.num_logits) + rule;
  }
  if (batch.num_logits == 0) return std::nullopt;
  const bool argmax_enough = batch.argmax_only != 0 && fwd.argmax_ids != nullptr;
  if (fwd.logits == nullptr && !argmax_enough) {
    return std::string(runner) + " returned no logits" +
           (batch.argmax_only != 0 ? " and no argmax_ids" : "") + " for " + num(batch.num_logits) +
           " rows" + rule;
  }
  if (fwd.logits != nullptr && fwd.vocab_size != vocab_size) {
    return std::string(runner) + " returned logits rows of " + num(fwd.vocab_size) +
           " entries for a model of " + num(vocab_size) + " tokens" + rule;
  }
  if (fwd.argmax_ids != nullptr) {
    for (uint32_t r = 0; r < batch.num_logits; ++r) {
      const int32_t id = fwd.argmax_ids[r];
      if (id < -1 || (id >= 0 && static_cast<uint32_t>(id) >= vocab_size)) {
        return std::string(runner) + " returned argmax id " + std::to_string(id) + " in row " +
               num(r) + ", outside the vocabulary [0, " + num(vocab_size) +
               ") (plinth/backend.h: argmax_ids hold a token id, or -1 for a non-finite row)";
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> spec_proposal(std::string_view speculator,
                                         const plinth_spec_proposal& out, size_t num_asked,
                                         uint32_t vocab_size) {
  if (out.num_seqs != num_asked) {
    return std::string(speculator) + " proposed drafts for " + num(out.num_seqs) +
           " sequences when asked for " + num(num_asked) +
           " (plinth/speculator.h: a proposal holds one row per sequence asked, num_seqs of them)";
  }
  // draft_tokens is [num_seqs, max_draft]: with max_draft 0 (no sequence drafts this step) it
  // holds nothing and may be null.
  if (out.num_seqs > 0 &&
      (out.num_draft == nullptr || (out.max_draft > 0 && out.draft_tokens == nullptr))) {
    return std::string(speculator) + " answered for " + num(out.num_seqs) +
           " sequences without the num_draft / draft_tokens arrays (plinth/speculator.h: "
           "num_draft[num_seqs] and draft_tokens[num_seqs, max_draft])";
  }
  const bool has_probs =
      PLINTH_HAS_FIELD(&out, plinth_spec_proposal, draft_probs) && out.draft_probs != nullptr;
  if (has_probs && out.vocab_size != vocab_size) {
    return std::string(speculator) + " gave draft_probs rows of " + num(out.vocab_size) +
           " entries for a model of " + num(vocab_size) +
           " tokens (plinth/speculator.h: draft_probs is [num_seqs, max_draft, vocab_size])";
  }
  return std::nullopt;
}

std::optional<std::string> spec_drafts(std::string_view speculator, plinth_seq_id seq,
                                       uint32_t num_draft, uint32_t row_stride, uint32_t limit,
                                       bool batch_api, std::span<const int32_t> row,
                                       uint32_t vocab_size) {
  if (num_draft > row_stride) {
    return std::string(speculator) + " proposed " + num(num_draft) + " drafts for sequence " +
           num(seq) + " in rows of " + num(row_stride) +
           " (plinth/speculator.h: num_draft[i] is 0..max_draft, the row stride of draft_tokens)";
  }
  if (batch_api && num_draft > limit) {
    return std::string(speculator) + " proposed " + num(num_draft) + " drafts for sequence " +
           num(seq) + ", whose max_draft is " + num(limit) +
           " (plinth/speculator.h: propose_batch proposes at most max_draft[i] drafts, the KV "
           "slots the scheduler reserved)";
  }
  for (size_t j = 0; j < row.size(); ++j) {
    if (row[j] < 0 || static_cast<uint32_t>(row[j]) >= vocab_size) {
      return std::string(speculator) + " proposed draft token " + std::to_string(row[j]) +
             " at position " + num(j) + " for sequence " + num(seq) +
             ", outside the vocabulary [0, " + num(vocab_size) +
             ") (plinth/speculator.h: drafts are token ids of the model)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> spec_verdict(std::string_view speculator, const plinth_spec_verify& item,
                                        uint32_t accepted, int32_t next, uint32_t vocab_size) {
  if (accepted > item.num_draft || next < 0 || static_cast<uint32_t>(next) >= vocab_size) {
    return std::string(speculator) + " verified sequence " + num(item.seq) + " as " +
           num(accepted) + " of " + num(item.num_draft) + " drafts accepted, next token " +
           std::to_string(next) +
           " (plinth/speculator.h: verify accepts 0..num_draft drafts and names a next token in "
           "the vocabulary [0, " +
           num(vocab_size) + "))";
  }
  if (item.target_probs != nullptr) return std::nullopt;
  // Greedy: exactly the target's argmax tokens.
  bool ok = next == item.target_tokens[accepted];
  for (uint32_t j = 0; j < accepted; ++j) {
    ok = ok && item.draft_tokens[j] == item.target_tokens[j];
  }
  if (!ok) {
    return std::string(speculator) + " verified greedy sequence " + num(item.seq) +
           " with tokens that are not the target's argmax (" + num(accepted) +
           " drafts accepted, next token " + std::to_string(next) +
           ") (plinth/speculator.h: a greedy verify accepts drafts while they equal "
           "target_tokens, then returns target_tokens[accepted])";
  }
  return std::nullopt;
}

}  // namespace plinth::contract
