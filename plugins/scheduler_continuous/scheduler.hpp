// scheduler_continuous — iteration-level scheduling (Orca, Yu et al., OSDI 2022) in the shape of
// vLLM v1's scheduler, with chunked prefill (Sarathi, Agrawal et al., 2023) and recompute
// preemption (PagedAttention, Kwon et al., SOSP 2023, §4.5).
//
// The scheduler sees counts only. A sequence has num_tokens tokens (prompt + generated), of which
// the first num_computed have their KV cached; each step it computes the next
// num_tokens - num_computed of them (a prefill chunk, or 1 decode token + lookahead slots for
// draft tokens). When its chunk reaches num_tokens the host samples its next token.
//
// schedule():
//  1. Running sequences, in admission order, each get their next chunk within the token budget;
//     their KV slots are allocated through the wired kv_cache. When a block allocation fails, the
//     newest running sequence not yet scheduled this step (FCFS: latest arrival; priority: worst
//     priority, then latest arrival) is preempted — KV freed, num_computed = 0, back to the
//     front of the waiting queue — and the allocation retried; a sequence may preempt itself.
//  2. If nothing was preempted, waiting sequences are admitted in queue order while max_num_seqs,
//     the token budget and the free blocks minus the watermark allow. With chunked prefill the
//     first chunk is min(remaining, budget[, long_prefill_token_threshold]), else the whole
//     num_tokens or nothing. A resumed (preempted) sequence recomputes all num_tokens tokens.
//     Admission stops at the first sequence that does not fit (no overtaking, so no starvation).
//     With a prefix cache wired (admission.cpp) a new or resumed sequence first takes the longest
//     cached prefix of its tokens but the last (so its last token is computed and has logits),
//     attaching those blocks and holding the match's lock while it runs; cached blocks nobody
//     holds count as free and are evicted (LRU) before anyone is preempted. One of n choices
//     (request.parent) waits until its parent has computed the prompt and then forks its KV.
//  3. update(): full blocks are inserted into the prefix cache as soon as they are computed
//     (prompt chunks and generated tokens, never rejected drafts) and the lock moves to the
//     longer path; finished sequences insert theirs, unlock and free their KV.
//
// Thread rules: one thread at a time. Errors: std::invalid_argument for bad input (state
// unchanged), plinth::sdk::Error for a failing kv_cache.
#pragma once

#include <plinth/scheduler.h>
#include <plinth/plugin.hpp>

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_set>
#include <vector>

#include "kv_client.hpp"
#include "prefix_client.hpp"
#include "scheduler_config.hpp"

namespace plinth::scheduler_continuous {

/// One sequence as the scheduler tracks it.
struct SeqState {
  plinth_seq_id seq = 0;
  uint32_t num_prompt_tokens = 0;
  uint32_t max_tokens = 0;
  uint32_t num_tokens = 0;    // prompt + generated so far
  uint32_t num_computed = 0;  // tokens whose KV is cached
  int32_t priority = 0;
  double arrival_time = 0.0;
  uint64_t order = 0;          // add() counter: tie-break of equal arrival times
  uint32_t scheduled_new = 0;  // tokens scheduled in the last step (0 = not scheduled)
  uint32_t num_preemptions = 0;
  plinth_seq_id parent = 0;    // n > 1: the choice whose prompt KV this one forks
  uint64_t prefix_handle = 0;  // the prefix-cache lock held while running (0 = none)
  uint32_t num_inserted = 0;   // tokens of this run already inserted into the prefix cache
  uint32_t match_hint = 0;     // longest_prefix_first: matched tokens when last ordered
};

class Scheduler {
 public:
  /// Throws std::invalid_argument when `kv` is not wired.
  Scheduler(const SchedulerConfig& config, plinth_kv_cache_ref kv, sdk::Host host = {},
            const PrefixClient& prefix = PrefixClient({}, nullptr));

