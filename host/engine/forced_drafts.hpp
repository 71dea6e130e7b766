#pragma once
// Forced-token drafting (docs/architecture.md, "Structured outputs"): where a constrained
// sequence's grammar forces the next bytes (`{"name": "` after an object's start, a long property
// name once its first byte is chosen), the engine proposes a tokenization of them as draft tokens
// (the tokens the target produced the last time those bytes were forced, from the memo of
// engine/forced_memo.hpp, else the tokenizer's canonical encoding of the bytes), and the masked
// target verifies them in the same forward as the sequence's next token, through the speculation
// path (draft slots the scheduler reserves, one verification row per draft,
// engine/speculation.hpp's Verdict).
//
// Exact in distribution: at temperature 0 a draft is kept while it equals the masked target's
// argmax, then the argmax follows, so the output equals decoding without drafts. Above it a draft
// is a deterministic proposal (a one-hot draft distribution at the draft d): it is kept with
// probability p(d) under the masked target distribution p, and on rejection the next token is
// drawn from p without d, renormalised (Leviathan et al., ICML 2023, with q one-hot), with draws
// from the request's own RNG so seeded requests stay reproducible. A tokenization the model would
// not choose (it may spell the same bytes with other tokens) is simply rejected where it departs.
//
// With a speculator plugin: a sequence whose grammar forces bytes takes the forced drafts that
// step and is not asked for the speculator's; the others are (and their drafts are cut at the
// first token their grammar refuses). Single-threaded, like the engine.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch_builder.hpp"
#include "engine/forced_memo.hpp"
#include "engine/speculation.hpp"

namespace plinth {

class Tokenizer;

class ForcedDrafts {
 public:
  /// `tokenizer` must outlive this. `max_drafts`: the most forced drafts per sequence and step
  /// (>= 1); `context_length`: the engine's, bounding drafts as the speculator's are.
  ForcedDrafts(const Tokenizer& tokenizer, uint32_t vocab_size, uint32_t context_length,
               uint32_t max_drafts);

  /// Draft slots a decoding sequence needs reserved for forced drafts.
  uint32_t max_drafts() const { return max_drafts_; }

  /// Gives each decoding entry of a constrained, speculative sequence whose grammar forces bytes
  /// (with draft room: engine/speculation.hpp's draft_room) forced_tokens() as drafts, cut to its
  /// room and at the first token its grammar refuses, and sets Entry::forced and num_new = 1 +
  /// drafts. Entries that already carry drafts are left alone. A grammar plugin that fails while
  /// asked leaves that entry without drafts (its sampling step calls the plugin again and fails the
  /// sequence there).
  void propose(std::vector<BatchBuilder::Entry>& entries);

  /// Verifies entry `e`'s forced drafts against its k + 1 logits rows from `first_row`
  /// ([k + 1, vocab] float32): the verdict above. A row that is not finite, or a grammar plugin
  /// failing, sets Verdict::failure / grammar_failure instead.
  Verdict verify(const BatchBuilder::Entry& e, const float* first_row);

  /// Forced drafts verified so far (num_drafts: proposals; draft and accepted tokens).
  const SpecStats& stats() const { return stats_; }

  /// The forced tokens of `seq`'s grammar state, at most `limit` of them: the tokens the target
  /// produced the last time these forced bytes were forced (the memo; not for a seeded sampled
  /// request, whose output must not depend on other requests), else the tokenizer's
  /// encoding of the forced bytes (cut before an incomplete UTF-8 character at their end); cut
  /// at the first token the grammar refuses. Empty when nothing is forced. First teaches the memo
  /// the tokens `seq` took for the bytes noted at an earlier call, once its output covers them,
  /// and notes the forced bytes when none are noted.
  std::vector<int32_t> forced_tokens(Sequence& seq, uint32_t limit);

  /// The memo of forced strings and the model's tokens for them (engine/forced_memo.hpp).
  const ForcedTokenMemo& memo() const { return memo_; }
  /// Forced drafts taken from the memo (proposals and their draft tokens; the rest are
  /// canonical encodings).
  uint64_t memo_proposals() const { return memo_proposals_; }

 private:
  /// Records in the memo how `seq` spelled the forced bytes noted on it, once its output covers
  /// them.
  void learn(Sequence& seq);

  const Tokenizer& tokenizer_;
  uint32_t vocab_;
  uint32_t context_length_;
  uint32_t max_drafts_;
  SpecStats stats_;
  ForcedTokenMemo memo_;
  uint64_t memo_proposals_ = 0;
};

}  // namespace plinth
