#pragma once
// Turns one scheduler decision into the flat variable-length batch a backend runs
// (docs/architecture.md, 'One engine step'; backend.h): tokens, positions, query_start, seq_lens,
// block tables, slot mapping, logits indices.

#include <cstdint>
#include <span>
#include <vector>

#include "plinth/plinth.h"

namespace plinth {

class Sequence;

/// Owns the arrays a plinth_batch points into; reused across steps (no per-step allocation once
/// grown). Not thread-safe.
class BatchBuilder {
 public:
  /// One scheduled sequence: its tokens [num_computed, num_computed + num_new) are computed now;
  /// `block_table` is its kv_cache block table (physical block ids), valid for the call. A
  /// decoding sequence may carry draft tokens: then its new tokens are its last token followed by
  /// the drafts (num_new = 1 + drafts.size()), placed in the slots after it.
  struct Entry {
    Sequence* seq;  // the engine's; the builder only reads it, the engine appends through it
    uint32_t num_computed;
    uint32_t num_new;
    std::span<const int32_t> block_table;
    std::vector<int32_t> drafts;
    /// [drafts.size(), vocab] the distribution each draft was drawn from; empty when the drafts
    /// were chosen deterministically.
    std::vector<float> draft_probs;
    /// The drafts are forced-token drafts (engine/forced_drafts.hpp: the tokenization of the
    /// bytes the grammar forces), verified by the host rather than the speculator.
    bool forced = false;
  };

  /// Rebuilds the batch. A sequence wants logits when its chunk reaches its last token; one with
  /// drafts wants them at its last token and at every draft (the verification rows, in order).
  /// argmax_only is set when every logits row belongs to a sequence without drafts whose
  /// Sequence::argmax_suffices().
  /// Throws std::logic_error when a block table is too short for the scheduled tokens (a
  /// kv_cache/scheduler bug, not user input).
  const plinth_batch& build(std::span<const Entry> entries, uint32_t block_size);

  /// For logits row i: the index into `entries` of the sequence it belongs to.
  std::span<const uint32_t> logits_owner() const { return logits_owner_; }

 private:
  std::vector<int32_t> token_ids_, positions_, query_start_, seq_lens_, block_tables_, slots_,
      logits_indices_;
  std::vector<uint32_t> logits_owner_;
  plinth_batch batch_{};
};

}  // namespace plinth
