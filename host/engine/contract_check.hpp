#pragma once
// The host's checks of what the per-step plugins hand the engine (docs/architecture.md, "When a
// plugin breaks its contract"): the scheduler's decision, the kv_cache's block tables, the
// backend's (or graph runner's) forward output and the speculator's proposals and verdicts, each
// against the rule of its SDK header. A check
// returns the violation as a message naming the plugin ("scheduler 'bad_sched_unknown'"), what it
// did and the rule broken with its header, or nullopt when the contract holds. The engine decides
// whom the violation fails (Engine::step); these functions only judge. Pure functions, any thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "plinth/plinth.h"

namespace plinth::contract {

/// "scheduler 'scheduler_continuous'": how messages name a plugin of `kind` ("scheduler",
/// "kv_cache", "backend", "graph_runner", "speculator") called `name` (its manifest name, by
/// default the library's short name).
std::string plugin(std::string_view kind, std::string_view name);

/// Where a scheduled id stands in the engine.
enum class SeqState { kLive, kFinished, kUnknown };

/// The ids of a scheduler decision (scheduler.h, schedule): each of sched.seqs[0..num_scheduled)
/// must be a live sequence (given to add, not finished nor aborted; `state` says) and appear once.
/// `scheduler` is plugin("scheduler", name). Returns the first violation. Such a decision cannot
/// be pinned on one sequence: the engine fails the whole step's batch.
std::optional<std::string> scheduled_ids(std::string_view scheduler,
                                         const plinth_sched_output& sched,
                                         const std::function<SeqState(plinth_seq_id)>& state);

/// The copy-on-write pairs of a scheduler decision (scheduler.h, plinth_sched_output.copies, which
/// the kv_cache's allocate wrote): given when num_copies > 0, every src and dst a block of the pool
/// ([0, num_blocks)). They name no sequence: the engine fails the whole step's batch.
std::optional<std::string> block_copies(std::string_view scheduler,
                                        const plinth_sched_output& sched, uint32_t num_blocks);

/// One scheduled sequence's counts (scheduler.h, plinth_sched_output): num_new >= 1, the first new
/// token is one the host holds (num_computed < num_tokens), and the chunk ends at most
/// `num_lookahead` draft slots past the sequence's num_tokens tokens.
std::optional<std::string> scheduled_counts(std::string_view scheduler, plinth_seq_id seq,
                                            uint32_t num_computed, uint32_t num_new,
                                            uint32_t num_tokens, uint32_t num_lookahead);

/// A sequence's block table (kv_cache.h, get_block_table / allocate): every id a block of the pool
/// ([0, pool.num_blocks)) and blocks enough for `num_positions` positions at pool.block_size
/// tokens each (what the scheduler allocated before scheduling it).
std::optional<std::string> block_table(std::string_view kv_cache, plinth_seq_id seq,
                                       std::span<const int32_t> blocks, const plinth_kv_info& pool,
                                       uint32_t num_positions);

/// A forward's output against its batch (backend.h, plinth_forward_output): num_logits ==
/// batch.num_logits; logits present ([num_logits, vocab_size] with vocab_size == `vocab_size`)
/// unless batch.argmax_only was set and argmax_ids came instead; argmax ids, when given, in
/// [-1, vocab_size). `runner` is plugin("backend" or "graph_runner", name). The rows cannot be
/// trusted one by one: the engine fails the whole batch.
std::optional<std::string> forward_output(std::string_view runner, const plinth_batch& batch,
                                          const plinth_forward_output& fwd, uint32_t vocab_size);

/// A speculator's proposal as a whole (speculator.h, propose / propose_batch): one row per sequence
/// asked (num_seqs == `num_asked`), the num_draft and draft_tokens arrays given when it answers
/// for any, and draft_probs (ABI 1.2), when given, in rows of `vocab_size` entries. `speculator`
/// is plugin("speculator", name). Such an answer cannot be pinned on one sequence: the engine
/// fails every sequence it asked drafts of in that step.
std::optional<std::string> spec_proposal(std::string_view speculator,
                                         const plinth_spec_proposal& out, size_t num_asked,
                                         uint32_t vocab_size);

/// One sequence's row of a proposal: `num_draft` (its num_draft[s]) within the row stride
/// (out.max_draft); with propose_batch also within the sequence's `limit` (its max_draft: a
/// proposer may have written KV up to it; the plain propose only knows the largest limit, so the
/// host cuts its extra drafts instead); every draft id of `row` (the drafts the host keeps) in
/// [0, vocab_size). The engine fails that sequence alone.
std::optional<std::string> spec_drafts(std::string_view speculator, plinth_seq_id seq,
                                       uint32_t num_draft, uint32_t row_stride, uint32_t limit,
                                       bool batch_api, std::span<const int32_t> row,
                                       uint32_t vocab_size);

/// A verify answer for one item (speculator.h, verify): `accepted` in [0, item.num_draft], `next`
/// in [0, vocab_size); for a greedy item (target_probs NULL) exactly the target's tokens: drafts
/// accepted while they equal target_tokens, then target_tokens[accepted]. The engine fails that
/// sequence alone.
std::optional<std::string> spec_verdict(std::string_view speculator, const plinth_spec_verify& item,
                                        uint32_t accepted, int32_t next, uint32_t vocab_size);

}  // namespace plinth::contract
