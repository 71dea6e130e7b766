// spec_decode — when to speculate, and how far.
//  - Per step: the draft-length schedule maps the batch size to k (TensorRT-LLM's
//    draft_len_schedule): large batches are compute-bound, where verifying drafts costs as much
//    as it saves, so they draft less or not at all.
//  - Per sequence (adaptive): α, the sequence's per-token acceptance probability estimated from
//    its recent verifications (decayed counts, from a prior of 0.7 worth 3 trials), picks the k
//    that maximizes the expected tokens per step per unit of cost,
//      E(k) / C(k),  E(k) = (1 - α^(k+1)) / (1 - α)  (Leviathan et al. 2023, §3.1),
//      C(k) = 1 + k · (draft_token_cost + verify_token_cost)  (in decode steps);
//    a sequence whose best ratio is <= 1 drafts nothing, and probes with one draft every
//    probe_interval steps so that a later stretch of copyable text is found again.
//  - Per method: α over all sequences' recent verifications is a new sequence's prior (0.7
//    until there is evidence), so a method that fails everywhere (a poor draft model) stops
//    drafting for new sequences too, and its paused sequences probe 8 times more rarely.
#pragma once

#include <plinth/abi.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "spec_config.hpp"

namespace plinth::spec_decode {

class DraftPolicy {
 public:
  /// `draft_token_cost`: the method's cost of one draft token, decode steps (resolved from the
  /// config or the method).
  DraftPolicy(const SpecConfig& config, double draft_token_cost);

  /// k for a step whose batch holds `batch_size` sequences.
  uint32_t k_for_batch(uint32_t batch_size) const;
  /// k for sequence `seq` this step, at most `limit`; counts a paused step.
  uint32_t k_for_seq(uint64_t seq, uint32_t limit);
  /// Records a verification: `drafted` tokens proposed, `accepted` of them kept.
  void observe(uint64_t seq, uint32_t drafted, uint32_t accepted);
  void release(uint64_t seq) { seqs_.erase(seq); }

  /// The k maximizing E(k)/C(k) over 0..limit at acceptance `alpha` (0 when none beats plain
  /// decoding). Exposed for tests.
  uint32_t best_k(double alpha, uint32_t limit) const;
  /// The method's acceptance over all sequences (decayed), or the optimistic prior 0.7 before
  /// three trials of evidence.
  double method_alpha() const;

 public:
  struct SeqState {
    double alpha;
    double successes = 0, trials = 0;  // decayed counts behind alpha
    uint32_t paused_steps = 0;
  };

 private:
  std::vector<ScheduleRow> schedule_;
  bool adaptive_;
  double cost_per_token_;
  uint32_t probe_interval_;
  std::unordered_map<uint64_t, SeqState> seqs_;
  double global_successes_ = 0, global_trials_ = 0;
};

}  // namespace plinth::spec_decode