  /// Queues a new sequence. std::invalid_argument for a known seq, zero prompt tokens, a
  /// sequence whose prompt + max_tokens could never fit the KV pool, or (without chunked
  /// prefill) the token budget.
  void add(const plinth_sched_request& req);
  /// Removes `seq` from wherever it is and frees its KV. Unknown seq: no-op.
  void abort_seq(plinth_seq_id seq);
  /// Decides one step. The arrays in the result stay valid until the next schedule call.
  plinth_sched_output schedule(const plinth_sched_step& step);
  /// Applies the outcome of the last step: one result per scheduled sequence (results for
  /// sequences aborted since are ignored). Truncates the KV of a sequence to num_computed when
  /// fewer tokens were accepted than scheduled; frees finished ones. std::invalid_argument
  /// (nothing changed) for a sequence not scheduled last step or inconsistent counts.
  void update(std::span<const plinth_sched_result> results);
  plinth_sched_stats stats() const;

  /// Introspection for tests and logs.
  const std::vector<SeqState>& running() const { return running_; }
  const std::deque<SeqState>& waiting() const { return waiting_; }
  const SchedulerConfig& config() const { return config_; }
  uint32_t watermark_blocks() const { return watermark_blocks_; }
  bool prefix_caching() const { return prefix_.enabled(); }
  /// Prompt tokens looked up in the prefix cache at admission, and of those, found cached.
  uint64_t prefix_queried_tokens() const { return prefix_queried_; }
  uint64_t prefix_hit_tokens() const { return prefix_hits_; }

 private:
  bool worse(const SeqState& a, const SeqState& b) const;   // a is preempted before b
  bool before(const SeqState& a, const SeqState& b) const;  // a waits ahead of b
  void enqueue_waiting(SeqState s, bool preempted);
  void preempt(size_t running_index);
  // admission.cpp
  enum class Admit { kAdmitted, kSkip, kStop };
  void admit_waiting(uint32_t& budget);
  Admit try_admit(SeqState& w, uint32_t budget, uint32_t& num_new);
  Admit try_fork(SeqState& w, const SeqState& parent, uint32_t& num_new);
  void order_by_prefix();
  const SeqState* find_running(plinth_seq_id seq) const;
  bool is_waiting(plinth_seq_id seq) const;
  void cache_full_blocks(SeqState& s);
  void drop_prefix_lock(SeqState& s);
  uint32_t chunk(const SeqState& s, uint32_t budget) const;
  void record(const SeqState& s, uint32_t num_new);
  // schedule()'s steps: the tokens running sequence s computes this step (0: none; `decode` set
  // when it is a decode step, whose draft slots are optional), and its blocks for them, found
  // by dropping the draft slots, evicting unheld cached blocks, then preempting the worst running
  // sequence; false when running_[i] itself was preempted (running_[i] is then the next one).
  uint32_t tokens_this_step(const SeqState& s, uint32_t budget, uint32_t lookahead,
                            bool& decode) const;
  bool allocate_or_preempt(size_t i, uint32_t& n, bool decode);
  plinth_sched_output output(uint32_t budget);

  SchedulerConfig config_;
  KvClient kv_;
  sdk::Host host_;
  PrefixClient prefix_;
  uint64_t prefix_queried_ = 0, prefix_hits_ = 0;
  int64_t m_prefix_queries_ = -1, m_prefix_hits_ = -1, m_prefix_hit_rate_ = -1;
  uint32_t block_size_;
  uint32_t num_blocks_;
  uint32_t watermark_blocks_;
  std::deque<SeqState> waiting_;
  std::vector<SeqState> running_;  // admission order
  std::unordered_set<plinth_seq_id> known_;
  uint64_t next_order_ = 0;
  uint64_t num_preemptions_ = 0;
  // Output of the last schedule call.
  std::vector<plinth_seq_id> out_seqs_;
  std::vector<uint32_t> out_computed_;
  std::vector<uint32_t> out_new_;
  std::vector<plinth_seq_id> out_preempted_;
  std::vector<plinth_block_copy> out_copies_;
  int64_t m_batched_ = -1;
};

}  // namespace plinth::scheduler_continuous
