/* plinth plugin ABI — scheduler: iteration-level scheduling (Orca, Yu et al., OSDI 2022; vLLM v1).
 * Every step it decides which sequences run and how many tokens each computes, within its token
 * and sequence budgets, allocating their KV slots through the wired kv_cache and preempting when
 * blocks run out. The host owns the tokens; the scheduler sees only counts. */
#ifndef PLINTH_SCHEDULER_H
#define PLINTH_SCHEDULER_H

#include "plinth/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new sequence for the waiting queue. */
typedef struct plinth_sched_request {
  uint32_t struct_size;
  plinth_seq_id seq;
  uint32_t num_prompt_tokens; /* >= 1 */
  uint32_t max_tokens;        /* upper bound on tokens to generate, for admission decisions */
  int32_t priority;           /* lower value runs first under the priority policy */
  double arrival_time;        /* seconds, monotonic clock; FCFS order */
  /* ---- ABI 1.1 ---- */
  plinth_seq_id parent; /* 0, or a sequence added earlier with the same prompt (one of the n
                           choices of one request): the scheduler may fork this sequence from the
                           parent's computed prompt KV (kv_cache.fork) instead of computing it */
} plinth_sched_request;

/* Per-step input from the host. */
typedef struct plinth_sched_step {
  uint32_t struct_size;
  uint32_t num_lookahead_tokens; /* extra slots per decoding sequence for draft tokens (0 without
                                    a speculator) */
} plinth_sched_step;

/* The decision of one step. Arrays owned by the scheduler, valid until the next schedule call. */
typedef struct plinth_sched_output {
  uint32_t struct_size;
  uint32_t num_scheduled;
  const plinth_seq_id* seqs;      /* [num_scheduled] in batch order */
  const uint32_t* num_computed;   /* [num_scheduled] tokens whose KV is already cached: the new
                                     tokens start at this position */
  const uint32_t* num_new_tokens; /* [num_scheduled] tokens to compute this step (a prefill
                                     chunk, 1 decode token, or 1 + draft tokens) */
  uint32_t num_batched_tokens;    /* sum of num_new_tokens */
  uint32_t num_preempted;
  const plinth_seq_id* preempted; /* [num_preempted] sent back to waiting (recompute): their KV is
                                     freed and they restart from num_computed = 0 */
  uint32_t num_copies;
  const plinth_block_copy* copies; /* [num_copies] copy-on-write the backend must apply first */
} plinth_sched_output;

/* What happened to one scheduled sequence, reported after sampling.
 *
 * An array struct (abi.h): no struct_size; it grows only at the end. The host passes
 * scheduler.update's array at the stride PLINTH_ABI_1_<m>_SIZEOF_SCHED_RESULT (abi_versions.h) of
 * the minor m the scheduler declares in its descriptor, never at the host's own sizeof, so a
 * plugin indexes results[i] with the plinth_sched_result of the headers it was built against
 * (whose sizeof is that constant, abi_layout_check.h) and never sees fields added after its
 * minor. The SDK adapter (scheduler.hpp) hands the array on as a std::span over that type, which
 * is correct for the same reason. Unchanged in size since 1.0 (24 bytes). */
typedef struct plinth_sched_result {
  plinth_seq_id seq;
  uint32_t num_computed; /* tokens whose KV is now valid (after rejecting drafts: fewer than
                            scheduled); the scheduler truncates the KV to it */
  uint32_t num_tokens;   /* tokens in the sequence now (prompt + generated) */
  uint32_t finished;     /* non-zero: stop condition met; the scheduler frees its KV */
} plinth_sched_result;

typedef struct plinth_sched_stats {
  uint32_t struct_size;
  uint32_t num_running;
  uint32_t num_waiting;
  uint64_t num_preemptions; /* total since create */
} plinth_sched_stats;

typedef struct plinth_scheduler_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->kv_cache (required), args->prefix_cache
                                 (may be NULL; a 1.1 scheduler that is given one matches at
                                 admission and inserts full blocks, reading tokens through
                                 host->get_seq) */

  /* Required. Queues a new sequence. INVALID_ARGUMENT for a known seq or zero prompt tokens, or a
   * sequence that could never fit the KV pool (the message names the sizes). */
  int32_t (*add)(plinth_instance* inst, const plinth_sched_request* req, plinth_error* err);
  /* Required. Removes `seq` wherever it is and frees its KV. Unknown seq: no-op. */
  void (*abort_seq)(plinth_instance* inst, plinth_seq_id seq);
  /* Required. Decides this step into *out. Progress rule: when requests wait and none runs, a
   * step must schedule at least one (a request that can never run is refused at add); a
   * scheduler that schedules nothing for the host's stall limit (10 s by default) while requests
   * are live is taken as stuck, and those requests fail with an error saying so. Id rule: each
   * id in out->seqs is a sequence given to add that has neither finished nor been aborted, at most
   * once, and out->copies name pool blocks; a decision that breaks it does not run, and every
   * sequence it scheduled fails with an error naming the scheduler and the rule. A sequence whose
   * chunk does not fit it (num_new_tokens 0, starting past its tokens, or ending more than
   * num_lookahead_tokens past them) fails alone. */
  int32_t (*schedule)(plinth_instance* inst, const plinth_sched_step* step,
                      plinth_sched_output* out, plinth_error* err);
  /* Required. Reports the outcome of the last scheduled step, one result per scheduled sequence:
   * `results` is [num_results] items at the stride of the scheduler's minor (see
   * plinth_sched_result), owned by the host and valid for the call only. */
  int32_t (*update)(plinth_instance* inst, const plinth_sched_result* results, uint32_t num_results,
                    plinth_error* err);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_sched_stats* out, plinth_error* err);
} plinth_scheduler_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_SCHEDULER_H */
