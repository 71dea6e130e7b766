#pragma once
// The engine's side of speculative decoding (docs/architecture.md, "Speculative decoding"): how
// many draft slots the scheduler reserves, asking the speculator for drafts within each sequence's
// limits, building the verification items from the target's logits after each request's own
// sampling transforms, checking what the plugin answers, and counting drafts and acceptances.
// Follows Leviathan et al. (ICML 2023) and Chen et al. (2023): at temperature 0 the accepted
// tokens are exactly the target's greedy tokens; above it, modified rejection sampling keeps the
// target's distribution.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/batch_builder.hpp"
#include "plinth/plinth.h"
#include "sampling/non_finite_logits.hpp"

namespace plinth {

/// Counters of verified speculation, vLLM's names (docs/server.md lists the metrics).
struct SpecStats {
  uint64_t num_drafts = 0;           ///< verified proposals of >= 1 draft token
  uint64_t num_draft_tokens = 0;     ///< draft tokens verified
  uint64_t num_accepted_tokens = 0;  ///< draft tokens the verification accepted
  /// accepted_per_position[j]: proposals whose draft j was accepted.
  std::vector<uint64_t> accepted_per_position;
  /// accepted / draft tokens (0 with no drafts).
  double acceptance_rate() const {
    return num_draft_tokens == 0 ? 0.0 : double(num_accepted_tokens) / double(num_draft_tokens);
  }
  /// 1 + accepted / drafts: tokens a verified proposal yields on average (0 with no drafts).
  double mean_acceptance_length() const {
    return num_drafts == 0 ? 0.0 : 1.0 + double(num_accepted_tokens) / double(num_drafts);
  }
};

/// The most drafts decoding entry `e` may carry this step: 0 unless it decodes (only its last
/// token is uncomputed, something was generated already) with draft slots reserved, its request
/// allows speculation and it is not finished; then what the slots (num_new - 1), max_tokens and
/// the context (`context_length`) leave, minus one for the bonus token.
uint32_t draft_room(const BatchBuilder::Entry& e, uint32_t context_length);

/// What verifying one sequence's drafts decided: keep `accepted` drafts, then `next_token`.
struct Verdict {
  uint32_t accepted = 0;
  int32_t next_token = -1;
  /// Set when a row of the sequence could not be turned into a distribution (NaN / +inf, or
  /// every logit -inf, after its sampling transforms): the sequence was not verified and fails.
  std::optional<NonFiniteLogits> failure;
  /// Set when the sequence's grammar plugin failed while its target was built (a
  /// GrammarContractError's message): the sequence was not verified and fails.
  std::optional<std::string> grammar_failure;
  /// Set when the speculator's answer for the sequence broke speculator.h
  /// (contract::spec_verdict's message): its tokens cannot be trusted and the sequence fails.
  std::optional<std::string> speculator_failure;
};

/// Adds one verified proposal of `num_draft` drafts, `accepted` of them kept, to `stats`.
void count_verified(SpecStats& stats, uint32_t num_draft, uint32_t accepted);

/// Drives one speculator plugin. Single-threaded, like the engine.
class Speculation {
 public:
  using Verdict = plinth::Verdict;

  /// A sequence the speculator's proposal broke its contract on (engine/contract_check.hpp), and
  /// why: the engine fails it alone (or, for an answer that cannot be pinned on one sequence,
  /// every sequence asked for drafts that step).
  struct Failure {
    plinth_seq_id seq;
    std::string why;
  };

  /// `vtable`/`instance`: the speculator; `abi_minor`: what its library declares (older ones
  /// are asked only for greedy sequences, with 4 draft slots and the plain propose); `name`: its
  /// manifest name, which the contract errors carry (contract::plugin("speculator", name)).
  Speculation(const plinth_speculator_vtable* vtable, plinth_instance* instance, uint32_t abi_minor,
              uint32_t vocab_size, uint32_t context_length, const std::string& name = "speculator");

