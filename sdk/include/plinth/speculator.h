/* plinth plugin ABI — speculator: proposes draft tokens for decoding sequences and decides how many
 * the target model accepts (speculative decoding: Leviathan et al., ICML 2023; Chen et al., 2023;
 * n-gram / prompt lookup proposals). Temperature-0 output must equal decoding without it. */
#ifndef PLINTH_SPECULATOR_H
#define PLINTH_SPECULATOR_H

#include "plinth/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One decoding sequence's token history (prompt + generated), host memory valid for the call. */
typedef struct plinth_spec_seq {
  plinth_seq_id seq;
  const int32_t* tokens;
  uint32_t num_tokens;
} plinth_spec_seq;

/* Proposals, arrays owned by the plugin, valid until the next propose. */
typedef struct plinth_spec_proposal {
  uint32_t struct_size;
  uint32_t num_seqs;
  uint32_t max_draft;           /* row stride of draft_tokens */
  const uint32_t* num_draft;    /* [num_seqs] draft tokens proposed for each (0..max_draft) */
  const int32_t* draft_tokens;  /* [num_seqs, max_draft] */
} plinth_spec_proposal;

/* Verification input for one sequence. The target model ran on (last token, drafts...), giving
 * num_draft + 1 positions. For greedy, target_tokens are the argmax tokens at those positions; for
 * rejection sampling target_probs / draft_probs are given (else NULL). */
typedef struct plinth_spec_verify {
  plinth_seq_id seq;
  uint32_t num_draft;
  const int32_t* draft_tokens;   /* [num_draft] */
  const int32_t* target_tokens;  /* [num_draft + 1] */
  const float* target_probs;     /* [num_draft + 1, vocab] or NULL */
  const float* draft_probs;      /* [num_draft, vocab] or NULL */
  uint32_t vocab_size;
} plinth_spec_verify;

typedef struct plinth_spec_stats {
  uint32_t struct_size;
  uint64_t num_draft_tokens;    /* proposed, total */
  uint64_t num_accepted_tokens; /* accepted, total; acceptance rate = accepted / draft */
} plinth_spec_stats;

typedef struct plinth_speculator_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->backend and args->model */

  /* Required. Proposes up to max_draft tokens for each of seqs[0..num_seqs). */
  int32_t (*propose)(plinth_instance* inst, const plinth_spec_seq* seqs, uint32_t num_seqs,
                     uint32_t max_draft, plinth_spec_proposal* out, plinth_error* err);
  /* Required. Accepts a prefix of each sequence's drafts: out_accepted[i] (0..num_draft) drafts
   * are kept, and the token after them (the bonus or correction token) is written to
   * out_next_token[i]. */
  int32_t (*verify)(plinth_instance* inst, const plinth_spec_verify* items, uint32_t num_items,
                    uint32_t* out_accepted, int32_t* out_next_token, plinth_error* err);
  /* Optional (NULL = nothing to release). Drops per-sequence state when `seq` ends. */
  void (*release_seq)(plinth_instance* inst, plinth_seq_id seq);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_spec_stats* out, plinth_error* err);
} plinth_speculator_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_SPECULATOR_H */
