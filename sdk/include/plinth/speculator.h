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
  uint32_t max_draft;          /* row stride of draft_tokens */
  const uint32_t* num_draft;   /* [num_seqs] draft tokens proposed for each (0..max_draft) */
  const int32_t* draft_tokens; /* [num_seqs, max_draft] */
  /* ---- ABI 1.2 ---- */
  const float* draft_probs; /* [num_seqs, max_draft, vocab_size]: the distribution each draft token
                               was drawn from, or NULL when the drafts were chosen
                               deterministically (greedy draft, n-gram lookup) */
  uint32_t vocab_size;      /* row length of draft_probs (0 when NULL) */
} plinth_spec_proposal;

/* Verification input for one sequence. The target model ran on (last token, drafts...), giving
 * num_draft + 1 positions. For greedy, target_tokens are the argmax tokens at those positions; for
 * rejection sampling target_probs / draft_probs are given (else NULL). */
typedef struct plinth_spec_verify {
  plinth_seq_id seq;
  uint32_t num_draft;
  const int32_t* draft_tokens;  /* [num_draft] */
  const int32_t* target_tokens; /* [num_draft + 1] */
  const float* target_probs;    /* [num_draft + 1, vocab] or NULL */
  const float* draft_probs;     /* [num_draft, vocab] or NULL */
  uint32_t vocab_size;
  /* ---- ABI 1.2 ---- (an array struct without struct_size: the host passes items at the stride
     of the minor the plugin declares, PLINTH_ABI_1_<m>_SIZEOF_SPEC_VERIFY) */
  const double* uniforms; /* [2 * (num_draft + 1)] draws in [0, 1) from the request's own RNG, or
                             NULL when target_probs is NULL: uniforms[2j] decides whether draft j is
                             accepted, uniforms[2j + 1] draws the correction token at position j
                             (or the bonus token when j = num_draft). A verify that uses only these
                             draws keeps seeded requests reproducible */
} plinth_spec_verify;

/* Arguments of propose_batch (ABI 1.2). Host memory owned by the caller, valid for the call. */
typedef struct plinth_spec_propose_args {
  uint32_t struct_size;
  uint32_t num_seqs;
  const plinth_spec_seq* seqs; /* [num_seqs] decoding sequences; their last token is not yet
                                  computed by the target */
  const uint32_t* max_draft;   /* [num_seqs] at most this many drafts for seqs[i]: the KV slots the
                                  scheduler reserved after the last token this step, clamped to what
                                  max_tokens and the context leave (0 = propose none) */
  uint32_t batch_size;         /* sequences in this step's batch (prefilling and decoding): the
                                  input of a draft-length schedule */
} plinth_spec_propose_args;

typedef struct plinth_spec_stats {
  uint32_t struct_size;
  uint64_t num_draft_tokens;    /* proposed, total */
  uint64_t num_accepted_tokens; /* accepted, total; acceptance rate = accepted / draft */
  /* ---- ABI 1.2 ---- */
  uint64_t num_drafts; /* verified proposals of at least one token; mean acceptance length =
                          1 + num_accepted_tokens / num_drafts (vLLM's definition) */
} plinth_spec_stats;

typedef struct plinth_speculator_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->backend and args->model */

  /* Required. Proposes up to max_draft tokens for each of seqs[0..num_seqs). */
  int32_t (*propose)(plinth_instance* inst, const plinth_spec_seq* seqs, uint32_t num_seqs,
                     uint32_t max_draft, plinth_spec_proposal* out, plinth_error* err);
  /* Required. Accepts a prefix of each sequence's drafts: out_accepted[i] (0..num_draft) drafts
   * are kept, and the token after them (the bonus or correction token) is written to
   * out_next_token[i]. With target_probs the acceptance must keep the target distribution
   * (modified rejection sampling: Leviathan et al. 2023, Chen et al. 2023); draft_probs NULL means
   * the drafts were chosen deterministically (a one-hot draft distribution). */
  int32_t (*verify)(plinth_instance* inst, const plinth_spec_verify* items, uint32_t num_items,
                    uint32_t* out_accepted, int32_t* out_next_token, plinth_error* err);
  /* Optional (NULL = nothing to release). Drops per-sequence state when `seq` ends. */
  void (*release_seq)(plinth_instance* inst, plinth_seq_id seq);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_spec_stats* out, plinth_error* err);
  /* ---- ABI 1.2 ---- */
  /* Optional (NULL: the host reserves 4 draft slots and calls propose, then clamps). The draft
   * slots per decoding sequence the scheduler should reserve this step, when num_running sequences
   * ran the step before (a draft-length schedule, as TensorRT-LLM's draft_len_schedule); 0 turns
   * speculation off for the step. */
  uint32_t (*num_lookahead_slots)(plinth_instance* inst, uint32_t num_running);
  /* Optional (NULL: the host calls propose with the largest max_draft and clamps). Proposes drafts
   * with a limit per sequence; called after the scheduler reserved the slots, so a proposer that
   * writes KV (the backend's early-exit extension) may write slots num_tokens - 1 ..
   * num_tokens - 1 + max_draft[i] - 1 of the target's cache and no others. */
  int32_t (*propose_batch)(plinth_instance* inst, const plinth_spec_propose_args* args,
                           plinth_spec_proposal* out, plinth_error* err);
} plinth_speculator_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_SPECULATOR_H */