  /// Draft slots per decoding sequence the scheduler reserves this step, when `num_running`
  /// sequences ran the last step.
  uint32_t lookahead_slots(uint32_t num_running);

  /// Proposes drafts for the decoding entries (their last token is the only one not computed)
  /// and sets each one's drafts and num_new = 1 + drafts. A sequence's drafts never exceed the
  /// slots the scheduler reserved after its last token nor what max_tokens and the context leave
  /// minus one (the bonus token). Entries that already carry drafts (forced-token drafts,
  /// engine/forced_drafts.hpp) are not asked. Returns the sequences the proposal broke
  /// speculator.h on (contract::spec_proposal / spec_drafts): their entries keep no drafts and
  /// the engine fails them. Throws PluginCallError when propose returns an error status.
  std::vector<Failure> propose(std::vector<BatchBuilder::Entry>& entries);

  /// Verifies every entry with drafts that are the speculator's (not forced ones). `rows[i]` is
  /// entry i's first logits row in `logits` ([num_rows, vocab] float32; entry i owns rows
  /// rows[i] .. rows[i] + drafts). Returns one verdict per entry (meaningful where the speculator
  /// drafted). A sequence whose rows are not finite gets Verdict::failure and is left out of
  /// speculator.verify; one whose answer breaks speculator.h (contract::spec_verdict: accepted
  /// past its drafts, a token outside the vocabulary, a greedy verdict that is not the target's
  /// argmax) gets Verdict::speculator_failure. Throws PluginCallError when verify returns an
  /// error status.
  std::vector<Verdict> verify(std::span<const BatchBuilder::Entry> entries,
                              std::span<const size_t> rows, const float* logits);

  /// Forgets a finished or aborted sequence.
  void release(plinth_seq_id seq);

  const SpecStats& stats() const { return stats_; }

 private:
  uint32_t max_draft(const BatchBuilder::Entry& e) const;

  // The steps of propose().
  /// The sequences this step asks drafts for: entry indices, their views, their limits.
  struct DraftAsk {
    std::vector<size_t> which;
    std::vector<plinth_spec_seq> seqs;
    std::vector<uint32_t> limits;
  };
  /// The entries that may draft (max_draft > 0); an entry that may not is cut to its own tokens.
  DraftAsk ask_for(std::vector<BatchBuilder::Entry>& entries) const;
  /// ABI 1.2's propose_batch is there (per-sequence limits).
  bool has_batch_propose() const;
  /// Calls propose_batch or propose (throws PluginCallError on an error status).
  plinth_spec_proposal call_propose(const DraftAsk& ask, uint32_t batch_size, bool batch_api);
  /// Sets `e`'s drafts (the first n of row `s`), draft probabilities and num_new = 1 + n.
  void take_drafts(BatchBuilder::Entry& e, const plinth_spec_proposal& out, size_t s, uint32_t n,
                   bool has_probs) const;

  // The steps of verify().
  /// What the speculator verifies one sequence against: target tokens [k + 1], probabilities
  /// [k + 1, vocab] (sampling only, else empty) and uniforms [2 (k + 1)] (sampling only).
  struct Target {
    std::vector<int32_t> tokens;
    std::vector<float> probs;
    std::vector<double> uniforms;
  };
  /// `e`'s target from its k + 1 logits rows starting at `first_row` (after its sampling
  /// transforms); throws NonFiniteLogits for a row that is not finite.
  Target target_of(const BatchBuilder::Entry& e, const float* first_row) const;
  /// The verify item of `e`; it points into `e` and `target`, which must outlive it.
  plinth_spec_verify verify_item(const BatchBuilder::Entry& e, const Target& target) const;

  const plinth_speculator_vtable* vt_;
  plinth_instance* inst_;
  uint32_t minor_;
  uint32_t vocab_;
  uint32_t context_length_;
  std::string name_;  // contract::plugin("speculator", manifest name)
  SpecStats stats_;
};

}  // namespace plinth
